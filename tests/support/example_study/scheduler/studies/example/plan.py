"""The example study's plan: its files, targets and step settings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from scheduler.studies.common.config import TraceEntry, catalogue_entries
from scheduler.studies.common.paths import Reported, StudyFiles, filtered_file, output_paths


@dataclass(frozen=True)
class ExamplePlan:
    name: ClassVar[str] = "example"

    traces: tuple[TraceEntry, ...]
    factor: float

    @property
    def files(self) -> StudyFiles:
        return StudyFiles(self.name)

    def source_file(self, trace: str = "{trace}") -> str:
        return filtered_file(trace)

    def count_file(self, trace: str = "{trace}") -> str:
        return self.files.result(f"{trace}/count.parquet")

    def count_files(self, wildcards: object = None) -> list[str]:
        return [self.count_file(entry.name) for entry in self.traces]

    def table_outputs(self) -> dict[str, str | Reported]:
        return {
            "csv_path": Reported(self.files.table("counts.csv"), "table.rst", {"table": "counts"}),
            "md_path": self.files.table("counts.md"),
        }

    def targets(self) -> list[str]:
        return output_paths(self.table_outputs())

    def count_settings(self, wildcards: Any) -> dict[str, Any]:
        return {"trace": wildcards.trace, "factor": self.factor}


def example_plan(config: Mapping[str, Any]) -> ExamplePlan:
    from scheduler.studies.common.study import study_section

    whole, section = study_section(config, ExamplePlan.name)
    return ExamplePlan(
        traces=catalogue_entries(whole, section["traces"], "example.traces"),
        factor=float(section["factor"]),
    )
