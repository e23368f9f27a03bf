"""What the studies' figures share: the plotnine theme, titles that wrap, policy colours and
shapes (Okabe-Ito, colour-blind safe), level orders, row selection with clear errors, and
:func:`save_figure` (PNG + PDF with provenance metadata, written atomically, one at a time)."""

from __future__ import annotations

import json
import math
import os
import textwrap
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import polars as pl
from matplotlib.figure import Figure
from plotnine import (
    element_text,
    geom_hline,
    geom_vline,
    ggplot,
    labs,
    scale_colour_manual,
    scale_shape_manual,
    theme,
    theme_bw,
)

from scheduler.core.atomic import atomic_path
from scheduler.core.errors import ConfigurationError

__all__ = [
    "DRAWING_LOCK",
    "KNOWN_POLICY_COLOURS",
    "KNOWN_POLICY_SHAPES",
    "SECONDS_PER_HOUR",
    "SPARE_COLOURS",
    "SPARE_SHAPES",
    "add_hours",
    "available_values",
    "figure_theme",
    "finite_only",
    "integer_breaks",
    "level_order",
    "make_categorical",
    "manual_values",
    "policy_colour_scale",
    "policy_shape_scale",
    "reference_line",
    "require_columns",
    "save_figure",
    "save_matplotlib",
    "select_rows",
    "threshold_text",
    "wrapped_labs",
]


#: Held while a figure is drawn and saved (see :func:`save_figure`); reentrant, so that a
#: caller that builds a matplotlib figure under it (``gantt.draw_gantt``) can save it with
#: :func:`save_matplotlib`, which takes it too.
DRAWING_LOCK = threading.RLock()


SECONDS_PER_HOUR = 3600.0


# Okabe-Ito colours (colour-blind safe); FCFS black as in the baseline.
KNOWN_POLICY_COLOURS: dict[str, str] = {
    "FCFS": "#000000",
    "LCFS": "#E69F00",
    "SPF": "#56B4E9",
    "LPF": "#009E73",
    "SQF": "#0072B2",
    "LQF": "#D55E00",
    "LEXP": "#CC79A7",
}


SPARE_COLOURS: tuple[str, ...] = ("#999999", "#882255", "#44AA99", "#DDCC77", "#332288")


KNOWN_POLICY_SHAPES: dict[str, str] = {
    "FCFS": "o",
    "LCFS": "s",
    "SPF": "^",
    "LPF": "v",
    "SQF": "D",
    "LQF": "P",
    "LEXP": "X",
}


SPARE_SHAPES: tuple[str, ...] = ("*", "h", "<", ">", "p")


def threshold_text(label: str) -> str:
    """Readable form of a threshold label: ``"20h"`` → ``"20 h"``, ``"none"`` stays.

    Parameters
    ----------
    label
        Threshold label of the tables (``"none"``, ``"5h"``, ``"20h"``...).

    Returns
    -------
    str
        The label with a no-break space between number and unit (titles never wrap there).
    """
    if label.endswith("h") and label[:-1].replace(".", "", 1).isdigit():
        return f"{label[:-1]}\u00a0h"
    return label


def figure_theme(base_size: float = 10.0) -> theme:
    """A clean theme readable at 7 x 4.5 inches."""
    return theme_bw(base_size=base_size) + theme(
        plot_title=element_text(size=base_size + 1, weight="bold"),
        plot_subtitle=element_text(size=base_size - 1),
        plot_caption=element_text(size=base_size - 2.5, ha="left"),
        legend_title=element_text(size=base_size - 1),
        legend_text=element_text(size=base_size - 1.5),
    )


#: Line widths (characters) beyond which title, subtitle and caption wrap at 7 inches.
_WRAP = {"title": 64, "subtitle": 78, "caption": 105}


def wrapped_labs(**labels: str | None) -> labs:
    """:func:`plotnine.labs` with long titles, subtitles and captions wrapped onto lines."""
    for name, width in _WRAP.items():
        text = labels.get(name)
        if text is not None and len(text) > width:
            labels[name] = textwrap.fill(text, width=width, break_on_hyphens=False)
    return labs(**labels)


