"""Read a Slurm ``slurm.conf`` into the settings of a schedlab simulation.

:func:`read_slurm_conf` reads the keys of ``slurm.conf`` that decide a schedule (the scheduler
and its ``SchedulerParameters``, the priority plugin and its weights, the nodes' CPUs, the
partitions' ``PriorityJobFactor``) and returns a frozen :class:`SlurmConf`;
``simulate_conservative(trace, **conf.simulate_kwargs())`` then runs Slurm-style scheduling.
Every key read, its unit and default, the keys ignored and the keys refused are listed in
``docs/simulator.md``, "Reading a slurm.conf"; the defaults are Slurm 22.05's (``man slurm.conf``
and the plugins' sources), written once below.

Rules, as Slurm reads the file: keys are case-insensitive, ``#`` starts a comment, a line holds
``Key=Value`` pairs, a trailing backslash continues a line. Stricter than Slurm (which logs and
goes on): a key schedlab does not model is refused
(:class:`~scheduler.core.errors.ConfigurationError` naming the file, line and key), a malformed
or out-of-range value too (naming the value), and so is an unknown key: a typo must not be
silently ignored. Only keys that cannot change a schedule (paths, ports, logging, accounting
storage, ...: :data:`IGNORED_KEYS`) are read and dropped.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from scheduler.core.errors import ConfigurationError, quote
from scheduler.sim.multifactor import MultifactorPriority

__all__ = [
    "BACKFILL_PARAMETERS",
    "IGNORED_KEYS",
    "IGNORED_NODE_KEYS",
    "IGNORED_PARTITION_KEYS",
    "IGNORED_SCHEDULER_PARAMETERS",
    "PRIORITY_DEFAULTS",
    "PRIORITY_TIMES",
    "REFUSED_KEYS",
    "SlurmConf",
    "default_backfill_kwargs",
    "expand_hostlist",
    "read_slurm_conf",
    "slurm_time_s",
    "slurm_value",
]


# --------------------------------------------------------------------------------------------
# What is read, with Slurm 22.05's defaults (the one home of each)
# --------------------------------------------------------------------------------------------


class BackfillParameter(NamedTuple):
    """One ``SchedulerParameters`` option schedlab reads.

    ``kwarg`` is the keyword of :func:`scheduler.sim.conservative.simulate_conservative`;
    ``scale`` converts Slurm's unit to schedlab's (60: minutes to seconds); ``minimum`` and
    ``maximum`` are Slurm's range in Slurm's unit; ``default`` is Slurm 22.05's, in Slurm's unit.
    """

    kwarg: str
    unit: str
    scale: int
    minimum: int
    maximum: int
    default: int


#: ``SchedulerParameters`` options read, by Slurm's name (Slurm 22.05: ``man slurm.conf``,
#: ``src/plugins/sched/backfill/backfill.c``, ``src/slurmctld/job_scheduler.c``).
#: ``bf_interval=-1`` (Slurm: no backfill loop) is accepted besides the range.
BACKFILL_PARAMETERS: Mapping[str, BackfillParameter] = MappingProxyType(
    {
        "bf_max_job_test": BackfillParameter("bf_max_job_test", "jobs", 1, 1, 1_000_000, 500),
        "bf_window": BackfillParameter("bf_window_s", "minutes", 60, 1, 43_200, 1440),
        "bf_resolution": BackfillParameter("bf_resolution_s", "seconds", 1, 1, 3600, 60),
        "bf_interval": BackfillParameter("bf_interval_s", "seconds", 1, 1, 10_800, 30),
        # Slurm accepts 0; schedlab's main pass needs at least one job (simulate_conservative).
        "default_queue_depth": BackfillParameter(
            "default_queue_depth", "jobs", 1, 1, 2**31 - 1, 100
        ),
    }
)

def default_backfill_kwargs() -> dict[str, float | int | None]:
    """Slurm 22.05's backfilling by default (``SchedulerType=sched/backfill`` and no
    ``SchedulerParameters``) as keywords of ``simulate_conservative``: a reservation for every
    tested job and the defaults of :data:`BACKFILL_PARAMETERS` in schedlab's units."""
    return {"depth": None} | {
        p.kwarg: p.default * p.scale for p in BACKFILL_PARAMETERS.values()
    }


#: ``SchedulerParameters`` options that cannot change a schedlab schedule: the lock releases and
#: time budget of a cycle (a pass takes no time here), RPC and script limits, job steps,
#: heterogeneous jobs and allocations' boot waits (none in a trace).
IGNORED_SCHEDULER_PARAMETERS: frozenset[str] = frozenset(
    {
        "bf_continue", "bf_yield_interval", "bf_yield_sleep", "bf_max_time", "max_rpc_cnt",
        "max_sched_time", "sched_min_interval", "build_queue_timeout", "max_script_size",
        "step_retry_count", "step_retry_time", "salloc_wait_nodes", "sbatch_wait_nodes",
        "nohold_on_prolog_fail", "requeue_setup_env_fail", "enable_user_top", "no_env_cache",
        "max_array_tasks", "disable_job_shrink", "enable_hetjob_steps", "disable_hetjob_steps",
        "allow_zero_lic", "ignore_numa", "spec_cores_first",
    }
)  # fmt: skip

