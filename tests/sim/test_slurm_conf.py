"""Reading a slurm.conf (scheduler.sim.slurm_conf): keys, defaults, units, refusals, nodes.

Expected values are worked by hand from Slurm 22.05's ``man slurm.conf`` (units, defaults) and
written in the tests, not taken from the reader's constants; the schedules are compared with
the engines they must equal.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from scheduler.core.errors import ConfigurationError
from scheduler.sim.api import simulate
from scheduler.sim.conservative import simulate_conservative
from scheduler.sim.multifactor import MultifactorPriority
from scheduler.sim.slurm_conf import (
    IGNORED_KEYS,
    IGNORED_NODE_KEYS,
    IGNORED_PARTITION_KEYS,
    IGNORED_SCHEDULER_PARAMETERS,
    PRIORITY_DEFAULTS,
    REFUSED_KEYS,
    expand_hostlist,
    read_slurm_conf,
    slurm_time_s,
)

#: The slurm.conf that tests/cluster/slurm-up writes, with its shell variables filled in and
#: its default scheduling.conf in place of the Include line (a fixture text: the script is not
#: run). SchedulerParameters=sched_interval=2 is left out
#: here: it is refused (see test_the_cluster_conf_with_sched_interval_is_refused).
CLUSTER_CONF = """\
# Single-node test cluster written by schedlab's tests/cluster/slurm-up.
ClusterName=schedlab
SlurmctldHost=host1(127.0.0.1)
SlurmUser=alice
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
AuthType=auth/munge
AuthInfo=socket=/tmp/schedlab-slurm/munge/run/munge.socket
CredType=cred/munge
StateSaveLocation=/tmp/schedlab-slurm/spool/ctld
SlurmdSpoolDir=/tmp/schedlab-slurm/spool/d
SlurmctldPidFile=/tmp/schedlab-slurm/spool/slurmctld.pid
SlurmdPidFile=/tmp/schedlab-slurm/spool/slurmd.pid
SlurmctldLogFile=/tmp/schedlab-slurm/log/slurmctld.log
SlurmdLogFile=/tmp/schedlab-slurm/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=30
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MinJobAge=300
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=16819
# The munge socket for connections to slurmdbd (AuthInfo does not cover them in 22.05).
AccountingStoragePass=/tmp/schedlab-slurm/munge/run/munge.socket
AccountingStorageEnforce=associations,limits
JobCompType=jobcomp/none
NodeName=host1 CPUs=2 Boards=1 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 \
RealMemory=3911 NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""


def write(tmp_path: Path, text: str, name: str = "slurm.conf") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def refused(tmp_path: Path, text: str, *fragments: str) -> str:
    """Read ``text``, expect a ConfigurationError naming the file and every fragment."""
    path = write(tmp_path, text)
    with pytest.raises(ConfigurationError) as info:
        read_slurm_conf(path)
    message = str(info.value)
    assert message.startswith(f"{path}:"), message
    for fragment in fragments:
        assert fragment in message, message
    return message


# --------------------------------------------------------------------------------------------
# Defaults and units
# --------------------------------------------------------------------------------------------


def test_an_empty_file_has_slurm_2205_defaults(tmp_path: Path) -> None:
    conf = read_slurm_conf(write(tmp_path, "# nothing but a comment\n\n"))
    assert conf.scheduler_type == "sched/backfill"
    assert conf.priority_type == "priority/basic"
    # man slurm.conf (22.05): bf_max_job_test 500, bf_window 1440 min, bf_resolution 60 s,
    # bf_interval 30 s, default_queue_depth 100.
    assert conf.backfill_kwargs() == {
        "depth": None, "bf_window_s": 86400.0, "bf_resolution_s": 60.0, "bf_interval_s": 30.0,
        "bf_max_job_test": 500, "default_queue_depth": 100, "node_procs": None,
    }  # fmt: skip
    assert conf.machine_procs is None and conf.nodes == 0
    assert conf.simulate_kwargs() == {"primary": "FCFS", **conf.backfill_kwargs()}
    mf = conf.multifactor
    assert (mf["max_age_s"], mf["decay_half_life_s"], mf["calc_period_s"]) == (604800, 604800, 300)
    assert [mf[k] for k in ("weight_age", "weight_fairshare", "weight_job_size",
                            "weight_partition", "weight_qos")] == [0] * 5  # fmt: skip
    assert (mf["favor_small"], mf["dampening"], mf["fair_tree"]) == (False, 1, True)
    assert conf.where("SchedulerType").endswith("(default)")


