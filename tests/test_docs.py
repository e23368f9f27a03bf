"""The documentation: the site builds with --strict (no broken link, no missing page), the
README is a front page, the results table is docs/results.yaml's, and no text a user reads
mentions an issue number (the project's history lives in CHANGELOG.md)."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from scheduler.cli.main import build_parser
from scheduler.studies.common.reference import (
    RESULTS_BEGIN,
    RESULTS_END,
    replace_reference,
    results_table,
)
from scheduler.studies.common.study import config_schema

ROOT = Path(__file__).resolve().parents[1]
README_LINES = 150
#: "issue #12", "Issue 12", "(#14)": references to the issue tracker.
ISSUE = re.compile(r"\b[Ii]ssues? #?\d+|(?<![\w&/\"'])#\d{1,3}\b")


def test_the_site_builds_with_strict(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    home = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert "Results at a glance" in home and "Queue tuning" in home
    api = (tmp_path / "site" / "api" / "index.html").read_text(encoding="utf-8")
    assert "run_figures" in api and "simulate_redirect" in api  # from the docstrings
    configuration = (tmp_path / "site" / "configuration" / "index.html").read_text()
    assert "memory.memory_sweep.sizes_mb" in configuration


def test_the_readme_is_a_front_page() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_LINES, f"README.md has {len(lines)} lines (at most {README_LINES})"
    assert lines[0] == "# schedlab" and lines[2] == "```bash"
    assert lines[3].startswith("python3 dev.py run ")
    assert lines[4].startswith("python3 dev.py test ")


@pytest.mark.parametrize(("page", "links"), [("README.md", "docs/"), ("docs/index.md", "")])
def test_the_results_table_is_the_results_file(page: str, links: str) -> None:
    data = yaml.safe_load((ROOT / "docs" / "results.yaml").read_text(encoding="utf-8"))
    path = ROOT / page
    expected = replace_reference(path, results_table(data, links), (RESULTS_BEGIN, RESULTS_END))
    assert path.read_text(encoding="utf-8") == expected, (
        f"{page} is out of date: run `scheduler results-table --write {page}`"
    )


def test_every_result_names_a_run_that_exists() -> None:
    data = yaml.safe_load((ROOT / "docs" / "results.yaml").read_text(encoding="utf-8"))
    for row in data["studies"]:
        for column in ("default", "full"):
            answer = row[column]
            for config in str(answer["config"]).split(" + "):
                assert (ROOT / config).is_file(), (row["study"], config)
            if answer.get("commit"):
                done = subprocess.run(["git", "cat-file", "-e", f"{answer['commit']}^{{commit}}"],
                                      cwd=ROOT, capture_output=True)  # fmt: skip
                assert done.returncode == 0, (row["study"], answer["commit"])


def _user_texts() -> list[tuple[str, str]]:
    """(where, text) of everything a user reads: the README, the docs pages but the changelog,
    the report's captions, the config schemas, the CLI's help, and the package's strings
    (messages and docstrings, which the API page shows)."""
    texts = [("README.md", (ROOT / "README.md").read_text(encoding="utf-8"))]
    for page in sorted((ROOT / "docs").rglob("*.md")):
        if page.name != "changelog.md":
            texts.append((str(page.relative_to(ROOT)), page.read_text(encoding="utf-8")))
    for caption in sorted((ROOT / "workflow" / "report").rglob("*.rst")):
        texts.append((str(caption.relative_to(ROOT)), caption.read_text(encoding="utf-8")))
    texts.append(("the configuration schemas", yaml.safe_dump(config_schema())))
    parser = build_parser()
    texts.append(("scheduler --help", parser.format_help()))
    for action in parser._subparsers._group_actions:  # type: ignore[union-attr]
        for name, command in action.choices.items():
            texts.append((f"scheduler {name} --help", command.format_help()))
    for module in sorted((ROOT / "scheduler").rglob("*.py")):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                texts.append((f"{module.relative_to(ROOT)}:{node.lineno}", node.value))
    return texts


def test_no_user_facing_text_mentions_an_issue_number() -> None:
    found = [f"{where}: {match.group(0)!r}" for where, text in _user_texts()
             for match in ISSUE.finditer(text)]  # fmt: skip
    assert found == []


def test_the_issue_pattern_finds_what_it_should() -> None:
    for text in ("issue #12", "Issue 17's", "(#14)", "issues #2"):
        assert ISSUE.search(text), text
    for text in ("# provenance", "#1b9e77", "color: #333333", "page#anchor"):
        assert not ISSUE.search(text), text
