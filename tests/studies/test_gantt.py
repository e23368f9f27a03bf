"""Gantt charts (scheduler.studies.common.gantt): a hand-worked five-job schedule drawn and read
back from the figure's own data (rectangles, colours, queue and utilisation steps), the raster's
processor-seconds, the representative week, the colour attributes and the saved file."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.colors import to_hex
from PIL import Image

from scheduler import simulate
from scheduler.core.errors import ConfigurationError
from scheduler.sim.schedule import schedule_of
from scheduler.studies.common.gantt import (
    Panel,
    draw_gantt,
    gantt_figure,
    raster_cover,
    representative_week,
    run_categories,
)

H = 3600


@pytest.fixture
def five_jobs(job_table):
    """Four processors, EASY-FCFS with exact estimates (times in hours):

    J1 0: 2 procs, 4 h   -> starts 0
    J2 0: 1 proc,  2 h   -> starts 0
    J3 1: 3 procs, 2 h   -> waits: 1 free; reservation at 4 (J1 ends)
    J4 1: 1 proc,  2 h   -> backfilled at 1 (ends 3 <= 4)
    J5 2: 2 procs, 1 h   -> at 2 one free; at 3 (J4 ends) two: backfilled, ends 4 <= 4
    J3 starts at 4 when J1 and J5 end.
    """
    rows = [(1, 0, 2, 4), (2, 0, 1, 2), (3, 1, 3, 2), (4, 1, 1, 2), (5, 2, 2, 1)]
    table = job_table(*[
        {"job_id": j, "submit_s": s * H, "run_s": r * H, "alloc_procs": p, "req_procs": p,
         "req_time_s": r * H, "user_id": 1 + j % 2}
        for j, s, p, r in rows
    ])  # fmt: skip
    return simulate(table, "FCFS", "FCFS", machine_procs=4)


def rectangles(ax) -> list[tuple[float, float, float, float, str]]:
    """(x0, x1, y0, y1, colour) of every rectangle of the axes' collection, sorted."""
    (collection,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    out = []
    for path, face in zip(collection.get_paths(), collection.get_facecolors(), strict=True):
        xy = path.vertices[:4]
        out.append((xy[:, 0].min(), xy[:, 0].max(), xy[:, 1].min(), xy[:, 1].max(),
                    to_hex(face)))  # fmt: skip
    return sorted(out)


def test_hand_worked_schedule_is_drawn_where_it_ran(five_jobs):
    starts = dict(zip(five_jobs.jobs["job_id"], five_jobs.jobs["start_s"] / H, strict=True))
    assert starts == {1: 0, 2: 0, 3: 4, 4: 1, 5: 3}
    schedule = schedule_of(five_jobs)
    figure = gantt_figure(schedule, (0, 6 * H), colour_by="backfilled", mode="rectangles")
    gantt_ax, queue_ax, use_ax = figure.axes[:3]
    in_order, backfilled = "#0072b2", "#e69f00"
    # best fit, hand-worked: 0: J1 0-1, J2 2; 1: J4 3; 3: J4 ends, J5 takes the free 2-3;
    # 4: J1 and J5 end, J3 takes 0-2 (x in hours since the window's start, y processors)
    assert rectangles(gantt_ax) == [
        (0, 2, 2, 3, in_order),  # J2
        (0, 4, 0, 2, in_order),  # J1
        (1, 3, 3, 4, backfilled),  # J4
        (3, 4, 2, 4, backfilled),  # J5
        (4, 6, 0, 3, in_order),  # J3
    ]
    assert gantt_ax.get_ylim() == (0, 4)
    assert gantt_ax.get_xlim() == (0, 6)
    # queue: J3 and J4 submitted at 1, J4 starts; J5 at 2; J5 starts at 3; J3 at 4
    queue = queue_ax.lines[0].get_xydata().tolist()
    assert queue == [[0, 0], [1, 1], [2, 2], [3, 1], [4, 0], [6, 0]]
    use = use_ax.lines[0].get_xydata().tolist()
    assert use == [[0, 75], [1, 100], [2, 75], [3, 100], [4, 75], [6, 75]]
    legend = [t.get_text() for t in figure.legends[0].get_texts()]
    assert legend == ["started in order", "backfilled"]


def test_hand_worked_schedule_coloured_by_user(five_jobs):
    """Users 2 (J1, J3, J5: 8 + 6 + 2 = 16 processor-hours) then 1 (J2, J4: 4)."""
    _, levels = run_categories(schedule_of(five_jobs), "user")
    assert levels == ["user 2", "user 1"]
    figure = gantt_figure(schedule_of(five_jobs), (0, 6 * H), colour_by="user",
                          mode="rectangles")  # fmt: skip
    colours = {r[:4]: r[4] for r in rectangles(figure.axes[0])}
    assert colours[(0, 4, 0, 2)] == colours[(4, 6, 0, 3)] == "#0072b2"  # user 2
    assert colours[(0, 2, 2, 3)] == "#e69f00"  # user 1


def test_window_clips_the_rectangles(five_jobs):
    figure = gantt_figure(schedule_of(five_jobs), (2 * H, 3.5 * H), colour_by="none",
                          mode="rectangles")  # fmt: skip
    # hours since the window's start (2 h): J1 2..3.5 -> 0..1.5, J4 ends at 3 -> 1, J5 from 3
    boxes = [r[:4] for r in rectangles(figure.axes[0])]
    assert boxes == [(0, 1, 3, 4), (0, 1.5, 0, 2), (1, 1.5, 2, 4)]


def test_raster_keeps_the_processor_seconds(five_jobs):
    schedule = schedule_of(five_jobs)
    for window, rows, cols in (((0, 6 * H), 3, 7), ((0.5 * H, 5.2 * H), 4, 13), ((0, 6 * H), 1, 1)):
        codes = np.zeros(schedule.runs.height, dtype=np.int64)
        cover = raster_cover(schedule, codes, 1, window, rows, cols)
        cell = (window[1] - window[0]) / cols * 4 / rows
        ends = np.minimum(schedule.runs["end_s"].to_numpy(), window[1])
        starts = np.maximum(schedule.runs["start_s"].to_numpy(), window[0])
        area = (np.clip(ends - starts, 0, None) * schedule.runs["procs"].to_numpy()).sum()
        assert cover.sum() * cell == pytest.approx(area)
        assert cover.max() <= 1 + 1e-9 and cover.min() >= -1e-9


def test_raster_cell_shares_by_category(five_jobs):
    """One pixel per processor and per hour: the cells are exactly the runs' rectangles."""
    schedule = schedule_of(five_jobs)
    categories, levels = run_categories(schedule, "backfilled")
    codes = np.array([levels.index(c) for c in categories.to_list()])
    cover = raster_cover(schedule, codes, 2, (0, 6 * H), 4, 6)
    expected_backfilled = np.zeros((4, 6))
    expected_backfilled[3, 1:3] = 1  # J4: processor 3, hours 1-3
    expected_backfilled[2:4, 3] = 1  # J5: processors 2-3, hour 3
    np.testing.assert_allclose(cover[1], expected_backfilled, atol=1e-12)
    assert cover.sum(axis=0).max() == pytest.approx(1.0)


def test_auto_draws_a_raster_for_a_wide_machine(job_table):
    table = job_table(*[
        {"job_id": j, "submit_s": 0, "run_s": 100, "alloc_procs": 1, "req_procs": 1,
         "req_time_s": 100} for j in range(1, 4)
    ])  # fmt: skip
    result = simulate(table, machine_procs=100_000)
    figure = gantt_figure(schedule_of(result), (0, 200), dpi=50)
    assert figure.axes[0].images and not figure.axes[0].collections
    figure = gantt_figure(schedule_of(result), (0, 200), mode="rectangles")
    assert not figure.axes[0].images


def test_stacked_panels_share_the_time_axis(five_jobs, job_table):
    schedule = schedule_of(five_jobs)
    figure = gantt_figure([Panel("EASY", schedule), Panel("again", schedule)], (0, 6 * H),
                          mode="rectangles")  # fmt: skip
    assert len(figure.axes) == 6
    assert [figure.axes[0].get_title(loc="left"), figure.axes[3].get_title(loc="left")] == [
        "EASY", "again"
    ]  # fmt: skip
    assert rectangles(figure.axes[0]) == rectangles(figure.axes[3])


def test_representative_week_is_where_the_two_differ_most():
    week = 7 * 86_400
    base = pl.DataFrame({"job_id": [1, 2, 3, 4], "submit_s": [10, week + 20, 2 * week + 5,
                         2 * week + 9], "bsld": [1.0, 5.0, 2.0, 2.0]})  # fmt: skip
    other = base.with_columns(pl.Series("bsld", [1.5, 1.0, 2.0, 3.0]))
    # gaps 0.5, 4.0, 0.5 -> the second week, counted from the first submission (10 s)
    assert representative_week(base, other) == (10 + week, 10 + 2 * week)
    assert representative_week(base, base) == (10, 10 + week)  # ties: the earliest
    with pytest.raises(ConfigurationError, match="share no job"):
        representative_week(base, other.with_columns(pl.col("job_id") + 10))


def test_colour_by_needs_the_attribute(five_jobs):
    with pytest.raises(ConfigurationError, match=r"no such attribute.*backfilled"):
        run_categories(schedule_of(five_jobs), "failed")
    with pytest.raises(ConfigurationError, match="colour_by must be one of"):
        run_categories(schedule_of(five_jobs), "colour")
    assert run_categories(schedule_of(five_jobs), "auto")[1] == ["started in order", "backfilled"]


def test_draw_gantt_writes_a_png_with_provenance(five_jobs, tmp_path):
    path = tmp_path / "week.png"
    draw_gantt(schedule_of(five_jobs), path, (0, 6 * H), provenance={"trace": "five"})
    with Image.open(path) as image:
        assert json.loads(image.info["Description"]) == {"trace": "five"}
        assert image.size[0] > 500
    with pytest.raises(ConfigurationError, match=r"\.png or \.pdf"):
        draw_gantt(schedule_of(five_jobs), tmp_path / "week.svg", (0, 6 * H))
    assert not (tmp_path / "week.svg").exists()


def test_users_share_their_colours_across_panels(job_table):
    """Two schedules with different users: the users coloured are chosen over both panels, so
    a user has one colour everywhere (users 1..12 on one, 5..16 on the other; the 8 biggest
    together get colours, the rest are grey in both)."""

    def result(users):
        table = job_table(*[
            {"job_id": k + 1, "submit_s": 0, "run_s": 100 * (u % 9 + 1), "alloc_procs": 1,
             "req_procs": 1, "req_time_s": 1000, "user_id": u}
            for k, u in enumerate(users)
        ])  # fmt: skip
        return schedule_of(simulate(table, machine_procs=16))

    a, b = result(range(1, 13)), result(range(5, 17))
    figure = gantt_figure([Panel("a", a), Panel("b", b)], (0, 1000), colour_by="user",
                          mode="rectangles")  # fmt: skip
    colour_of = {}
    for panel, schedule in ((0, a), (3, b)):
        (collection,) = figure.axes[panel].collections
        faces = [to_hex(f) for f in collection.get_facecolors()]
        for user, face in zip(schedule.runs["user_id"], faces, strict=True):
            assert colour_of.setdefault(user, face) == face, user
    legend = [t.get_text() for t in figure.legends[0].get_texts()]
    assert len(legend) == 9 and legend[-1] == "other users"
    assert len({colour_of[u] for u in colour_of if f"user {u}" in legend}) == 8


def test_draw_gantt_writes_each_path_from_one_drawing(five_jobs, tmp_path):
    png, pdf = tmp_path / "w.png", tmp_path / "w.pdf"
    draw_gantt(schedule_of(five_jobs), (png, pdf), (0, 6 * H), provenance={"k": "v"})
    assert png.read_bytes()[:4] == b"\x89PNG" and pdf.read_bytes()[:4] == b"%PDF"
    with pytest.raises(ConfigurationError, match=r"\.png or \.pdf"):
        draw_gantt(schedule_of(five_jobs), (tmp_path / "x.png", tmp_path / "x.svg"), (0, 6 * H))
    assert not (tmp_path / "x.png").exists()


def test_redirection_pools_are_banded_and_named(job_table):
    """Killed runs on the main pool (processors 0-1) and restarts on the dedicated one (2-3),
    a line between the pools and each pool's name beside its band."""
    from scheduler.sim.redirection import simulate_redirect

    table = job_table(*[
        {"job_id": j, "submit_s": s, "run_s": r, "alloc_procs": 2, "req_procs": 2, "req_time_s": r}
        for j, s, r in ((1, 0, 30), (2, 1, 20), (3, 5, 5))
    ])  # fmt: skip
    schedule = schedule_of(simulate_redirect(table, machine_procs=4, alpha=0.5, theta=0))
    figure = gantt_figure(schedule, (0, 60), mode="rectangles")
    ax = figure.axes[0]
    killed, main, dedicated = "#e69f00", "#0072b2", "#009e73"
    runs = [(0, 1, 0, 2, killed), (1, 5, 0, 2, killed), (1, 31, 2, 4, dedicated),
            (5, 10, 0, 2, main), (31, 51, 2, 4, dedicated)]  # seconds; the axis is in hours
    assert rectangles(ax) == [
        (pytest.approx(a / H), pytest.approx(b / H), lo, hi, c) for a, b, lo, hi, c in runs
    ]
    assert [t.get_text() for t in ax.texts] == ["main", "dedicated"]
    assert [line.get_ydata()[0] for line in ax.lines] == [2]
