"""The regression over function forms (scheduler.studies.learned.regression): known coefficients
recovered from a synthetic score surface, ranks and duplicates, simplify, the fit file."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from scheduler.core.errors import ConfigurationError
from scheduler.policies import priority_key
from scheduler.policies.base import PolicyInputs
from scheduler.policies.learned import FIT_COLUMNS, FunctionForm, all_forms, read_functions
from scheduler.studies.learned.regression import (
    FIT_EXTRA_COLUMNS,
    fit_forms,
    simplify,
    write_functions,
)

F1_FORM = FunctionForm("log10", "x", "log10", "*", "+")


def observations(count: int = 300, seed: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """r log-uniform in [1, 1e5] s, n in 1..256 (with n = 1), s in [0, 2e5] s (with s = 0)."""
    rng = np.random.default_rng(seed)
    r = np.round(10 ** rng.uniform(0, 5, count))
    n = rng.integers(1, 257, count).astype(float)
    n[:5] = 1.0
    s = rng.uniform(0, 2e5, count)
    s[0] = 0.0
    return r, n, s


def surface(form: FunctionForm, free: list[float], noise: float, seed: int = 2):
    """Observations and scores f*(r, n, s + 1 s) · (1 + noise · N(0, 1))."""
    r, n, s = observations()
    score = form.evaluate(r, n, s + 1.0, form.coefficients(free))
    rng = np.random.default_rng(seed)
    return r, n, s, score * (1.0 + noise * rng.standard_normal(score.shape))


@pytest.fixture(scope="module")
def f1_fit() -> pl.DataFrame:
    """The 576 forms fitted to a surface of F1's form: c1·c2 = 2, c3 = 1740."""
    return fit_forms(*surface(F1_FORM, [2.0, 1740.0], 1e-4))


def form_of(row: dict[str, object]) -> FunctionForm:
    return FunctionForm(row["alpha"], row["beta"], row["gamma"], row["op1"], row["op2"])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("form", "free"),
    [
        (F1_FORM, [2.0, 1740.0]),
        (FunctionForm("sqrt", "log10", "log10", "+", "+"), [0.5, 30.0, -20.0]),
        (FunctionForm("x", "sqrt", "log10", "/", "*"), [3e-4]),
        (FunctionForm("log10", "x", "sqrt", "+", "/"), [40.0, 0.25]),
    ],
)
def test_known_form_ranks_first_with_its_coefficients(form, free):
    fit = f1_fit_or_new(form, free)
    best = fit.row(0, named=True)
    assert form_of(best) == form
    assert best["rank"] == 1 and best["duplicate_of"] is None
    fitted = [(best["c1"], best["c2"], best["c3"])[k] for k in form.free]
    np.testing.assert_allclose(fitted, free, rtol=1e-2)
    fixed = [(best["c1"], best["c2"], best["c3"])[k] for k in range(3) if k not in form.free]
    assert fixed == [1.0] * (3 - len(form.free))
    assert best["mae"] < 1e-3 * float(np.mean(np.abs(surface(form, free, 0.0)[3])))
    assert fit.row(1, named=True)["mae"] >= best["mae"]


def f1_fit_or_new(form: FunctionForm, free: list[float]) -> pl.DataFrame:
    return fit_forms(*surface(form, free, 1e-4))


def test_ranks_order_by_mae_and_every_form_is_there(f1_fit):
    assert f1_fit.columns == [name for name, _ in FIT_COLUMNS] + list(FIT_EXTRA_COLUMNS)
    assert f1_fit["rank"].to_list() == list(range(1, 577))
    forms = [form_of(row) for row in f1_fit.iter_rows(named=True)]
    assert set(forms) == set(all_forms())
    mae = f1_fit["mae"].to_numpy()
    defined = int(np.isfinite(mae).sum())
    assert (np.diff(mae[:defined]) >= 0).all()
    assert np.isposinf(mae[defined:]).all()
    assert f1_fit["n_free"].to_list() == [len(form.free) for form in forms]


