# No job rate limit where the jobs run on this machine (Snakemake's exec mode "default" with the
# local executor: a local run; and the process that runs a cluster submission's jobs on its
# node). Submissions to a cluster keep the limit (--max-jobs-per-timespan, 100/1s by default),
# which is there to spare the cluster's scheduler.
#
# Why: with a rate limit, Snakemake 9's job scheduler ends every pass of its loop that had
# jobs to run by starting a timer (one new thread) that wakes the loop again a timespan later,
# and that pass starts another timer. Every job's end starts a pass, so each job's end adds one
# more timer chain that lives until no job is left to run: a run with n ready jobs wakes its
# loop about n times a second by its end, each pass looking at every ready job. The five-log
# queue-tuning study (849 jobs) cost the Snakemake process 82 s of CPU, ~95 ms a job
# (docs/benchmarks.md, "Snakemake's own process"). Locally the limit buys nothing: the cores
# given to --cores pace the jobs. Snakemake's settings exist only once the workflow executes,
# so they are changed when Workflow.execute starts (as workflow/rules/cluster.smk does).
import dataclasses as _dataclasses


def _no_rate_limit_for_local_jobs(execute):
    def execute_here(*args, executor_plugin, **kwargs):
        if executor_plugin.common_settings.local_exec:
            workflow.scheduling_settings = _dataclasses.replace(
                workflow.scheduling_settings, max_jobs_per_timespan=None
            )
        return execute(*args, executor_plugin=executor_plugin, **kwargs)

    return execute_here


workflow.execute = _no_rate_limit_for_local_jobs(workflow.execute)