def test_scheduler_parameters_units(tmp_path: Path) -> None:
    conf = read_slurm_conf(write(tmp_path, """\
        schedulertype=SCHED/BACKFILL
        SchedulerParameters=bf_window=2880,bf_resolution=300,bf_interval=45,bf_max_job_test=20,default_queue_depth=7,bf_continue,bf_yield_sleep=1000
        """))  # fmt: skip
    assert conf.backfill_kwargs() == {
        "depth": None, "bf_window_s": 2880 * 60.0, "bf_resolution_s": 300.0,
        "bf_interval_s": 45.0, "bf_max_job_test": 20, "default_queue_depth": 7,
        "node_procs": None,
    }  # fmt: skip
    assert conf.where("schedulerparameters") == f"{tmp_path / 'slurm.conf'}:2"


def test_priority_keys_and_time_formats(tmp_path: Path) -> None:
    conf = read_slurm_conf(
        write(
            tmp_path,
            """\
        PriorityType=priority/multifactor
        PriorityWeightAge=1000
        PriorityWeightFairshare=2000
        PriorityWeightJobSize=300
        PriorityWeightPartition=40
        PriorityWeightQOS=5
        PriorityWeightAssoc=0
        PriorityMaxAge=14-00:00:00
        PriorityDecayHalfLife=7-0
        PriorityCalcPeriod=1:30
        PriorityFavorSmall=YES
        FairShareDampeningFactor=5
        PriorityFlags=no_fair_tree
        PriorityUsageResetPeriod=NONE
        PriorityWeightTRES=
        PreemptType=preempt/none
        """,
        )
    )
    mf = conf.multifactor
    assert conf.priority_type == "priority/multifactor"
    names = ("weight_age", "weight_fairshare", "weight_job_size", "weight_partition", "weight_qos")
    assert [mf[k] for k in names] == [1000, 2000, 300, 40, 5]
    assert mf["max_age_s"] == 14 * 86400
    assert mf["decay_half_life_s"] == 7 * 86400
    # PriorityCalcPeriod is read in whole minutes, rounded up (Slurm's time_str2mins): 1:30 is
    # 1 min 30 s, so 2 minutes.
    assert mf["calc_period_s"] == 120
    assert (mf["favor_small"], mf["dampening"], mf["fair_tree"]) == (True, 5, False)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("30", 1800), ("1:30", 90), ("2:00:00", 7200), ("7-0", 604800), ("1-2", 93600),
     ("1-2:3", 93780), ("14-00:00:00", 1209600), ("0", 0)],
)  # fmt: skip
def test_slurm_time_formats(text: str, seconds: int) -> None:
    assert slurm_time_s(text) == seconds


def test_plain_minutes_are_minutes(tmp_path: Path) -> None:
    conf = read_slurm_conf(write(tmp_path, "PriorityMaxAge=30\nPriorityDecayHalfLife=90\n"))
    assert conf.multifactor["max_age_s"] == 1800
    assert conf.multifactor["decay_half_life_s"] == 5400