def test_duplicates_point_to_their_canonical_form(f1_fit):
    rows = {row["rank"]: row for row in f1_fit.iter_rows(named=True)}
    duplicates = [row for row in rows.values() if row["duplicate_of"] is not None]
    assert len(duplicates) == 176
    for row in duplicates:
        canonical = rows[row["duplicate_of"]]
        assert form_of(row).canonical == form_of(canonical)
        assert canonical["duplicate_of"] is None
        assert canonical["rank"] < row["rank"]
        for column in ("mae", "c1", "c2", "c3"):
            same = row[column] == canonical[column]
            assert same or (math.isnan(row[column]) and math.isnan(canonical[column]))
    # the hand example: log10(r) / (1/n) + log10(s) duplicates F1's form, ranked right after it
    second = rows[2]
    assert form_of(second) == FunctionForm("log10", "inv", "log10", "/", "+")
    assert second["duplicate_of"] == 1
    r, n, s = observations(20)
    coefficients = (second["c1"], second["c2"], second["c3"])
    np.testing.assert_allclose(
        form_of(second).evaluate(r, n, s + 1, coefficients),
        F1_FORM.evaluate(r, n, s + 1, (rows[1]["c1"], rows[1]["c2"], rows[1]["c3"])),
    )


def test_forms_dividing_by_a_zero_log_are_not_fitted_and_rank_last(f1_fit):
    # n = 1 and s = 0 (s + 1 s = 1) are in the data: log10 is 0 there
    undefined = f1_fit.filter(
        ((pl.col("op1") == "/") & (pl.col("beta") == "log10"))
        | ((pl.col("op2") == "/") & (pl.col("gamma") == "log10"))
    )
    assert undefined.height == 48 + 48 - 4
    assert undefined["mae"].is_infinite().all()
    assert undefined["wsse"].is_infinite().all()
    assert undefined["c1"].is_nan().all()
    assert sorted(undefined["rank"].to_list()) == list(range(576 - 92 + 1, 577))


def test_fit_is_deterministic():
    data = surface(FunctionForm("sqrt", "x", "inv", "*", "+"), [1.5, 7.0], 1e-2)
    first, second = fit_forms(*data), fit_forms(*data)
    assert first.equals(second)


def test_weighted_least_squares_is_eq_4():
    """With noise, the fitted coefficients minimise Σ ((r n)(f − score))²: moving them
    raises it (so the fit is weighted, not plain least squares)."""
    form = FunctionForm("x", "x", "log10", "+", "+")
    r, n, s, score = surface(form, [1.0, 10.0, 100.0], 0.3, seed=5)
    row = fit_forms(r, n, s, score).filter(
        (pl.col("alpha") == "x") & (pl.col("beta") == "x") & (pl.col("gamma") == "log10")
        & (pl.col("op1") == "+") & (pl.col("op2") == "+")
    ).row(0, named=True)  # fmt: skip
    best = np.array([row["c1"], row["c2"], row["c3"]])

    def wsse(c: np.ndarray) -> float:
        return float(np.sum((r * n * (form.evaluate(r, n, s + 1, c) - score)) ** 2))

    assert wsse(best) == pytest.approx(row["wsse"], rel=1e-9)
    for k in range(3):
        for step in (1e-3, -1e-3):
            moved = best.copy()
            moved[k] *= 1 + step
            assert wsse(moved) > wsse(best)
    # the unweighted solution differs
    design = np.column_stack([r, n, np.log10(s + 1)])
    plain = np.linalg.lstsq(design, score, rcond=None)[0]
    assert not np.allclose(plain, best, rtol=1e-3)
    assert row["mae"] == pytest.approx(np.mean(np.abs(design @ best - score)), rel=1e-12)


