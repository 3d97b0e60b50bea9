"""Geometry for the small server-rendered SVG charts; templates only draw what this computes."""

from dataclasses import dataclass


def _colour(value: float | None) -> str:
    """Red (≤ 0) through yellow to green (1); grey when undefined."""
    if value is None:
        return "#d9dde3"
    v = max(0.0, min(1.0, value))
    if v < 0.5:
        r, g = 220, int(80 + 2 * v * 140)
    else:
        r, g = int(220 - (v - 0.5) * 2 * 170), 200
    return f"rgb({r},{g},90)"


@dataclass
class Cell:
    x: int
    y: int
    size: int
    fill: str
    text: str
    title: str


def heatmap(
    labels: list[str],
    values: dict[tuple[str, str], tuple[float | None, int]],
    *,
    cell: int = 46,
    margin: int = 80,
) -> dict:
    """A symmetric matrix of (value, n) per pair of labels."""
    cells = []
    for i, a in enumerate(labels):
        for j, b in enumerate(labels):
            if a == b:
                cells.append(
                    Cell(margin + j * cell, margin + i * cell, cell - 2, "#f0f2f5", "—", a)
                )
                continue
            value, n = values.get((a, b)) or values.get((b, a)) or (None, 0)
            text = "n/a" if value is None else f"{value:.2f}"
            cells.append(
                Cell(
                    margin + j * cell,
                    margin + i * cell,
                    cell - 2,
                    _colour(value),
                    text,
                    f"{a} × {b}: κ = {text}, n = {n}",
                )
            )
    size = margin + cell * len(labels) + 10
    return {
        "width": size,
        "height": size,
        "cells": cells,
        "row_labels": [
            {"x": margin - 6, "y": margin + i * cell + cell // 2 + 4, "text": a}
            for i, a in enumerate(labels)
        ],
        "col_labels": [
            {"x": margin + j * cell + cell // 2, "y": margin - 8, "text": b}
            for j, b in enumerate(labels)
        ],
    }


def bars(
    items: list[tuple[str, float]],
    *,
    width: int = 520,
    bar: int = 22,
    label_width: int = 170,
    percent: bool = True,
) -> dict:
    """Horizontal bars, one per (label, value); values are shares (0–1) when `percent`."""
    top = max((v for _, v in items), default=0) or 1
    rows = []
    for i, (label, value) in enumerate(items):
        length = int((width - label_width - 60) * value / top)
        rows.append(
            {
                "y": i * (bar + 6),
                "label": label,
                "length": length,
                "text": f"{100 * value:.0f}%" if percent else f"{value:g}",
                "text_x": label_width + length + 6,
                "bar_y": i * (bar + 6) + bar // 2 + 4,
            }
        )
    return {
        "width": width,
        "height": max(1, len(items)) * (bar + 6),
        "rows": rows,
        "label_width": label_width,
        "bar": bar,
    }


def scatter(
    points: list[tuple[float, float]],
    *,
    width: int = 420,
    height: int = 300,
    x_range=(0.0, 1.0),
    y_range=(1.0, 5.0),
    pad: int = 36,
) -> dict:
    """Points scaled into a box with axes, for similarity (x) against mean rating (y)."""
    (x0, x1), (y0, y1) = x_range, y_range

    def sx(x):
        return pad + (width - 2 * pad) * (x - x0) / ((x1 - x0) or 1)

    def sy(y):
        return height - pad - (height - 2 * pad) * (y - y0) / ((y1 - y0) or 1)

    return {
        "width": width,
        "height": height,
        "pad": pad,
        "points": [{"x": round(sx(x), 1), "y": round(sy(y), 1)} for x, y in points],
        "x_axis_y": height - pad,
        "y_axis_x": pad,
        "x_ticks": [
            {"x": round(sx(x0 + (x1 - x0) * t / 4), 1), "text": f"{x0 + (x1 - x0) * t / 4:.2f}"}
            for t in range(5)
        ],
        "y_ticks": [{"y": round(sy(v), 1), "text": f"{v:g}"} for v in range(int(y0), int(y1) + 1)],
    }
