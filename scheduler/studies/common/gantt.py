"""Gantt charts of simulated schedules: which jobs ran on which processors and when, with the
queue length and the utilisation against time under them.

:func:`gantt_figure` draws one or more :class:`~scheduler.sim.schedule.Schedule` (stacked, on one
time axis) over a window; :func:`draw_gantt` saves it (PNG and/or PDF, atomically, with
provenance). Every run of a job is drawn over the processors the assignment pass gave it
(:mod:`scheduler.sim.assignment`: one contiguous band when one was free), coloured by a chosen
attribute (:data:`COLOUR_BY`).

Two ways to draw, chosen by ``mode``:

- ``"rectangles"``: one rectangle per processor interval of each run (exact; the figure's
  collection holds the rectangles in data units: hours or days, processor numbers);
- ``"raster"``: where rectangles would be thinner than a pixel (a week of a machine with
  tens of thousands of processors), the processors and the time are aggregated into cells of
  one pixel; a cell's colour mixes the colours of the runs covering it in proportion to the
  share of its processor-seconds they cover (white: idle). The processor-seconds are exact:
  each run's rectangle is split over the cells it overlaps.

``"auto"`` (default) draws rectangles when the machine has no more processors than the chart
has pixel rows and there are at most :data:`MAX_RECTANGLES` intervals, else the raster.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
import polars as pl

from scheduler.core.errors import ConfigurationError
from scheduler.sim.schedule import Schedule

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "COLOUR_BY",
    "MAX_RECTANGLES",
    "WEEK_S",
    "GanttMode",
    "Panel",
    "draw_gantt",
    "gantt_figure",
    "raster_cover",
    "representative_week",
    "run_categories",
    "top_users",
    "week_figure",
]

#: What a chart can colour runs by; ``"auto"`` takes the first a schedule has of
#: ``redirected``, ``failed``, ``prediction``, ``backfilled``, else ``none``.
COLOUR_BY = ("auto", "backfilled", "user", "redirected", "failed", "prediction", "pool", "none")

#: At most this many processor intervals are drawn as rectangles by ``mode="auto"``.
MAX_RECTANGLES = 20_000

#: Users drawn in their own colour under ``colour_by="user"`` (the others: "other users").
TOP_USERS = 8

GanttMode = Literal["auto", "rectangles", "raster"]

# Okabe-Ito (colour-blind safe), then greys for the rest.
_PALETTE = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#56B4E9",
    "#D55E00",
    "#F0E442",
    "#000000",
    "#999999",
)
_REST = "#BBBBBB"

_SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True)
class Panel:
    """One schedule of a stacked chart: its label (the policy, the scheduler) and runs."""

    label: str
    schedule: Schedule


def run_categories(
    schedule: Schedule, colour_by: str, *, users: Sequence[int] | None = None
) -> tuple[pl.Series, list[str]]:
    """The category of each run of ``schedule`` under ``colour_by``, and the categories in
    legend order.

    ``users``: under ``"user"``, the users drawn in their own colour (the others are "other
    users"); default the :data:`TOP_USERS` of this schedule (:func:`top_users`).

    Raises
    ------
    ConfigurationError
        ``colour_by`` is not in :data:`COLOUR_BY`, or the schedule lacks what it needs (e.g.
        ``"user"`` for a result made without an SWF table); the message says what it has.
    """
    runs = schedule.runs
    if colour_by not in COLOUR_BY:
        raise ConfigurationError(
            f"colour_by must be one of {', '.join(COLOUR_BY)}, got {colour_by!r}"
        )
    if colour_by == "auto":
        colour_by = next(
            (
                name
                for name in ("redirected", "failed", "prediction", "backfilled")
                if _has(runs, name)
            ),
            "none",
        )
    if colour_by != "none" and colour_by != "pool" and not _has(runs, colour_by):
        usable = [name for name in COLOUR_BY[1:] if name in ("none", "pool") or _has(runs, name)]
        raise ConfigurationError(
            f"colour_by {colour_by!r}: this schedule has no such attribute (it can be coloured "
            f"by {', '.join(usable)})"
        )
    n = runs.height
    if colour_by == "none":
        return pl.Series("category", ["job"] * n, dtype=pl.String), ["job"]
    if colour_by == "pool":
        names = [name for name, _ in schedule.pools]
        return pl.Series("category", [names[p] for p in runs["pool"].to_list()]), names
    if colour_by == "backfilled":
        levels = ["started in order", "backfilled"]
        return _label(runs["backfilled"], levels), levels
    if colour_by == "redirected":
        levels = ["main pool", "killed on the main pool", "dedicated pool (redirected)"]
        values = np.where(
            ~runs["final"].to_numpy(), 1, np.where(runs["pool"].to_numpy() == 1, 2, 0)
        )
        return _label(pl.Series(values), levels), levels
    if colour_by == "failed":
        levels = ["succeeded first time", "failed run", "succeeded after failures"]
        failures = runs["failures"].to_numpy()
        values = np.where(~runs["final"].to_numpy(), 1, np.where(failures > 0, 2, 0))
        return _label(pl.Series(values), levels), levels
    if colour_by == "prediction":
        levels = ["under-predicted", "within 2× of the run time", "over-predicted (> 2×)"]
        prediction, actual = runs["prediction_s"].to_numpy(), runs["run_s"].to_numpy()
        values = np.where(prediction < actual, 0, np.where(prediction <= 2 * actual, 1, 2))
        return _label(pl.Series(values), levels), levels
    top = top_users([schedule]) if users is None else list(users)
    names = {user: f"user {user}" for user in top}
    others = any(u not in names for u in runs["user_id"].to_list())
    levels = list(names.values()) + (["other users"] if others else [])
    return (
        pl.Series("category", [names.get(u, "other users") for u in runs["user_id"].to_list()]),
        levels,
    )


def top_users(schedules: Sequence[Schedule], count: int = TOP_USERS) -> list[int]:
    """The ``count`` users with the most processor-seconds in ``schedules`` together (as they
    are, e.g. clipped to a window; ties by user number): the users a chart colours, the same
    in every panel."""
    frames = [
        s.runs.select(
            pl.col("user_id").alias("user"),
            ((pl.col("end_s") - pl.col("start_s")) * pl.col("procs")).alias("area"),
        )
        for s in schedules
        if "user_id" in s.runs.columns
    ]
    if not frames:
        return []
    usage = (
        pl.concat(frames)
        .group_by("user")
        .agg(pl.col("area").sum())
        .sort(["area", "user"], descending=[True, False])
    )
    return usage["user"].head(count).to_list()


def _has(runs: pl.DataFrame, attribute: str) -> bool:
    column = {
        "backfilled": "backfilled",
        "user": "user_id",
        "redirected": "redirected",
        "failed": "failures",
        "prediction": "prediction_s",
    }[attribute]
    return column in runs.columns


def _label(values: pl.Series, levels: Sequence[str]) -> pl.Series:
    index = values.cast(pl.Int64).to_numpy()
    return pl.Series("category", np.asarray(levels, dtype=object)[index], dtype=pl.String)


def _colours(levels: Sequence[str]) -> dict[str, str]:
    """A colour per level, in order; grey for "other users" and for levels past the palette."""
    return {
        level: _PALETTE[i] if i < len(_PALETTE) and level != "other users" else _REST
        for i, level in enumerate(levels)
    }


def _time_unit(span_s: float) -> tuple[float, str]:
    """Seconds per unit of the time axis and its name: hours up to two days, else days."""
    return (3600.0, "hours") if span_s <= 2 * _SECONDS_PER_DAY else (_SECONDS_PER_DAY, "days")


def gantt_figure(
    panels: Schedule | Sequence[Panel],
    window: tuple[float, float] | None = None,
    *,
    colour_by: str = "auto",
    mode: GanttMode = "auto",
    title: str | None = None,
    width_in: float = 10.0,
    gantt_height_in: float = 3.2,
    dpi: int = 120,
) -> Figure:
    """A Gantt chart of one schedule or of several stacked on one time axis, each with its
    queue length and utilisation under it.

    Parameters
    ----------
    panels
        A schedule, or :class:`Panel` s (label, schedule) drawn top to bottom.
    window
        ``(start_s, end_s)``: the time drawn, seconds on the log's clock; default from the
        first start to the last end of the first schedule.
    colour_by
        One of :data:`COLOUR_BY` (the same for every panel; categories share colours).
    mode
        ``"rectangles"``, ``"raster"`` or ``"auto"`` (see the module's notes).
    title
        Figure title.
    width_in, gantt_height_in, dpi
        Figure width and each Gantt panel's height (inches; the two step panels under each
        add 40 %), resolution of the raster (dots per inch).

    Returns
    -------
    matplotlib.figure.Figure
        Not attached to pyplot (no global state); axes are titled with the panel labels, the
        title wrapped to the width. Time is in hours since the window's start up to two days,
        else in days since the trace's time 0 (the log's start; a long trace's own start).
    """
    from matplotlib.figure import Figure

    if isinstance(panels, Schedule):
        panels = [Panel("", panels)]
    panels = list(panels)
    if not panels:
        raise ConfigurationError("gantt_figure: no schedule to draw")
    if mode not in ("auto", "rectangles", "raster"):
        raise ConfigurationError(f"mode must be auto, rectangles or raster, got {mode!r}")
    if window is None:
        runs = panels[0].schedule.runs
        if runs.height == 0:
            raise ConfigurationError("gantt_figure: the schedule has no run; give a window")
        window = (float(runs["start_s"].min()), float(runs["end_s"].max()))  # type: ignore[arg-type]
    w0, w1 = float(window[0]), float(window[1])
    if not (np.isfinite(w0) and np.isfinite(w1) and w1 > w0):
        raise ConfigurationError(f"the window must be finite and end after it starts: {window}")
    unit_s, unit = _time_unit(w1 - w0)
    origin = w0 if unit == "hours" else 0.0
    clipped = [Panel(p.label, p.schedule.window(w0, w1)) for p in panels]
    users = top_users([p.schedule for p in clipped]) if colour_by == "user" else None
    categories = [run_categories(p.schedule, colour_by, users=users) for p in clipped]
    levels: list[str] = []
    for _, panel_levels in categories:
        levels += [level for level in panel_levels if level not in levels]
    colours = _colours(levels)

    ratios: list[float] = []
    for _ in clipped:
        ratios += [1.0, 0.2, 0.2]
    height = gantt_height_in * 1.4 * len(clipped) + (0.6 if title else 0.3) + 0.5
    figure = Figure(figsize=(width_in, height), dpi=dpi, layout="constrained")
    axes = figure.subplots(len(ratios), 1, sharex=True, gridspec_kw={"height_ratios": ratios})
    axes = np.atleast_1d(axes)
    for k, (panel, (category, _)) in enumerate(zip(clipped, categories, strict=True)):
        gantt_ax, queue_ax, use_ax = axes[3 * k : 3 * k + 3]
        pixel_rows = int(gantt_height_in * dpi * 0.85)
        n_intervals = panel.schedule.assignment.lo.size
        raster = mode == "raster" or (
            mode == "auto"
            and (panel.schedule.total_procs > pixel_rows or n_intervals > MAX_RECTANGLES)
        )
        pixel_cols = int(width_in * dpi * 0.85)
        draw = _draw_raster if raster else _draw_rectangles
        draw(gantt_ax, panel.schedule, category, colours, (w0, w1), origin, unit_s,
             (pixel_rows, pixel_cols))  # fmt: skip
        gantt_ax.set_ylim(0, panel.schedule.total_procs)
        gantt_ax.set_ylabel("processor")
        pools = panel.schedule.pools
        edges = np.concatenate(([0], np.cumsum([size for _, size in pools])))
        for offset in edges[1:-1]:
            gantt_ax.axhline(offset, color="black", linewidth=0.8)
        if len(pools) > 1:  # each pool's name beside its band
            beside = gantt_ax.get_yaxis_transform()
            for (name, _), low, high in zip(pools, edges[:-1], edges[1:], strict=True):
                gantt_ax.text(1.005, (low + high) / 2, name, rotation=90, va="center",
                              ha="left", fontsize=7, transform=beside)  # fmt: skip
        gantt_ax.set_title(panel.label, loc="left", fontsize=10)
        full = panels[k].schedule
        _draw_steps(queue_ax, full.queue_length(), "waiting", (w0, w1), origin, unit_s, 1.0)
        queue_ax.set_ylabel("queued\njobs", fontsize=8)
        _draw_steps(use_ax, full.busy_procs(), "busy", (w0, w1), origin, unit_s,
                    100.0 / max(full.total_procs, 1))  # fmt: skip
        use_ax.set_ylabel("util.\n%", fontsize=8)
        use_ax.set_ylim(0, 105)
    axes[-1].set_xlim((w0 - origin) / unit_s, (w1 - origin) / unit_s)
    days = "time (days since the trace's time 0)"
    axes[-1].set_xlabel(f"time (hours since {w0:.0f} s)" if unit == "hours" else days)
    from matplotlib.patches import Patch

    handles = [Patch(facecolor=colours[level], label=level) for level in levels]
    figure.legend(handles=handles, loc="outside lower center", ncol=min(len(handles), 5),
                  fontsize=8, frameon=False)  # fmt: skip
    if title:
        figure.suptitle(textwrap.fill(title, width=int(width_in * 11)), fontsize=11)
    return figure


def _draw_rectangles(
    ax: Axes,
    schedule: Schedule,
    category: pl.Series,
    colours: Mapping[str, str],
    window: tuple[float, float],
    origin: float,
    unit_s: float,
    pixels: tuple[int, int],
) -> None:
    """Each processor interval of each run as a rectangle (data units: time unit, processor)."""
    from matplotlib.collections import PolyCollection

    a = schedule.assignment
    run = a.run_of_interval()
    x0 = (np.maximum(schedule.runs["start_s"].to_numpy()[run], window[0]) - origin) / unit_s
    x1 = (np.minimum(schedule.runs["end_s"].to_numpy()[run], window[1]) - origin) / unit_s
    y0, y1 = a.lo.astype(float), a.hi.astype(float)
    verts = np.stack([np.stack([x0, y0], 1), np.stack([x0, y1], 1),
                      np.stack([x1, y1], 1), np.stack([x1, y0], 1)], axis=1)  # fmt: skip
    faces = [colours[c] for c in np.asarray(category.to_list(), dtype=object)[run]]
    ax.add_collection(PolyCollection(verts, facecolors=faces, edgecolors="white", linewidths=0.3))


def _segments(a: np.ndarray, b: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split the intervals ``[a, b)`` (in cell units, ``0 <= a <= b <= n``) over the cells
    they overlap: three segments each (first cell, whole cells, last cell) as ``(start,
    stop, weight)`` arrays of shape (N, 3); weight is the covered fraction of each cell."""
    ia = np.minimum(np.floor(a).astype(np.int64), n - 1)
    ib = np.minimum(np.floor(b).astype(np.int64), n - 1)
    same = ia == ib
    start = np.stack([ia, ia + 1, ib], axis=1)
    stop = np.stack([ia + 1, np.maximum(ib, ia + 1), ib + 1], axis=1)
    weight = np.stack(
        [
            np.where(same, b - a, ia + 1 - a),
            np.where(same, 0.0, 1.0),
            np.where(same, 0.0, b - ib),
        ],
        axis=1,
    )
    return start, stop, weight


def raster_cover(
    schedule: Schedule,
    codes: np.ndarray,
    n_levels: int,
    window: tuple[float, float],
    rows: int,
    cols: int,
) -> np.ndarray:
    """The share of each pixel cell's processor-seconds covered by the runs of each category.

    Parameters
    ----------
    schedule
        The runs with their processors.
    codes
        Category of each run (integers ``0 .. n_levels-1``).
    window
        ``(start_s, end_s)`` spread over ``cols`` columns; the processors ``0 ..
        total_procs`` over ``rows`` rows.

    Returns
    -------
    numpy.ndarray
        Shape ``(n_levels, rows, cols)``, values in [0, 1]; summed over categories at most 1
        (up to rounding) as no processor serves two runs at once. ``cover.sum() * cell``, the
        cell's processor-seconds, is the processor-seconds of the runs inside the window.
    """
    a = schedule.assignment
    run = a.run_of_interval()
    w0, w1 = window
    cell_t = (w1 - w0) / cols
    cell_p = schedule.total_procs / rows
    u0 = (np.clip(schedule.runs["start_s"].to_numpy()[run], w0, w1) - w0) / cell_t
    u1 = (np.clip(schedule.runs["end_s"].to_numpy()[run], w0, w1) - w0) / cell_t
    v0, v1 = a.lo / cell_p, a.hi / cell_p
    diff = np.zeros((max(n_levels, 1), rows + 1, cols + 1))
    cs, ce, cw = _segments(u0, u1, cols)
    rs, re_, rw = _segments(v0, v1, rows)
    # every (row segment, column segment) block of every interval: a constant weight
    weight = (rw[:, :, None] * cw[:, None, :]).reshape(run.size, 9)
    r0 = np.repeat(rs, 3, axis=1)
    r1 = np.repeat(re_, 3, axis=1)
    c0 = np.tile(cs, (1, 3))
    c1 = np.tile(ce, (1, 3))
    k = np.repeat(np.asarray(codes, dtype=np.int64)[run][:, None], 9, axis=1)
    live = (weight > 0) & (r1 > r0) & (c1 > c0)
    k, r0, r1, c0, c1, weight = (x[live] for x in (k, r0, r1, c0, c1, weight))
    np.add.at(diff, (k, r0, c0), weight)
    np.add.at(diff, (k, r0, c1), -weight)
    np.add.at(diff, (k, r1, c0), -weight)
    np.add.at(diff, (k, r1, c1), weight)
    return diff.cumsum(axis=1).cumsum(axis=2)[:, :rows, :cols]


def _draw_raster(
    ax: Axes,
    schedule: Schedule,
    category: pl.Series,
    colours: Mapping[str, str],
    window: tuple[float, float],
    origin: float,
    unit_s: float,
    pixels: tuple[int, int],
) -> None:
    """The runs aggregated into pixel cells: a cell's colour mixes its runs' colours by the
    share of its processor-seconds they cover (white where idle)."""
    from matplotlib.colors import to_rgb

    rows = min(max(pixels[0], 1), max(schedule.total_procs, 1))
    cols = max(pixels[1], 1)
    levels = sorted(set(category.to_list()))
    index = {level: i for i, level in enumerate(levels)}
    codes = np.array([index[c] for c in category.to_list()], dtype=np.int64)
    cover = raster_cover(schedule, codes, len(levels), window, rows, cols)
    image = np.ones((rows, cols, 3))
    for level, i in index.items():
        image -= cover[i][:, :, None] * (1.0 - np.asarray(to_rgb(colours[level])))
    w0, w1 = window
    ax.imshow(
        np.clip(image, 0.0, 1.0),
        origin="lower",
        aspect="auto",
        interpolation="nearest",
        extent=((w0 - origin) / unit_s, (w1 - origin) / unit_s, 0, schedule.total_procs),
    )


def _draw_steps(
    ax: Axes,
    steps: pl.DataFrame,
    column: str,
    window: tuple[float, float],
    origin: float,
    unit_s: float,
    scale: float,
) -> None:
    """A step function (value from each time on) over the window."""
    times = steps["time_s"].to_numpy()
    values = steps[column].to_numpy() * scale
    w0, w1 = window
    before = np.searchsorted(times, w0, side="right") - 1
    value0 = values[before] if before >= 0 else 0.0
    inside = (times > w0) & (times < w1)
    x = np.concatenate(([w0], times[inside], [w1]))
    y = np.concatenate(([value0], values[inside], [values[inside][-1] if inside.any() else value0]))
    ax.step((x - origin) / unit_s, y, where="post", color="#333333", linewidth=0.8)
    ax.set_ylim(bottom=0)
    ax.tick_params(labelsize=7)


def draw_gantt(
    panels: Schedule | Sequence[Panel],
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    window: tuple[float, float] | None = None,
    *,
    provenance: Mapping[str, str] | None = None,
    **options: object,
) -> None:
    """Draw :func:`gantt_figure` once and save it to each of ``paths`` (PNG or PDF, by
    suffix), atomically, with the provenance in its metadata (as
    :func:`scheduler.studies.common.figures.save_figure`).

    Raises
    ------
    ConfigurationError
        A suffix is neither ``.png`` nor ``.pdf`` (checked before drawing); or as
        :func:`gantt_figure`.
    """
    from scheduler.studies.common.figures import DRAWING_LOCK, save_matplotlib

    targets = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    for path in targets:
        if Path(path).suffix.lower() not in (".png", ".pdf"):
            raise ConfigurationError(f"{path}: a figure is saved as .png or .pdf")
    # under the lock of the studies' figures: a figure takes matplotlib's global rcParams when
    # it is built, which a plotnine theme drawing in another thread changes for a while
    with DRAWING_LOCK:
        figure = gantt_figure(panels, window, **options)  # type: ignore[arg-type]
        for path in targets:
            save_matplotlib(figure, path, provenance=provenance)


#: The length of a representative week, seconds.
WEEK_S = 7 * _SECONDS_PER_DAY


def representative_week(
    baseline: pl.DataFrame, other: pl.DataFrame, *, length_s: float = WEEK_S
) -> tuple[float, float]:
    """The week where two schedules of the same jobs differ most: the window ``(start_s,
    end_s)`` of ``length_s`` seconds, counted from the first submission, whose jobs (by
    submission) have the largest absolute difference in mean bounded slowdown between
    ``baseline`` and ``other`` (the earliest among equals).

    Parameters
    ----------
    baseline, other
        Per-job tables (``RunResult.jobs``) with ``job_id``, ``submit_s`` and ``bsld``.

    Raises
    ------
    ConfigurationError
        The tables share no job, or ``length_s`` is not positive.
    """
    if not length_s > 0:
        raise ConfigurationError(f"length_s must be positive, got {length_s}")
    pair = baseline.select("job_id", "submit_s", "bsld").join(
        other.select("job_id", pl.col("bsld").alias("bsld_other")), on="job_id"
    )
    if pair.height == 0:
        raise ConfigurationError("representative_week: the two schedules share no job")
    first = float(pair["submit_s"].min())  # type: ignore[arg-type]
    weeks = (
        pair.with_columns(((pl.col("submit_s") - first) // length_s).cast(pl.Int64).alias("week"))
        .group_by("week")
        .agg((pl.col("bsld").mean() - pl.col("bsld_other").mean()).abs().alias("gap"))
        .sort(["gap", "week"], descending=[True, False])
    )
    start = first + int(weeks["week"][0]) * length_s
    return start, start + length_s


def week_figure(
    panels: Sequence[tuple[str, object]],
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    window: tuple[float, float] | None = None,
    colour_by: str = "auto",
    title: str | None = None,
    provenance: Mapping[str, str] | None = None,
    length_s: float = WEEK_S,
) -> tuple[float, float]:
    """A study's representative week: the results of two (or more) schedulers on the same jobs,
    drawn stacked over the week where the first two differ most (:func:`representative_week`).

    Parameters
    ----------
    panels
        ``(label, result)`` pairs, any engine's result (``schedule_of`` takes it); the first
        is the baseline.
    paths
        The figure file(s) (``.png`` and/or ``.pdf``), each written atomically with
        ``provenance`` and the window drawn (key ``window_s``: ``"start,end"``, seconds); the
        figure is drawn once for all of them.
    window
        The time drawn (``(start_s, end_s)``), when the study chooses it itself; default the
        representative week of ``length_s`` seconds.

    Returns
    -------
    tuple of float
        The window drawn, ``(start_s, end_s)``.
    """
    from scheduler.sim.schedule import schedule_of

    if len(panels) < 2:
        raise ConfigurationError("week_figure: give at least two results to compare")
    if window is None:
        baseline, other = (result for _, result in panels[:2])
        window = representative_week(
            baseline.jobs,  # type: ignore[attr-defined]
            other.jobs,  # type: ignore[attr-defined]
            length_s=length_s,
        )
    schedules = [Panel(label, schedule_of(result)) for label, result in panels]  # type: ignore[arg-type]
    record = {**(provenance or {}), "window_s": f"{window[0]:.17g},{window[1]:.17g}"}
    draw_gantt(schedules, paths, window, colour_by=colour_by, title=title, provenance=record)
    return window
