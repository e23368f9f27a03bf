# One job = one (trace, split, primary, backfill, threshold) on one batch of resampled weeks
# (tuning.weeks_per_job weeks). On a cluster the profile packs many of them per submission
# through the "simulate" group. A thresholded job reads the same batch simulated without
# threshold and copies the weeks whose MaxWait there is <= Θ (identical runs, see
# scheduler.campaign.simulate_weeks).
rule simulate_batch:
    input:
        weeks="results/{trace}/weeks/{split}/batch{batch}.parquet",
        unthresholded=unthresholded_simulation,
    output:
        f"{TUNING}/{{trace}}/sims/{SIM_CASE}.parquet",
    log:
        f"logs/tuning/{{trace}}/sims/{SIM_CASE}.log",
    benchmark:
        f"benchmarks/tuning/{{trace}}/sims/{SIM_CASE}.tsv"
    group:
        "simulate"
    conda:
        "../envs/schedlab.yaml"
    params:
        threshold_s=threshold_seconds,
        code=CODE["simulate"],
    run:
        pipeline.simulate_batch(
            input.weeks,
            output[0],
            trace=wildcards.trace,
            split=wildcards.split,
            primary=wildcards.primary,
            backfill=wildcards.backfill,
            threshold=wildcards.threshold,
            threshold_s=params.threshold_s,
            unthresholded_path=input.unthresholded,
            log_path=log[0],
        )
