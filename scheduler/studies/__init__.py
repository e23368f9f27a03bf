"""Layer 4: the studies, one sub-package each (tuning, online, ...), and what they share
(studies.common: plans' common parts, tables, statistics, figure theme)."""
