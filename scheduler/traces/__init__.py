"""Layer 1: workload traces: SWF read/write, filters, download, resampling, summaries, and
the workflow steps that prepare traces (download, filter, split, resample)."""
