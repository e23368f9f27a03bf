# schedlab: learning and tuning HPC batch-scheduling policies on real workload traces.
#
#   snakemake --cores 2                                  # every study, small (the default)
#   snakemake --cores 2 --configfile config/full.yaml    # the full studies
#   snakemake --report report.html                       # tables and figures with captions
#
# The rules only name files; each calls one step function of the `scheduler` package. Each study
# is a registered object (scheduler/studies/<name>/study.py) with its rules file
# workflow/rules/<name>.smk, which common.smk includes for every study in the config's `studies`.
# Layout: docs/architecture.md.
from snakemake.utils import min_version

min_version("9.0")


configfile: "config/traces.yaml"
configfile: "config/config.yaml"


include: "workflow/rules/common.smk"
include: "workflow/rules/cluster.smk"
include: "workflow/rules/scheduling.smk"
include: "workflow/rules/traces.smk"


# The report's front page: one paragraph per study of the run (written by common.smk).
report: landing_page()


rule all:
    default_target: True
    input:
        all_targets(),