#: The multifactor priority's settings by the field names of
#: :class:`~scheduler.sim.multifactor.MultifactorPriority`, with Slurm 22.05's defaults in
#: schedlab's units: the dataclass's own defaults (its home), but Fair Tree, which Slurm uses
#: unless ``PriorityFlags=NO_FAIR_TREE`` (the dataclass defaults to the classic algorithm).
#: ``procs_per_node``, ``partition_job_factor`` and ``qos_priority`` come from the
#: nodes, the partitions and the accounting database; shares from the accounting database.
PRIORITY_DEFAULTS: Mapping[str, object] = MappingProxyType(
    {
        item.name: item.default
        for item in dataclasses.fields(MultifactorPriority)
        if item.default is not dataclasses.MISSING and item.name != "procs_per_node"
    }
    | {"fair_tree": True}
)

#: The multifactor priority's times: Slurm key -> (``MultifactorPriority`` field, least whole
#: minutes). Read as Slurm times (minutes, ``days-hr:min:sec``); :func:`slurm_value` writes a
#: duration with a unit in that form.
PRIORITY_TIMES: Mapping[str, tuple[str, int]] = MappingProxyType(
    {
        "PriorityMaxAge": ("max_age_s", 0),
        "PriorityDecayHalfLife": ("decay_half_life_s", 1),
        "PriorityCalcPeriod": ("calc_period_s", 1),
    }
)
_TIME_KEYS = frozenset(key.lower() for key in PRIORITY_TIMES)

#: Slurm 22.05's ``SchedulerType`` and ``PriorityType`` when not given.
DEFAULT_SCHEDULER_TYPE = "sched/backfill"
DEFAULT_PRIORITY_TYPE = "priority/basic"
#: ``PriorityJobFactor`` of a partition that does not set it.
DEFAULT_PARTITION_JOB_FACTOR = 1
#: ``PriorityFlags`` schedlab supports (the others change the priority in ways not modelled).
SUPPORTED_PRIORITY_FLAGS = frozenset({"NO_FAIR_TREE"})

#: Top-level keys read and dropped: they cannot change a schedule (names, hosts, users, paths,
#: ports, authentication, logging, accounting storage and job completion records, daemons'
#: timeouts and plugins for process tracking, tasks, MPI, interconnect, prolog/epilog scripts).
IGNORED_KEYS: frozenset[str] = frozenset(
    key.lower()
    for key in (
        "ClusterName", "SlurmctldHost", "ControlMachine", "ControlAddr", "BackupController",
        "BackupAddr", "SlurmUser", "SlurmdUser", "SlurmctldPort", "SlurmdPort",
        "SlurmctldAddr", "AuthType", "AuthInfo", "AuthAltTypes", "AuthAltParameters",
        "CredType", "CryptoType", "StateSaveLocation", "SlurmdSpoolDir", "SlurmctldPidFile",
        "SlurmdPidFile", "SlurmctldLogFile", "SlurmdLogFile", "SlurmctldDebug", "SlurmdDebug",
        "SlurmctldSyslogDebug", "SlurmdSyslogDebug", "SlurmSchedLogFile", "SlurmSchedLogLevel",
        "LogTimeFormat", "DebugFlags", "ProctrackType", "TaskPlugin", "TaskPluginParam",
        "JobAcctGatherType", "JobAcctGatherFrequency", "JobAcctGatherParams", "MpiDefault",
        "MpiParams", "SwitchType", "SelectType", "SelectTypeParameters", "ReturnToService",
        "MinJobAge", "AccountingStorageType", "AccountingStorageHost",
        "AccountingStorageBackupHost", "AccountingStoragePort", "AccountingStoragePass",
        "AccountingStorageUser", "AccountingStorageLoc", "AccountingStorageEnforce",
        "AccountingStorageTRES", "AccountingStoreFlags", "AccountingStorageExternalHost",
        "AcctGatherNodeFreq", "AcctGatherEnergyType", "AcctGatherProfileType",
        "AcctGatherFilesystemType", "AcctGatherInterconnectType", "JobCompType", "JobCompLoc",
        "JobCompHost", "JobCompPort", "JobCompUser", "JobCompPass", "JobCompParams",
        "SlurmctldTimeout", "SlurmdTimeout", "MessageTimeout", "TCPTimeout", "InactiveLimit",
        "KillWait", "WaitTime", "BatchStartTimeout", "PrologEpilogTimeout", "Prolog", "Epilog",
        "PrologSlurmctld", "EpilogSlurmctld", "PrologFlags", "SrunProlog", "SrunEpilog",
        "TaskProlog", "TaskEpilog", "MailProg", "MailDomain", "PluginDir", "PlugStackConfig",
        "HealthCheckProgram", "HealthCheckInterval", "HealthCheckNodeState",
        "CommunicationParameters", "LaunchParameters", "TmpFS", "UsePAM",
        "PropagateResourceLimits", "PropagateResourceLimitsExcept", "PropagatePrioProcess",
        "SlurmctldParameters", "SlurmdParameters", "TreeWidth", "MaxJobCount", "MaxArraySize",
        "FirstJobId", "MaxStepCount", "MaxTasksPerNode", "GresTypes", "EnforcePartLimits",
        "KillOnBadExit", "EioTimeout", "UnkillableStepProgram", "UnkillableStepTimeout",
        "SuspendProgram", "ResumeProgram", "RebootProgram", "ResvEpilog",
        "ResvProlog", "PrivateData", "JobRequeue", "SrunPortRange",
    )
)  # fmt: skip

