"""Timing and memory helpers shared by agentnb's benchmarks and the other frameworks' scripts.

Standard library only (``benchmarks/peers/`` import it from the anchors' venvs). Nothing here
asserts a time: the benchmarks report, they never pass or fail on speed.
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any


def percentile(sorted_values: list[float], q: float) -> float:
    """The ``q`` quantile (0–1) by the nearest-rank rule (the anchor harness's p95 rule)."""
    n = len(sorted_values)
    return sorted_values[min(n - 1, max(0, int(round(q * n)) - 1))]


def summary(values: list[float]) -> dict[str, float]:
    """Median, p95, p99, min, max and mean of ``values`` (same unit in, same unit out)."""
    s = sorted(values)
    return {
        "n": len(s),
        "median": statistics.median(s),
        "p95": percentile(s, 0.95),
        "p99": percentile(s, 0.99),
        "min": s[0],
        "max": s[-1],
        "mean": statistics.fmean(s),
    }


class ModelClock:
    """Time spent inside the fake model, so it can be reported apart from the framework's."""

    def __init__(self) -> None:
        self.ns = 0

    def timed(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """``fn`` with its time added to this clock."""

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter_ns()
            try:
                return fn(*args, **kwargs)
            finally:
                self.ns += time.perf_counter_ns() - t0

        return wrapper

    def timed_iter(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """A generator function ``fn`` with its time added to this clock (its items are produced
        inside the timing, then handed on)."""

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter_ns()
            try:
                items = list(fn(*args, **kwargs))
            finally:
                self.ns += time.perf_counter_ns() - t0
            yield from items

        return wrapper


def run_series(
    turn: Callable[[], Any], check: Callable[[Any], None], n: int, warmup: int, clock: ModelClock
) -> dict[str, Any]:
    """Call ``turn()`` ``warmup`` + ``n`` times; per measured turn: wall, process CPU, and the
    fake model's share of the wall time. ``check`` runs after every turn, outside the timing."""
    for _ in range(warmup):
        check(turn())
    gc.collect()
    wall: list[float] = []
    cpu: list[float] = []
    model: list[float] = []
    pc, pt = time.perf_counter_ns, time.process_time_ns
    for _ in range(n):
        m0 = clock.ns
        c0 = pt()
        t0 = pc()
        result = turn()
        t1 = pc()
        c1 = pt()
        wall.append((t1 - t0) / 1e6)
        cpu.append((c1 - c0) / 1e6)
        model.append((clock.ns - m0) / 1e6)
        check(result)
    framework = [w - m for w, m in zip(wall, model)]
    return {
        "wall_ms": summary(wall),
        "cpu_ms": summary(cpu),
        "model_ms": summary(model),
        "framework_ms": summary(framework),
    }


def retained_per_turn(turn: Callable[[], Any], check: Callable[[Any], None], n: int) -> dict[str, float]:
    """Memory still allocated after ``n`` more turns (history kept as the framework keeps it),
    per turn, measured with tracemalloc; and the peak above the start during those turns."""
    gc.collect()
    tracemalloc.start()
    try:
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        for _ in range(n):
            check(turn())
        gc.collect()
        after, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return {
        "turns": n,
        "retained_bytes_per_turn": (after - before) / n,
        "peak_above_start_bytes": peak - before,
    }


def profile_turns(
    turn: Callable[[], Any], check: Callable[[Any], None], n: int, package: str, top: int = 12
) -> str:
    """Where the time and the retained memory of ``n`` turns go: cProfile's functions (own time
    and cumulative time, those of ``package`` first) and tracemalloc's allocation sites still
    alive after the turns, each with its innermost ``package`` frames."""
    import cProfile
    import io
    import pstats

    lines: list[str] = []
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(n):
        check(turn())
    profiler.disable()
    for order in ("tottime", "cumulative"):
        buf = io.StringIO()
        stats = pstats.Stats(profiler, stream=buf).sort_stats(order)
        stats.print_stats(package, top) if order == "cumulative" else stats.print_stats(top)
        lines.append(
            f"-- cProfile, {n} turns, by {order}" + (f" ({package} only)" if order == "cumulative" else "")
        )
        lines += [
            line
            for line in buf.getvalue().splitlines()
            if line.strip() and not line.startswith(("   Ordered", "   List"))
        ][1:]
    gc.collect()
    tracemalloc.start(30)
    try:
        before = tracemalloc.take_snapshot()
        for _ in range(n):
            check(turn())
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    lines.append(
        f"-- retained after {n} turns, by allocation site (bytes per turn; innermost {package} frames)"
    )
    for diff in after.compare_to(before, "traceback")[:top]:
        if diff.size_diff <= 0:
            continue
        frames = [f"{Path(f.filename).name}:{f.lineno}" for f in diff.traceback if package in f.filename]
        lines.append(f"{diff.size_diff / n:12,.0f} B  {' < '.join(frames[-4:][::-1]) or diff.traceback[-1]}")
    return "\n".join(lines)


def loadavg() -> str:
    """The machine's load average now (recorded with every result)."""
    try:
        return Path("/proc/loadavg").read_text().strip()
    except OSError:
        return "?"


def write_json(folder: str | None, name: str, data: dict[str, Any]) -> None:
    """Write one result file ``folder/name.json`` (nothing when ``folder`` is None)."""
    if not folder:
        return
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, f"{name}.json"), "w") as f:
        json.dump(data, f, indent=2, default=str)
