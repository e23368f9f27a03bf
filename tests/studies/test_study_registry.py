"""A study is one registered object, and every fact has one home: the registry finds each
study's files; the schema is the one source of defaults (a plan built from Python on an empty
section is the workflow's plan; no Python default repeats one); the configuration reference is
the schema's; the workflow's shared rules name no study."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler.core.config_schema import schema_defaults, schema_keys
from scheduler.core.errors import ConfigurationError
from scheduler.core.steps import CONTEXT_PARAMETER, is_file_parameter
from scheduler.studies.common.reference import replace_reference
from scheduler.studies.common.study import (
    STUDIES,
    Study,
    config_schema,
    discover_studies,
    plan_studies,
    validated_config,
)

ROOT = Path(__file__).resolve().parents[2]
STUDY_NAMES = [study.name for study in discover_studies()]
CATALOGUE = yaml.safe_load((ROOT / "config" / "traces.yaml").read_text())["traces"]


def test_the_eight_studies_are_registered_in_rank_order() -> None:
    assert STUDY_NAMES == ["tuning", "online", "prediction", "learned", "redirect", "memory",
                           "whatif", "rl"]  # fmt: skip
    assert [s.rank for s in discover_studies()] == sorted(s.rank for s in discover_studies())
    assert config_schema()["properties"]["studies"]["default"] == STUDY_NAMES


@pytest.mark.parametrize("name", STUDY_NAMES)
def test_a_study_is_its_folder_rules_captions_and_tests(name: str) -> None:
    study = STUDIES[name]
    assert study.schema_path == ROOT / "scheduler" / "studies" / name / "config.schema.yaml"
    assert study.schema_path.is_file()
    assert (ROOT / "workflow" / "rules" / study.rules).is_file()
    assert list((ROOT / "workflow" / "report" / name).glob("*.rst"))
    assert (ROOT / "tests" / "studies" / name).is_dir()
    assert study.title and study.question


def test_a_study_name_registered_twice_is_refused() -> None:
    with pytest.raises(ValueError, match="registered twice"):
        STUDIES.add("tuning", STUDIES["tuning"])


@pytest.mark.parametrize("name", STUDY_NAMES)
def test_a_plan_built_from_python_is_the_workflows_plan(name: str) -> None:
    """The plan of an empty section (Python), of the section the workflow validates, and of
    the schema's defaults written out are one plan: no default lives in Python."""
    study = STUDIES[name]
    catalogue = {"traces": CATALOGUE}
    from_python = study.plan(catalogue)
    workflow = validated_config({**catalogue, "studies": [name]})
    plan_studies(workflow)  # the setup calls first, as the workflow does
    section = schema_defaults(config_schema([name])["properties"][name])
    written_out = study.plan({**catalogue, "seed": 20261121, name: section})
    assert from_python == study.plan(workflow) == written_out
    if hasattr(from_python, "seed"):
        assert from_python.seed == 20261121 == config_schema()["properties"]["seed"]["default"]


def _plan_defaults(tree: ast.Module) -> list[str]:
    """``.get(key, default)`` calls and dataclass field defaults (but ClassVar) of a plan."""
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get" and len(node.args) == 2):  # fmt: skip
            found.append(f"line {node.lineno}: .get({ast.unparse(node.args[0])}, ...)")
        if isinstance(node, ast.ClassDef) and node.name.endswith("Plan"):
            for item in node.body:
                if (isinstance(item, ast.AnnAssign) and item.value is not None
                        and "ClassVar" not in ast.unparse(item.annotation)):  # fmt: skip
                    found.append(f"line {item.lineno}: {ast.unparse(item.target)} = ...")
    return found


@pytest.mark.parametrize("name", STUDY_NAMES)
def test_no_plan_writes_a_default_of_its_own(name: str) -> None:
    path = ROOT / "scheduler" / "studies" / name / "plan.py"
    assert _plan_defaults(ast.parse(path.read_text())) == []


def _steps(module: Any) -> list[Any]:
    functions = [f for _, f in inspect.getmembers(module, inspect.isfunction)]
    return [f for f in functions if hasattr(f, "__wrapped__") and f.__module__ == module.__name__]


@pytest.mark.parametrize("name", [*STUDY_NAMES, "traces"])
def test_no_step_setting_has_a_default(name: str) -> None:
    """A step takes every setting from the plan: a default in its signature would be a second
    home (file parameters may be optional: None means the output is not written)."""
    import importlib

    module = importlib.import_module(
        "scheduler.traces.steps" if name == "traces" else f"scheduler.studies.{name}.steps"
    )
    steps = _steps(module)
    assert steps, f"no workflow step in {module.__name__}"
    for step in steps:
        wrapped = inspect.signature(step.__wrapped__)
        assert CONTEXT_PARAMETER in wrapped.parameters
        for parameter in wrapped.parameters.values():
            if parameter.name == CONTEXT_PARAMETER or is_file_parameter(parameter.name):
                continue
            assert parameter.default is inspect.Parameter.empty, (step.__name__, parameter.name)


def test_every_key_has_a_type_a_description_and_a_default() -> None:
    for key in schema_keys(config_schema()):
        assert key.description, key.name
        assert key.types != "any", key.name
        required = key.name.startswith("traces.<name>.url")
        assert key.has_default or required, key.name


@pytest.mark.parametrize("page", ["config/README.md", "docs/configuration.md"])
def test_the_configuration_reference_is_the_schemas(page: str) -> None:
    path = ROOT / page
    assert replace_reference(path) == path.read_text(encoding="utf-8"), (
        f"{page} is out of date: run `scheduler config-reference --write {page}`"
    )


def test_the_shared_rules_name_no_study() -> None:
    """common.smk, traces.smk and the Snakefile loop over the registry; a study's name appears
    only in its own rules file."""
    for path in (ROOT / "Snakefile", ROOT / "workflow/rules/common.smk",
                 ROOT / "workflow/rules/traces.smk"):  # fmt: skip
        code = "\n".join(line.split("#", 1)[0] for line in path.read_text().splitlines())
        for name in STUDY_NAMES:
            assert not re.search(rf"\b{name}\b", code, flags=re.IGNORECASE), (path.name, name)


def test_a_selected_study_alone_is_checked() -> None:
    """A study left out is neither checked nor planned: its section may be anything."""
    config = {"traces": CATALOGUE, "studies": ["memory"], "tuning": {"thresholds": "nonsense"}}
    assert "tuning" not in validated_config(config)
    with pytest.raises(ConfigurationError, match=r"config tuning\.thresholds"):
        validated_config({**config, "studies": ["tuning"]})


def test_the_study_class_derives_its_paths() -> None:
    study = Study("x", "X", "?", plan=lambda config: None, rank=7)  # type: ignore[arg-type,return-value]
    assert study.rules == "x.smk" and study.package == "scheduler.studies.x"
    with pytest.raises(ConfigurationError, match=r"no package scheduler\.studies\.x"):
        _ = study.schema_path