#: Keys of a ``NodeName`` line read and dropped (addresses, memory, disk, features, generic
#: resources, weights: schedlab's machine is a pool of processors).
IGNORED_NODE_KEYS: frozenset[str] = frozenset(
    key.lower()
    for key in (
        "NodeAddr", "NodeHostname", "Port", "RealMemory", "TmpDisk", "Feature", "Features",
        "Gres", "Weight", "Reason", "MemSpecLimit", "CoreSpecCount", "CpuSpecList",
        "Bcast", "TCPPort",
    )
)  # fmt: skip

#: Keys of a ``PartitionName`` line read and dropped: schedlab runs every job of a trace on the
#: whole machine (no partitions), so which nodes, users and time limits a partition has does
#: not change its schedule (*choice*, ``docs/simulator.md``).
IGNORED_PARTITION_KEYS: frozenset[str] = frozenset(
    key.lower()
    for key in (
        "Nodes", "Default", "MaxTime", "DefaultTime", "State", "AllowGroups", "AllowAccounts",
        "AllowQos", "DenyAccounts", "DenyQos", "AllowAllocNodes", "MaxNodes", "MinNodes",
        "Hidden", "RootOnly", "DisableRootJobs", "ExclusiveUser", "LLN", "Alternate",
    )
)  # fmt: skip

_NODE_COUNTS = ("CPUs", "Boards", "SocketsPerBoard", "Sockets", "CoresPerSocket",
                "ThreadsPerCore")  # fmt: skip
#: Node states of the machine; others (FUTURE, CLOUD, DOWN, DRAIN) are refused.
_NODE_STATES = frozenset({"unknown", "idle"})
_TIMESPEC = re.compile(r"^(?:(\d+)-(\d+)(?::(\d+)(?::(\d+))?)?|(\d+)(?::(\d+)(?::(\d+))?)?)$")
_INTEGER = re.compile(r"^[+-]?\d+$")
_BOOLEANS = {"yes": True, "true": True, "1": True, "up": True,
             "no": False, "false": False, "0": False, "down": False}  # fmt: skip


# --------------------------------------------------------------------------------------------
# The result
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SlurmConf:
    """The schedule-deciding settings of a ``slurm.conf`` (:func:`read_slurm_conf`).

    Attributes
    ----------
    path
        The file read.
    scheduler_type
        ``"sched/backfill"`` or ``"sched/builtin"``.
    priority_type
        ``"priority/basic"`` (FCFS) or ``"priority/multifactor"``.
    bf_max_job_test, default_queue_depth
        Jobs (Slurm's default when not given).
    bf_window_s, bf_resolution_s
        Seconds (``bf_window`` is read in minutes).
    bf_interval_s
        Seconds; ``None`` for ``bf_interval=-1`` (Slurm's switch that turns the backfill loop
        off).
    multifactor
        The multifactor priority's settings under ``MultifactorPriority``'s field names, read
        whatever ``priority_type`` is (Slurm ignores them under ``priority/basic``).
    machine_procs
        Processors of all ``NodeName`` lines (CPUs × nodes); ``None`` without nodes.
    nodes
        Node count.
    """

    path: str
    scheduler_type: str
    priority_type: str
    bf_max_job_test: int
    bf_window_s: float
    bf_resolution_s: float
    bf_interval_s: float | None
    default_queue_depth: int
    multifactor: Mapping[str, object]
    machine_procs: int | None
    nodes: int
    lines: Mapping[str, int] = field(default_factory=dict, repr=False, compare=False)

    @property
    def backfills(self) -> bool:
        """Whether Slurm runs a backfill pass: ``sched/backfill`` and ``bf_interval`` != -1."""
        return self.scheduler_type == "sched/backfill" and self.bf_interval_s is not None

    def where(self, key: str) -> str:
        """``path:line`` of ``key`` (any case), or ``path (default)`` when not given."""
        line = self.lines.get(key.lower())
        return f"{self.path} (default)" if line is None else f"{self.path}:{line}"

    def backfill_kwargs(self) -> dict[str, Any]:
        """The scheduling limits as keywords of ``simulate_conservative``.

        ``sched/backfill``: conservative backfilling (``depth=None``: a reservation for every
        tested job, as Slurm) with the five limits, each reservation holding whole nodes
        (``node_procs``: the nodes' CPUs when every node has as many; else None, processors).
        No backfill pass (``sched/builtin`` or
        ``bf_interval=-1``): ``depth=0, bf_max_job_test=1, default_queue_depth=None``: the
        backfill pass tests only the first waiting job, which the unlimited main pass left
        because it does not fit, so only the main pass starts jobs (EASY with no backfilling,
        job by job; ``default_queue_depth`` cannot be honoured then: ``docs/simulator.md``).
        """
        if not self.backfills:
            return {
                "depth": 0, "bf_window_s": None, "bf_resolution_s": None, "bf_interval_s": None,
                "bf_max_job_test": 1, "default_queue_depth": None, "node_procs": None,
            }  # fmt: skip
        return {
            "depth": None,
            "bf_window_s": self.bf_window_s,
            "bf_resolution_s": self.bf_resolution_s,
            "bf_interval_s": self.bf_interval_s,
            "bf_max_job_test": self.bf_max_job_test,
            "default_queue_depth": self.default_queue_depth,
            # Slurm's backfill plans on a map of whole nodes (backfill.c's node_space): a
            # reservation holds its nodes; nodes of different sizes: processors (a choice)
            "node_procs": self.multifactor["procs_per_node"],
        }

    def priority_kwargs(self) -> dict[str, Any]:
        """The queue order as keywords of ``simulate_conservative``: the one hook of the
        priority plugin.

        ``priority/basic``: ``{"primary": "FCFS"}`` (Slurm's FIFO: submit time, then job id).
        ``priority/multifactor``: ``{"primary": "multifactor", "priority":
        MultifactorPriority(**self.multifactor)}`` (the jobs' users, accounts, partitions and
        QOS come with the trace: ``side=`` of ``simulate_conservative``).

        Raises
        ------
        ConfigurationError
            ``priority/multifactor`` with settings the priority refuses, naming the file and
            line.
        """
        if self.priority_type == "priority/basic":
            return {"primary": "FCFS"}
        try:
            priority = MultifactorPriority(**self.multifactor)
        except ConfigurationError as error:
            key = "PriorityFlags" if "priorityflags" in self.lines else "PriorityType"
            raise ConfigurationError(
                f"{self.where(key)}: PriorityType={self.priority_type}: {error}"
            ) from None
        return {"primary": "multifactor", "priority": priority}

    def simulate_kwargs(self) -> dict[str, Any]:
        """Every keyword of ``simulate_conservative`` the file decides: the order
        (:meth:`priority_kwargs`), the limits (:meth:`backfill_kwargs`) and ``machine_procs``
        when the file has nodes. ``simulate_conservative(trace, **conf.simulate_kwargs())``."""
        kwargs = {**self.priority_kwargs(), **self.backfill_kwargs()}
        if self.machine_procs is not None:
            kwargs["machine_procs"] = self.machine_procs
        return kwargs


