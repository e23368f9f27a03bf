"""The trace catalogue ``config/traces.yaml``, read outside the workflow.

The catalogue is the one home of the facts schedlab keeps per archive log: URL, SHA-256 and,
where the studies did not use the header's ``MaxProcs``, the machine size (CEA-Curie: the
thin-node partition). The workflow reads it as Snakemake config (the Snakefile's first
``configfile:``) and the study plans check it there (``studies.common.config``); code that runs
without a config, such as ``scheduler bench``, reads the file through this module.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from scheduler.core.constants import MAX_MACHINE_PROCS
from scheduler.core.errors import ConfigurationError, quote

__all__ = ["TRACE_CATALOGUE", "catalogue_machine_procs"]

#: The repository's trace catalogue (``scheduler/traces/catalogue.py`` -> ``config/traces.yaml``).
TRACE_CATALOGUE: Path = Path(__file__).resolve().parents[2] / "config" / "traces.yaml"


def catalogue_machine_procs(trace: str, catalogue: Path = TRACE_CATALOGUE) -> int | None:
    """The machine size the catalogue sets for ``trace``, processors.

    Parameters
    ----------
    trace
        The log's name in the catalogue (``"CEA-Curie"``), a key of its ``traces:`` mapping.
    catalogue
        The catalogue file (default: the repository's ``config/traces.yaml``; any config file
        with a ``traces:`` mapping, such as ``config/tiny.yaml``, will do).

    Returns
    -------
    int or None
        ``traces.<trace>.machine_procs``, processors; ``None`` when the entry has none (or
        null): the log's header (``MaxProcs``) gives the machine size.

    Raises
    ------
    ConfigurationError
        The file cannot be read or is not YAML, it has no ``traces:`` mapping, ``trace`` is not
        in it, or its ``machine_procs`` is not a whole number of processors in
        1..MAX_MACHINE_PROCS; the message names the file and the key.
    """
    try:
        document = yaml.safe_load(catalogue.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ConfigurationError(f"{catalogue}: cannot read the trace catalogue: {exc}") from exc
    traces = document.get("traces") if isinstance(document, dict) else None
    if not isinstance(traces, dict):
        raise ConfigurationError(f"{catalogue}: key traces: expected a mapping of log names")
    if trace not in traces:
        raise ConfigurationError(
            f"{catalogue}: key traces.{trace}: {quote(trace)} is not in the catalogue; it has "
            f"{', '.join(sorted(map(str, traces))) or 'no log'}"
        )
    entry = traces[trace]
    procs = entry.get("machine_procs") if isinstance(entry, dict) else None
    if procs is None:
        return None
    if isinstance(procs, bool) or not isinstance(procs, int) or not 1 <= procs <= MAX_MACHINE_PROCS:
        raise ConfigurationError(
            f"{catalogue}: key traces.{trace}.machine_procs: expected a whole number of "
            f"processors in 1..{MAX_MACHINE_PROCS} or null, got {quote(procs)}"
        )
    return procs
