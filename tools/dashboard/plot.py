"""One time series as an SVG image, drawn on the server: no script or font from anywhere else.

A line per application over the last polls (gaps where a value is unknown), the y range from 0
(or the lowest value, if negative) to the highest, labelled at both ends, and the x axis in
seconds before the newest poll (the live page) or since the first point (tools/experiment's
report of a finished run, with its moments of change marked).
"""
from xml.sax.saxutils import escape

WIDTH, HEIGHT = 560, 180
LEFT, RIGHT, TOP, BOTTOM = 64, 110, 24, 26  # margins: y labels left, legend right
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2"]


def _label(v):
    return f"{v:.3g}" if abs(v) < 1e5 else f"{v:.2e}"


def _segments(points, x_of, y_of):
    """Polyline point lists, split where a value is None."""
    runs, run = [], []
    for t, v in points:
        if v is None:
            if run:
                runs.append(run)
            run = []
        else:
            run.append(f"{x_of(t):.1f},{y_of(v):.1f}")
    if run:
        runs.append(run)
    return runs


def svg(title, unit, series, colors=None, since_start=False, marks=()):
    """series: {name: [(t, value or None)]}; colors: {name: color} (else by order). Text.
    since_start: the x axis in the series' own seconds (e.g. since the load began), not "-N s"
    to "now"; marks: [(t, label)] drawn as dashed vertical lines (a price or load change)."""
    values = [v for pts in series.values() for _, v in pts if v is not None]
    times = [t for pts in series.values() for t, _ in pts]
    lo, hi = min([0.0] + values), max([0.0] + values)
    if hi == lo:
        hi = lo + 1.0
    t1 = max(times) if times else 0.0
    t0 = min(times) if times else t1 - 1.0
    span = max(t1 - t0, 1.0)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    x_left, x_right = (f"{t0:.0f} s", f"{t1:.0f} s") if since_start else (f"-{span:.0f} s", "now")

    def x_of(t):
        return LEFT + (t - t0) / span * plot_w

    def y_of(v):
        return TOP + (hi - v) / (hi - lo) * plot_h

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
           f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif" font-size="11">',
           f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
           f'<text x="{LEFT}" y="15" font-weight="bold">{escape(title)} ({escape(unit)})</text>',
           f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" '
           'stroke="#999"/>',
           f'<text x="{LEFT - 4}" y="{TOP + 4}" text-anchor="end">{_label(hi)}</text>',
           f'<text x="{LEFT - 4}" y="{TOP + plot_h}" text-anchor="end">{_label(lo)}</text>',
           f'<text x="{LEFT}" y="{HEIGHT - 8}">{x_left}</text>',
           f'<text x="{LEFT + plot_w}" y="{HEIGHT - 8}" text-anchor="end">{x_right}</text>']
    for i, (t, label) in enumerate(marks):
        if t0 <= t <= t1:  # labels one under another, so that close marks stay readable
            x = x_of(t)
            out.append(f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{TOP + plot_h}" '
                       'stroke="#555" stroke-dasharray="4,3"/>'
                       f'<text x="{x + 3:.1f}" y="{TOP + 12 + 12 * i}">{escape(label)}</text>')
    for i, (name, pts) in enumerate(sorted(series.items())):
        color = (colors or {}).get(name, COLORS[i % len(COLORS)])
        for run in _segments(pts, x_of, y_of):
            if len(run) == 1:
                x, y = run[0].split(",")
                out.append(f'<circle cx="{x}" cy="{y}" r="2" fill="{color}"/>')
            else:
                out.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.5" '
                           f'points="{" ".join(run)}"/>')
        ly = TOP + 12 + 14 * i
        out.append(f'<rect x="{WIDTH - RIGHT + 8}" y="{ly - 8}" width="10" height="10" '
                   f'fill="{color}"/><text x="{WIDTH - RIGHT + 22}" y="{ly}">{escape(name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