# --------------------------------------------------------------------------------------------
# Nodes and partitions
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hosts", "expected"),
    [("node[01-03]", ["node01", "node02", "node03"]), ("a[1-2,5],b", ["a1", "a2", "a5", "b"]),
     ("r[1-2]n[1-2]", ["r1n1", "r1n2", "r2n1", "r2n2"]), ("solo", ["solo"]),
     ("n[8-10]", ["n8", "n9", "n10"])],
)  # fmt: skip
def test_host_lists(hosts: str, expected: list[str]) -> None:
    assert expand_hostlist(hosts) == expected


def test_node_lines_give_the_machine(tmp_path: Path) -> None:
    conf = read_slurm_conf(
        write(
            tmp_path,
            """\
        NodeName=fat[1-2] Sockets=4 CoresPerSocket=8 ThreadsPerCore=2
        NodeName=DEFAULT CPUs=16 RealMemory=64000
        NodeName=node[01-16] State=UNKNOWN
        NodeName=tiny
        PartitionName=DEFAULT PriorityJobFactor=3
        PartitionName=batch Nodes=node[01-16] Default=YES
        PartitionName=fat Nodes=fat[1-2] PriorityJobFactor=10
        """,
        )
    )
    # 2 x (4 x 8 x 2): CPUs from the topology; 16 nodes x 16 CPUs (NodeName=DEFAULT, which
    # applies to every later line: `tiny` has CPUs=16 too).
    assert conf.machine_procs == 16 * 16 + 2 * 64 + 16
    assert conf.nodes == 19
    assert conf.multifactor["procs_per_node"] is None  # nodes differ
    assert dict(conf.multifactor["partition_job_factor"]) == {"batch": 3, "fat": 10}
    assert conf.simulate_kwargs()["machine_procs"] == 16 * 16 + 2 * 64 + 16


def test_boards_and_sockets_per_board(tmp_path: Path) -> None:
    text = (
        "NodeName=n[1-3] Boards=2 SocketsPerBoard=2 CoresPerSocket=4\nPartitionName=p Nodes=ALL\n"
    )
    conf = read_slurm_conf(write(tmp_path, text))
    assert conf.machine_procs == 3 * 2 * 2 * 4
    assert conf.multifactor["procs_per_node"] == 16
    assert dict(conf.multifactor["partition_job_factor"]) == {"p": 1}


def test_the_cluster_conf(tmp_path: Path) -> None:
    conf = read_slurm_conf(write(tmp_path, CLUSTER_CONF))
    assert conf.machine_procs == 2 and conf.nodes == 1
    assert conf.backfills
    assert conf.simulate_kwargs()["bf_max_job_test"] == 500


def test_the_cluster_conf_with_sched_interval_is_refused(tmp_path: Path) -> None:
    text = CLUSTER_CONF.replace("MinJobAge=300", "SchedulerParameters=sched_interval=2")
    line = text.splitlines().index("SchedulerParameters=sched_interval=2") + 1
    refused(tmp_path, text, f":{line}:", "sched_interval", "not modelled")


# --------------------------------------------------------------------------------------------
# Refusals: each names the file, the line, the key (and the value when it is malformed)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "fragments"),
    [
        ("SchedulerParameters=bf_max_job_user=10", ("bf_max_job_user", "not modelled")),
        ("PreemptType=preempt/qos", ("PreemptType", "'preempt/qos'", "not modelled")),
        ("PriorityWeightTRES=CPU=1000", ("PriorityWeightTRES", "not modelled")),
        ("PriorityUsageResetPeriod=WEEKLY", ("PriorityUsageResetPeriod", "not modelled")),
        ("PriorityFlags=NO_FAIR_TREE,SMALL_RELATIVE_TO_TIME", ("PriorityFlags",
                                                              "SMALL_RELATIVE_TO_TIME")),
        ("Include /etc/slurm/nodes.conf", ("Include", "not modelled")),
        ("Include=/etc/slurm/nodes.conf", ("Include", "not modelled")),
        ("SchedulerType=sched/hold", ("SchedulerType", "'sched/hold'")),
        ("PriorityWeightAssoc=10", ("PriorityWeightAssoc", "not modelled")),
        ("NodeName=n1 CPUs=4 State=FUTURE", ("State", "'FUTURE'", "not modelled")),
        ("PartitionName=p PriorityTier=2", ("PriorityTier", "PartitionName")),
    ],
)  # fmt: skip
def test_unmodelled_keys_are_refused(tmp_path: Path, line: str, fragments: tuple[str]) -> None:
    refused(tmp_path, f"ClusterName=c\n# a comment\n{line}\n", ":3:", *fragments)


