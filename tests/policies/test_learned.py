"""Learned functions as policies (scheduler.policies.learned): the form vocabulary, the fit
file, and the spec ``learned:PATH#RANK`` end to end through the engine and the command line."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from cli.helpers import argparse_exit, run, run_json
from hypothesis import given, settings
from hypothesis import strategies as st

import scheduler
from scheduler.core.errors import ConfigurationError
from scheduler.policies import POLICIES, get_policy, priority_key
from scheduler.policies.base import PolicyInputs
from scheduler.policies.learned import (
    FIT_COLUMNS,
    OPERATORS,
    TRANSFORMS,
    FunctionForm,
    all_forms,
    check_fit_table,
    load_function,
    parse_learned_spec,
    read_functions,
    register_learned,
    unregister_learned,
)
from scheduler.sim.api import simulate
from scheduler.traces.filters import strong_filter
from scheduler.traces.swf import Trace, read_swf

KTH_SLICE = Path(__file__).resolve().parents[2] / "resources" / "KTH-slice.swf.gz"

#: F1 of the paper as a fit-file row: log10(r) * n + 870 * log10(s).
F1_ROW = {
    "alpha": "log10",
    "beta": "x",
    "gamma": "log10",
    "op1": "*",
    "op2": "+",
    "c1": 1.0,
    "c2": 1.0,
    "c3": 870.0,
}


def fit_file(path: Path, *rows: dict[str, object]) -> Path:
    """Write a fit file with ``rows`` ranked 1, 2, ... (mae 0, no duplicates)."""
    table = pl.DataFrame(
        [{"rank": i + 1, **row, "mae": 0.0, "duplicate_of": None} for i, row in enumerate(rows)],
        schema={
            name: {"int": pl.Int64, "str": pl.String, "float": pl.Float64}[kind]
            for name, kind in FIT_COLUMNS
        },
    )
    table.write_parquet(path)
    return path


@pytest.fixture(scope="module")
def kth_slice() -> Trace:
    return strong_filter(read_swf(KTH_SLICE))[0]


# -- the vocabulary -----------------------------------------------------------------------------


def test_576_distinct_forms_of_which_176_duplicate_another():
    forms = all_forms()
    assert len(forms) == 4**3 * 3**2 == 576
    assert len(set(forms)) == 576
    duplicates = [form for form in forms if form.is_duplicate]
    assert len(duplicates) == 176  # 96 with "/ x|inv" in op1, 96 in op2, 16 in both
    canonical = {form.canonical for form in forms}
    assert len(canonical) == 400
    assert all(not form.canonical.is_duplicate for form in forms)  # one step reaches it


@pytest.mark.parametrize(
    ("fields", "canonical_fields"),
    [
        (("log10", "inv", "log10", "/", "+"), ("log10", "x", "log10", "*", "+")),
        (("x", "x", "sqrt", "/", "*"), ("x", "inv", "sqrt", "*", "*")),
        (("sqrt", "log10", "inv", "+", "/"), ("sqrt", "log10", "x", "+", "*")),
        (("inv", "inv", "x", "/", "/"), ("inv", "x", "inv", "*", "*")),
    ],
)
def test_dividing_by_x_or_inv_duplicates_the_product_with_the_reciprocal(fields, canonical_fields):
    form, canonical = FunctionForm(*fields), FunctionForm(*canonical_fields)
    assert form.is_duplicate
    assert form.canonical == canonical
    assert form.free == canonical.free
    r, n, s = np.array([3.0, 50.0]), np.array([2.0, 7.0]), np.array([10.0, 400.0])
    values = form.coefficients([2.5] * len(form.free))
    np.testing.assert_allclose(form.evaluate(r, n, s, values), canonical.evaluate(r, n, s, values))


@pytest.mark.parametrize(
    "form",
    [
        FunctionForm("x", "sqrt", "x", "/", "+"),  # dividing by sqrt: 1/sqrt is not a transform
        FunctionForm("x", "log10", "log10", "+", "/"),
        FunctionForm("log10", "x", "log10", "*", "+"),  # F1's form
        FunctionForm("inv", "x", "x", "+", "+"),  # inv of r: r is never a divisor
    ],
)
def test_other_forms_are_their_own_canonical_form(form):
    assert not form.is_duplicate
    assert form.canonical == form


def test_evaluate_against_hand_computed_values():
    r, n, s = np.array([100.0, 1000.0]), np.array([4.0, 16.0]), np.array([10.0, 10000.0])
    f1 = FunctionForm("log10", "x", "log10", "*", "+")
    # (1*2)*(1*4) + 870*1 = 878; (1*3)*(1*16) + 870*4 = 3528
    np.testing.assert_allclose(f1.evaluate(r, n, s, (1, 1, 870)), [878.0, 3528.0])
    # ((2*sqrt(r)) + (3*log10(n))) / (0.5 * (1/s)) = (2*10 + 3*log10 4) * 2 * 10
    form = FunctionForm("sqrt", "log10", "inv", "+", "/")
    expected = [(20 + 3 * math.log10(4)) * 20, (2 * math.sqrt(1000) + 3 * math.log10(16)) * 20000]
    np.testing.assert_allclose(form.evaluate(r, n, s, (2, 3, 0.5)), expected)
    # op1 is applied first, whatever the operators: (r / n) * s, not r / (n * s)
    form = FunctionForm("x", "x", "x", "/", "*")
    np.testing.assert_allclose(form.evaluate(r, n, s, (1, 1, 1)), [250.0, 625000.0])
    # ((4 / r) * (1 / n)) / (2 * sqrt(s))
    form = FunctionForm("inv", "inv", "sqrt", "*", "/")
    expected = [(0.04 * 0.25) / (2 * math.sqrt(10)), (0.004 / 16) / 200]
    np.testing.assert_allclose(form.evaluate(r, n, s, (4, 1, 2)), expected)


@pytest.mark.parametrize(
    ("ops", "free"),
    [(("+", "+"), (0, 1, 2)), (("+", "*"), (0, 1)), (("+", "/"), (0, 1)),
     (("*", "+"), (0, 2)), (("/", "+"), (0, 2)), (("*", "*"), (0,)), (("*", "/"), (0,)),
     (("/", "*"), (0,)), (("/", "/"), (0,))],
)  # fmt: skip
def test_free_coefficients_by_operators(ops, free):
    assert FunctionForm("x", "sqrt", "log10", *ops).free == free


positive = st.floats(1.0, 1e6, allow_nan=False, allow_infinity=False)
coefficient = st.floats(-1e3, 1e3, allow_nan=False).filter(lambda c: abs(c) > 1e-3)


@settings(max_examples=60, deadline=None)
@given(
    form=st.sampled_from(all_forms()),
    r=positive,
    n=st.floats(2.0, 1e4),
    s=st.floats(2.0, 1e6),
    values=st.lists(coefficient, min_size=3, max_size=3),
    factor=st.floats(0.01, 100.0),
)
def test_forms_are_linear_in_their_free_coefficients(form, r, n, s, values, factor):
    """What the fit relies on: f(θ) = Σ θ_k φ_k with the fixed coefficients at 1; hence also
    f(λθ) = λ f(θ), which simplify() relies on."""
    theta = values[: len(form.free)]
    coefficients = form.coefficients(theta)
    value = form.evaluate(r, n, s, coefficients)
    basis = [
        form.evaluate(r, n, s, form.coefficients([float(k == j) for k in range(len(theta))]))
        for j in range(len(theta))
    ]
    assert value == pytest.approx(sum(t * b for t, b in zip(theta, basis, strict=True)), rel=1e-9)
    scaled = form.evaluate(r, n, s, form.coefficients([factor * t for t in theta]))
    assert scaled == pytest.approx(factor * value, rel=1e-9)
    fixed = [c for i, c in enumerate(coefficients) if i not in form.free]
    assert fixed == [1.0] * (3 - len(form.free))


def test_expression_text():
    f1 = FunctionForm("log10", "x", "log10", "*", "+")
    assert f1.expression() == "c1*log10(r) * (c2*n) + c3*log10(s)"
    assert f1.expression((1.0, 1.0, 870.0)) == "log10(r) * n + 870*log10(s)"
    assert f1.expression((-1.0, 1.0, -5.0)) == "-log10(r) * n - 5*log10(s)"
    form = FunctionForm("sqrt", "inv", "x", "+", "/")
    assert form.expression() == "(c1*sqrt(r) + c2*1/n) / (c3*s)"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (("exp", "x", "x", "+", "+"), "alpha 'exp' is not a transform"),
        (("x", "x", "cube", "+", "+"), "gamma 'cube' is not a transform"),
        (("x", "x", "x", "-", "+"), "op1 '-' is not an operator; known: +, *, /"),
    ],
)
def test_unknown_transform_or_operator(fields, message):
    with pytest.raises(ConfigurationError, match=message.replace("+", r"\+").replace("*", r"\*")):
        FunctionForm(*fields)
    assert set(TRANSFORMS) == {"x", "log10", "sqrt", "inv"}
    assert OPERATORS == ("+", "*", "/")


# -- the fit file and the spec ------------------------------------------------------------------


def test_fit_file_round_trip(tmp_path):
    path = fit_file(tmp_path / "f.parquet", F1_ROW, {**F1_ROW, "c3": 2.0})
    table = read_functions(path)
    assert table.columns[: len(FIT_COLUMNS)] == [name for name, _ in FIT_COLUMNS]
    function = load_function(path, 2)
    assert function.form == FunctionForm("log10", "x", "log10", "*", "+")
    assert function.coefficients == (1.0, 1.0, 2.0)
    assert function.rank == 2


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("learned:results/learned/functions.parquet#1", ("results/learned/functions.parquet", 1)),
        ("  LEARNED:a#b.parquet#12 ", ("a#b.parquet", 12)),
    ],
)
def test_spec_syntax(spec, expected):
    path, rank = parse_learned_spec(spec)
    assert (str(path), rank) == expected


@pytest.mark.parametrize(
    "spec", ["learned:f.parquet", "learned:#1", "learned:f.parquet#0", "learned:f.parquet#x",
             "learned:f.parquet#-1", "learned f.parquet#1"],
)  # fmt: skip
def test_bad_spec_is_refused_showing_the_syntax(spec):
    with pytest.raises(ConfigurationError, match="expected learned:PATH#RANK"):
        get_policy(spec) if ":" in spec else parse_learned_spec(spec)


def test_unknown_spec_prefix_lists_the_known():
    with pytest.raises(ConfigurationError, match=r"unknown policy spec prefix 'learnt'.*learned"):
        get_policy("learnt:f.parquet#1")


def inputs(n: int = 5) -> PolicyInputs:
    return PolicyInputs(
        submit_s=np.arange(n, dtype=float) * 100.0 + 50.0,
        procs=np.arange(1, n + 1, dtype=float),
        estimate_s=np.full(n, 600.0),
        first_submit_s=50.0,
    )


def test_learned_key_equals_f1_key(tmp_path):
    path = fit_file(tmp_path / "f.parquet", F1_ROW)
    learned = priority_key(f"learned:{path}#1", inputs())
    f1 = priority_key("F1", inputs())
    assert learned.is_static
    np.testing.assert_array_equal(learned.base, f1.base)


def test_file_is_read_when_the_key_is_computed(tmp_path):
    path = tmp_path / "later.parquet"
    policy = get_policy(f"learned:{path}#1")  # no file yet: the spec is only parsed
    assert policy.name == f"learned:{path}#1"
    fit_file(path, F1_ROW)
    assert policy.key(inputs()).base.shape == (5,)


def test_missing_file_rank_beyond_the_table_and_bad_files_name_them(tmp_path):
    missing = tmp_path / "missing.parquet"
    with pytest.raises(ConfigurationError, match=rf"fit file {missing}: no such file"):
        priority_key(f"learned:{missing}#1", inputs())
    path = fit_file(tmp_path / "f.parquet", F1_ROW, F1_ROW)
    with pytest.raises(
        ConfigurationError, match=r"f.parquet: no function of rank 3 \(ranks 1..2\)"
    ):
        priority_key(f"learned:{path}#3", inputs())
    text = tmp_path / "text.parquet"
    text.write_text("rank,alpha\n1,x\n")
    with pytest.raises(ConfigurationError, match=r"text.parquet: not a parquet table"):
        priority_key(f"learned:{text}#1", inputs())
    short = tmp_path / "short.parquet"
    pl.DataFrame({"rank": [1], "alpha": ["x"]}).write_parquet(short)
    with pytest.raises(ConfigurationError, match=r"short.parquet: missing columns beta, gamma"):
        priority_key(f"learned:{short}#1", inputs())


def test_bad_rows_are_refused_naming_the_file_and_row(tmp_path):
    path = fit_file(tmp_path / "f.parquet", F1_ROW, {**F1_ROW, "beta": "cube"})
    with pytest.raises(ConfigurationError, match=r"f.parquet: row 2: .*beta 'cube'"):
        read_functions(path)
    path = fit_file(tmp_path / "nan.parquet", {**F1_ROW, "c1": math.nan})
    with pytest.raises(ConfigurationError, match=r"rank 1 .* has no finite coefficients"):
        load_function(path, 1)
    table = read_functions(fit_file(tmp_path / "ok.parquet", F1_ROW))
    with pytest.raises(ConfigurationError, match="ranks must be distinct integers >= 1"):
        check_fit_table(pl.concat([table, table]))


def test_a_function_not_finite_on_the_jobs_is_refused(tmp_path):
    # log10(q) = 0 for the one-processor job: a division by zero
    path = fit_file(tmp_path / "f.parquet", {**F1_ROW, "op1": "/", "beta": "log10"})
    with pytest.raises(ConfigurationError, match=r"rank 1 .* not finite for 1 of 5 jobs"):
        priority_key(f"learned:{path}#1", inputs())


# -- end to end ---------------------------------------------------------------------------------


def test_learned_f1_schedules_as_f1_job_by_job(tmp_path, kth_slice):
    path = fit_file(tmp_path / "f1.parquet", {**F1_ROW, "c3": 5.0}, F1_ROW)
    spec = f"learned:{path}#2"
    learned = scheduler.simulate(kth_slice, spec, spec)
    f1 = scheduler.simulate(kth_slice, "F1", "F1")
    assert learned.jobs["job_id"].to_list() == f1.jobs["job_id"].to_list()
    assert learned.jobs["start_s"].to_list() == f1.jobs["start_s"].to_list()
    assert learned.config.primary == learned.config.backfill == spec
    # the test can fail: another coefficient gives another schedule
    other = scheduler.simulate(kth_slice, f"learned:{path}#1", f"learned:{path}#1")
    assert other.jobs["start_s"].to_list() != f1.jobs["start_s"].to_list()


def test_alias_registered_at_run_time(tmp_path, kth_slice):
    path = fit_file(tmp_path / "f1.parquet", F1_ROW)
    spec = f"learned:{path}#1"
    assert scheduler.register_learned is register_learned  # the public API
    try:
        assert register_learned("best_1", spec) == "BEST_1"
        assert register_learned("best_1", spec) == "BEST_1"  # the same again: nothing to do
        assert "BEST_1" in scheduler.policy_names()
        with pytest.raises(ConfigurationError, match="the name is taken"):
            register_learned("BEST_1", f"learned:{path}#2")
        result = simulate(kth_slice, "best_1", "BEST_1")
        f1 = simulate(kth_slice, "F1", "F1")
        assert result.jobs["start_s"].to_list() == f1.jobs["start_s"].to_list()
        assert result.config.primary == "BEST_1"
    finally:
        unregister_learned("best_1")
    assert "BEST_1" not in POLICIES
    with pytest.raises(ConfigurationError, match="the name is taken"):
        register_learned("f1", spec)
    for name in ("best-1", "", "learned:x"):
        with pytest.raises(ConfigurationError, match="letters, digits and _ only"):
            register_learned(name, spec)
    with pytest.raises(ConfigurationError, match="expected learned:PATH#RANK"):
        register_learned("best", "F1")
    with pytest.raises(ConfigurationError, match="not a learned policy alias"):
        unregister_learned("F1")


def test_command_line_accepts_the_spec(tmp_path, capsys):
    path = fit_file(tmp_path / "f1.parquet", F1_ROW)
    spec = f"learned:{path}#1"
    learned = run_json(capsys, "simulate", KTH_SLICE, "--primary", spec, "--backfill", spec)
    f1 = run_json(capsys, "simulate", KTH_SLICE, "--primary", "F1", "--backfill", "F1")
    assert learned["config"]["primary"] == spec
    assert learned["summary"] == f1["summary"]
    code, _, err = run(capsys, "simulate", KTH_SLICE, "--primary", f"learned:{path}#4")
    assert code == 2
    assert "no function of rank 4" in err and "Traceback" not in err
    code, err = argparse_exit(capsys, "simulate", KTH_SLICE, "--backfill", "learned:f1.parquet")
    assert code == 2 and "argument --backfill: policy spec" in err
    assert "expected learned:PATH#RANK" in err
    code, out, _ = run(capsys, "policies")
    assert code == 0 and "learned:PATH#RANK" in out


# -- a fit file too large to be one (refused from its metadata, before it is loaded) -----------


def constant_fit_file(path: Path, groups: int, rows_per_group: int = 100_000) -> Path:
    """A parquet fit file of ``groups * rows_per_group`` copies of one row, written in row
    groups of constant (run-length encoded) columns: a few kilobytes per million rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = rows_per_group

    def text(value: str) -> pa.Array:
        return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)), pa.array([value]))

    row = {"rank": pa.array(np.ones(n, np.int64)), "alpha": text("log10"), "beta": text("x"),
           "gamma": text("log10"), "op1": text("*"), "op2": text("+"),
           **{c: pa.array(np.ones(n)) for c in ("c1", "c2", "c3", "mae")},
           "duplicate_of": pa.nulls(n, pa.int64())}  # fmt: skip
    table = pa.table(row)
    with pq.ParquetWriter(path, table.schema, compression="zstd") as writer:
        for _ in range(groups):
            writer.write_table(table)
    return path


