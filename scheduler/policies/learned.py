"""Learned priority functions (Carastan-Santos & de Camargo, SC'17) as queue orders.

Three things live here, all below the simulator (``docs/learned.md``):

- **the function-form vocabulary**: a form is ``f(r, n, s) = ((c1·α(r)) op1 (c2·β(n))) op2
  (c3·γ(s))`` with α, β, γ in :data:`TRANSFORMS` (``x``, ``log10``, ``sqrt``, ``inv`` = 1/x) and
  op1, op2 in :data:`OPERATORS` (``+``, ``*``, ``/``), read left to right as the authors' code
  composes it (op1 first, whatever the operators): 4³·3² = 576 :class:`FunctionForm` s
  (:func:`all_forms`). r is the job's processing time (s), n its processors, s its submit time
  relative to an origin plus :data:`~scheduler.policies.base.SUBMIT_OFFSET_S` (s, >= 1 s);
- **the fit-file format**: a parquet table, one row per form (:data:`FIT_COLUMNS`), written by
  ``scheduler.studies.learned.regression.write_functions`` and read by :func:`read_functions`;
- **the policies**: the spec ``learned:PATH#RANK`` (e.g. ``learned:results/learned/functions
  .parquet#1``) is the static key ``f(est_j, q_j, r'_j)`` of the fit file's row of that rank,
  smallest first, with ``r'_j = r_j - r_first + 1 s`` as for F1-F4. :func:`~scheduler.policies
  .base.get_policy` resolves such specs through :data:`~scheduler.policies.base.POLICY_SPECS`, so
  ``scheduler.simulate(trace, "learned:f.parquet#1")`` and ``scheduler simulate --primary
  learned:f.parquet#1`` need no code edit. The file is read when the key is computed. An alias
  name (``[A-Za-z0-9_]+``, as workflow wildcards need) is registered with
  :func:`register_learned`.

Identifiability: only some products and quotients of c1, c2, c3 are determined by a form
(:attr:`FunctionForm.free`); the others are fixed to 1, so a fit file's coefficients always
evaluate the fitted function as written. A form that divides by ``x`` or by ``inv`` of a
variable is the same function family as the one that multiplies by the reciprocal transform
(:attr:`FunctionForm.canonical`): 176 of the 576 forms duplicate one of the other 400.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from scheduler.core.errors import ConfigurationError, quote
from scheduler.policies.base import (
    POLICIES,
    POLICY_SPECS,
    Policy,
    PolicyInputs,
    PriorityKey,
    relative_submit_s,
)

if TYPE_CHECKING:
    import polars as pl

__all__ = [
    "FIT_COLUMNS",
    "LEARNED_PREFIX",
    "MAX_FIT_DATA_BYTES",
    "MAX_FIT_FILE_BYTES",
    "MAX_FIT_ROWS",
    "OPERATORS",
    "TRANSFORMS",
    "FunctionForm",
    "LearnedFunction",
    "all_forms",
    "check_fit_table",
    "learned_key",
    "learned_policy",
    "learned_policy_files",
    "load_function",
    "parse_learned_spec",
    "read_functions",
    "register_learned",
    "unregister_learned",
]


def _identity(x: np.ndarray) -> np.ndarray:
    return x


def _reciprocal(x: np.ndarray) -> np.ndarray:
    return 1.0 / x


#: The transforms α, β, γ by name, in the enumeration order; each maps float64 arrays of
#: positive values elementwise (``log10`` is 0 at 1, so dividing by it can be undefined).
TRANSFORMS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "x": _identity,
    "log10": np.log10,
    "sqrt": np.sqrt,
    "inv": _reciprocal,
}
#: How each transform is written of a variable ``v``.
_TRANSFORM_TEXT = {"x": "{v}", "log10": "log10({v})", "sqrt": "sqrt({v})", "inv": "1/{v}"}
#: The operators op1, op2, in the enumeration order.
OPERATORS: tuple[str, ...] = ("+", "*", "/")
#: Transforms whose reciprocal is also a transform: dividing by one multiplies by the other.
_RECIPROCAL = {"x": "inv", "inv": "x"}

#: The fit-file columns and their kinds (``int``, ``str``, ``float``), in file order. ``rank``
#: 1, 2, ... by increasing ``mae`` (ties: the non-duplicate first, then the enumeration order);
#: ``c1..c3`` evaluate the fitted function as written (non-identifiable ones are 1; NaN when the
#: form is undefined on the data); ``mae`` the mean absolute error (inf: not fitted);
#: ``duplicate_of`` the rank of the form this one duplicates (null when it is not a duplicate).
FIT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("rank", "int"),
    ("alpha", "str"),
    ("beta", "str"),
    ("gamma", "str"),
    ("op1", "str"),
    ("op2", "str"),
    ("c1", "float"),
    ("c2", "float"),
    ("c3", "float"),
    ("mae", "float"),
    ("duplicate_of", "int"),
)

#: Most rows a fit file may hold. A fit file has one row per function form, and there are 576
#: forms (:func:`all_forms`; the learned study writes its ``top`` best, at most 576); 10,000
#: leaves a wide margin and bounds what loading one can cost. A file is checked from its
#: parquet metadata before it is loaded: a 6.4 MB file of 200 million constant rows (run-length
#: encoded) would otherwise take gigabytes of memory.
MAX_FIT_ROWS = 10_000
#: Largest fit file on disk, bytes. The study's fit file of all 576 forms, with its extra
#: columns, is some 32 KB; 16 MiB also bounds what reading the metadata costs.
MAX_FIT_FILE_BYTES = 16 * 2**20
#: Largest uncompressed size of a fit file's data, bytes, by its metadata (the 576 forms: some
#: 110 KB): a few rows of enormous strings are refused too.
MAX_FIT_DATA_BYTES = 64 * 2**20

#: The spec prefix of learned functions: ``learned:PATH#RANK``.
LEARNED_PREFIX = "learned"
_SPEC_SYNTAX = "learned:PATH#RANK with RANK a positive integer (e.g. learned:functions.parquet#1)"
_ALIAS = re.compile(r"[A-Za-z0-9_]+")


# -- the vocabulary -----------------------------------------------------------------------------


def _combine(op: str, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    if op == "+":
        return left + right
    if op == "*":
        return left * right
    return left / right


def _number(value: float) -> str:
    return f"{value:.6g}"


@dataclass(frozen=True)
class FunctionForm:
    """One form ``((c1·α(r)) op1 (c2·β(n))) op2 (c3·γ(s))``, op1 applied first.

    Attributes
    ----------
    alpha, beta, gamma
        Transform names (keys of :data:`TRANSFORMS`) of r (processing time, s), n (processors)
        and s (submit time from the origin plus 1 s, s).
    op1, op2
        Operators (``+``, ``*``, ``/``).
    """

    alpha: str
    beta: str
    gamma: str
    op1: str
    op2: str

    def __post_init__(self) -> None:
        for field in ("alpha", "beta", "gamma"):
            value = getattr(self, field)
            if value not in TRANSFORMS:
                raise ConfigurationError(
                    f"function form: {field} {quote(value)} is not a transform; known: "
                    f"{', '.join(TRANSFORMS)}"
                )
        for field in ("op1", "op2"):
            value = getattr(self, field)
            if value not in OPERATORS:
                raise ConfigurationError(
                    f"function form: {field} {quote(value)} is not an operator; known: "
                    f"{', '.join(OPERATORS)}"
                )

    def evaluate(
        self,
        r: np.ndarray | float,
        n: np.ndarray | float,
        s: np.ndarray | float,
        coefficients: Sequence[float],
    ) -> np.ndarray:
        """``f(r, n, s)`` elementwise (NumPy broadcasting), float64.

        Parameters
        ----------
        r, n, s
            Processing time (s, > 0), processors (> 0), submit time from the origin plus 1 s
            (s, > 0). Transforms are applied as they are: ``log10`` of 1 is 0, so a form
            dividing by it gives inf there.
        coefficients
            ``(c1, c2, c3)``.
        """
        return self.combine(
            TRANSFORMS[self.alpha](np.asarray(r, dtype=np.float64)),
            TRANSFORMS[self.beta](np.asarray(n, dtype=np.float64)),
            TRANSFORMS[self.gamma](np.asarray(s, dtype=np.float64)),
            coefficients,
        )

    def combine(
        self,
        alpha_r: np.ndarray,
        beta_n: np.ndarray,
        gamma_s: np.ndarray,
        coefficients: Sequence[float],
    ) -> np.ndarray:
        """``f`` from the transformed variables ``α(r), β(n), γ(s)`` (a fit computes the twelve
        transforms once for all forms); :meth:`evaluate` is this on the transforms."""
        c1, c2, c3 = (float(c) for c in coefficients)
        left = _combine(self.op1, c1 * alpha_r, c2 * beta_n)
        return _combine(self.op2, left, c3 * gamma_s)

    @property
    def free(self) -> tuple[int, ...]:
        """Indices (0-based) of the identifiable coefficients; the others are fixed to 1.

        ``(+, +)``: all three. ``(+, *|/)``: c1, c2 (only c1·c3 and c2·c3, or c1/c3 and
        c2/c3, are determined). ``(*|/, +)``: c1, c3 (only c1·c2 or c1/c2 is). Otherwise c1
        alone (one product or quotient of the three). In each case the form is *linear* in
        its free coefficients (with the fixed ones at 1): f = Σ_k c_k φ_k(r, n, s).
        """
        if self.op1 == "+":
            return (0, 1, 2) if self.op2 == "+" else (0, 1)
        return (0, 2) if self.op2 == "+" else (0,)

    def coefficients(self, free_values: Sequence[float]) -> tuple[float, float, float]:
        """``(c1, c2, c3)`` from the values of the :attr:`free` ones (the others are 1)."""
        values = [float(v) for v in free_values]
        if len(values) != len(self.free):
            raise ValueError(f"{self} has {len(self.free)} free coefficients, got {len(values)}")
        full = [1.0, 1.0, 1.0]
        for index, value in zip(self.free, values, strict=True):
            full[index] = value
        return (full[0], full[1], full[2])

    @property
    def canonical(self) -> FunctionForm:
        """The form of the same function family written without ``/ x`` or ``/ inv``.

        ``a / (c·x)`` is ``a · ((1/c)·inv(x))`` and ``a / (c·inv(x))`` is ``a · ((1/c)·x)``:
        each such division becomes a product with the reciprocal transform. Every other form is
        its own canonical form.
        """
        beta, op1, gamma, op2 = self.beta, self.op1, self.gamma, self.op2
        if op1 == "/" and beta in _RECIPROCAL:
            beta, op1 = _RECIPROCAL[beta], "*"
        if op2 == "/" and gamma in _RECIPROCAL:
            gamma, op2 = _RECIPROCAL[gamma], "*"
        return FunctionForm(self.alpha, beta, gamma, op1, op2)

    @property
    def is_duplicate(self) -> bool:
        """True when another form (:attr:`canonical`) describes the same functions."""
        return self.canonical != self

    def expression(self, coefficients: Sequence[float] | None = None) -> str:
        """The form as text: ``c1*log10(r) * c2*n + c3*log10(s)``, or with numbers.

        Coefficients equal to 1 are left out; terms after ``/`` and sums before ``*`` or ``/``
        are parenthesised so that the usual precedence reads as the form's.
        """
        terms = [
            _term(name, transform, variable, None if coefficients is None else coefficients[i])
            for i, (name, transform, variable) in enumerate(
                (("c1", self.alpha, "r"), ("c2", self.beta, "n"), ("c3", self.gamma, "s"))
            )
        ]
        left = _join(terms[0], self.op1, terms[1])
        if self.op1 == "+" and self.op2 != "+":
            left = f"({left})"
        return _join(left, self.op2, terms[2])

    def __str__(self) -> str:
        return self.expression()


def _term(symbol: str, transform: str, variable: str, value: float | None) -> str:
    text = _TRANSFORM_TEXT[transform].format(v=variable)
    if value is None:
        return f"{symbol}*{text}"
    if value == 1.0:
        return text
    if value == -1.0:
        return f"-{text}"
    return f"{_number(value)}*{text}"


def _join(left: str, op: str, right: str) -> str:
    compound = any(mark in right for mark in "*/") or right.startswith("-")
    if op == "+" and right.startswith("-"):
        return f"{left} - {right[1:]}"
    if compound and op != "+":
        right = f"({right})"
    return f"{left} {op} {right}"


def all_forms() -> tuple[FunctionForm, ...]:
    """The 576 forms, in a fixed order: op1, op2, then α, β, γ, each in vocabulary order."""
    return tuple(
        FunctionForm(alpha, beta, gamma, op1, op2)
        for op1 in OPERATORS
        for op2 in OPERATORS
        for alpha in TRANSFORMS
        for beta in TRANSFORMS
        for gamma in TRANSFORMS
    )


# -- the fit file -------------------------------------------------------------------------------


def check_fit_table(table: pl.DataFrame, where: str = "fit table") -> pl.DataFrame:
    """Check a fit table and return it with :data:`FIT_COLUMNS` first, cast to their kinds.

    Other columns (e.g. ``form``) are kept after them.

    Raises
    ------
    ConfigurationError
        Naming ``where`` (the file): a missing column, a value of the wrong kind, more rows
        than :data:`MAX_FIT_ROWS`, an unknown transform or operator, or ranks that are not
        distinct positive integers.
    """
    import polars as pl

    kinds = {"int": pl.Int64, "str": pl.String, "float": pl.Float64}
    names = [name for name, _ in FIT_COLUMNS]
    missing = [name for name in names if name not in table.columns]
    if missing:
        raise ConfigurationError(
            f"{where}: missing column{'s' * (len(missing) > 1)} {', '.join(missing)} "
            f"(a fit file has {', '.join(names)})"
        )
    casts = []
    for name, kind in FIT_COLUMNS:
        try:
            casts.append(table[name].cast(kinds[kind], strict=True))
        except Exception:  # polars raises several kinds of error for a failed cast
            raise ConfigurationError(
                f"{where}: column {name} must hold {kind} values, got {table[name].dtype}"
            ) from None
    if table.height > MAX_FIT_ROWS:
        raise ConfigurationError(_too_many_rows(where, table.height))
    checked = pl.DataFrame(casts).hstack(table.drop(names))
    ranks = checked["rank"]
    if ranks.null_count() or (ranks.len() and ranks.min() < 1) or ranks.n_unique() != ranks.len():  # type: ignore[operator]
        raise ConfigurationError(f"{where}: ranks must be distinct integers >= 1")
    for index, row in enumerate(checked.select(names[1:6]).iter_rows()):
        try:
            FunctionForm(*row)  # type: ignore[arg-type]
        except ConfigurationError as exc:
            raise ConfigurationError(f"{where}: row {index + 1}: {exc}") from None
    return checked


def _too_many_rows(where: str, rows: int) -> str:
    return (
        f"{where}: {rows:,} rows, more than a fit file holds (at most {MAX_FIT_ROWS:,}: one row "
        f"per function form, of which there are {len(all_forms())})"
    )


def _check_fit_file_size(path: Path) -> None:
    """Refuse a file that cannot be a fit file from its size and its parquet metadata, before
    it is loaded (:data:`MAX_FIT_FILE_BYTES`, :data:`MAX_FIT_ROWS`, :data:`MAX_FIT_DATA_BYTES`)."""
    import pyarrow.parquet as pq

    where = f"fit file {path}"
    size = path.stat().st_size
    if size > MAX_FIT_FILE_BYTES:
        raise ConfigurationError(
            f"{where}: {size:,} bytes, more than a fit file takes (at most "
            f"{MAX_FIT_FILE_BYTES:,}; the {len(all_forms())} forms take some 32 KB)"
        )
    try:
        metadata = pq.read_metadata(path)
    except Exception as exc:  # pyarrow raises several kinds for a bad file
        raise ConfigurationError(f"{where}: not a parquet table ({exc})") from None
    if metadata.num_rows > MAX_FIT_ROWS:
        raise ConfigurationError(_too_many_rows(where, metadata.num_rows))
    data = sum(metadata.row_group(i).total_byte_size for i in range(metadata.num_row_groups))
    if data > MAX_FIT_DATA_BYTES:
        raise ConfigurationError(
            f"{where}: {data:,} bytes of data once uncompressed, more than a fit file holds "
            f"(at most {MAX_FIT_DATA_BYTES:,}; the {len(all_forms())} forms take some 110 KB)"
        )


def read_functions(path: str | Path) -> pl.DataFrame:
    """The fit table in ``path`` (parquet), checked (:func:`check_fit_table`), sorted by rank.

    The file's size and, from its parquet metadata, its rows and the size of its data once
    uncompressed are checked before it is loaded (:data:`MAX_FIT_FILE_BYTES`,
    :data:`MAX_FIT_ROWS`, :data:`MAX_FIT_DATA_BYTES`): a small file of many constant rows
    could otherwise fill the memory.

    Raises
    ------
    ConfigurationError
        Naming the file: it does not exist, is larger than a fit file can be, is not a parquet
        table, or is not a fit table.
    """
    import polars as pl

    path = Path(path)
    if not path.is_file():
        raise ConfigurationError(f"fit file {path}: no such file")
    _check_fit_file_size(path)
    try:
        table = pl.read_parquet(path)
    except (Exception, pl.exceptions.PanicException) as exc:  # many kinds for a bad file;
        # a panic of polars' Rust code is a BaseException
        raise ConfigurationError(f"fit file {path}: not a parquet table ({exc})") from None
    return check_fit_table(table, f"fit file {path}").sort("rank")


@dataclass(frozen=True)
class LearnedFunction:
    """One fitted function: its form, coefficients ``(c1, c2, c3)``, and where it came from."""

    form: FunctionForm
    coefficients: tuple[float, float, float]
    path: Path
    rank: int

    def evaluate(self, r: np.ndarray, n: np.ndarray, s: np.ndarray) -> np.ndarray:
        """``f(r, n, s)`` with the fitted coefficients (see :meth:`FunctionForm.evaluate`)."""
        return self.form.evaluate(r, n, s, self.coefficients)


def load_function(path: str | Path, rank: int) -> LearnedFunction:
    """The function of rank ``rank`` in the fit file ``path``.

    Raises
    ------
    ConfigurationError
        Naming the file and the rank: the file is missing or bad, no row has this rank, or the
        row's coefficients are not finite (the form could not be fitted).
    """
    table = read_functions(path)
    row = table.filter(table["rank"] == rank)
    if row.height == 0:
        ranks = table["rank"]
        known = f"ranks {ranks.min()}..{ranks.max()}" if ranks.len() else "no rows"
        raise ConfigurationError(f"fit file {path}: no function of rank {rank} ({known})")
    record = row.row(0, named=True)
    form = FunctionForm(
        record["alpha"], record["beta"], record["gamma"], record["op1"], record["op2"]
    )
    coefficients = (float(record["c1"]), float(record["c2"]), float(record["c3"]))
    if not all(math.isfinite(c) for c in coefficients):
        raise ConfigurationError(
            f"fit file {path}: the function of rank {rank} ({form}) has no finite coefficients "
            "(the form was not fitted: it is undefined on the data)"
        )
    return LearnedFunction(form, coefficients, Path(path), int(rank))


# -- the policies -------------------------------------------------------------------------------


def parse_learned_spec(spec: str) -> tuple[Path, int]:
    """``(path, rank)`` of a spec ``learned:PATH#RANK`` (prefix in any case; PATH may hold
    ``#``: the rank follows the last one).

    Raises
    ------
    ConfigurationError
        The spec does not have this syntax; the message shows it.
    """
    if not isinstance(spec, str):
        raise ConfigurationError(f"policy spec {quote(spec)}: expected {_SPEC_SYNTAX}")
    prefix, colon, rest = spec.strip().partition(":")
    path, hash_, rank = rest.rpartition("#")
    if (
        prefix.lower() != LEARNED_PREFIX
        or not colon
        or not hash_
        or not path.strip()
        or not rank.isdigit()
        or int(rank) < 1
    ):
        raise ConfigurationError(f"policy spec {quote(spec)}: expected {_SPEC_SYNTAX}")
    return Path(path.strip()), int(rank)


def _spec_text(path: Path, rank: int) -> str:
    return f"{LEARNED_PREFIX}:{path}#{rank}"


def learned_key(path: str | Path, rank: int, jobs: PolicyInputs) -> PriorityKey:
    """The static key ``f(est_j, q_j, r'_j)`` (smallest first) of the function ``rank`` of
    ``path``, read now; ``r'_j`` = seconds since the first submission + 1 s (as F1-F4).

    Raises
    ------
    ConfigurationError
        The file or rank is bad (:func:`load_function`), or the function is not finite for
        some job (e.g. a division by log10(q) = 0 for a one-processor job).
    """
    function = load_function(path, rank)
    with np.errstate(all="ignore"):
        key = function.evaluate(jobs.estimate_s, jobs.procs, relative_submit_s(jobs))
    bad = ~np.isfinite(key)
    if bad.any():
        raise ConfigurationError(
            f"fit file {path}: the function of rank {rank} "
            f"({function.form.expression(function.coefficients)}) is not finite for "
            f"{int(bad.sum())} of {bad.size} jobs (estimates and processors must be > 0; "
            "log10 of 1 is 0)"
        )
    return PriorityKey.static(key)


def learned_policy(spec: str) -> Policy:
    """The policy of a spec ``learned:PATH#RANK``: its syntax is checked now, the file is read
    when the key is computed. Its name is the normalised spec."""
    path, rank = parse_learned_spec(spec)
    name = _spec_text(path, rank)
    return Policy(
        name, f"learned function of rank {rank} in {path}", partial(learned_key, path, rank)
    )


POLICY_SPECS.add(
    LEARNED_PREFIX,
    learned_policy,
    "learned:PATH#RANK, the function of rank RANK in the fit file PATH (docs/learned.md)",
)

#: Alias names registered by :func:`register_learned` -> their normalised spec.
_ALIASES: dict[str, str] = {}


def register_learned(name: str, spec: str) -> str:
    """Register the policy name ``name`` for the learned spec ``spec``; returns the registered
    (upper-case) name.

    Registering the same name for the same spec again does nothing, so every step of a workflow
    may call it. The file is not read here but when a key is computed.

    Raises
    ------
    ConfigurationError
        ``name`` is not ``[A-Za-z0-9_]+``, ``spec`` is not ``learned:PATH#RANK``, or the name
        is taken (a policy of its own, or an alias of another spec).
    """
    if not isinstance(name, str) or not _ALIAS.fullmatch(name):
        raise ConfigurationError(
            f"learned policy alias {quote(name)}: expected letters, digits and _ only"
        )
    path, rank = parse_learned_spec(spec)
    canonical, text = name.upper(), _spec_text(path, rank)
    if canonical in POLICIES:
        if _ALIASES.get(canonical) == text:
            return canonical
        taken = _ALIASES.get(canonical, POLICIES.description(canonical))
        raise ConfigurationError(
            f"learned policy alias {quote(name)} for {text}: the name is taken ({taken})"
        )
    policy = Policy(canonical, f"learned function {text}", partial(learned_key, path, rank))
    POLICIES.add(canonical, policy, policy.description)
    _ALIASES[canonical] = text
    return canonical


def learned_policy_files(names: Iterable[str]) -> list[str]:
    """The fit files that the learned policy aliases among ``names`` read (each once, in order
    of first use; names that are not learned aliases need none): a simulation with these
    policies needs these files."""
    files: dict[str, None] = {}
    for name in names:
        text = _ALIASES.get(name.upper()) if isinstance(name, str) else None
        if text is not None:
            files[str(parse_learned_spec(text)[0])] = None
    return list(files)


def unregister_learned(name: str) -> None:
    """Remove an alias registered by :func:`register_learned` (a name that is not one: error)."""
    canonical = name.upper() if isinstance(name, str) else name
    if canonical not in _ALIASES:
        raise ConfigurationError(f"{quote(name)} is not a learned policy alias")
    POLICIES.remove(canonical)
    del _ALIASES[canonical]
