"""Constants shared across schedlab: SWF field names, units and numeric defaults.

Kept in one module (no magic numbers scattered through the code).
"""

from __future__ import annotations

from typing import Final

import polars as pl

#: The 18 standard SWF fields, in file order: (column name, polars dtype, meaning and unit).
#: Column names carry their unit (``_s`` seconds, ``_kb`` kilobytes, ``procs`` processors).
#: -1 means "unknown" in every field, as in the Standard Workload Format.
SWF_FIELDS: Final[tuple[tuple[str, pl.DataType, str], ...]] = (
    ("job_id", pl.Int64(), "job number"),
    ("submit_s", pl.Int64(), "submit time, seconds from the log's start"),
    ("wait_s", pl.Int64(), "wait time, seconds"),
    ("run_s", pl.Int64(), "run time, seconds"),
    ("alloc_procs", pl.Int64(), "allocated processors"),
    ("avg_cpu_s", pl.Float64(), "average CPU time used per processor, seconds"),
    ("used_mem_kb", pl.Float64(), "used memory per processor, kilobytes"),
    ("req_procs", pl.Int64(), "requested processors"),
    ("req_time_s", pl.Int64(), "requested (wall-clock) time, seconds"),
    ("req_mem_kb", pl.Float64(), "requested memory per processor, kilobytes"),
    ("status", pl.Int64(), "status (1 completed, 0 failed, 5 cancelled, ...)"),
    ("user_id", pl.Int64(), "user number"),
    ("group_id", pl.Int64(), "group number"),
    ("executable_id", pl.Int64(), "executable (application) number"),
    ("queue_id", pl.Int64(), "queue number"),
    ("partition_id", pl.Int64(), "partition number"),
    ("preceding_job_id", pl.Int64(), "preceding job number"),
    ("think_time_s", pl.Int64(), "think time from the preceding job, seconds"),
)

SWF_COLUMNS: Final[tuple[str, ...]] = tuple(name for name, _, _ in SWF_FIELDS)
SWF_SCHEMA: Final[dict[str, pl.DataType]] = {name: dtype for name, dtype, _ in SWF_FIELDS}

#: Largest machine size (processors) schedlab accepts: the simulator counts processors in int64
#: and compares them as float64, and no machine comes near 2**31 - 1.
MAX_MACHINE_PROCS: Final[int] = 2**31 - 1

#: Largest time, in seconds, the simulator accepts (submit time in absolute value; run, estimated
#: and requested times): 2**52 s, some 143 million years. The engines compute in float64, which
#: holds every whole number of seconds exactly only up to 2**53; with each time within 2**52, a
#: job's submit time plus its run, estimated or requested time stays within 2**53, so the event
#: times a schedule is made of are exact (a time of 2**62 s would be rounded to a multiple of
#: 1024 s, silently changing waits). ``docs/simulator.md``, "Input".
MAX_TIME_S: Final[int] = 2**52

#: Value SWF uses for "unknown".
SWF_UNKNOWN: Final[int] = -1

#: Bounded-slowdown threshold tau, seconds: bsld = max((wait + p) / max(p, tau), 1).
BSLD_TAU_S: Final[float] = 10.0

#: Length of a week, seconds (weekly resampling, trace statistics).
WEEK_S: Final[int] = 7 * 24 * 3600