@pytest.mark.parametrize(
    ("line", "fragments"),
    [
        ("SchedulerParameters=bf_window=0", ("bf_window", "'0'", "1..43200")),
        ("SchedulerParameters=bf_resolution=1m", ("bf_resolution", "'1m'", "not an integer")),
        ("SchedulerParameters=bf_interval=20000", ("bf_interval", "'20000'")),
        ("SchedulerParameters=bf_max_job_test", ("bf_max_job_test", "needs a value")),
        ("SchedulerParameters=bf_window=10,bf_window=20", ("bf_window", "twice")),
        ("PriorityMaxAge=7d", ("PriorityMaxAge", "'7d'", "not a Slurm time")),
        ("PriorityDecayHalfLife=INFINITE", ("PriorityDecayHalfLife", "'INFINITE'")),
        ("PriorityCalcPeriod=0", ("PriorityCalcPeriod", "'0'", "at least 1 minute")),
        ("PriorityWeightAge=-1", ("PriorityWeightAge", "'-1'")),
        ("PriorityFavorSmall=maybe", ("PriorityFavorSmall", "'maybe'", "YES or NO")),
        ("FairShareDampeningFactor=0", ("FairShareDampeningFactor", "'0'")),
        ("NodeName=n[3-1] CPUs=2", ("NodeName", "'n[3-1]'", "ends before it starts")),
        ("NodeName=n[1-2 CPUs=2", ("NodeName", "unbalanced")),
        ("NodeName=n1 CPUs=two", ("CPUs", "'two'", "not an integer")),
        ("PartitionName=p PriorityJobFactor=70000", ("PriorityJobFactor", "'70000'")),
        ("PriorityUsageResetPeriod=sometimes", ("PriorityUsageResetPeriod", "not a value")),
        ('ClusterName="unclosed', ("cannot read the line",)),
    ],
)  # fmt: skip
def test_malformed_values_are_refused(tmp_path: Path, line: str, fragments: tuple[str]) -> None:
    refused(tmp_path, f"ClusterName=c\n\n{line}\n", ":3:", *fragments)


def test_a_typo_is_refused(tmp_path: Path) -> None:
    refused(tmp_path, "SchedulerTyp=sched/backfill\n", ":1:", "SchedulerTyp", "unknown key")
    refused(tmp_path, "NodeName=n1 CPU=4\n", ":1:", "CPU", "NodeName")


def test_a_key_given_twice_is_refused(tmp_path: Path) -> None:
    refused(tmp_path, "PriorityWeightAge=1\npriorityweightage=2\n", ":2:", "first on line 1")
    refused(tmp_path, "NodeName=n[1-2] CPUs=1\nNodeName=n2 CPUs=1\n", ":2:", "'n2'", "twice")


def test_ignored_keys_and_comments(tmp_path: Path) -> None:
    conf = read_slurm_conf(
        write(
            tmp_path,
            """\
        SlurmctldLogFile=/var/log/x.log   # logging
        AccountingStorageHost=db  JobCompType=jobcomp/none
        SchedulerParameters=bf_window=60 # a comment after a value
        """,
        )
    )
    assert conf.bf_window_s == 3600


