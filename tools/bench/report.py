"""Write a run's results: ``results.json``, ``results.md`` (the tables) and ``chart.png``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["LIONAGI_TARGETS", "evaluate_targets", "write"]

CONTENDER_ORDER = ("lionmem", "floor", "lionagi", "langgraph")
LABELS = {
    "lionmem": "lionmem",
    "floor": "Python floor",
    "lionagi": "lionagi 0.36.0",
    "langgraph": "LangGraph",
}
COLORS = {"lionmem": "#1f77b4", "floor": "#7f7f7f", "lionagi": "#d62728", "langgraph": "#2ca02c"}
STORE_TARGET = 1.5  # store and retrieve: at most this many times the floor
SEARCH_TARGET = 1.3  # every search: at most this many times the floor (the same loop)
CONSTRUCTION_TARGET = 1.5  # MemoryItem(...): at most this many times a plain Pydantic model
LIONAGI_TARGETS = {
    # operation: how many times faster than lionagi 0.36.0 lionmem must be, at least
    "store": 100.0,
    "retrieve hit": 25.0,
    "retrieve miss": 25.0,
    "search empty, limit 20": 100.0,
    "search tags": 100.0,
    "search filters": 50.0,
    "search text ~1%": 50.0,
    "search text ~8%": 50.0,
}


def _target(op: str) -> float:
    return STORE_TARGET if op.startswith(("store", "retrieve")) else SEARCH_TARGET


def evaluate_targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Every target at the largest size measured, with the measured value and a verdict.

    Floor and construction targets are ceilings on a ratio (``value <= limit``); lionagi
    targets are floors on a speed-up, lionagi's time over lionmem's (``value >= limit``).
    """
    size = max(results["sizes"], key=int)
    ops = results["sizes"][size]["ops"]
    rows: list[dict[str, Any]] = []
    for op, entry in ops.items():
        ratio = entry["ratios"]["lionmem/floor"]
        limit = _target(op)
        rows.append(
            {
                "target": f"{op} <= {limit}x floor",
                "kind": "ratio",
                "n": int(size),
                "value": ratio,
                "limit": limit,
                "met": ratio <= limit,
            }
        )
    for op, wanted in LIONAGI_TARGETS.items():
        speedup = 1 / ops[op]["ratios"]["lionmem/lionagi"]
        rows.append(
            {
                "target": f"{op} >= {wanted:g}x faster than lionagi",
                "kind": "speedup",
                "n": int(size),
                "value": speedup,
                "limit": wanted,
                "met": speedup >= wanted,
            }
        )
    for form, entry in results.get("construction", {}).items():
        ratio = entry["ratios"]["lionmem/plain pydantic"]
        rows.append(
            {
                "target": f"MemoryItem({form}) <= {CONSTRUCTION_TARGET}x plain Pydantic",
                "kind": "ratio",
                "n": None,
                "value": ratio,
                "limit": CONSTRUCTION_TARGET,
                "met": ratio <= CONSTRUCTION_TARGET,
            }
        )
    return rows


def _us(ns: float | None) -> str:
    if ns is None:
        return "n/a"
    us = ns / 1000
    if us >= 100:
        return f"{us:,.0f}"
    if us >= 10:
        return f"{us:.1f}"
    return f"{us:.2f}"


def _ratio(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.2f}x" if value >= 0.1 else f"{value:.3f}x"


def _speedup(ratio: float | None) -> str:
    """lionagi's time over lionmem's, from the ratio lionmem / lionagi."""
    if ratio is None:
        return "n/a"
    value = 1 / ratio
    return f"{value:,.0f}x" if value >= 10 else f"{value:.1f}x"


def _size_table(size: str, entry: dict[str, Any], largest: bool) -> list[str]:
    head = "| operation | lionmem µs | floor µs | lionagi µs | LangGraph µs | lionmem / floor |"
    head += " lionagi / lionmem | lionmem / LangGraph |"
    rule = "|---|---:|---:|---:|---:|---:|---:|---:|"
    if largest:
        head += " target | met |"
        rule += "---:|:---:|"
    lines: list[str] = [f"### N = {int(size):,}", "", head, rule]
    for op, data in entry["ops"].items():
        medians = {
            name: data["contenders"].get(name, {}).get("median_ns") for name in CONTENDER_ORDER
        }
        ratios = data["ratios"]
        cells = [
            op,
            *(_us(medians[name]) for name in CONTENDER_ORDER),
            _ratio(ratios.get("lionmem/floor")),
            _speedup(ratios.get("lionmem/lionagi")),
            _ratio(ratios.get("lionmem/langgraph")),
        ]
        if largest:
            limit = _target(op)
            cells += [f"≤ {limit}x", "yes" if ratios["lionmem/floor"] <= limit else "**no**"]
        lines.append("| " + " | ".join(cells) + " |")
    memory = entry["memory_bytes_per_item"]
    per_item = ", ".join(
        f"{LABELS[name]} {memory[name]:,.0f}" for name in CONTENDER_ORDER if name in memory
    )
    lines += ["", f"Memory per stored item, bytes (tracemalloc, beyond the items): {per_item}."]
    return [*lines, ""]


