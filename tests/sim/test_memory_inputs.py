"""Bad input to the memory-aware engine: every refusal names what is wrong (the config field,
the column, the first offending job)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from scheduler.core.errors import ConfigurationError
from scheduler.sim.memory import MemoryConfig, memory_jobs, simulate_memory


def _jobs(**changes: list[float]) -> pl.DataFrame:
    columns = {
        "job_id": [1, 2], "submit_s": [0.0, 5.0], "procs": [1, 2], "run_s": [10.0, 20.0],
        "req_time_s": [10.0, 30.0], "req_mem_mb": [8.0, 4.0], "used_mem_mb": [2.0, 4.0],
        "user_id": [1, 2],
    }  # fmt: skip
    columns.update(changes)
    return pl.DataFrame(columns)


CONFIG = MemoryConfig(class_nodes=(2, 2), class_memory_mb=(4.0, 8.0))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"procs": [1, 5]}, r"^job 2 \(index 1\): procs must be an integer in 1\.\.4, got 5"),
        ({"used_mem_mb": [9.0, 4.0]}, r"used_mem_mb must be <= req_mem_mb .*job 1"),
        ({"req_mem_mb": [8.0, 16.0], "used_mem_mb": [2.0, 9.0]},
         r"req_mem_mb must be <= the largest node memory, 8\.0 MB .*job 2"),
        ({"run_s": [10.0, 0.0]}, r"^job 2 \(index 1\): run_s must be > 0 and finite"),
        ({"req_time_s": [-1.0, 30.0]}, r"^job 1 \(index 0\): req_time_s must be > 0"),
        ({"submit_s": [0.0, 2.0**62]}, r"^job 2 \(index 1\): submit_s must be within ±2\*\*52"),
        ({"submit_s": [-3.0, 5.0]}, r"submit_s must be >= 0 .*job 1"),
        ({"used_mem_mb": [2.0, -1.0]}, r"without a known used_mem_mb .*job 2.*memory_filter"),
    ],
)  # fmt: skip
def test_bad_jobs_are_refused_naming_the_rule_and_the_job(changes, message) -> None:
    with pytest.raises(ConfigurationError, match=message):
        simulate_memory(_jobs(**changes), CONFIG)


def test_an_swf_table_without_memory_columns_names_them() -> None:
    table = pl.DataFrame({"job_id": [1], "submit_s": [0], "run_s": [5]})
    with pytest.raises(ConfigurationError, match=r"lacks the column\(s\) alloc_procs.*used_mem_kb"):
        memory_jobs(table)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"class_nodes": (2,), "class_memory_mb": (4.0, 8.0)}, "same length"),
        ({"class_nodes": (2, 0), "class_memory_mb": (4.0, 8.0)}, r"class_nodes\[1\]"),
        ({"class_nodes": (2, 2), "class_memory_mb": (4.0, -8.0)}, r"class_memory_mb\[1\]"),
        ({"class_nodes": (2, 2), "class_memory_mb": (8.0, 8.0)}, "distinct"),
        ({"scheduler": "sjf"}, "scheduler must be one of fcfs, easy"),
        ({"estimator": "oracle"}, "estimator: unknown memory estimator 'oracle'"),
        ({"feedback": "loud"}, "feedback must be one of"),
        ({"memory_limit": "cgroup"}, "memory_limit must be one of node, allocation"),
        ({"gradient": "steep"}, "gradient must be one of literal, normalised"),
        ({"eta": 0}, "eta must be a number > 0"),
        ({"max_failures": 0}, "max_failures must be an integer > 0"),
        ({"seed": -1}, r"seed must be an integer in \[0, 2\*\*64\)"),
    ],
)  # fmt: skip
def test_bad_configs_name_the_field(fields, message) -> None:
    with pytest.raises(ConfigurationError, match=message):
        MemoryConfig(**fields)


def test_classes_are_sorted_by_memory() -> None:
    config = MemoryConfig(class_nodes=(512, 256), class_memory_mb=(32.0, 24.0))
    assert config.class_memory_mb == (24.0, 32.0) and config.class_nodes == (256, 512)
    assert config.nodes == 768 and config.largest_memory_mb == 32.0


# -- the checks every engine shares (scheduler.sim._jobs) -----------------------------------------


def _swf_table(job_ids: list[int]) -> pl.DataFrame:
    """An SWF job table both simulate() and simulate_memory() read (memory in KB)."""
    n = len(job_ids)
    return pl.DataFrame(
        {
            "job_id": job_ids, "submit_s": list(range(n)), "run_s": [10] * n,
            "alloc_procs": [1] * n, "req_procs": [1] * n, "req_time_s": [20] * n,
            "req_mem_kb": [4096.0] * n, "used_mem_kb": [2048.0] * n, "user_id": [1] * n,
        },
        schema_overrides={"req_mem_kb": pl.Float64, "used_mem_kb": pl.Float64},
    )  # fmt: skip


def _message(call) -> str:
    with pytest.raises(ConfigurationError) as error:
        call()
    return str(error.value)


def test_no_job_is_refused_as_by_the_other_engines() -> None:
    """0 jobs gave NaN means and success_fraction 0.5; now the base engine's refusal."""
    from scheduler import simulate

    empty = _swf_table([])
    expected = _message(lambda: simulate(empty, machine_procs=4))
    assert expected.startswith("no job to simulate")
    assert _message(lambda: simulate_memory(empty, CONFIG)) == expected
    assert _message(lambda: simulate_memory(_jobs().clear(), CONFIG)) == expected


def test_duplicate_job_ids_are_refused_as_by_the_other_engines() -> None:
    from scheduler import simulate

    table = _swf_table([1, 2, 3, 2])
    expected = _message(lambda: simulate(table, machine_procs=4))
    assert "job_id" in expected and "2" in expected and "unique" in expected
    assert _message(lambda: simulate_memory(table, CONFIG)) == expected


def test_no_job_is_refused_over_arrays_too() -> None:
    from scheduler.sim.memory import simulate_memory_arrays

    empty = np.zeros(0)
    with pytest.raises(ConfigurationError, match=r"^no job to simulate"):
        simulate_memory_arrays(empty, empty.astype(np.int64), empty, empty, empty, empty,
                               empty.astype(np.int64), CONFIG)  # fmt: skip
