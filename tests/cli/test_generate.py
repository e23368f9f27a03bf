"""``scheduler generate lublin``: the synthetic workload written as SWF."""

from __future__ import annotations

from cli.helpers import assert_one_line_error, run, run_json

from scheduler.core.version import __version__
from scheduler.traces.lublin import lublin_jobs
from scheduler.traces.swf import read_swf


def test_generate_writes_the_model_with_estimates_and_a_header(capsys, tmp_path):
    out = tmp_path / "model.swf.gz"
    summary = run_json(
        capsys, "generate", "lublin", "--procs", "256", "--jobs", "800", "--seed", "1",
        "--estimates", "--out", out,
    )  # fmt: skip
    assert summary["jobs"] == 800 and summary["version"] == __version__
    trace = read_swf(out)
    assert trace.machine_procs == 256 and trace.jobs.height == 800
    notes = " ".join(trace.header.values("Note"))
    assert "Lublin" in notes and "seed=1" in notes and f"schedlab {__version__}" in notes
    assert "with_estimates(seed=1" in notes
    jobs = trace.jobs
    assert (jobs["req_time_s"] >= jobs["run_s"]).all()
    # the jobs are the API's jobs: only the requested times were added
    plain = lublin_jobs(800, machine_procs=256, seed=1)
    assert jobs.drop("req_time_s").equals(plain.drop("req_time_s"))


def test_generate_is_byte_identical_for_a_seed_and_leaves_requests_unknown(capsys, tmp_path):
    paths = [tmp_path / f"{name}.swf" for name in ("a", "b", "c")]
    for path, seed in zip(paths, ("3", "3", "4"), strict=True):
        code, out, err = run(
            capsys, "generate", "lublin", "--jobs", "300", "--seed", seed,
            "--job-types", "combined", "--out", path,
        )  # fmt: skip
        assert code == 0, err
        assert str(path) in out
    assert paths[0].read_bytes() == paths[1].read_bytes() != paths[2].read_bytes()
    trace = read_swf(paths[0])
    assert (trace.jobs["req_time_s"] == -1).all() and (trace.jobs["queue_id"] == -1).all()
    assert "job_types=combined" in " ".join(trace.header.values("Note"))


def test_generate_errors_are_one_line(capsys, tmp_path):
    code, out, err = run(
        capsys, "generate", "lublin", "--procs", "16", "--seed", "1", "--out", tmp_path / "x.swf"
    )
    assert_one_line_error(code, out, err, "machine_procs=16", "at least 33")
    code, out, err = run(
        capsys, "generate", "lublin", "--jobs", "200", "--seed", "1", "--estimates",
        "--max-estimate", "600", "--out", tmp_path / "y.swf",
    )  # fmt: skip
    assert_one_line_error(code, out, err, "max_estimate_s")
    assert not (tmp_path / "x.swf").exists() and not (tmp_path / "y.swf").exists()
