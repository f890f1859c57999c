"""Inline SVG charts for report.html: no JavaScript, no external files, no CDN.

Two kinds: ``line_chart`` (categorical x such as depth, one line per series, CI whiskers, marked points drawn
hollow in red) and ``bar_chart`` (grouped bars). Both return an ``<svg>`` string with a ``<title>`` per mark,
so hovering shows the exact number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"]
MARK_COLOR = "#d62728"


@dataclass
class XY:
    x: str  # category label (e.g. "2048")
    y: float | None
    lo: float | None = None
    hi: float | None = None
    marked: str = ""  # non-empty: drawn hollow red, text shown on hover (e.g. "degraded")


@dataclass
class Series:
    name: str
    points: list[XY] = field(default_factory=list)


def _nice_max(v: float) -> float:
    if v <= 0:
        return 1.0
    exp: float = 10.0 ** math.floor(math.log10(v))
    for m in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if m * exp >= v:
            return m * exp
    return 10 * exp


def _fmt(v: float) -> str:
    if v == 0:
        return "0"
    return f"{v:.0f}" if abs(v) >= 100 else f"{v:.1f}" if abs(v) >= 1 else f"{v:.2f}"


def _frame(title: str, width: int, height: int) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        f'<text x="{width / 2:.0f}" y="16" text-anchor="middle" class="ct">{escape(title)}</text>',
    ]


def _axes(
    out: list[str],
    *,
    left: int,
    top: int,
    pw: float,
    ph: float,
    ymax: float,
    y_label: str,
    x_label: str,
    width: int,
    height: int,
) -> None:
    for i in range(5):
        v = ymax * i / 4
        y = top + ph - ph * i / 4
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw:.1f}" y2="{y:.1f}" class="grid"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" class="tick">{_fmt(v)}</text>')
    out.append(
        f'<line x1="{left}" y1="{top + ph:.1f}" x2="{left + pw:.1f}" y2="{top + ph:.1f}" class="axis"/>'
    )
    out.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + ph:.1f}" class="axis"/>')
    out.append(
        f'<text x="{left + pw / 2:.0f}" y="{height - 6}" text-anchor="middle" class="lab">{escape(x_label)}</text>'
    )
    out.append(
        f'<text x="14" y="{top + ph / 2:.0f}" text-anchor="middle" class="lab" '
        f'transform="rotate(-90 14 {top + ph / 2:.0f})">{escape(y_label)}</text>'
    )


def _legend(out: list[str], names: list[str], *, x: float, top: int) -> None:
    for i, name in enumerate(names):
        y = top + 14 * i
        out.append(f'<rect x="{x:.0f}" y="{y}" width="10" height="10" fill="{PALETTE[i % len(PALETTE)]}"/>')
        out.append(f'<text x="{x + 14:.0f}" y="{y + 9}" class="leg">{escape(name)}</text>')


def line_chart(
    series: list[Series], *, title: str, x_label: str, y_label: str, width: int = 640, height: int = 300
) -> str:
    """One line per series over categorical x; whiskers = CI; marked points hollow red."""
    cats: list[str] = []
    for s in series:
        for p in s.points:
            if p.x not in cats:
                cats.append(p.x)
    vals = [v for s in series for p in s.points for v in (p.y, p.hi) if v is not None]
    out = _frame(title, width, height)
    if not cats or not vals:
        out.append(
            f'<text x="{width / 2:.0f}" y="{height / 2:.0f}" text-anchor="middle" class="lab">no data</text>'
        )
        out.append("</svg>")
        return "\n".join(out)
    left, top, legend_w = 56, 28, 170
    pw, ph = width - left - legend_w - 10, height - top - 42
    ymax = _nice_max(max(vals))
    _axes(
        out,
        left=left,
        top=top,
        pw=pw,
        ph=ph,
        ymax=ymax,
        y_label=y_label,
        x_label=x_label,
        width=width,
        height=height,
    )
    step = pw / max(1, len(cats))

    def X(c: str) -> float:
        return left + step * (cats.index(c) + 0.5)

    def Y(v: float) -> float:
        return top + ph - ph * (v / ymax)

    for c in cats:
        out.append(
            f'<text x="{X(c):.1f}" y="{top + ph + 14:.1f}" text-anchor="middle" class="tick">{escape(c)}</text>'
        )
    for i, s in enumerate(series):
        color = PALETTE[i % len(PALETTE)]
        pts = [(X(p.x), Y(p.y)) for p in s.points if p.y is not None]
        if len(pts) > 1:
            d = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
            out.append(f'<polyline points="{d}" fill="none" stroke="{color}" stroke-width="2"/>')
        for p in s.points:
            if p.y is None:
                continue
            x, y = X(p.x), Y(p.y)
            if p.lo is not None and p.hi is not None:
                out.append(
                    f'<line x1="{x:.1f}" y1="{Y(p.lo):.1f}" x2="{x:.1f}" y2="{Y(p.hi):.1f}" '
                    f'stroke="{color}" stroke-width="1"/>'
                )
            tip = f"{s.name} @ {p.x}: {_fmt(p.y)}"
            if p.lo is not None and p.hi is not None:
                tip += f" [{_fmt(p.lo)}–{_fmt(p.hi)}]"
            if p.marked:
                tip += f" ({p.marked})"
                out.append(
                    f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="white" stroke="{MARK_COLOR}" '
                    f'stroke-width="2"><title>{escape(tip)}</title></circle>'
                )
            else:
                out.append(
                    f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{color}"><title>{escape(tip)}</title></circle>'
                )
    _legend(out, [s.name for s in series], x=left + pw + 14, top=top)
    if any(p.marked for s in series for p in s.points):
        y = top + 14 * len(series) + 6
        out.append(
            f'<circle cx="{left + pw + 19:.0f}" cy="{y + 5}" r="4" fill="white" stroke="{MARK_COLOR}" stroke-width="2"/>'
        )
        out.append(f'<text x="{left + pw + 28:.0f}" y="{y + 9}" class="leg">marked (see caveats)</text>')
    out.append("</svg>")
    return "\n".join(out)


def bar_chart(
    groups: list[str],
    series: list[Series],
    *,
    title: str,
    y_label: str,
    x_label: str = "",
    width: int = 640,
    height: int = 300,
    ymax: float | None = None,
) -> str:
    """Grouped bars: one group per label in ``groups``, one bar per series (XY.x = group label)."""
    vals = [p.y for s in series for p in s.points if p.y is not None]
    out = _frame(title, width, height)
    if not groups or not vals:
        out.append(
            f'<text x="{width / 2:.0f}" y="{height / 2:.0f}" text-anchor="middle" class="lab">no data</text>'
        )
        out.append("</svg>")
        return "\n".join(out)
    left, top, legend_w = 56, 28, 170
    gw_est = (width - left - legend_w - 10) / len(groups)
    rotate = max(len(g) for g in groups) * 6.2 > gw_est
    bottom = 42 + (int(min(max(len(g) for g in groups), 28) * 2.6) if rotate else 0)
    height += bottom - 42
    out = _frame(title, width, height)
    pw, ph = width - left - legend_w - 10, height - top - bottom
    top_v = ymax if ymax is not None else _nice_max(max(vals))
    _axes(
        out,
        left=left,
        top=top,
        pw=pw,
        ph=ph,
        ymax=top_v,
        y_label=y_label,
        x_label=x_label,
        width=width,
        height=height,
    )
    gw = pw / len(groups)
    bw = gw * 0.8 / max(1, len(series))
    for gi, g in enumerate(groups):
        gx = left + gw * gi
        if rotate:
            tx, ty = gx + gw / 2, top + ph + 10
            out.append(
                f'<text x="{tx:.1f}" y="{ty:.1f}" text-anchor="end" class="tick" '
                f'transform="rotate(-35 {tx:.1f} {ty:.1f})">{escape(g)}</text>'
            )
        else:
            out.append(
                f'<text x="{gx + gw / 2:.1f}" y="{top + ph + 14:.1f}" text-anchor="middle" class="tick">{escape(g)}</text>'
            )
        for si, s in enumerate(series):
            p = next((q for q in s.points if q.x == g), None)
            if p is None or p.y is None:
                continue
            h = max(1.5, ph * min(1.0, p.y / top_v))  # a zero still shows as a sliver
            x = gx + gw * 0.1 + bw * si
            color = PALETTE[si % len(PALETTE)]
            tip = f"{s.name} / {g}: {_fmt(p.y)}" + (f" ({p.marked})" if p.marked else "")
            stroke = f' stroke="{MARK_COLOR}" stroke-width="2"' if p.marked else ""
            out.append(
                f'<rect x="{x:.1f}" y="{top + ph - h:.1f}" width="{bw:.1f}" height="{h:.1f}" '
                f'fill="{color}"{stroke}><title>{escape(tip)}</title></rect>'
            )
    _legend(out, [s.name for s in series], x=left + pw + 14, top=top)
    out.append("</svg>")
    return "\n".join(out)


CHART_CSS = """
svg.chart { background: #fff; border: 1px solid #ddd; margin: 6px 0; font-family: sans-serif; }
svg.chart .ct { font-size: 13px; font-weight: 600; }
svg.chart .tick { font-size: 10px; fill: #555; }
svg.chart .lab { font-size: 11px; fill: #333; }
svg.chart .leg { font-size: 11px; fill: #333; }
svg.chart .grid { stroke: #eee; }
svg.chart .axis { stroke: #999; }
"""