@pytest.mark.parametrize(
    ("arrays", "message"),
    [
        (([1, 2, 3], [1, 1, 1], [0, 0, 0], [1, 1, 1]), "3 observations, need at least 4"),
        (([1, 2, 3, 4], [1, 1, 1], [0] * 4, [1] * 4), "n has 3 values, expected 4"),
        (([0, 2, 3, 4], [1] * 4, [0] * 4, [1] * 4), "must be > 0"),
        (([1, 2, 3, 4], [1] * 4, [0, -1, 0, 0], [1] * 4), "s .* < 0"),
        (([1, 2, 3, 4], [1] * 4, [0] * 4, [1, math.nan, 1, 1]), "score holds values that are not"),
        (([[1, 2]], [1] * 4, [0] * 4, [1] * 4), "r must be 1-D"),
    ],
)
def test_bad_observations(arrays, message):
    with pytest.raises(ConfigurationError, match=message):
        fit_forms(*arrays)


def test_simplify_merges_coefficients_as_table_3(f1_fit):
    simple = simplify(f1_fit, top=3)
    assert simple["rank"].to_list() == [1, 2, 3]
    assert simple["duplicate_of"].is_null().all()
    first = simple.row(0, named=True)
    assert form_of(first) == F1_FORM and first["fit_rank"] == 1
    # c1·log10(r)·c2·n + c3·log10(s) -> log10(r)·n + (c3/(c1·c2))·log10(s)
    assert (first["c1"], first["c2"]) == (1.0, 1.0)
    assert first["c3"] == pytest.approx(870.0, rel=1e-2)
    assert first["scale"] == pytest.approx(2.0, rel=1e-2)
    assert not first["flipped"]
    assert first["function"].startswith("log10(r) * n + 8")
    # no duplicate among the simplified functions
    fit_ranks = simple["fit_rank"].to_list()
    originals = f1_fit.filter(pl.col("rank").is_in(fit_ranks))
    assert originals["duplicate_of"].is_null().all()


def test_simplify_keeps_the_sign_when_the_factor_is_negative():
    fit = fit_forms(*surface(F1_FORM, [-2.0, 1740.0], 1e-4))
    first = simplify(fit, top=1).row(0, named=True)
    assert form_of(first) == F1_FORM and first["flipped"]
    assert first["c1"] == -1.0 and first["c3"] == pytest.approx(870.0, rel=1e-2)
    assert first["scale"] == pytest.approx(2.0, rel=1e-2)  # divided by |c1·c2|, not by c1·c2
    assert first["function"].startswith("-log10(r) * n + 8")


def test_simplified_functions_order_jobs_as_the_fitted_ones(f1_fit, tmp_path):
    fitted = write_functions(f1_fit, tmp_path / "fit.parquet")
    simple = simplify(f1_fit, top=4)
    simplified = write_functions(simple, tmp_path / "nested" / "simple.parquet")
    rng = np.random.default_rng(3)
    jobs = PolicyInputs(
        submit_s=np.sort(rng.uniform(0, 1e5, 50)),
        procs=rng.integers(2, 64, 50).astype(float),
        estimate_s=rng.uniform(2, 1e4, 50),
        first_submit_s=0.0,
    )
    for row in simple.iter_rows(named=True):
        a = priority_key(f"learned:{fitted}#{row['fit_rank']}", jobs).base
        b = priority_key(f"learned:{simplified}#{row['rank']}", jobs).base
        np.testing.assert_array_equal(np.argsort(a, kind="stable"), np.argsort(b, kind="stable"))
        np.testing.assert_allclose(a / row["scale"], b, rtol=1e-12)


def test_write_functions_round_trip_and_checks(f1_fit, tmp_path):
    path = write_functions(f1_fit, tmp_path / "functions.parquet")
    back = read_functions(path)
    assert back.equals(f1_fit)
    with pytest.raises(ConfigurationError, match=r"bad.parquet: missing column mae"):
        write_functions(f1_fit.drop("mae"), tmp_path / "bad.parquet")
    assert not (tmp_path / "bad.parquet").exists()
    with pytest.raises(ConfigurationError, match="top must be a positive integer"):
        simplify(f1_fit, top=0)
