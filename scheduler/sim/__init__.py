"""Layer 3: the simulation engine: the compiled EASY kernel (private), the Python API
(Simulation, simulate), kernel input arrays and the metrics (one definition each)."""
