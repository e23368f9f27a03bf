"""Known figures of the bundled KTH-SP2 log, shared by several test modules.

The strong-filter counts were obtained with scheduler.strong_filter and agree with an
independent NumPy filter written during development (27,992 jobs kept of 28,476).
"""

KTH_JOBS = 28476
KTH_KEPT = 27992
#: Strong-filter counts of KTH-SP2 (rule -> jobs).
KTH_FILTER_COUNTS = {
    "jobs_in": KTH_JOBS,
    "jobs_out": KTH_KEPT,
    "removed_procs_exceed_machine": 0,
    "repaired_procs": 0,
    "removed_no_procs": 1,
    "removed_bad_runtime_or_submit": 8,
    "removed_bad_requested_time": 475,
    "machine_procs": 100,
    "overrun": "drop",
    "clipped_overrun": 0,
}
#: KTH-SP2 jobs whose run time exceeds their (positive) requested time: clipped by
#: ``strong_filter(..., overrun="clip")`` (all of the 475 removed by rule 4 in "drop" mode).
KTH_CLIPPED = 475
