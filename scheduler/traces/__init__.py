"""Layer 1: workload traces: SWF read/write, the trace catalogue (machine sizes), filters,
download, resampling, summaries, synthetic workloads (the Lublin-Feitelson model, user
estimates), and the workflow steps that prepare traces (download, filter, split, resample)."""
