"""The schedulers a what-if study compares: a baseline and its alternatives, as plain data.

A :class:`Scheduler` is what one simulation runs: EASY (primary order, backfilling order,
threshold Θ) or conservative backfilling in a primary order, with Slurm's ``sched/backfill``
limits and multifactor priority when it comes from a ``slurm.conf``. It is plain data (it goes
to the steps through a rule's params, so a changed setting reruns its simulations and no other).

Where they come from (config section ``whatif``, ``docs/whatif.md``):

- a ``slurm.conf`` (``baseline.slurm_conf``, an alternative's ``slurm_conf``) with changes to
  its keys (an alternative's ``slurm``, the ``try`` and ``grid`` keys): read by
  :func:`scheduler.sim.slurm_conf.read_slurm_conf`, every key checked as a file's line is;
- a research policy label (``baseline.policy``, an alternative's ``policy``, ``try: {policy:
  [...]}``): ``EASY-<primary>-<backfill>`` or ``conservative-<primary>``, each with an
  optional ``@<threshold>`` (``EASY-SPF-SPF@20h``), policy names from the registry (the learned
  study's functions LF1 … among them when that study is set up).

The accounts' shares (``whatif.shares``, sacctmgr's ``FairShare``) go into every multifactor
priority: they are the site's, not a scheduler setting.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scheduler.core.errors import ConfigurationError
from scheduler.studies.common.config import policy_list, threshold_list

__all__ = [
    "BASELINE",
    "POLICY_KEY",
    "Alternative",
    "Scheduler",
    "policy_scheduler",
    "slurm_scheduler",
    "study_alternatives",
]

#: The name of the baseline among a study's alternatives (files, tables).
BASELINE = "baseline"
#: The key of ``try`` whose values are policy labels, not Slurm keys.
POLICY_KEY = "policy"

_LABEL = re.compile(r"^(easy|conservative)-(.+?)(@(.+))?$", re.IGNORECASE)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.,=+-]*$")


@dataclass(frozen=True)
class Scheduler:
    """One simulated scheduler.

    ``backfilling``: ``"easy"`` (EASY with ``backfill`` as its backfilling order) or
    ``"conservative"`` (every waiting job a reservation; ``backfill`` None); ``primary`` a policy
    name or :data:`~scheduler.policies.MULTIFACTOR`; ``threshold_s`` Θ in seconds (inf: none);
    ``slurm``: ``{"limits": keywords of simulate_conservative, "priority": MultifactorPriority
    fields or None}`` for a Slurm scheduler, None otherwise.
    """

    backfilling: str
    primary: str
    backfill: str | None
    threshold_s: float
    slurm: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain data (a rule's params); :meth:`from_dict` reads it back."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Scheduler:
        return cls(**dict(data))


@dataclass(frozen=True)
class Alternative:
    """A named scheduler of the study: ``name`` (files and tables; :data:`BASELINE` for the
    baseline), ``change`` (what differs from the baseline, in the config's words)."""

    name: str
    change: str
    scheduler: Scheduler


def policy_scheduler(label: str, key: str) -> Scheduler:
    """The scheduler of a policy label (``EASY-SPF-FCFS``, ``conservative-LQF@20h``).

    Raises
    ------
    ConfigurationError
        A label of another form, an unknown policy or threshold (naming ``key``).
    """
    match = _LABEL.match(str(label).strip())
    if match is None:
        raise ConfigurationError(
            f"config {key}: policy {label!r} is not EASY-<primary>-<backfill> or "
            "conservative-<primary>, with an optional @<threshold> (e.g. EASY-SPF-FCFS@20h)"
        )
    kind, body, _, threshold = match.groups()
    threshold_s = math.inf
    if threshold is not None:
        (parsed,) = threshold_list([threshold], f"{key} ({label})")
        threshold_s = parsed.seconds
    if kind.lower() == "easy":
        parts = body.split("-")
        if len(parts) != 2:
            raise ConfigurationError(
                f"config {key}: {label!r}: EASY needs a primary and a backfilling policy "
                "(EASY-<primary>-<backfill>)"
            )
        (primary,), (backfill,) = policy_list(parts[:1], key), policy_list(parts[1:], key)
        return Scheduler("easy", primary, backfill, threshold_s)
    (primary,) = policy_list([body], key)
    return Scheduler("conservative", primary, None, threshold_s)


def slurm_scheduler(
    path: str,
    changes: Mapping[str, object],
    shares: Mapping[str, int],
    key: str,
) -> Scheduler:
    """The scheduler of the ``slurm.conf`` at ``path`` with ``changes`` (Slurm keys; durations
    with a unit are converted: :func:`scheduler.sim.slurm_conf.slurm_value`) and the accounts'
    ``shares``: conservative backfilling with the file's limits in its priority order (FCFS under
    ``priority/basic``, the multifactor priority otherwise).

    Raises
    ------
    ConfigurationError
        The file or a change cannot be read or is not modelled (naming ``key``, the file, its
        line or the changed key).
    """
    from scheduler.sim.slurm_conf import read_slurm_conf, slurm_value

    try:
        text = {name: slurm_value(name, value) for name, value in changes.items()}
        conf = read_slurm_conf(path, text, source=f"config {key}")
        order = conf.priority_kwargs()
    except ConfigurationError as error:
        message = str(error)
        raise ConfigurationError(
            message if message.startswith("config ") else f"config {key}: {message}"
        ) from None
    priority = order.get("priority")
    if priority is not None:
        priority = dataclasses.replace(priority, account_shares=dict(shares)).to_dict()
    return Scheduler(
        "conservative",
        order["primary"],
        None,
        math.inf,
        {"limits": conf.backfill_kwargs(), "priority": priority},
    )


def _change_text(changes: Mapping[str, object]) -> str:
    return ",".join(f"{name}={value}" for name, value in changes.items())


def _file_name(text: str, key: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_.,=+-]", "_", text)
    if not _NAME.match(name):
        raise ConfigurationError(f"config {key}: {text!r} cannot name an alternative")
    return name


def study_alternatives(section: Mapping[str, Any], *, key: str = "whatif") -> list[Alternative]:
    """The baseline and the alternatives of a validated ``whatif`` section, baseline first.

    ``try`` gives one alternative per value (each key changed alone from the baseline), ``grid``
    one per combination of its keys' values, ``alternatives`` named whole configurations (a
    policy, or a slurm.conf and/or changes to the baseline's). The key ``policy`` of ``try``
    and ``grid`` takes policy labels.

    Raises
    ------
    ConfigurationError
        A Slurm change without a Slurm baseline, a value that does not parse, two alternatives
        of one name or two identical schedulers (naming the key).
    """
    base = section["baseline"]
    shares = dict(section["shares"])
    conf = base["slurm_conf"]
    if (conf is None) == (base["policy"] is None):
        raise ConfigurationError(
            f"config {key}.baseline: give exactly one of slurm_conf (your site's file) and "
            "policy (e.g. EASY-FCFS-FCFS)"
        )
    out = [
        Alternative(
            BASELINE,
            "the baseline",
            slurm_scheduler(conf, {}, shares, f"{key}.baseline.slurm_conf")
            if conf is not None
            else policy_scheduler(base["policy"], f"{key}.baseline.policy"),
        )
    ]

    def changed(changes: Mapping[str, object], where: str) -> Scheduler:
        if POLICY_KEY in changes:
            if len(changes) > 1:
                raise ConfigurationError(
                    f"config {where}: a policy replaces the whole scheduler; combine it with "
                    "no Slurm key"
                )
            return policy_scheduler(str(changes[POLICY_KEY]), where)
        if conf is None:
            raise ConfigurationError(
                f"config {where}: {', '.join(changes)}: Slurm keys change a slurm.conf, and "
                f"{key}.baseline has none (give {key}.baseline.slurm_conf)"
            )
        return slurm_scheduler(conf, changes, shares, where)

    for name, values in section["try"].items():
        for value in values:
            change = {name: value}
            out.append(
                Alternative(
                    _file_name(_change_text(change), f"{key}.try.{name}"),
                    _change_text(change),
                    changed(change, f"{key}.try.{name}"),
                )
            )
    grid = section["grid"]
    if grid:
        names = list(grid)
        for values in itertools.product(*(grid[name] for name in names)):
            change = dict(zip(names, values, strict=True))
            out.append(
                Alternative(
                    _file_name(_change_text(change), f"{key}.grid"),
                    _change_text(change),
                    changed(change, f"{key}.grid"),
                )
            )
    for index, item in enumerate(section["alternatives"]):
        where = f"{key}.alternatives[{index}]"
        if item["policy"] is not None:
            if item["slurm_conf"] is not None or item["slurm"]:
                raise ConfigurationError(
                    f"config {where}: give a policy or a slurm.conf and its changes, not both"
                )
            scheduler = policy_scheduler(item["policy"], f"{where}.policy")
            change = item["policy"]
        elif item["slurm_conf"] is not None:
            scheduler = slurm_scheduler(item["slurm_conf"], item["slurm"], shares, where)
            change = f"{item['slurm_conf']} {_change_text(item['slurm'])}".strip()
        elif item["slurm"]:
            scheduler = changed(item["slurm"], f"{where}.slurm")
            change = _change_text(item["slurm"])
        else:
            raise ConfigurationError(f"config {where}: give a policy, a slurm_conf or slurm keys")
        out.append(Alternative(_file_name(item["name"], f"{where}.name"), change, scheduler))
    _check_distinct(out, key)
    return out


def _check_distinct(alternatives: Sequence[Alternative], key: str) -> None:
    names: dict[str, Alternative] = {}
    schedulers: dict[str, Alternative] = {}
    for alternative in alternatives:
        if alternative.name in names:
            raise ConfigurationError(
                f"config {key}: two alternatives are named {alternative.name!r}"
            )
        names[alternative.name] = alternative
        text = repr(alternative.scheduler.to_dict())
        if text in schedulers:
            raise ConfigurationError(
                f"config {key}: {alternative.change!r} ({alternative.name}) simulates the same "
                f"scheduler as {schedulers[text].change!r} ({schedulers[text].name})"
            )
        schedulers[text] = alternative
    if len(alternatives) < 2:
        raise ConfigurationError(
            f"config {key}: nothing to compare: give alternatives (try, grid or alternatives)"
        )
