"""The plot of recall against context cost (`indexer eval --plot`): an SVG drawn by hand
(for `.svg` and `.html`), or a matplotlib figure (`.png`, `.pdf`, `.jpg`) with labels
placed clear of each other."""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.axes import Axes as Plane

# offsets (points) tried in turn to place a label clear of those placed before it
LABEL_OFFSETS = (4, -12, 14, -22, 24, -32, 34, -42)

Color = tuple[float, float, float, float]  # RGBA
Box = tuple[float, float, float, float]  # left, bottom, right, top (pixels)


@dataclass(frozen=True)
class Point:
    """One evaluated row on the plot."""

    x: float  # context tokens
    y: int  # questions found
    label: str  # "strategy mode"
    name: str  # the strategy (and embedder): one colour each
    mode: str  # one marker each


@dataclass(frozen=True)
class Axes:
    """What the plot says: its title, the axis labels (the x one short in SVG, spelled out
    in matplotlib's), and the questions (the y range)."""

    title: str
    x: str
    x_long: str
    y: str
    questions: int


def svg(points: list[Point], axes: Axes) -> str:
    """The plot as an SVG document (needs nothing)."""
    w, h, m = 760, 500, 60
    xs = [p.x for p in points] or [0]
    lo_x, hi_x = 0, max(xs) * 1.15 or 1
    lo_y = max(0, min(p.y for p in points) - 3) if points else 0
    hi_y = axes.questions

    def px(x: float) -> float:
        return m + (x - lo_x) / (hi_x - lo_x) * (w - 2 * m)

    def py(y: float) -> float:
        return h - m - (y - lo_y) / max(hi_y - lo_y, 1) * (h - 2 * m)

    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{h}' "
        "font-family='sans-serif' font-size='11'>",
        f"<text x='{w / 2}' y='24' text-anchor='middle' font-size='14'>"
        f"{html.escape(axes.title)}</text>",
        f"<line x1='{m}' y1='{h - m}' x2='{w - m}' y2='{h - m}' stroke='black'/>",
        f"<line x1='{m}' y1='{m}' x2='{m}' y2='{h - m}' stroke='black'/>",
        f"<text x='{w / 2}' y='{h - 18}' text-anchor='middle'>{axes.x}</text>",
        f"<text x='16' y='{h / 2}' transform='rotate(-90 16 {h / 2})' "
        f"text-anchor='middle'>{axes.y}</text>",
    ]
    for i in range(6):
        xv = lo_x + (hi_x - lo_x) * i / 5
        yv = lo_y + (hi_y - lo_y) * i / 5
        parts.append(
            f"<text x='{px(xv):.1f}' y='{h - m + 16}' text-anchor='middle'>{xv:.0f}</text>"
        )
        parts.append(f"<text x='{m - 8}' y='{py(yv) + 4:.1f}' text-anchor='end'>{yv:.0f}</text>")
    for p in points:
        parts.append(f"<circle cx='{px(p.x):.1f}' cy='{py(p.y):.1f}' r='4' fill='#3465a4'/>")
        parts.append(
            f"<text x='{px(p.x) + 6:.1f}' y='{py(p.y) - 6:.1f}'>{html.escape(p.label)}</text>"
        )
    parts.append("</svg>")
    return "\n".join(parts)


def html_page(title: str, drawing: str) -> str:
    """An SVG drawing in a page of its own."""
    return (
        f"<!doctype html><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<body style='font-family:sans-serif'>{drawing}</body>"
    )


def matplotlib_figure(points: list[Point], axes: Axes, path: Path) -> None:
    """The plot drawn with matplotlib (one colour per strategy, one marker per mode) and
    saved to `path`, its format told by the suffix."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 6), dpi=120)
    modes = list(dict.fromkeys(p.mode for p in points))
    markers = dict(zip(modes, "os^D"))
    names = list(dict.fromkeys(p.name for p in points))
    colors = {name: plt.cm.tab10(i % 10) for i, name in enumerate(names)}
    for p in points:
        ax.scatter([p.x], [p.y], marker=markers[p.mode], s=55, color=colors[p.name])
    fig.canvas.draw()  # fixes the axes so data can be placed in pixels
    placed: list[Box] = []
    for p in points:
        _annotate(ax, fig.dpi, p, colors[p.name], placed)
    for mode in modes:
        ax.scatter([], [], marker=markers[mode], color="gray", label=mode)
    ax.legend(title="mode", loc="lower right", fontsize=8)
    ax.set_xlabel(axes.x_long)
    ax.set_ylabel(axes.y)
    ax.set_title(axes.title)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _annotate(ax: Plane, dpi: float, p: Point, color: Color, placed: list[Box]) -> None:
    """Label a point at the first offset clear of the labels `placed` (with a leader line
    when it is moved off the point), and add its box to them."""
    px, py = ax.transData.transform((p.x, p.y))
    width, height = 4.2 * len(p.label) * dpi / 100, 9 * dpi / 100
    for dy in LABEL_OFFSETS:
        box = (px + 5, py + dy, px + 5 + width, py + dy + height)
        if not any(_overlap(box, b) for b in placed):
            break
    placed.append(box)
    ax.annotate(
        p.label,
        (p.x, p.y),
        textcoords="offset points",
        xytext=(5, dy * 72 / dpi),
        fontsize=7,
        color=color,
        arrowprops={"arrowstyle": "-", "lw": 0.4, "color": "gray"} if abs(dy) > 4 else None,
    )


def _overlap(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
