"""Hand-made tables of the online study's statistics (tests/studies/online): runs with known
total waits, their curves, totals and choices tables."""

from __future__ import annotations

import numpy as np
import polars as pl

from scheduler.studies.online.runs import CHOICE_COLUMNS, CURVE_COLUMNS

#: The reference strategy of these tables (the config default).
REFERENCE = "fixed:FCFS"
TRACES = ("T1", "T2", "T3")
REPLICAS = 5
#: (strategy, period, scale of the daily waits relative to FCFS, per trace)
STRATEGIES = (
    ("fixed:FCFS", "none", {"T1": 1.0, "T2": 1.0, "T3": 1.0}),
    ("fixed:SPF", "none", {"T1": 0.7, "T2": 1.3, "T3": 0.8}),
    ("full", "1d", {"T1": 0.75, "T2": 0.9, "T3": 0.85}),
    ("bandit(eps=0.1)", "1d", {"T1": 0.8, "T2": 1.1, "T3": 0.95}),
    ("bandit(eps=0.3)", "1d", {"T1": 0.9, "T2": 0.95, "T3": 0.9}),
)
B = 300  # bootstrap resamples in most tests (the default 2000 is slower for no gain here)

Run = tuple[str, int, str, str]


def curves_from(runs: dict[Run, list[float]]) -> pl.DataFrame:
    """Curves table: run → cumulative wait (s) on days 0, 1, ...; finished_jobs = 10 (d + 1)."""
    rows = [
        (trace, replica, strategy, period, day, float(value), 10 * (day + 1))
        for (trace, replica, strategy, period), values in runs.items()
        for day, value in enumerate(values)
    ]
    return pl.DataFrame(rows, schema=list(CURVE_COLUMNS), orient="row")


def totals_from(waits: dict[Run, float]) -> pl.DataFrame:
    """Totals table from run → W (s) (jobs unused by the statistics)."""
    rows = [(*run, float(w), 100) for run, w in waits.items()]
    return pl.DataFrame(
        rows,
        schema=["trace", "replica", "strategy", "period", "total_wait_s", "jobs"],
        orient="row",
    )


def simulated_runs() -> dict[Run, list[float]]:
    """3 traces x 5 replicas x 5 strategies; runs of one replica end on different days.

    Values are cumulative waits (s) on days 0, 1, ...
    """
    rng = np.random.default_rng(7)
    out: dict[Run, list[float]] = {}
    for trace in TRACES:
        for replica in range(REPLICAS):
            base = rng.uniform(500.0, 5000.0, size=8)  # daily waits of FCFS (s)
            for strategy, period, scale in STRATEGIES:
                days = int(rng.integers(5, 9))
                noise = rng.uniform(0.8, 1.2, size=days)
                out[(trace, replica, strategy, period)] = list(
                    np.cumsum(base[:days] * scale[trace] * noise)
                )
    return out


def sums(runs: dict[Run, list[float]], trace: str, strategy: str, period: str) -> float:
    return sum(runs[(trace, k, strategy, period)][-1] for k in range(REPLICAS))


def row(table: pl.DataFrame, **equal: str) -> dict[str, object]:
    selected = table
    for name, value in equal.items():
        selected = selected.filter(pl.col(name) == value)
    assert selected.height == 1, equal
    return selected.row(0, named=True)


def loto_totals() -> pl.DataFrame:
    """3 logs, 2 replicas: own best ε A → 0.1, B → 0.3, C → 0.3 (period 1d); 1w: all 0.5."""
    per_log = {  # Σ_k W per ε, split evenly over the two replicas
        "A": {"0.1": 100.0, "0.3": 120.0, "0.5": 130.0},
        "B": {"0.1": 200.0, "0.3": 150.0, "0.5": 160.0},
        "C": {"0.1": 90.0, "0.3": 80.0, "0.5": 80.0},  # 0.3 and 0.5 tie: smaller ε
    }
    waits: dict[Run, float] = {}
    for log, by_eps in per_log.items():
        for k in range(2):
            waits[(log, k, "fixed:FCFS", "none")] = 100.0
            for eps, total in by_eps.items():
                waits[(log, k, f"bandit(eps={eps})", "1d")] = total / 2 + (5.0 if k else -5.0)
                waits[(log, k, f"bandit(eps={eps})", "1w")] = 70.0 if eps == "0.5" else 90.0
    return totals_from(waits)


CANDIDATES = ("bandit(eps=0.1)", "bandit(eps=0.3)", "bandit(eps=0.5)")


def choices_from(runs: dict[Run, list[str]]) -> pl.DataFrame:
    rows = [
        (*run, index, policy)
        for run, policies in runs.items()
        for index, policy in enumerate(policies)
    ]
    return pl.DataFrame(rows, schema=list(CHOICE_COLUMNS), orient="row")