def integer_breaks(limits: tuple[float, float]) -> list[int]:
    """At most about 8 integer axis breaks (1, 2, 5 x 10^k steps) covering ``limits``."""
    low, high = math.ceil(limits[0]), math.floor(limits[1])
    if high < low:
        return []
    span = max(high - low, 1)
    step = 1
    for magnitude in (1, 10, 100, 1000, 10000):
        candidates = [factor * magnitude for factor in (1, 2, 5)]
        fitting = [c for c in candidates if span / c <= 8]
        if fitting:
            step = fitting[0]
            break
    first = math.ceil(low / step) * step
    return list(range(first, high + 1, step))


def require_columns(table: pl.DataFrame, columns: Iterable[str], what: str) -> None:
    """Raise :class:`ConfigurationError` when ``table`` lacks one of ``columns``."""
    missing = [name for name in columns if name not in table.columns]
    if missing:
        raise ConfigurationError(f"{what}: the table lacks the column(s) {', '.join(missing)}")


def available_values(table: pl.DataFrame, column: str) -> str:
    """The distinct values of ``column`` as a sorted, comma-separated list (for messages)."""
    if column not in table.columns:
        return "(none)"
    values = sorted({str(value) for value in table.get_column(column).unique().to_list()})
    return ", ".join(values) if values else "(none)"


def select_rows(
    table: pl.DataFrame, what: str, columns: Sequence[str], **equal: str | None
) -> pl.DataFrame:
    """Rows of ``table`` whose columns equal the given values; raise when none remain.

    Parameters
    ----------
    table
        Input table.
    what
        Name of the calling builder (for the message).
    columns
        Columns the caller needs.
    **equal
        ``column=value`` conditions; ``None`` values are ignored.

    Returns
    -------
    pl.DataFrame
        The selected rows (at least one).

    Raises
    ------
    ConfigurationError
        When a column is missing or no row matches; the message names every condition and the
        values available in the table.
    """
    require_columns(table, [*columns, *equal], what)
    conditions = {name: value for name, value in equal.items() if value is not None}
    selected = table
    for name, value in conditions.items():
        selected = selected.filter(pl.col(name) == value)
    if selected.height == 0:
        wanted = ", ".join(f"{name} {value!r}" for name, value in conditions.items())
        known = "; ".join(f"{name}s: {available_values(table, name)}" for name in conditions)
        raise ConfigurationError(f"{what}: no rows for {wanted} (available {known})")
    return selected


def level_order(values: Iterable[str], preferred: Sequence[str]) -> list[str]:
    """Distinct ``values``, those in ``preferred`` first in that order, then the rest sorted."""
    present = {str(value) for value in values}
    return [name for name in preferred if name in present] + sorted(present - set(preferred))


def make_categorical(frame: pd.DataFrame, column: str, levels: Sequence[str]) -> None:
    """Make ``frame[column]`` an ordered categorical with ``levels`` (legend/axis order)."""
    frame[column] = pd.Categorical(frame[column].astype(str), categories=list(levels), ordered=True)


def manual_values(
    levels: Sequence[str], known: Mapping[str, str], extras: Sequence[str]
) -> dict[str, str]:
    """Map each level to its fixed value, unknown levels to ``extras`` in turn."""
    values: dict[str, str] = {}
    spare = 0
    for level in levels:
        if level in known:
            values[level] = known[level]
        else:
            values[level] = extras[spare % len(extras)]
            spare += 1
    return values


def policy_colour_scale(levels: Sequence[str], name: str) -> scale_colour_manual:
    """Fixed colours per policy (the same policy has the same colour on every figure)."""
    return scale_colour_manual(
        values=manual_values(levels, KNOWN_POLICY_COLOURS, SPARE_COLOURS),
        limits=list(levels),
        name=name,
    )


def policy_shape_scale(levels: Sequence[str], name: str) -> scale_shape_manual:
    """Fixed marker shapes per policy."""
    return scale_shape_manual(
        values=manual_values(levels, KNOWN_POLICY_SHAPES, SPARE_SHAPES),
        limits=list(levels),
        name=name,
    )


def finite_only(frame: pd.DataFrame, columns: Iterable[str]) -> None:
    """Replace infinite values (e.g. a ratio to a zero baseline) by NaN, i.e. missing."""
    for column in columns:
        values = pd.to_numeric(frame[column], errors="coerce").astype(float)
        frame[column] = values.where(values.map(math.isfinite))


def add_hours(frame: pd.DataFrame, source: str, target: str) -> None:
    """``frame[target] = frame[source] / 3600`` (seconds to hours)."""
    frame[target] = pd.to_numeric(frame[source], errors="coerce").astype(float) / SECONDS_PER_HOUR


