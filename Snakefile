# schedlab: learning and tuning HPC batch-scheduling policies on real workload traces.
#
#   snakemake --cores 2                                  # the default study (bundled KTH-SP2)
#   snakemake --cores 2 --configfile config/full.yaml    # the full study
#   snakemake --report report.html                       # tables and figures with captions
#
# The rules only name files; each calls one step function of the `scheduler` package
# (scheduler.traces.steps, scheduler.studies.<study>.steps). Layout: docs/architecture.md.
from snakemake.utils import min_version

min_version("9.0")


configfile: "config/traces.yaml"
configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/traces.smk"


if "tuning" in STUDIES:

    include: "workflow/rules/tuning.smk"


if "online" in STUDIES:

    include: "workflow/rules/online.smk"


if "prediction" in STUDIES:

    include: "workflow/rules/prediction.smk"


if "learned" in STUDIES:

    include: "workflow/rules/learned.smk"


if "redirect" in STUDIES:

    include: "workflow/rules/redirect.smk"


if "memory" in STUDIES:

    include: "workflow/rules/memory.smk"


rule all:
    default_target: True
    input:
        tuning_targets(),
        online_targets(),
        prediction_targets(),
        learned_targets(),
        redirect_targets(),
        memory_targets(),
