"""Layer 5: the ``scheduler`` command, one module per command group."""

from scheduler.cli.main import main

__all__ = ["main"]