# --------------------------------------------------------------------------------------------
# Value parsers
# --------------------------------------------------------------------------------------------


class _Where(NamedTuple):
    """A place in the file, for error messages."""

    path: str
    line: int

    def error(self, key: str, value: str | None, why: str) -> ConfigurationError:
        shown = "" if value is None else f"={quote(value)}"
        place = self.path if self.line == 0 else f"{self.path}:{self.line}"
        return ConfigurationError(f"{place}: {key}{shown}: {why}")


def slurm_time_s(text: str) -> int:
    """Seconds in a Slurm time string: ``min``, ``min:sec``, ``hr:min:sec``, ``days-hr``,
    ``days-hr:min``, ``days-hr:min:sec`` (Slurm's ``time_str2secs``).

    >>> slurm_time_s("7-0"), slurm_time_s("14-00:00:00"), slurm_time_s("30"), slurm_time_s("1:30")
    (604800, 1209600, 1800, 90)

    Raises
    ------
    ValueError
        Another form (``INFINITE``, ``-1``, a unit such as ``7d``).
    """
    match = _TIMESPEC.match(text.strip())
    if match is None:
        raise ValueError("not a Slurm time (min, min:sec, hr:min:sec, days-hr[:min[:sec]])")
    days, d_hours, d_minutes, d_seconds, first, second, third = (
        int(group) if group is not None else None for group in match.groups()
    )
    if days is not None:
        return days * 86400 + (d_hours or 0) * 3600 + (d_minutes or 0) * 60 + (d_seconds or 0)
    assert first is not None
    if third is not None:  # hr:min:sec
        return first * 3600 + (second or 0) * 60 + third
    return first * 60 + (second or 0)  # min[:sec]


