"""Slurm's ``priority/multifactor`` (classic fair-share) as the order of conservative backfilling.

Semantics: ``docs/simulator.md``, "Slurm's multifactor priority with fair-share"; the compiled
loop is :mod:`scheduler.sim._multifactor_kernel`. This module holds the settings
(:class:`MultifactorPriority`, fields named after ``slurm.conf``'s parameters in snake case),
the jobs' attributes (:class:`JobAttributes`, :func:`job_attributes`: user, account, partition,
QOS, eligible time) and the call of the kernel; :func:`scheduler.sim.conservative.
simulate_conservative` with ``primary="multifactor"`` is the entry point.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

import numpy as np
import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.policies import MULTIFACTOR
from scheduler.sim import _conservative_kernel as ck
from scheduler.sim import _kernel as kernel
from scheduler.sim import _multifactor_kernel as mkernel
from scheduler.sim._jobs import JobMatrix, check_choice
from scheduler.sim.cache import call_repairing_cache

__all__ = [
    "MULTIFACTOR",
    "SWF_ACCOUNTS",
    "JobAttributes",
    "MultifactorPriority",
    "MultifactorSchedule",
    "job_attributes",
    "run_multifactor",
]

#: Where an SWF trace's jobs get their account when no side table names one: the SWF group
#: (a Unix group is what a Slurm account usually mirrors) or one account for all.
SWF_ACCOUNTS: tuple[str, ...] = ("group", "single")
#: The account of every job with ``swf_account="single"`` (and of a job whose account is unknown).
SINGLE_ACCOUNT = "all"
#: The QOS of a job with none (Slurm's default QOS).
DEFAULT_QOS = "normal"
#: Slurm's defaults (``slurm.conf``): 7 days, 7 days, 5 minutes.
DAY_S = 86400.0
_UINT32_MAX = 2**32 - 1
#: ``PriorityJobFactor`` "may not exceed 65533" (slurm.conf).
_JOB_FACTOR_MAX = 65533
#: FairShareDampeningFactor is a uint16 (1 .. 65535; 0 would divide by zero).
_DAMPENING_MAX = 65535


def _integer(name: str, value: object, maximum: int, minimum: int = 0) -> int:
    ok = isinstance(value, int | np.integer) and not isinstance(value, bool)
    if not ok or not minimum <= int(value) <= maximum:  # type: ignore[call-overload]
        raise ConfigurationError(
            f"{name} must be an integer in [{minimum}, {maximum}], got {value!r}"
        )
    return int(value)  # type: ignore[call-overload]


def _seconds(name: str, value: object, *, positive: bool) -> float:
    ok = isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)
    seconds = float(value) if ok else math.nan  # type: ignore[arg-type]
    if not (math.isfinite(seconds) and (seconds > 0 or (not positive and seconds == 0))):
        bound = "> 0" if positive else ">= 0"
        raise ConfigurationError(f"{name} must be finite seconds {bound}, got {value!r}")
    return seconds


def _association_key(name: str, key: object) -> str:
    """A user association's key: ``"account/user"`` (or the pair ``(account, user)``)."""
    if isinstance(key, tuple) and len(key) == 2:
        return f"{key[0]}/{key[1]}"
    if isinstance(key, str) and "/" in key:
        return key
    raise ConfigurationError(
        f"{name}: a user association is 'account/user' or (account, user), got {key!r}"
    )


def _table(name: str, value: object, maximum: int, *, pairs: bool = False
           ) -> tuple[tuple[str, int], ...]:  # fmt: skip
    """A mapping name -> integer as sorted pairs (names compared as text)."""
    if not isinstance(value, Mapping):
        raise ConfigurationError(f"{name} must be a mapping of names to integers, got {value!r}")
    out: dict[str, int] = {}
    for key, number in value.items():
        text = _association_key(name, key) if pairs else str(key)
        out[text] = _integer(f"{name}[{key!r}]", number, maximum)
    return tuple(sorted(out.items()))