def test_continued_lines_and_escaped_hashes(tmp_path: Path) -> None:
    path = tmp_path / "slurm.conf"
    path.write_text(
        "NodeName=n[1-4] \\\n"  # continued: the node line goes on
        "   CPUs=8 # the comment of the whole line\n"
        "ClusterName=a\\#b\n"  # an escaped hash is part of the value
        "SchedulerParameters=bf_window=30,\\\n"
        "bf_resolution=10\n"
        "PriorityTyp=x\n"
    )
    with pytest.raises(ConfigurationError, match=r"slurm\.conf:6: PriorityTyp"):
        read_slurm_conf(path)  # lines are still counted as in the file
    path.write_text(path.read_text().replace("PriorityTyp=x\n", ""))
    conf = read_slurm_conf(path)
    assert conf.machine_procs == 32
    assert (conf.bf_window_s, conf.bf_resolution_s) == (1800, 10)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"absent\.conf: cannot read"):
        read_slurm_conf(tmp_path / "absent.conf")


def test_multifactor_priority_from_the_file(tmp_path: Path) -> None:
    """PriorityType=priority/multifactor becomes MultifactorPriority with the file's settings;
    without PriorityFlags=NO_FAIR_TREE it is Slurm's Fair Tree, with it the classic algorithm."""
    conf = read_slurm_conf(write(tmp_path, "ClusterName=c\nPriorityType=priority/multifactor\n"))
    assert conf.simulate_kwargs()["priority"] == MultifactorPriority(fair_tree=True)
    text = ("PriorityType=priority/multifactor\nPriorityFlags=NO_FAIR_TREE\n"
            "PriorityWeightAge=10\nPriorityWeightJobSize=7\nPriorityFavorSmall=YES\n"
            "NodeName=n[1-2] CPUs=4\nPartitionName=p Nodes=ALL PriorityJobFactor=5\n")  # fmt: skip
    kwargs = read_slurm_conf(write(tmp_path, text)).simulate_kwargs()
    assert kwargs["primary"] == "multifactor"
    assert kwargs["priority"] == MultifactorPriority(
        weight_age=10, weight_job_size=7, favor_small=True, procs_per_node=4,
        partition_job_factor={"p": 5},
    )  # fmt: skip
    assert kwargs["machine_procs"] == 8
    # every default of the dataclass is Slurm's, but Fair Tree (PRIORITY_DEFAULTS says so)
    assert PRIORITY_DEFAULTS["fair_tree"] is True
    assert {k: v for k, v in PRIORITY_DEFAULTS.items() if k != "fair_tree"} == {
        k: getattr(MultifactorPriority(), k) for k in PRIORITY_DEFAULTS if k != "fair_tree"
    }


# --------------------------------------------------------------------------------------------
# Schedules
# --------------------------------------------------------------------------------------------


def _workload(seed: int, n: int = 30, machine: int = 8) -> pl.DataFrame:
    """``n`` random jobs with the SWF columns the simulators read (tens of jobs: fast)."""
    rng = np.random.default_rng(seed)
    run_s = rng.integers(1, 500, n)
    procs = rng.integers(1, machine + 1, n)
    return pl.DataFrame({
        "job_id": np.arange(1, n + 1), "submit_s": np.sort(rng.integers(0, 1500, n)),
        "run_s": run_s, "alloc_procs": procs, "req_procs": procs,
        "req_time_s": run_s * rng.integers(1, 4, n),
    })  # fmt: skip


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("text", ["SchedulerType=sched/builtin\n",
                                  "SchedulerParameters=bf_interval=-1\n"])  # fmt: skip
def test_no_backfill_pass_is_easy_without_backfilling(tmp_path: Path, seed: int, text: str) -> None:
    """sched/builtin and bf_interval=-1: only the main pass starts jobs, as EASY with no
    backfilling, job by job."""
    conf = read_slurm_conf(write(tmp_path, text + "NodeName=n[1-4] CPUs=2\n"))
    assert not conf.backfills
    jobs = _workload(seed)
    slurm = simulate_conservative(jobs, **conf.simulate_kwargs())
    easy = simulate(jobs, "FCFS", None, machine_procs=8)
    assert slurm.jobs["start_s"].to_list() == easy.jobs["start_s"].to_list()
    assert slurm.summary.backfilled_jobs == 0