def _minutes_s(where: _Where, key: str, value: str, minimum_minutes: int) -> float:
    """A Slurm time read in whole minutes (``time_str2mins``: seconds rounded up), as seconds."""
    try:
        seconds = slurm_time_s(value)
    except ValueError as exc:
        raise where.error(key, value, str(exc)) from None
    minutes = -(-seconds // 60)
    if minutes < minimum_minutes:
        raise where.error(key, value, f"must be at least {minimum_minutes} minute(s)")
    return float(minutes * 60)


def _integer(where: _Where, key: str, value: str, minimum: int, maximum: int) -> int:
    if _INTEGER.match(value.strip()) is None:
        raise where.error(key, value, "not an integer")
    number = int(value)
    if not minimum <= number <= maximum:
        raise where.error(key, value, f"must be an integer in {minimum}..{maximum}")
    return number


def _boolean(where: _Where, key: str, value: str) -> bool:
    truth = _BOOLEANS.get(value.strip().lower())
    if truth is None:
        raise where.error(key, value, "must be YES or NO")
    return truth


def expand_hostlist(text: str) -> list[str]:
    """The host names of a Slurm host list: ``node[01-16]``, ``a[1-2,5],b``, ``r[1-2]n[1-2]``.

    Zero padding of a range's first bound is kept (``node[01-16]``: ``node01`` …). A list of
    several bracketed groups is their product, as Slurm's.

    Raises
    ------
    ValueError
        Unbalanced brackets, an empty name, a range whose end precedes its start.
    """
    names: list[str] = []
    for item in _split_outside_brackets(text):
        if not item:
            raise ValueError("an empty host name")
        parts = re.split(r"(\[[^\[\]]*\])", item)
        choices: list[list[str]] = []
        for part in parts:
            if part.startswith("["):
                choices.append(_expand_range(part[1:-1]))
            elif "[" in part or "]" in part:
                raise ValueError(f"unbalanced brackets in {item!r}")
            else:
                choices.append([part])
        names.extend("".join(combo) for combo in product(*choices))
    return names


def _split_outside_brackets(text: str) -> list[str]:
    items, depth, current = [], 0, []
    for char in text:
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth < 0:
                raise ValueError(f"unbalanced brackets in {text!r}")
        if char == "," and depth == 0:
            items.append("".join(current))
            current = []
        else:
            current.append(char)
    if depth != 0:
        raise ValueError(f"unbalanced brackets in {text!r}")
    items.append("".join(current))
    return items


def _expand_range(body: str) -> list[str]:
    values: list[str] = []
    for piece in body.split(","):
        match = re.fullmatch(r"(\d+)(?:-(\d+))?", piece.strip())
        if match is None:
            raise ValueError(f"not a number or range: {piece!r}")
        start, end = match.group(1), match.group(2) or match.group(1)
        if int(end) < int(start):
            raise ValueError(f"range {piece!r} ends before it starts")
        width = len(start) if start.startswith("0") else 0
        values.extend(str(number).zfill(width) for number in range(int(start), int(end) + 1))
    return values


# --------------------------------------------------------------------------------------------
# Lines
# --------------------------------------------------------------------------------------------


class _Pair(NamedTuple):
    key: str  # as written
    value: str


class _Setting(NamedTuple):
    """A top-level key as written, its value and where it was given."""

    key: str
    value: str
    where: _Where


def _pairs(where: _Where, text: str) -> list[_Pair]:
    """The ``Key=Value`` pairs of a line without its comment."""
    try:
        tokens = shlex.split(text, posix=True)
    except ValueError as exc:
        raise ConfigurationError(
            f"{where.path}:{where.line}: cannot read the line: {exc}"
        ) from None
    pairs = []
    for token in tokens:
        key, equals, value = token.partition("=")
        if not equals or not key:
            raise ConfigurationError(
                f"{where.path}:{where.line}: expected Key=Value, got {quote(token)}"
            )
        pairs.append(_Pair(key, value))
    return pairs


def _strip_comment(line: str) -> str:
    """``line`` without its comment: from the first ``#`` after an even number of backslashes
    (``\\#`` is a ``#``, left for the escapes to resolve), as Slurm's parser."""
    backslashes = 0
    for index, char in enumerate(line):
        if char == "#" and backslashes % 2 == 0:
            return line[:index]
        backslashes = backslashes + 1 if char == "\\" else 0
    return line


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """``(first line number, text)`` of each logical line, comments cut: a line ending with an
    odd number of backslashes (then spaces) continues on the next, as Slurm's parser (the last
    backslash dropped, nothing inserted)."""
    start: int | None = None
    parts: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        body = _strip_comment(line)
        stripped = body.rstrip()
        trailing = len(stripped) - len(stripped.rstrip("\\"))
        if start is None:
            start = number
        if trailing % 2 == 1:
            parts.append(stripped[:-1])
            continue
        parts.append(body)
        yield start, "".join(parts)
        start, parts = None, []
    if start is not None:
        yield start, "".join(parts)


class _Reader:
    """The state of one read: the values seen, by lower-case key, with their lines."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.values: dict[str, _Setting] = {}
        self.node_defaults: dict[str, str] = {}
        self.partition_defaults: dict[str, str] = {}
        self.node_names: set[str] = set()
        self.procs = 0
        self.node_cpus: set[int] = set()
        self.partitions: dict[str, int] = {}

    # -- one line ------------------------------------------------------------------------
    def line(self, where: _Where, text: str) -> None:
        first = text.split(maxsplit=1)[0]
        if first.lower() == "include" or first.lower().startswith("include="):
            raise where.error(
                "Include", None, f"not modelled by schedlab: {REFUSED_KEYS['include']}"
            )
        pairs = _pairs(where, text)
        if not pairs:
            return
        head = pairs[0].key.lower()
        if head == "nodename":
            self.node_line(where, pairs)
        elif head == "partitionname":
            self.partition_line(where, pairs)
        else:
            for pair in pairs:
                self.global_pair(where, pair)

    def global_pair(self, where: _Where, pair: _Pair, *, replace: bool = False) -> None:
        lower = pair.key.lower()
        if lower in IGNORED_KEYS:
            return
        if lower not in _READ_KEYS:
            why = REFUSED_KEYS.get(lower)
            if why is not None:
                raise where.error(pair.key, None, f"not modelled by schedlab: {why}")
            raise where.error(
                pair.key, None, "unknown key (a typo? schedlab reads the keys listed in "
                "docs/simulator.md, 'Reading a slurm.conf')",
            )  # fmt: skip
        if lower in self.values and not replace:
            first = self.values[lower].where.line
            raise where.error(pair.key, None, f"given twice (first on line {first})")
        self.values[lower] = _Setting(pair.key, pair.value, where)

    def change(self, key: str, value: str, source: str) -> None:
        """Set ``key`` to ``value`` (Slurm's syntax) over what the file says: a top-level key,
        or one option of ``SchedulerParameters`` (the file's other options kept). Errors name
        ``source`` (where the change was asked, e.g. ``config whatif.try``) and the key."""
        where = _Where(source, 0)
        lower = key.strip().lower()
        if lower in BACKFILL_PARAMETERS or lower in IGNORED_SCHEDULER_PARAMETERS:
            found = self.get("SchedulerParameters")
            items = [] if found is None else [
                item.strip() for item in found.value.split(",") if item.strip()
            ]
            items = [item for item in items if item.partition("=")[0].strip().lower() != lower]
            items.append(f"{lower}={value}")
            self.values["schedulerparameters"] = _Setting(
                "SchedulerParameters", ",".join(items), where
            )
            return
        if lower in ("nodename", "partitionname", "include"):
            raise where.error(key, value, "cannot be changed (nodes and partitions are the "
                              "machine's; edit the slurm.conf)")  # fmt: skip
        self.global_pair(where, _Pair(key.strip(), value), replace=True)

    def node_line(self, where: _Where, pairs: list[_Pair]) -> None:
        name = pairs[0].value
        settings: dict[str, str] = {}
        for pair in pairs[1:]:
            lower = pair.key.lower()
            if lower in IGNORED_NODE_KEYS:
                continue
            if lower == "state":
                if pair.value.lower() not in _NODE_STATES:
                    raise where.error(
                        pair.key, pair.value,
                        "not modelled by schedlab: every node is in the machine from the start "
                        "(State=UNKNOWN or IDLE)",
                    )  # fmt: skip
                continue
            canonical = next((key for key in _NODE_COUNTS if key.lower() == lower), None)
            if canonical is None:
                raise where.error(pair.key, None, "unknown or unsupported key of a NodeName line")
            settings[canonical] = str(_integer(where, canonical, pair.value, 1, 2**31 - 1))
        if name.lower() == "default":
            self.node_defaults.update(settings)
            return
        try:
            hosts = expand_hostlist(name)
        except ValueError as exc:
            raise where.error("NodeName", name, str(exc)) from None
        for host in hosts:
            if host in self.node_names:
                raise where.error("NodeName", name, f"node {host!r} is defined twice")
            self.node_names.add(host)
        merged = {**self.node_defaults, **settings}
        count = {key: int(merged.get(key, "1")) for key in _NODE_COUNTS}
        if "CPUs" in merged:
            cpus = count["CPUs"]
        else:  # Slurm: the product of the topology, Sockets taking SocketsPerBoard's place
            sockets = (
                count["Sockets"] if "Sockets" in merged
                else count["Boards"] * count["SocketsPerBoard"]
            )  # fmt: skip
            cpus = sockets * count["CoresPerSocket"] * count["ThreadsPerCore"]
        self.procs += cpus * len(hosts)
        self.node_cpus.add(cpus)

    def partition_line(self, where: _Where, pairs: list[_Pair]) -> None:
        name = pairs[0].value
        settings: dict[str, str] = {}
        for pair in pairs[1:]:
            lower = pair.key.lower()
            if lower in IGNORED_PARTITION_KEYS:
                continue
            if lower != "priorityjobfactor":
                raise where.error(
                    pair.key, None, "unknown or unsupported key of a PartitionName line "
                    "(schedlab reads PriorityJobFactor; docs/simulator.md)",
                )  # fmt: skip
            settings["PriorityJobFactor"] = str(
                _integer(where, "PriorityJobFactor", pair.value, 0, 65533)
            )
        if name.lower() == "default":
            self.partition_defaults.update(settings)
            return
        if not name:
            raise where.error("PartitionName", name, "a partition needs a name")
        if name in self.partitions:
            raise where.error("PartitionName", name, "the partition is defined twice")
        merged = {**self.partition_defaults, **settings}
        self.partitions[name] = int(merged.get("PriorityJobFactor", DEFAULT_PARTITION_JOB_FACTOR))

    # -- the values ------------------------------------------------------------------------
    def get(self, key: str) -> _Setting | None:
        return self.values.get(key.lower())

    def conf(self) -> SlurmConf:
        scheduler_type = self.plugin("SchedulerType", DEFAULT_SCHEDULER_TYPE,
                                     ("sched/backfill", "sched/builtin"))  # fmt: skip
        priority_type = self.plugin("PriorityType", DEFAULT_PRIORITY_TYPE,
                                    ("priority/basic", "priority/multifactor"))  # fmt: skip
        self.must_be("PreemptType", "preempt/none", "preemption")
        self.must_be("PreemptMode", "off", "preemption")
        self.must_be(
            "PriorityUsageResetPeriod", "none", "resets of the fair-share usage",
            known=("now", "daily", "weekly", "monthly", "quarterly", "yearly"),
        )  # fmt: skip
        self.must_be("PrioritySiteFactorPlugin", "site_factor/none", "site factors")
        self.must_be("PriorityWeightTRES", "", "TRES weights of the multifactor priority")
        self.must_be("PriorityParameters", "", "parameters of a priority plugin")
        limits = self.scheduler_parameters()
        multifactor = self.priority()
        lines = {key: setting.where.line for key, setting in self.values.items()}
        return SlurmConf(
            path=self.path, scheduler_type=scheduler_type, priority_type=priority_type,
            bf_max_job_test=int(limits["bf_max_job_test"]),
            bf_window_s=float(limits["bf_window_s"]),
            bf_resolution_s=float(limits["bf_resolution_s"]),
            bf_interval_s=None if limits["bf_interval_s"] < 0 else float(limits["bf_interval_s"]),
            default_queue_depth=int(limits["default_queue_depth"]),
            multifactor=MappingProxyType(multifactor),
            machine_procs=self.procs or None, nodes=len(self.node_names),
            lines=MappingProxyType(lines),
        )  # fmt: skip

    def plugin(self, key: str, default: str, known: tuple[str, ...]) -> str:
        found = self.get(key)
        if found is None:
            return default
        written, value, where = found
        if value.lower() not in known:
            raise where.error(written, value, f"schedlab models {' and '.join(known)} only")
        return value.lower()

    def must_be(self, key: str, allowed: str, what: str, known: tuple[str, ...] = ()) -> None:
        found = self.get(key)
        if found is None or found.value.strip().lower() == allowed:
            return
        written, value, where = found
        if known and value.strip().lower() not in known:
            raise where.error(written, value, f"not a value of {key}")
        shown = allowed or "empty"
        raise where.error(written, value, f"not modelled by schedlab: {what} ({key}={shown} only)")

    def scheduler_parameters(self) -> dict[str, int]:
        values = {spec.kwarg: spec.default * spec.scale for spec in BACKFILL_PARAMETERS.values()}
        found = self.get("SchedulerParameters")
        if found is None:
            return values
        written, text, where = found
        seen: set[str] = set()
        for item in filter(None, (part.strip() for part in text.split(","))):
            name, equals, value = item.partition("=")
            lower = name.strip().lower()
            if lower in IGNORED_SCHEDULER_PARAMETERS:
                continue
            spec = BACKFILL_PARAMETERS.get(lower)
            if spec is None:
                raise where.error(
                    f"{written} {name}", None,
                    "not modelled by schedlab (it reads "
                    f"{', '.join(BACKFILL_PARAMETERS)}; docs/simulator.md)",
                )  # fmt: skip
            if lower in seen:
                raise where.error(f"{written} {name}", None, "given twice")
            seen.add(lower)
            label = f"{written} {lower}"
            if not equals:
                raise where.error(label, item, "needs a value (name=number)")
            if lower == "bf_interval" and value.strip() == "-1":
                values[spec.kwarg] = -1
                continue
            values[spec.kwarg] = _integer(where, label, value, spec.minimum, spec.maximum) * (
                spec.scale
            )
        return values

    def priority(self) -> dict[str, object]:
        settings = dict(PRIORITY_DEFAULTS)
        weights = {
            "PriorityWeightAge": "weight_age", "PriorityWeightFairshare": "weight_fairshare",
            "PriorityWeightJobSize": "weight_job_size",
            "PriorityWeightPartition": "weight_partition", "PriorityWeightQOS": "weight_qos",
        }  # fmt: skip
        for key, name in weights.items():
            if (found := self.get(key)) is not None:
                settings[name] = _integer(found.where, found.key, found.value, 0, 2**32 - 1)
        found = self.get("PriorityWeightAssoc")
        if found is not None and _integer(found.where, found.key, found.value, 0, 2**32 - 1) != 0:
            raise found.where.error(
                found.key, found.value, "not modelled by schedlab: association priorities "
                "(PriorityWeightAssoc=0 only)",
            )  # fmt: skip
        for key, (name, minimum) in PRIORITY_TIMES.items():
            if (found := self.get(key)) is not None:
                settings[name] = _minutes_s(found.where, found.key, found.value, minimum)
        if (found := self.get("PriorityFavorSmall")) is not None:
            settings["favor_small"] = _boolean(found.where, found.key, found.value)
        if (found := self.get("FairShareDampeningFactor")) is not None:
            settings["dampening"] = _integer(found.where, found.key, found.value, 1, 65535)
        if (found := self.get("PriorityFlags")) is not None:
            flags = {flag.strip().upper() for flag in found.value.split(",") if flag.strip()}
            unsupported = sorted(flags - SUPPORTED_PRIORITY_FLAGS)
            if unsupported:
                raise found.where.error(
                    found.key, found.value, f"not modelled by schedlab: {', '.join(unsupported)} "
                    f"(supported: {', '.join(sorted(SUPPORTED_PRIORITY_FLAGS))})",
                )  # fmt: skip
            settings["fair_tree"] = "NO_FAIR_TREE" not in flags
        settings["procs_per_node"] = (
            next(iter(self.node_cpus)) if len(self.node_cpus) == 1 else None
        )
        settings["partition_job_factor"] = MappingProxyType(dict(self.partitions))
        # QOS priorities live in the accounting database (sacctmgr), not in slurm.conf.
        settings["qos_priority"] = MappingProxyType({})
        return settings


#: Top-level keys read, in lower case (their values are checked once the file has been read,
#: where the defaults of the keys not given are known).
_READ_KEYS: frozenset[str] = frozenset(
    key.lower()
    for key in (
        "SchedulerType", "SchedulerParameters", "PriorityType", "PriorityWeightAge",
        "PriorityWeightFairshare", "PriorityWeightJobSize", "PriorityWeightPartition",
        "PriorityWeightQOS", "PriorityWeightAssoc", "PriorityWeightTRES", "PriorityMaxAge",
        "PriorityDecayHalfLife", "PriorityCalcPeriod", "PriorityFavorSmall", "PriorityFlags",
        "FairShareDampeningFactor", "PriorityUsageResetPeriod", "PreemptType", "PreemptMode",
        "PrioritySiteFactorPlugin", "PriorityParameters",
    )
)  # fmt: skip

#: Top-level keys refused whatever their value (lower case): they change a schedule in ways
#: schedlab does not model, named in the error. (Keys refused only for some values, such as
#: ``PreemptType``, are read and checked.)
REFUSED_KEYS: Mapping[str, str] = MappingProxyType(
    {
        "include": "another file's keys (give schedlab one file with every key)",
        "nodeset": "node sets",
        "downnodes": "nodes down from the start",
        "frontendname": "front-end nodes",
        "overtimelimit": "jobs running past their time limit",
        "schedulertimeslice": "gang scheduling",
        "defmempercpu": "memory", "defmempernode": "memory", "maxmempercpu": "memory",
        "maxmempernode": "memory",
        "suspendtime": "power saving", "suspendrate": "power saving",
        "resumerate": "power saving", "resumetimeout": "power saving",
        "jobsubmitplugins": "job submit plugins (they rewrite jobs)",
        "topologyplugin": "network topology", "topologyparam": "network topology",
        "prioritysitefactorparameters": "site factors",
    }
)  # fmt: skip


_UNIT_DURATION = re.compile(r"^[0-9]+(\.[0-9]+)?\s*[smhdw]$")


def slurm_value(key: str, value: object) -> str:
    """``value`` of ``key`` in Slurm's syntax, for :func:`read_slurm_conf`'s ``changes``.

    A duration with a unit (``90m``, ``1d``, ``2w``) becomes Slurm's unit of the key: whole
    minutes for ``bf_window`` and the ``Priority*`` times (``1d`` → ``1440``, ``7d`` →
    ``7-0:00:00``), seconds for ``bf_resolution`` and ``bf_interval``; YAML booleans become
    ``YES``/``NO``; anything else is kept as text (checked by the reader).

    Raises
    ------
    ConfigurationError
        A duration with a unit for a key that takes none, or one that is not whole minutes
        where minutes are read (naming the key).
    """
    lower = key.strip().lower()
    if isinstance(value, bool):
        return "YES" if value else "NO"
    text = str(value).strip()
    if not _UNIT_DURATION.match(text):
        return text
    from scheduler.core.units import parse_duration

    seconds = parse_duration(text)
    spec = BACKFILL_PARAMETERS.get(lower)
    if spec is not None and spec.unit in ("minutes", "seconds"):
        amount = seconds / spec.scale
    elif lower in _TIME_KEYS:
        amount = seconds / 60
    else:
        raise ConfigurationError(f"{key}={quote(value)}: {key} is not a duration (no unit)")
    if amount != int(amount):
        unit = "minutes" if (spec is None or spec.scale == 60) else "seconds"
        raise ConfigurationError(f"{key}={quote(value)}: Slurm reads {key} in whole {unit}")
    if lower in _TIME_KEYS:
        days, rest = divmod(int(seconds), 86400)
        return f"{days}-{rest // 3600}:{rest % 3600 // 60:02d}:00"
    return str(int(amount))


def read_slurm_conf(
    path: str | Path, changes: Mapping[str, str] | None = None, *, source: str = "change"
) -> SlurmConf:
    """Read the schedule-deciding settings of a ``slurm.conf``.

    Parameters
    ----------
    path
        The file (one file: ``Include`` is refused).
    changes
        Keys set over the file's, in Slurm's syntax (``{"PriorityWeightAge": "0",
        "bf_window": "4320"}``): a top-level key replaces the file's line, an option of
        ``SchedulerParameters`` (``bf_window``, ``bf_interval``, ...) replaces that option only.
        Checked as the file's lines are; an error names ``source`` and the key.

    Returns
    -------
    SlurmConf
        The scheduler and its limits, the priority settings, the machine; Slurm 22.05's
        defaults where the file gives nothing (``docs/simulator.md``, "Reading a slurm.conf").

    Raises
    ------
    ConfigurationError
        The file cannot be read; a key schedlab does not model, an unknown key or a malformed
        value (naming the file, line, key and value).
    """
    name = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"{name}: cannot read the slurm.conf: {exc}") from None
    reader = _Reader(name)
    for number, line in _logical_lines(text):
        if line.strip():
            reader.line(_Where(name, number), line.strip())
    for key, value in (changes or {}).items():
        reader.change(key, str(value), source)
    return reader.conf()
