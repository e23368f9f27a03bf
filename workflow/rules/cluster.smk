# One Snakemake process per cluster submission (profiles/slurm).
#
# A group submission of snakemake-executor-plugin-slurm (2.8) runs three levels of Snakemake:
# sbatch runs `python -m snakemake --target-jobs <the group's jobs> ... --executor slurm-jobstep
# --jobs 1 --mode remote` (the job step process). That process forms the groups again, without
# the profile's groups and group-components (the plugin does not pass them on), so a group of n
# independent jobs becomes n groups, run one after the other (--jobs 1), each as `srun -n1 ...
# python -m snakemake --target-jobs <one job> --cores all --mode remote`; and that process, which
# is not given --force-use-threads (the executor interface passes it to single jobs only), runs
# the job's `run:` block in one more Snakemake process (`--mode subprocess`). Every job of a group
# paid two Snakemake start-ups.
#
# Here, in those node-side processes only (Snakemake's exec mode "remote"; nothing changes on the
# submitting host, in a local run, a dry run or a lint):
#   - the job step process makes every job of the submission one group job: one srun;
#   - the process under srun runs the jobs as threads of itself (as --force-use-threads does),
#     as many at once as the CPUs it sees (`--cores all`: those of the job step where Slurm binds
#     tasks to CPUs).
# A submission then pays two start-ups whatever its size. Same files, same contents: the steps
# do not know how they are called. Snakemake's settings exist only once the workflow executes,
# so they are changed when Workflow.execute starts.
import dataclasses
from collections.abc import Mapping

from snakemake_interface_executor_plugins.settings import ExecMode


class _Every(Mapping):
    """The same value for every key (group names, rule names); lists no key, so that nothing
    passes it on."""

    def __init__(self, value):
        self.value = value

    def __getitem__(self, key):
        return self.value

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0


def _one_process_per_submission(execute):
    def execute_submission(*args, executor_plugin, **kwargs):
        if executor_plugin.common_settings.local_exec:
            # the process under srun
            workflow.execution_settings = dataclasses.replace(
                workflow.execution_settings, use_threads=True
            )
        else:
            # the job step process
            workflow.group_settings = dataclasses.replace(
                workflow.group_settings,
                overwrite_groups=_Every("submission"),
                group_components=_Every(1_000_000),
            )
        return execute(*args, executor_plugin=executor_plugin, **kwargs)

    return execute_submission


if workflow.exec_mode == ExecMode.REMOTE:
    workflow.execute = _one_process_per_submission(workflow.execute)
