"""The what-if study's figures: the ranking of the alternatives, and per alternative the waits by
job size, the users' gains and losses, and a week's queue and utilisation against time."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from scheduler.studies.whatif.measures import size_class_labels, size_classes

__all__ = [
    "online_figure",
    "queue_series",
    "ranking_figure",
    "sizes_figure",
    "users_figure",
    "week_figure",
]

_PAIR_COLOURS = {"baseline": "#000000", "alternative": "#0072B2"}


def ranking_figure(summary: pl.DataFrame, *, confidence: float):
    """Each alternative's relative change in mean wait against the baseline, with its
    interval (percent; left of 0: shorter waits)."""
    from plotnine import aes, coord_flip, geom_hline, geom_pointrange, ggplot, scale_y_continuous

    from scheduler.studies.common.figures import figure_theme, wrapped_labs

    rows = summary.filter(pl.col("alternative") != summary["alternative"][0])
    frame = rows.select(
        "alternative",
        (pl.col("rel_avg_wait_s") * 100).alias("estimate"),
        (
            pl.col("rel_avg_wait_s_low").fill_nan(None).fill_null(pl.col("rel_avg_wait_s")) * 100
        ).alias("low"),
        (
            pl.col("rel_avg_wait_s_high").fill_nan(None).fill_null(pl.col("rel_avg_wait_s")) * 100
        ).alias("high"),
    ).to_pandas()
    order = list(frame.sort_values("estimate", ascending=False)["alternative"])
    import pandas as pd

    frame["alternative"] = pd.Categorical(frame["alternative"], categories=order)
    level = f"{confidence:.0%}"
    return (
        ggplot(frame, aes(x="alternative", y="estimate", ymin="low", ymax="high"))
        + geom_hline(yintercept=0.0, linetype="dashed", colour="#777777")
        + geom_pointrange(colour="#0072B2")
        + coord_flip()
        + scale_y_continuous(name="change of the mean wait against the baseline (%)")
        + figure_theme()
        + wrapped_labs(
            title="What each change does to the mean wait",
            subtitle=f"resampled weeks; bars: {level} source-week bootstrap intervals",
            x="",
        )
    )


def sizes_figure(
    baseline: pl.DataFrame, other: pl.DataFrame, *, alternative: str, size_edges: Sequence[int]
):
    """Mean wait (hours) per job size class, baseline beside the alternative."""
    from plotnine import aes, geom_col, ggplot, position_dodge, scale_fill_manual

    from scheduler.studies.common.figures import SECONDS_PER_HOUR, figure_theme, wrapped_labs

    labels = size_class_labels(size_edges)
    parts = []
    for who, table in (("baseline", baseline), ("alternative", other)):
        classes = np.asarray(labels, dtype=object)[
            size_classes(table["procs"].to_numpy(), size_edges)
        ]
        parts.append(
            table.select("wait_s").with_columns(
                pl.Series("size", classes.astype(str)), pl.lit(who).alias("scheduler")
            )
        )
    frame = (
        pl.concat(parts)
        .group_by("size", "scheduler")
        .agg((pl.col("wait_s").mean() / SECONDS_PER_HOUR).alias("hours"))
        .to_pandas()
    )
    import pandas as pd

    frame["size"] = pd.Categorical(frame["size"], categories=labels)
    frame["scheduler"] = pd.Categorical(frame["scheduler"], categories=list(_PAIR_COLOURS))
    return (
        ggplot(frame, aes(x="size", y="hours", fill="scheduler"))
        + geom_col(position=position_dodge(width=0.8), width=0.75)
        + scale_fill_manual(values=_PAIR_COLOURS, name="")
        + figure_theme()
        + wrapped_labs(
            title=f"Mean wait by job size: {alternative}",
            x="processors of the job",
            y="mean wait (h)",
            subtitle="the same resampled weeks under both schedulers",
        )
    )


def users_figure(users: pl.DataFrame, *, alternative: str, shown: int = 15):
    """Each user's change of mean wait (hours) in the whole-log replay: the ``shown`` users who
    gain most and the ``shown`` who lose most (all when fewer)."""
    from plotnine import aes, coord_flip, geom_col, ggplot, scale_fill_manual

    from scheduler.studies.common.figures import SECONDS_PER_HOUR, figure_theme, wrapped_labs

    rows = users.filter(pl.col("alternative") == alternative).sort("change_mean_wait_s")
    if rows.height > 2 * shown:
        rows = pl.concat([rows.head(shown), rows.tail(shown)])
    frame = rows.select(
        pl.col("user_id").cast(pl.String).alias("user"),
        (pl.col("change_mean_wait_s") / SECONDS_PER_HOUR).alias("hours"),
        pl.when(pl.col("change_mean_wait_s") < 0)
        .then(pl.lit("waits less"))
        .otherwise(pl.lit("waits more"))
        .alias("effect"),
    ).to_pandas()
    import pandas as pd

    frame["user"] = pd.Categorical(frame["user"], categories=list(frame["user"])[::-1])
    return (
        ggplot(frame, aes(x="user", y="hours", fill="effect"))
        + geom_col()
        + coord_flip()
        + scale_fill_manual(values={"waits less": "#009E73", "waits more": "#D55E00"}, name="")
        + figure_theme()
        + wrapped_labs(
            title=f"Who gains, who loses: {alternative}",
            x="user",
            y="change of the user's mean wait (h)",
            subtitle="the whole log replayed under each scheduler",
        )
    )


def queue_series(jobs: pl.DataFrame, machine_procs: int) -> pl.DataFrame:
    """The waiting jobs and the busy fraction of the machine after every instant at which
    something happens in a schedule (``time_s``, ``waiting``, ``utilisation``; one row per
    distinct instant, the state once all its events are done), from its per-job table."""
    submit = jobs["submit_s"].to_numpy()
    start = submit + jobs["wait_s"].to_numpy()
    end = start + jobs["run_s"].to_numpy()
    procs = jobs["procs"].to_numpy().astype(np.float64)
    n = submit.size
    times = np.concatenate([submit, start, end])
    waiting = np.concatenate([np.ones(n), -np.ones(n), np.zeros(n)])
    busy = np.concatenate([np.zeros(n), procs, -procs])
    order = np.argsort(times, kind="stable")
    # the state after *all* events of an instant (an end and a start at one time are one step)
    instants, first = np.unique(times[order], return_index=True)
    last = np.append(first[1:], order.size) - 1
    return pl.DataFrame(
        {
            "time_s": instants,
            "waiting": np.cumsum(waiting[order])[last],
            "utilisation": np.cumsum(busy[order])[last] / machine_procs,
        }
    )


def week_figure(
    baseline: pl.DataFrame, other: pl.DataFrame, *, alternative: str, week: int, machine_procs: int
):
    """Waiting jobs and utilisation against time (days) in resampled week ``week``."""
    from plotnine import aes, facet_wrap, geom_step, ggplot, scale_colour_manual

    from scheduler.studies.common.figures import figure_theme, wrapped_labs

    parts = []
    for who, table in (("baseline", baseline), ("alternative", other)):
        series = queue_series(table.filter(pl.col("week_index") == week), machine_procs)
        parts.append(
            series.unpivot(
                index="time_s", on=["waiting", "utilisation"], variable_name="measure"
            ).with_columns(
                pl.lit(who).alias("scheduler"), (pl.col("time_s") / 86400.0).alias("day")
            )
        )
    frame = (
        pl.concat(parts)
        .with_columns(
            pl.col("measure").replace(
                {"waiting": "waiting jobs", "utilisation": "busy fraction of the machine"}
            )
        )
        .to_pandas()
    )
    return (
        ggplot(frame, aes(x="day", y="value", colour="scheduler"))
        + geom_step(size=0.4)
        + facet_wrap("measure", ncol=1, scales="free_y")
        + scale_colour_manual(values=_PAIR_COLOURS, name="")
        + figure_theme()
        + wrapped_labs(
            title=f"One week under both schedulers: {alternative}",
            subtitle=f"resampled week {week}, from an empty machine until it drains",
            x="days from the week's start",
            y="",
        )
    )


def online_figure(
    weeks: np.ndarray,
    totals: np.ndarray,
    jobs: np.ndarray,
    runs: pl.DataFrame,
    names: Sequence[str],
):
    """Each bandit's cumulative regret (hours of extra wait per job of the log so far) against
    the week, the mean over its draws, against the best fixed alternative in hindsight; the
    weeks, their costs and jobs as :func:`scheduler.studies.whatif.online.cost_matrix` gives
    them, ``runs`` as :func:`~scheduler.studies.whatif.online.online_choices`."""
    from plotnine import aes, geom_hline, geom_line, ggplot

    from scheduler.studies.common.figures import SECONDS_PER_HOUR, figure_theme, wrapped_labs

    best = names.index(runs["best_fixed"][0])
    seen = np.maximum(np.cumsum(jobs), 1)
    parts = []
    for spec, part in runs.group_by("selector", maintain_order=True):
        curves = []
        for choices in part["choices"]:
            chosen = np.asarray([int(c) for c in choices.split(",")])
            excess = totals[np.arange(chosen.size), chosen] - totals[:, best]
            curves.append(np.cumsum(excess) / seen / SECONDS_PER_HOUR)
        parts.append(
            pl.DataFrame(
                {
                    "week": weeks,
                    "regret": np.mean(curves, axis=0),
                    "selector": spec[0],
                }
            )
        )
    frame = pl.concat(parts).to_pandas()
    return (
        ggplot(frame, aes(x="week", y="regret", colour="selector"))
        + geom_hline(yintercept=0.0, linetype="dashed", colour="#777777")
        + geom_line()
        + figure_theme()
        + wrapped_labs(
            title="Choosing the scheduler week by week",
            subtitle=f"regret against the best fixed alternative in hindsight "
            f"({names[best]}); mean over the bandits' draws",
            x="week of the log",
            y="extra mean wait per job so far (h)",
        )
    )
