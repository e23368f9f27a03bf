"""Layer 0: errors, units, constants, atomic file writes, provenance, the registry and code hashes.

Imports nothing from the layers above (traces, policies, sim, studies, cli)."""