@dataclass(frozen=True)
class MultifactorPriority:
    """Slurm's ``priority/multifactor`` settings (22.05), named after ``slurm.conf``.

    ``weight_*``: ``PriorityWeightAge``, ``PriorityWeightFairshare``, ``PriorityWeightJobSize``,
    ``PriorityWeightPartition``, ``PriorityWeightQOS`` (integers in [0, 2**32 - 1], default 0);
    ``max_age_s`` ``PriorityMaxAge`` (s, default 7 days); ``decay_half_life_s``
    ``PriorityDecayHalfLife`` (s, default 7 days, 0: no decay); ``calc_period_s``
    ``PriorityCalcPeriod`` (s, default 300); ``favor_small`` ``PriorityFavorSmall``;
    ``dampening`` ``FairShareDampeningFactor`` (default 1); ``fair_tree``: Slurm's Fair Tree
    algorithm (its default since 19.05; read from a slurm.conf without
    ``PriorityFlags=NO_FAIR_TREE``), ``False`` (this API's default) the classic one;
    ``procs_per_node``: processors per node for the job-size factor (``None``: every processor
    a node).

    Associations (sacctmgr's ``FairShare``, default 1): ``account_shares`` by account name,
    ``user_shares`` by user association ``"account/user"`` (or ``(account, user)``);
    ``partition_job_factor``: each partition's ``PriorityJobFactor`` (default 1);
    ``qos_priority``: each QOS's ``Priority`` (default 0). Names are compared as text (the SWF
    user 7 is ``"7"``). Mappings are stored as sorted ``(name, value)`` pairs.
    """

    weight_age: int = 0
    weight_fairshare: int = 0
    weight_job_size: int = 0
    weight_partition: int = 0
    weight_qos: int = 0
    max_age_s: float = 7 * DAY_S
    decay_half_life_s: float = 7 * DAY_S
    calc_period_s: float = 300.0
    favor_small: bool = False
    dampening: int = 1
    fair_tree: bool = False
    procs_per_node: int | None = None
    account_shares: Any = field(default_factory=dict)
    user_shares: Any = field(default_factory=dict)
    partition_job_factor: Any = field(default_factory=dict)
    qos_priority: Any = field(default_factory=dict)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        for name in ("weight_age", "weight_fairshare", "weight_job_size", "weight_partition",
                     "weight_qos"):  # fmt: skip
            set_(self, name, _integer(name, getattr(self, name), _UINT32_MAX))
        set_(self, "max_age_s", _seconds("max_age_s", self.max_age_s, positive=False))
        set_(self, "decay_half_life_s",
             _seconds("decay_half_life_s", self.decay_half_life_s, positive=False))  # fmt: skip
        set_(self, "calc_period_s", _seconds("calc_period_s", self.calc_period_s, positive=True))
        for name in ("favor_small", "fair_tree"):
            if not isinstance(getattr(self, name), bool | np.bool_):
                raise ConfigurationError(f"{name} must be True or False, got "
                                         f"{getattr(self, name)!r}")  # fmt: skip
            set_(self, name, bool(getattr(self, name)))
        set_(self, "dampening", _integer("dampening", self.dampening, _DAMPENING_MAX, 1))
        if self.procs_per_node is not None:
            set_(self, "procs_per_node",
                 _integer("procs_per_node", self.procs_per_node, _UINT32_MAX, 1))  # fmt: skip
        for name, maximum, pairs in (
            ("account_shares", _UINT32_MAX, False), ("user_shares", _UINT32_MAX, True),
            ("partition_job_factor", _JOB_FACTOR_MAX, False), ("qos_priority", _UINT32_MAX, False),
        ):  # fmt: skip
            value = getattr(self, name)
            if isinstance(value, tuple) and all(isinstance(p, tuple) for p in value):
                value = dict(value)  # already stored as sorted pairs (dataclasses.replace)
            set_(self, name, _table(name, value, maximum, pairs=pairs))

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (JSON-ready): the mappings as dicts."""
        out = {name: getattr(self, name) for name in self.__dataclass_fields__}
        for name in ("account_shares", "user_shares", "partition_job_factor", "qos_priority"):
            out[name] = dict(out[name])
        return out


class JobAttributes(NamedTuple):
    """What the priority reads of each job, in the caller's job order: ``user``, ``account``,
    ``partition``, ``qos`` (names as text) and ``eligible_s`` (s, the age counts from it)."""

    user: np.ndarray
    account: np.ndarray
    partition: np.ndarray
    qos: np.ndarray
    eligible_s: np.ndarray


def _texts(name: str, values: object, n: int) -> np.ndarray:
    array = np.asarray(values, dtype=object)
    if array.shape != (n,):
        raise ConfigurationError(f"{name} has shape {array.shape}, expected ({n},)")
    return np.array([str(v) for v in array], dtype=object)


def check_attributes(attributes: object, n: int) -> JobAttributes:
    """The attributes of ``n`` jobs as text arrays and ``eligible_s`` as float64 seconds."""
    if not isinstance(attributes, JobAttributes):
        raise ConfigurationError(
            f"attributes must be a JobAttributes, got {type(attributes).__name__}"
        )
    eligible = np.asarray(attributes.eligible_s, dtype=np.float64)
    if eligible.shape != (n,):
        raise ConfigurationError(f"attributes.eligible_s has shape {eligible.shape}, "
                                 f"expected ({n},)")  # fmt: skip
    if np.isnan(eligible).any() or np.isinf(eligible).any():
        raise ConfigurationError("attributes.eligible_s must be finite seconds")
    return JobAttributes(
        *(_texts(f"attributes.{name}", getattr(attributes, name), n)
          for name in ("user", "account", "partition", "qos")),
        eligible,
    )  # fmt: skip


def job_attributes(
    table: pl.DataFrame,
    side: pl.DataFrame | None = None,
    *,
    swf_account: Literal["group", "single"] = "group",
) -> JobAttributes:
    """Each job's attributes from an SWF job table and, if given, the sacct import's side table
    (:data:`scheduler.traces.sacct.SIDE_SCHEMA`, joined on ``job_id``).

    ``user``: the SWF ``user_id``; ``account``: the side table's ``account_id`` when known,
    else the SWF ``group_id`` (``swf_account="group"``) or one account ``"all"``
    (``"single"``); ``partition``: the side table's ``partition`` when known, else the SWF
    ``partition_id``; ``qos``: the side table's ``qos`` when known, else ``"normal"``;
    ``eligible_s``: the side table's ``eligible_s`` when known, else the submit time.
    """
    check_choice("swf_account", swf_account, SWF_ACCOUNTS)
    for column in ("job_id", "submit_s", "user_id", "group_id", "partition_id"):
        if column not in table.columns:
            raise ConfigurationError(f"job table: missing column {column!r}")
    swf_acct = (pl.col("group_id").cast(pl.String) if swf_account == "group"
                else pl.lit(SINGLE_ACCOUNT))  # fmt: skip
    jobs = table.select("job_id", "submit_s", "user_id", "group_id", "partition_id")
    if side is not None:
        needed = ("job_id", "account_id", "qos", "partition", "eligible_s")
        missing = [c for c in needed if c not in side.columns]
        if missing:
            raise ConfigurationError(f"side table: missing column(s) {', '.join(missing)}")
        if side["job_id"].is_duplicated().any():
            raise ConfigurationError("side table: job_id is not unique")
        jobs = jobs.join(side.select(needed), on="job_id", how="left", maintain_order="left")
        account = (pl.when(pl.col("account_id").is_not_null() & (pl.col("account_id") >= 0))
                   .then(pl.col("account_id").cast(pl.String)).otherwise(swf_acct))  # fmt: skip
        partition = pl.coalesce(pl.col("partition"), pl.col("partition_id").cast(pl.String))
        qos = pl.coalesce(pl.col("qos"), pl.lit(DEFAULT_QOS))
        eligible = pl.coalesce(pl.col("eligible_s"), pl.col("submit_s"))
    else:
        account = swf_acct
        partition = pl.col("partition_id").cast(pl.String)
        qos = pl.lit(DEFAULT_QOS)
        eligible = pl.col("submit_s")
    out = jobs.select(
        pl.col("user_id").cast(pl.String).alias("user"),
        account.alias("account"),
        partition.alias("partition"),
        qos.alias("qos"),
        eligible.cast(pl.Float64).alias("eligible_s"),
    )
    return JobAttributes(
        *(_shared_texts(out[c]) for c in ("user", "account", "partition", "qos")),
        out["eligible_s"].to_numpy(),
    )


def _shared_texts(column: pl.Series) -> np.ndarray:
    """The column as an object array whose equal names are one ``str`` (8 bytes a job, not a
    string object each: a whole log's four columns would otherwise take some 200 bytes a job)."""
    distinct = column.unique().sort()
    return distinct.to_numpy().astype(object)[distinct.search_sorted(column).to_numpy()]


def _codes(values: np.ndarray) -> tuple[list[str], np.ndarray]:
    """Sorted distinct names and each job's index among them."""
    distinct, index = np.unique(values, return_inverse=True)
    return [str(x) for x in distinct], index.astype(np.int64)


class MultifactorSchedule(NamedTuple):
    """Start times (s), backfilled flags and each job's priority when it started (caller's
    order)."""

    start_s: np.ndarray
    backfilled: np.ndarray
    priority: np.ndarray


def _norm(value: np.ndarray, table: dict[str, int]) -> np.ndarray:
    """Slurm's normalised partition factor or QOS priority: value / the largest value."""
    largest = max(max(table.values(), default=0), float(value.max()) if value.size else 0.0)
    return value / float(largest) if largest > 0 else np.zeros_like(value, dtype=np.float64)


def _job_size(procs: np.ndarray, machine_procs: int, priority: MultifactorPriority) -> np.ndarray:
    """The job-size factor (Slurm's ``set_priority_factors``, neither SMALL_RELATIVE_TO_TIME)."""
    ppn = priority.procs_per_node or 1
    nodes = float(machine_procs // ppn)
    m = float(machine_procs)
    min_nodes = np.ceil(procs / ppn)
    if priority.favor_small:
        js = (nodes - min_nodes) / nodes
        js = (js + (m - procs) / m) / 2
    else:
        js = min_nodes / nodes
        js = (js + procs / m) / 2
    return np.clip(js, 0.0, 1.0)


def _named_factor(
    names: np.ndarray, table: dict[str, Any], default: float, weight: int
) -> np.ndarray | float:
    """A factor set by name (a partition's ``PriorityJobFactor``, a QOS's ``Priority``) times
    its weight, per job: each job's value (``table``, else ``default``) over the largest
    (:func:`_norm`), 0 for a value of 0; 0.0 for all when the weight is 0."""
    if not weight:
        return 0.0
    distinct, code = _codes(names)
    value = np.array([table.get(x, default) for x in distinct], dtype=np.float64)[code]
    return np.where(value > 0, _norm(value, table), 0.0) * float(weight)


class MultifactorState:
    """The priority plugin's state over one set of jobs: each job's attributes as codes and
    factors, the associations' shares, their decayed usage, the decay clock and the jobs'
    priorities (``keys[P_BASE]`` = minus the priority). Built once per run; :meth:`advance`
    runs the compiled loop on a simulation state (``istate, iwork, fwork`` of
    :func:`scheduler.sim._kernel.new_state`) up to a time, :meth:`catch_up` brings the usage
    and priorities up to date after another scheduler ran the machine.

    ``matrix`` in kernel order; ``priority`` and ``attributes`` (caller's order) as
    :func:`run_multifactor`.
    """

    def __init__(
        self,
        matrix: JobMatrix,
        machine_procs: int,
        priority: MultifactorPriority,
        attributes: JobAttributes,
    ) -> None:
        ppn = priority.procs_per_node or 1
        if machine_procs % ppn:
            raise ConfigurationError(
                f"procs_per_node={ppn} does not divide the machine's {machine_procs} processors"
            )
        jobs = matrix.jobs
        n = jobs.shape[1]
        order = np.arange(n) if matrix.order is None else matrix.order
        attrs = JobAttributes(*(a[order] for a in check_attributes(attributes, n)))
        # a job is not eligible before it is submitted
        attrs = attrs._replace(eligible_s=np.maximum(attrs.eligible_s, jobs[kernel.SUBMIT]))
        account_shares = dict(priority.account_shares)
        user_shares = dict(priority.user_shares)
        # the associations: every one a job uses or the settings name; per-job integer codes
        # (no per-job strings: a whole log has hundreds of thousands of jobs)
        user_names, user_code = _codes(attrs.user)
        acct_names, acct_code = _codes(attrs.account)
        pair_code, pair_index = np.unique(acct_code * len(user_names) + user_code,
                                          return_inverse=True)  # fmt: skip
        job_pairs = [f"{acct_names[c // len(user_names)]}/{user_names[c % len(user_names)]}"
                     for c in pair_code.tolist()]  # fmt: skip
        assocs = sorted({*job_pairs, *user_shares})
        accounts = sorted({*acct_names, *account_shares,
                           *(key.rsplit("/", 1)[0] for key in user_shares)})  # fmt: skip
        acct_index = {a: i for i, a in enumerate(accounts)}
        assoc_index = {a: i for i, a in enumerate(assocs)}
        user_acct = np.array([acct_index[a.rsplit("/", 1)[0]] for a in assocs], dtype=np.int64)
        s_acct = np.array([account_shares.get(a, 1) for a in accounts], dtype=np.float64)
        s_user = np.array([user_shares.get(a, 1) for a in assocs], dtype=np.float64)
        level_acct = s_acct.sum()
        level_user = np.bincount(user_acct, weights=s_user, minlength=len(accounts))[user_acct]
        with np.errstate(divide="ignore", invalid="ignore"):
            # Fair Tree's shares of an account among the accounts
            acct_ratio = s_acct / level_acct if level_acct > 0 else np.zeros_like(s_acct)
            user_ratio = np.where(level_user > 0, s_user / level_user, -1.0)
            # Slurm's shares_norm: the product of shares / level shares from the association up
            shares_norm = np.where(level_user > 0, s_user / level_user, 0.0)
            shares_norm = shares_norm * (s_acct[user_acct] / level_acct if level_acct > 0 else 0.0)
        jattr = np.empty((2, n), dtype=np.int64)
        jattr[mkernel.J_USER] = np.array([assoc_index[a] for a in job_pairs], dtype=np.int64)[
            pair_index
        ]
        jattr[mkernel.J_ACCT] = user_acct[jattr[mkernel.J_USER]]
        jfloat = np.empty((4, n), dtype=np.float64)
        jfloat[mkernel.J_ELIG] = attrs.eligible_s
        jfloat[mkernel.J_JS] = (
            _job_size(jobs[kernel.PROCS], machine_procs, priority) * float(priority.weight_job_size)
            if priority.weight_job_size
            else 0.0
        )
        # a partition's PriorityJobFactor is 1 unless set, a QOS's Priority 0
        jfloat[mkernel.J_PART] = _named_factor(
            attrs.partition, dict(priority.partition_job_factor), 1, priority.weight_partition
        )
        jfloat[mkernel.J_QOS] = _named_factor(attrs.qos, dict(priority.qos_priority), 0,
                                              priority.weight_qos)  # fmt: skip
        params = np.empty(mkernel.MP_ROWS, dtype=np.float64)
        params[mkernel.P_W_AGE] = priority.weight_age
        params[mkernel.P_W_FS] = priority.weight_fairshare
        params[mkernel.P_MAX_AGE] = priority.max_age_s
        hl = priority.decay_half_life_s
        params[mkernel.P_DECAY] = 1.0 - 0.693 / hl if hl > 0 else 1.0
        params[mkernel.P_DAMP] = priority.dampening
        params[mkernel.P_PERIOD] = priority.calc_period_s
        params[mkernel.P_FAIR_TREE] = 1.0 if priority.fair_tree else 0.0
        self.mstate = np.empty(mkernel.M_ROWS, dtype=np.float64)
        self.mstate[mkernel.LAST_RAN] = -np.inf
        first = float(jobs[kernel.SUBMIT, 0]) if n else 0.0
        period = priority.calc_period_s
        self.mstate[mkernel.NEXT_TICK] = math.floor(first / period) * period
        self.keys = np.zeros((4, n), dtype=np.float64)
        self.keys[kernel.P_DIV] = self.keys[kernel.B_DIV] = np.inf
        nu, na = len(assocs), len(accounts)
        self.jobs = jobs
        # the plugin's arrays in the kernel's argument order, from params to acct_ratio
        self.plugin = (
            params, jattr, jfloat, user_acct, user_ratio.astype(np.float64),
            shares_norm.astype(np.float64), np.zeros(nu), np.zeros(na), np.zeros(1),
            np.zeros(na), np.zeros(nu), np.zeros(nu, dtype=np.int64),
            acct_ratio.astype(np.float64),
        )  # fmt: skip
        self.scratch = np.empty(n, dtype=np.int64)

    def usage(self) -> tuple[np.ndarray, ...]:
        """Copies of the decayed usage (users, accounts, root) and ``mstate`` (for tests)."""
        return (*(a.copy() for a in self.plugin[6:9]), self.mstate.copy())

    def advance(
        self, istate: np.ndarray, iwork: np.ndarray, fwork: np.ndarray, prof: np.ndarray,
        memo: np.ndarray, limits: tuple[Any, ...], *, t_stop: float = math.inf,
        last_now: float = -math.inf,
    ) -> int:  # fmt: skip
        """Run the compiled loop over the instants ``< t_stop`` (:func:`scheduler.sim.
        _multifactor_kernel.advance`); ``limits``: ``(threshold_s, depth, window_s,
        resolution, interval, max_test, queue_depth, outlive_code, node_procs)``."""
        threshold_s, depth, window_s, resolution, interval, max_test, queue_depth, outlive, \
            nodes = limits  # fmt: skip
        return int(call_repairing_cache(
            mkernel.advance, self.jobs, self.keys, threshold_s, depth, window_s, resolution,
            interval, max_test, queue_depth, outlive, istate, iwork, fwork, prof, *self.plugin,
            self.mstate, self.scratch, memo, nodes, float(t_stop), float(last_now),
        ))  # fmt: skip

    def catch_up(
        self, t_from: float, t_to: float, istate: np.ndarray, iwork: np.ndarray,
        fwork: np.ndarray,
    ) -> int:  # fmt: skip
        """The usage, decay clock and waiting jobs' priorities at ``t_to`` after another
        scheduler ran the machine over ``[t_from, t_to)`` (:func:`scheduler.sim.
        _multifactor_kernel.catch_up`); then PQ sorted by priority (ties in job order).
        Returns the decay ticks replayed."""
        queue = iwork[kernel.QUEUE, : istate[kernel.QLEN]]
        waiting = queue[iwork[kernel.STATUS, queue] == kernel.WAITING]
        started = fwork[kernel.START, : istate[kernel.NEXT_SUB]]
        recent = np.flatnonzero((started >= t_from) & (started < t_to))
        cand = np.union1d(waiting, recent).astype(np.int64)
        ticks = int(call_repairing_cache(
            mkernel.catch_up, float(t_from), float(t_to), self.jobs, self.keys, istate, iwork,
            fwork, *self.plugin, self.mstate, self.scratch, cand,
        ))  # fmt: skip
        return ticks


def run_multifactor(
    matrix: JobMatrix,
    machine_procs: int,
    priority: MultifactorPriority,
    attributes: JobAttributes,
    *,
    threshold_s: float,
    depth: int,
    window_s: float,
    resolution: float,
    interval: float,
    max_test: int,
    queue_depth: int,
    outlive_code: int,
    resume: bool = True,
    node_procs: int = 0,
) -> tuple[MultifactorSchedule, int]:
    """Run the compiled loop (limits as the kernel takes them: -1 / inf / 0 for none); the
    schedule and how many backfill passes resumed the previous one (``resume``: as
    :func:`scheduler.sim._conservative_kernel.new_memory`; ``node_procs`` as its
    ``advance``)."""
    state = MultifactorState(matrix, machine_procs, priority, attributes)
    jobs = matrix.jobs
    n = jobs.shape[1]
    istate, iwork, fwork = kernel.new_state(jobs, machine_procs)
    prof = np.empty((2, ck.profile_capacity(n)), dtype=np.float64)
    memo = ck.new_memory(n, resume)
    state.advance(istate, iwork, fwork, prof, memo, (
        threshold_s, depth, window_s, resolution, interval, max_test, queue_depth,
        outlive_code, node_procs,
    ))  # fmt: skip
    keys = state.keys
    schedule = MultifactorSchedule(
        matrix.restore(fwork[kernel.START]),
        matrix.restore(iwork[kernel.STATUS] == kernel.STARTED_BACKFILL),
        matrix.restore(-keys[kernel.P_BASE]).astype(np.int64),
    )
    return schedule, int(memo[ck.MEMO_RESUMED])