@pytest.mark.parametrize("seed", range(3))
def test_backfill_conf_equals_its_keywords(tmp_path: Path, seed: int) -> None:
    conf = read_slurm_conf(
        write(
            tmp_path,
            """\
        SchedulerParameters=bf_window=10,bf_resolution=30,bf_interval=60,bf_max_job_test=5
        NodeName=n[1-4] CPUs=2
        """,
        )
    )
    jobs = _workload(seed)
    slurm = simulate_conservative(jobs, **conf.simulate_kwargs())
    direct = simulate_conservative(
        jobs, "FCFS", machine_procs=8, bf_window_s=600, bf_resolution_s=30, bf_interval_s=60,
        bf_max_job_test=5, default_queue_depth=100, node_procs=2,  # reservations: whole nodes
    )  # fmt: skip
    assert slurm.jobs["start_s"].to_list() == direct.jobs["start_s"].to_list()
    assert slurm.config == direct.config


# --------------------------------------------------------------------------------------------
# The lists of ignored keys: each is accepted, and each is documented
# --------------------------------------------------------------------------------------------

DOCS = Path(__file__).parents[2] / "docs" / "simulator.md"


def test_every_ignored_key_is_read_and_dropped(tmp_path: Path) -> None:
    lines = [f"{key}=x" for key in sorted(IGNORED_KEYS)]
    lines.append("SchedulerParameters=" + ",".join(sorted(IGNORED_SCHEDULER_PARAMETERS)))
    node_keys = " ".join(f"{key}=1" for key in sorted(IGNORED_NODE_KEYS))
    lines.append(f"NodeName=n[1-2] CPUs=3 {node_keys}")
    partition_keys = " ".join(f"{key}=x" for key in sorted(IGNORED_PARTITION_KEYS))
    lines.append(f"PartitionName=p {partition_keys}")
    conf = read_slurm_conf(write(tmp_path, "\n".join(lines) + "\n"))
    assert conf.machine_procs == 6
    assert conf.backfill_kwargs()["bf_max_job_test"] == 500


def test_the_docs_name_every_ignored_key() -> None:
    """docs/simulator.md, "Reading a slurm.conf", names each ignored key, or a prefix written
    with ``*`` that covers it."""
    section = DOCS.read_text().split("### Reading a slurm.conf", 1)[1].split("\n## ", 1)[0]
    named = {word.lower() for word in re.findall(r"`([A-Za-z_]+)\*?`", section)}
    prefixes = {word.lower() for word in re.findall(r"`([A-Za-z_]+)\*`", section)}
    everything = (IGNORED_KEYS | IGNORED_SCHEDULER_PARAMETERS | IGNORED_NODE_KEYS
                  | IGNORED_PARTITION_KEYS)  # fmt: skip
    missing = sorted(
        key for key in everything
        if key not in named and not any(key.startswith(prefix) for prefix in prefixes)
    )  # fmt: skip
    assert not missing, f"ignored but not documented: {missing}"


def test_the_docs_name_every_refused_key() -> None:
    section = DOCS.read_text().split("**Refused as not modelled**", 1)[1].split("**Ignored**")[0]
    named = {word.lower() for word in re.findall(r"`([A-Za-z_]+)`", section)}
    assert not sorted(set(REFUSED_KEYS) - named)


@pytest.mark.parametrize("key", sorted(REFUSED_KEYS))
def test_every_refused_key_is_refused(tmp_path: Path, key: str) -> None:
    refused(tmp_path, f"ClusterName=c\n{key}=1\n", ":2:", "not modelled", REFUSED_KEYS[key])


def test_the_reader_is_public_api() -> None:
    import scheduler

    assert scheduler.read_slurm_conf is read_slurm_conf
    assert scheduler.SlurmConf.__module__ == "scheduler.sim.slurm_conf"