def test_a_fit_file_of_millions_of_rows_is_refused_before_it_is_read(
    tmp_path, kth_slice, monkeypatch
):
    """A 6.4 MB fit file of 200 million constant rows, given as learned:bomb.parquet#1,
    reached 3.9 GB resident and aborted; its metadata tells it is no fit file."""
    bomb = constant_fit_file(tmp_path / "bomb.parquet", groups=20)  # 2,000,000 rows
    assert bomb.stat().st_size < 1_000_000

    def no_load(*args, **kwargs):
        raise AssertionError("the fit file was loaded")

    monkeypatch.setattr(pl, "read_parquet", no_load)
    with pytest.raises(ConfigurationError) as info:
        scheduler.simulate(kth_slice, f"learned:{bomb}#1")
    message = str(info.value)
    assert message.startswith(f"fit file {bomb}: 2,000,000 rows")
    assert "at most 10,000" in message


def test_a_fit_file_too_large_on_disk_is_refused(tmp_path, monkeypatch):
    from scheduler.policies import learned

    path = fit_file(tmp_path / "f.parquet", F1_ROW)
    monkeypatch.setattr(learned, "MAX_FIT_FILE_BYTES", path.stat().st_size - 1)
    with pytest.raises(ConfigurationError, match=r"f\.parquet: .* bytes, more than a fit file"):
        load_function(path, 1)


def test_a_fit_table_beyond_the_bound_is_not_written(tmp_path):
    from scheduler.policies.learned import MAX_FIT_ROWS
    from scheduler.studies.learned.regression import write_functions

    table = pl.DataFrame({"rank": range(1, MAX_FIT_ROWS + 2), **{k: v for k, v in F1_ROW.items()},
                          "mae": 0.0, "duplicate_of": None})  # fmt: skip
    with pytest.raises(ConfigurationError, match=r"10,001 rows, more than a fit file holds"):
        write_functions(table, tmp_path / "big.parquet")
    assert not (tmp_path / "big.parquet").exists()


def test_the_command_line_refuses_the_bomb_in_one_line(tmp_path, capsys):
    from cli.helpers import assert_one_line_error

    bomb = constant_fit_file(tmp_path / "bomb.parquet", groups=1, rows_per_group=20_000)
    code, out, err = run(capsys, "simulate", KTH_SLICE, "--primary", f"learned:{bomb}#1")
    assert_one_line_error(code, out, err, f"fit file {bomb}: 20,000 rows")
