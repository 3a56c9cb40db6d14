"""Charts drawn on the server as SVG: no script, no CDN, readable offline and in the dark theme.

Text is escaped by ``format_html``; colours come from CSS classes (curation/static/curation/
admin.css), so the admin's themes apply. Every bar has a ``<title>`` its tooltip reads, and every
chart a label for screen readers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

BAR_HEIGHT = 18
BAR_GAP = 6
LABEL_WIDTH = 130
CHART_WIDTH = 420


def bar_chart(title: str, rows: Sequence[tuple[str, int]], *, css: str = "bar") -> SafeString:
    """Horizontal bars, one per (label, value), longest scaled to the chart's width."""
    if not rows:
        return format_html('<p class="chart-empty">{}: nothing yet.</p>', title)
    top = max(value for _, value in rows) or 1
    span = CHART_WIDTH - LABEL_WIDTH - 50
    height = len(rows) * (BAR_HEIGHT + BAR_GAP)
    bars = format_html_join(
        "",
        '<g transform="translate(0,{})"><text class="chart-label" x="{}" y="{}" text-anchor="end">{}</text>'
        '<rect class="chart-{}" x="{}" y="0" width="{}" height="{}" rx="2"><title>{}: {}</title></rect>'
        '<text class="chart-value" x="{}" y="{}">{}</text></g>',
        (
            (
                i * (BAR_HEIGHT + BAR_GAP), LABEL_WIDTH - 6, BAR_HEIGHT - 5, label, css, LABEL_WIDTH,
                max(1, round(value / top * span)), BAR_HEIGHT, label, value,
                LABEL_WIDTH + max(1, round(value / top * span)) + 4, BAR_HEIGHT - 5, value,
            )
            for i, (label, value) in enumerate(rows)
        ),
    )  # fmt: skip
    return format_html(
        '<svg class="chart" role="img" aria-label="{}" viewBox="0 0 {} {}" width="{}" height="{}" '
        'xmlns="http://www.w3.org/2000/svg"><title>{}</title>{}</svg>',
        title, CHART_WIDTH, height, CHART_WIDTH, height, title, bars,
    )  # fmt: skip


def _n(value: float) -> str:
    """A coordinate, to a tenth of a pixel."""
    return f"{value:.1f}"


@dataclass(frozen=True)
class Series:
    name: str
    css: str
    values: Sequence[int]


def stacked_columns(title: str, labels: Sequence[str], series: Sequence[Series], *, every: int = 7) -> SafeString:
    """One column per label (a day), the series stacked; a label under every ``every``-th column."""
    width, height, bottom, left = 620, 160, 22, 34
    totals = [sum(s.values[i] for s in series) for i in range(len(labels))]
    top = max(totals, default=0) or 1
    step = (width - left) / max(len(labels), 1)
    scale = (height - bottom - 8) / top
    parts: list[SafeString] = []
    for i, label in enumerate(labels):
        y = float(height - bottom)
        for one in series:
            value = one.values[i]
            if not value:
                continue
            bar = value * scale
            y -= bar
            parts.append(
                format_html(
                    '<rect class="chart-{}" x="{}" y="{}" width="{}" height="{}"><title>{}: {} {}</title></rect>',
                    one.css,
                    _n(left + i * step + 1),
                    _n(y),
                    _n(max(step - 2, 1)),
                    _n(bar),
                    label,
                    value,
                    one.name,
                )
            )
        if (len(labels) - 1 - i) % every == 0:  # counted back from the last, which is always labelled
            parts.append(
                format_html(
                    '<text class="chart-label" x="{}" y="{}" text-anchor="{}">{}</text>',
                    _n(left + i * step + step / 2),
                    height - 6,
                    "end" if i == len(labels) - 1 else "middle",
                    label,
                )
            )
    axis = format_html(
        '<text class="chart-label" x="{}" y="12" text-anchor="end">{}</text>'
        '<line class="chart-axis" x1="{}" y1="{}" x2="{}" y2="{}"/>',
        left - 4, top, left, height - bottom, width, height - bottom,
    )  # fmt: skip
    legend = format_html_join(
        " ", '<span class="legend"><span class="swatch chart-{}"></span>{}</span>', ((s.css, s.name) for s in series)
    )
    svg = format_html(
        '<svg class="chart" role="img" aria-label="{}" viewBox="0 0 {} {}" width="{}" height="{}" '
        'xmlns="http://www.w3.org/2000/svg"><title>{}</title>{}{}</svg>',
        title, width, height, width, height, title, axis, mark_safe("".join(parts)),  # noqa: S308 - each part is format_html
    )  # fmt: skip
    return format_html('{}<div class="chart-legend">{}</div>', svg, legend)