def markdown(results: dict[str, Any]) -> str:
    """The Markdown report: machine, targets, then one table per size, construction last."""
    meta = results["meta"]
    sizes = sorted(results["sizes"], key=int, reverse=True)
    lines = [
        "# InMemoryStore benchmark",
        "",
        f"Machine: {meta['machine']}. Python {meta['python']}, pydantic {meta['pydantic']}, "
        f"lionagi {meta['lionagi']}, LangGraph store (langgraph-checkpoint) {meta['langgraph']}. "
        f"Seed {meta['seed']}, commit {meta['commit']}, {meta['date']}, "
        f"run time {meta['seconds']:.0f} s, clock: {meta['clock']}. "
        f"Reproduce: `{meta['command']}`.",
        "",
        "Medians of per-call times over interleaved samples (µs per call; each sample averages "
        "many calls). Ratios are taken between medians of the same run. The floor is a plain "
        "Python dict and one hand-written loop per search that stops after `limit` matches; "
        "lionagi / lionmem is how many times faster lionmem is than lionagi 0.36.0; "
        "`n/a` marks an operation a contender has no equivalent for.",
        "",
        "## Targets",
        "",
        "| target | N | measured | met |",
        "|---|---:|---:|:---:|",
    ]
    for row in results["targets"]:
        value = row["value"]
        shown = _speedup(1 / value) if row["kind"] == "speedup" else _ratio(value)
        n = "n/a" if row["n"] is None else f"{row['n']:,}"
        lines.append(f"| {row['target']} | {n} | {shown} | {'yes' if row['met'] else '**no**'} |")
    lines += ["", "## Operations", ""]
    for size in sizes:
        lines += _size_table(size, results["sizes"][size], size == sizes[0])
    lines += ["## MemoryItem construction", ""]
    lines += [
        "| call | lionmem µs | plain Pydantic µs | lionagi µs | lionmem / plain | lionmem / lionagi |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for form, entry in results.get("construction", {}).items():
        medians = {name: value["median_ns"] for name, value in entry["contenders"].items()}
        lines.append(
            f"| MemoryItem({form}) | {_us(medians['lionmem'])} | {_us(medians['plain pydantic'])} "
            f"| {_us(medians['lionagi'])} | {_ratio(entry['ratios']['lionmem/plain pydantic'])} "
            f"| {_ratio(entry['ratios']['lionmem/lionagi'])} |"
        )
    return "\n".join(lines) + "\n"


def chart(results: dict[str, Any], path: Path) -> None:
    """Per operation at the largest size: time per call of each contender (log scale), and lionmem / floor."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    size = max(results["sizes"], key=int)
    ops = results["sizes"][size]["ops"]
    names = list(ops)
    fig, (left, right) = plt.subplots(
        1, 2, figsize=(13, 0.5 * len(names) + 1.8), sharey=True, width_ratios=(3, 2)
    )
    height = 0.2
    for slot, contender in enumerate(CONTENDER_ORDER):
        ys, xs = [], []
        for row, op in enumerate(names):
            found = ops[op]["contenders"].get(contender)
            if found is not None:
                ys.append(row + (slot - 1.5) * height)
                xs.append(found["median_ns"] / 1000)
        left.barh(ys, xs, height=height, color=COLORS[contender], label=LABELS[contender])
    left.set_xscale("log")
    left.set_xlabel("µs per call (log scale)")
    left.set_yticks(range(len(names)), names)
    left.invert_yaxis()
    handles, labels = left.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize="small")
    left.grid(axis="x", which="major", alpha=0.3)
    left.set_title(f"Time per call, N = {int(size):,}")
    ratios = [ops[op]["ratios"]["lionmem/floor"] for op in names]
    limits = [_target(op) for op in names]
    right.barh(
        range(len(names)),
        ratios,
        height=0.6,
        color=[
            COLORS["lionmem"] if r <= t else "#ff7f0e" for r, t in zip(ratios, limits, strict=True)
        ],
    )
    for row, (value, limit) in enumerate(zip(ratios, limits, strict=True)):
        right.plot([limit, limit], [row - 0.4, row + 0.4], color="black", linewidth=1.5)
        right.text(value, row, f" {value:.2f}x", va="center", fontsize="small")
    right.axvline(1.0, color=COLORS["floor"], linestyle=":", linewidth=1)
    right.set_xlabel("lionmem / floor (tick: target; orange: missed)")
    right.set_title("Ratio to the Python floor")
    right.set_xlim(0, max(2.0, max(ratios) * 1.25))
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write(results: dict[str, Any], out: Path) -> list[Path]:
    """Write the three outputs into ``out`` and return their paths."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "results.json", out / "results.md", out / "chart.png"]
    paths[0].write_text(json.dumps(results, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    paths[1].write_text(markdown(results), encoding="utf-8")
    chart(results, paths[2])
    return paths