def reference_line(axis: str = "y") -> geom_hline | geom_vline:
    """Dashed grey line at relative value 1 (the baseline)."""
    if axis == "x":
        return geom_vline(xintercept=1.0, linetype="dashed", colour="#555555")
    return geom_hline(yintercept=1.0, linetype="dashed", colour="#555555")


def save_figure(
    plot: ggplot,
    png_path: str | os.PathLike[str],
    pdf_path: str | os.PathLike[str],
    *,
    provenance: Mapping[str, str] | None = None,
    width_in: float = 7.0,
    height_in: float = 4.5,
    dpi: int = 150,
) -> None:
    """Render ``plot`` to a PNG and a PDF file, atomically and with provenance metadata.

    Both files are first written to temporary files next to their targets, then renamed over
    them (:func:`scheduler.core.atomic.atomic_path`); when drawing or writing fails, neither target
    is created or changed and no temporary file is left. The provenance is stored as JSON (keys
    sorted) in the PNG ``Description`` text chunk and in the PDF ``Subject`` entry; the
    ``Software`` / ``Creator`` entry is ``"schedlab"``. The matplotlib figures are closed.

    Parameters
    ----------
    plot
        The figure to render.
    png_path, pdf_path
        Output files; parent directories are created when missing.
    provenance
        Strings describing how the figure was made (e.g. input file and its hash, commit).
    width_in, height_in
        Figure size in inches (the PNG is ``width_in * dpi`` x ``height_in * dpi`` pixels).
    dpi
        Resolution of the PNG in dots per inch.

    Raises
    ------
    ConfigurationError
        When the size or resolution is not positive or both paths are the same file.
    Exception
        Whatever plotnine or matplotlib raises when the plot cannot be drawn (e.g. an aesthetic
        naming a missing column); no output file is left behind.
    """
    if not (width_in > 0 and height_in > 0 and dpi > 0):
        raise ConfigurationError(
            f"save_figure: width_in, height_in and dpi must be positive, "
            f"got {width_in}, {height_in}, {dpi}"
        )
    if Path(png_path).resolve() == Path(pdf_path).resolve():
        raise ConfigurationError(f"save_figure: PNG and PDF paths are the same: {png_path}")
    formats = tuple((name, _metadata(name, provenance)) for name in ("png", "pdf"))
    # One figure at a time per process: matplotlib's rcParams (set by each plot's theme for the
    # duration of its drawing) and pyplot's figure list are global, and Snakemake's thread mode
    # runs figure jobs in parallel threads of one process.
    with DRAWING_LOCK:
        figures_before = set(plt.get_fignums())
        try:
            # Nested: both temporary files exist until both are written, then both are renamed.
            with atomic_path(png_path) as png_tmp, atomic_path(pdf_path) as pdf_tmp:
                for (file_format, metadata), tmp in zip(formats, (png_tmp, pdf_tmp), strict=True):
                    plot.save(
                        tmp,
                        format=file_format,
                        width=width_in,
                        height=height_in,
                        units="in",
                        dpi=dpi,
                        verbose=False,
                        metadata=metadata,
                    )
        finally:
            for number in set(plt.get_fignums()) - figures_before:
                plt.close(number)


def _metadata(file_format: str, provenance: Mapping[str, str] | None) -> dict[str, str | None]:
    """The metadata of a saved figure: the provenance as JSON (keys sorted) in the PNG
    ``Description`` chunk or the PDF ``Subject``; ``"schedlab"`` as its software."""
    description = json.dumps(dict(provenance or {}), sort_keys=True)
    if file_format == "png":
        return {"Software": "schedlab", "Description": description}
    return {"Creator": "schedlab", "Subject": description, "CreationDate": None}


def save_matplotlib(
    figure: Figure,
    path: str | os.PathLike[str],
    *,
    provenance: Mapping[str, str] | None = None,
) -> None:
    """Save a matplotlib figure (drawn without pyplot) to ``path``, PNG or PDF by its suffix,
    atomically and with the provenance metadata of :func:`save_figure`.

    Raises
    ------
    ConfigurationError
        The suffix is neither ``.png`` nor ``.pdf``.
    """
    file_format = Path(path).suffix.lower().lstrip(".")
    if file_format not in ("png", "pdf"):
        raise ConfigurationError(f"{path}: a figure is saved as .png or .pdf")
    with DRAWING_LOCK, atomic_path(path) as tmp:
        figure.savefig(tmp, format=file_format, metadata=_metadata(file_format, provenance))
