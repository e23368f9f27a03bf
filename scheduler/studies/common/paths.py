"""Where the workflow's files go: the shared trace files, and each study's own folders.

Every function returns a path relative to the working directory; called with its defaults it
returns the Snakemake pattern (``"results/{trace}/filtered.parquet"``), with values a concrete
path. A study's plan spells its own paths through :class:`StudyFiles`; nothing else spells them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = [
    "DROP",
    "Reported",
    "StudyFiles",
    "download_report_file",
    "filter_report_file",
    "filtered_file",
    "output_paths",
    "trace_file",
]

#: The strong filter's default treatment of jobs that ran past their request: drop them.
DROP = "drop"


def trace_file(trace: str = "{trace}") -> str:
    """A catalogue log as downloaded (gzipped SWF)."""
    return f"resources/traces/{trace}.swf.gz"


def download_report_file(trace: str = "{trace}") -> str:
    """The download's report (source, checksum) of a catalogue log."""
    return f"resources/traces/{trace}.fetch.json"


def filtered_file(trace: str = "{trace}", overrun: str = DROP) -> str:
    """The strongly filtered log (parquet); ``overrun`` other than ``drop``: jobs that ran past
    their requested time treated so (``clip``) instead of dropped."""
    suffix = "" if overrun == DROP else f"-{overrun}"
    return f"results/{trace}/filtered{suffix}.parquet"


def filter_report_file(trace: str = "{trace}", overrun: str = DROP) -> str:
    """The strong filter's report (JSON counts) of :func:`filtered_file`."""
    suffix = "" if overrun == DROP else f"-{overrun}"
    return f"results/{trace}/filter_report{suffix}.json"


@dataclass(frozen=True)
class StudyFiles:
    """The folders of study ``study``: ``results/<study>/`` and ``logs/<study>/`` (``name`` is a
    path below them, without extension for logs; a step's log ends with its timing)."""

    study: str

    def result(self, name: str) -> str:
        return f"results/{self.study}/{name}"

    def table(self, name: str) -> str:
        """A table for readers: ``results/<study>/tables/<name>`` (with its extension)."""
        return self.result(f"tables/{name}")

    def figure(self, name: str, ext: str) -> str:
        """A figure: ``results/<study>/figures/<name>.<ext>``."""
        return self.result(f"figures/{name}.{ext}")

    def log(self, name: str) -> str:
        return f"logs/{self.study}/{name}.log"

    def week_outputs(
        self,
        *,
        caption: str = "week.rst",
        label: str = "representative week",
        subcategory: str | None = None,
    ) -> dict[str, str | Reported]:
        """The outputs of a study's representative-week Gantt chart
        (:func:`scheduler.studies.common.gantt.week_figure`): ``figures/week.png`` in the
        report (with ``caption``, the label ``figure: <label>`` and ``subcategory``) and
        ``figures/week.pdf``."""
        return {
            "png_path": Reported(
                self.figure("week", "png"), caption, {"figure": label}, subcategory
            ),
            "pdf_path": self.figure("week", "pdf"),
        }


@dataclass(frozen=True)
class Reported:
    """An output that goes into the report (``snakemake --report``): its path, its caption
    file (in ``workflow/report/<study>/``), its labels there and its subcategory (below the
    study's category; None for none)."""

    path: str
    caption: str
    labels: Mapping[str, str] = field(default_factory=dict)
    subcategory: str | None = None


def output_paths(outputs: Mapping[str, str | Reported]) -> list[str]:
    """The paths of a rule's outputs as a plan describes them (name -> path or Reported)."""
    return [item.path if isinstance(item, Reported) else item for item in outputs.values()]
