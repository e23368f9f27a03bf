"""``scheduler warmup`` (scheduler.cli.warmup): every kernel specialisation a real run needs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli.helpers import OTHER_OPTIONS, SPF_40H, run

from scheduler.sim.cache import kernel_signatures


def test_warmup_covers_every_kernel_specialisation(
    capsys: pytest.CaptureFixture[str], kth_path: Path
) -> None:
    code, out, _ = run(capsys, "warmup")
    assert code == 0
    assert re.search(r"simulator kernel ready in \d+ ms", out)
    signatures = list(kernel_signatures())
    assert signatures
    # Real runs with other policies and options need no further specialisation.
    for options in (SPF_40H, OTHER_OPTIONS):
        assert run(capsys, "simulate", kth_path, *options)[0] == 0
    assert list(kernel_signatures()) == signatures
