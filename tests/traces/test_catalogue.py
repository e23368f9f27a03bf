"""Reading a log's machine size from the trace catalogue (scheduler.traces.catalogue)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from scheduler.core.errors import ConfigurationError
from scheduler.traces.catalogue import TRACE_CATALOGUE, catalogue_machine_procs

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_the_default_catalogue_is_the_repository_file() -> None:
    assert REPO_ROOT / "config" / "traces.yaml" == TRACE_CATALOGUE


def test_machine_procs_of_the_repository_catalogue() -> None:
    """CEA-Curie's thin-node partition is set; the other logs keep their header (None)."""
    entries = yaml.safe_load(TRACE_CATALOGUE.read_text())["traces"]
    assert catalogue_machine_procs("CEA-Curie") == 80640
    assert catalogue_machine_procs("KTH-SP2") is None
    for name, entry in entries.items():
        assert catalogue_machine_procs(name) == entry.get("machine_procs")


def test_another_config_with_a_traces_mapping_is_a_catalogue() -> None:
    assert catalogue_machine_procs("KTH-slice", REPO_ROOT / "config" / "tiny.yaml") is None


def _catalogue(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "traces.yaml"
    path.write_text(text)
    return path


def test_an_unknown_trace_names_the_file_the_key_and_the_known_logs(tmp_path: Path) -> None:
    path = _catalogue(tmp_path, "traces:\n  B: {url: u}\n  A: {url: u, machine_procs: 8}\n")
    assert catalogue_machine_procs("A", path) == 8
    with pytest.raises(ConfigurationError) as error:
        catalogue_machine_procs("C", path)
    assert str(error.value) == f"{path}: key traces.C: 'C' is not in the catalogue; it has A, B"


@pytest.mark.parametrize("value", ["0", "-5", "8.5", "'8'", "true", "2147483648"])
def test_a_bad_machine_size_names_the_file_and_the_key(tmp_path: Path, value: str) -> None:
    path = _catalogue(tmp_path, f"traces:\n  A:\n    machine_procs: {value}\n")
    with pytest.raises(ConfigurationError, match=r"traces\.yaml: key traces\.A\.machine_procs: "):
        catalogue_machine_procs("A", path)


def test_a_null_machine_size_means_the_header(tmp_path: Path) -> None:
    path = _catalogue(tmp_path, "traces:\n  A:\n    machine_procs:\n")
    assert catalogue_machine_procs("A", path) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- a list\n", "key traces: expected a mapping"),
        ("traces: [A, B]\n", "key traces: expected a mapping"),
        ("traces: {A: [\n", "cannot read the trace catalogue"),
    ],
)
def test_a_file_that_is_no_catalogue_is_named(tmp_path: Path, text: str, message: str) -> None:
    path = _catalogue(tmp_path, text)
    with pytest.raises(ConfigurationError, match=message) as error:
        catalogue_machine_procs("A", path)
    assert str(error.value).startswith(f"{path}: ")


def test_a_missing_catalogue_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="cannot read the trace catalogue") as error:
        catalogue_machine_procs("A", tmp_path / "none.yaml")
    assert str(error.value).startswith(f"{tmp_path / 'none.yaml'}: ")
