"""Per-turn overhead of agentnb with a zero-cost model (run on demand, not in the test suite).

The same shape as the anchor harness's Agno script: the model answers instantly and counts the
tool results already in the request; while there are fewer than K it asks for one ``add_item``
call, then it answers ``done after K tool calls``. ``add_item`` appends to
``session_state["items"]``. One turn = one ``agent.run(...)`` = K tool calls and K+1 model
calls. After every turn (outside the timed region) the answer and the K items are checked, and
``items`` is reset to ``[]`` so every turn does the same work (as the anchors' agents start from
``{"items": []}``); agentnb records that reset as the user's change at the start of the next turn.

Everything agentnb records stays on: every event, the state diffs (JSON patches), the turn
history (``agent.history`` keeps every turn). Modes:

* ``recording``: the agent alone;
* ``inspector``: the realistic notebook setting, with ``Inspector.for_agent(agent)`` following
  every event, its messages going through ipykernel's real send path (``kernel_stub.py``: the
  kernel's session builds, serialises and signs each one; only ZeroMQ is missing);
* ``inspector-nokernel``: the same without a kernel (the comm layer drops each message after the
  inspector built and encoded it), to see the kernel's share;
* ``inspector-cell``: ``inspector`` with each turn a cell of its own: after every turn IPython's
  ``post_run_cell`` calls the inspector's hook, which refreshes the snapshot trait at once or,
  when the last refresh is less than ``pacing.SNAPSHOT_SECONDS`` old (back-to-back cells, as in
  a Run All), leaves it to ipykernel's event loop between cells; the loop's due callbacks run
  after each cell, timed with it.

    python benchmarks/bench_turns.py --mode inspector --out results/
"""

from __future__ import annotations

import argparse
import gc
import heapq
import itertools
import json
import os
import platform
import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def stats_ms(samples_ns: list[int]) -> dict:
    """Median / p95 / mean in ms (p95 by the same rule as the anchor harness)."""
    s = sorted(samples_ns)
    n = len(s)
    p95 = s[min(n - 1, max(0, int(round(0.95 * n)) - 1))]
    return {
        "n": n,
        "median_ms": statistics.median(s) / 1e6,
        "p95_ms": p95 / 1e6,
        "mean_ms": statistics.fmean(s) / 1e6,
        "min_ms": s[0] / 1e6,
        "max_ms": s[-1] / 1e6,
    }


def run_series(turn, n: int, warmup: int, check) -> dict:
    """Call ``turn()`` warmup + n times; wall and process CPU time of each measured call."""
    for _ in range(warmup):
        check(turn())
    gc.collect()
    wall, cpu = [], []
    pc, pt = time.perf_counter_ns, time.process_time_ns
    for _ in range(n):
        c0 = pt()
        t0 = pc()
        result = turn()
        t1 = pc()
        c1 = pt()
        wall.append(t1 - t0)
        cpu.append(c1 - c0)
        check(result)
    out = stats_ms(wall)
    c = stats_ms(cpu)
    out["cpu_median_ms"] = c["median_ms"]
    out["cpu_p95_ms"] = c["p95_ms"]
    return out


def make_agent(k: int, mode: str) -> tuple[Any, Any, Any]:
    from agentnb import Agent, ScriptedModel, tool_call

    def fake_model(request: Any) -> Any:
        n_done = sum(1 for m in request.messages if m.get("role") == "tool")
        if n_done < k:
            return tool_call("add_item", item=f"item-{n_done}")
        return f"done after {n_done} tool calls"

    def add_item(session_state: dict, item: str) -> str:
        """Add an item to the list kept in session state."""
        session_state["items"].append(item)
        return f"added {item}"

    # Not streamed, like the anchors' fake models (a streamed answer adds one TextDelta a word).
    model = ScriptedModel(fake_model, stream=False)
    agent = Agent("bench", model, tools=[add_item], session_state={"items": []})
    inspector = None
    if mode.startswith("inspector"):
        from agentnb.ipython.inspector import Inspector

        inspector = Inspector.for_agent(agent)
    return agent, model, inspector


def make_turn(agent: Any, model: Any, inspector: Any = None) -> Callable[[], Any]:
    def turn() -> Any:
        return agent.run("please add some items")

    if inspector is None:
        return turn

    # IPython's post_run_cell calls the inspector's hook at each cell's end; what the hook leaves
    # for later (a snapshot refresh in a Run All of quick cells, ``pacing.py``) ipykernel's event
    # loop runs between cells: here the callbacks that came due run after the cell, timed with it.
    due: list[tuple[float, int, Later]] = []
    order = itertools.count()

    def later(delay: float, callback: Callable[[], None]) -> Later:
        handle = Later(callback)
        heapq.heappush(due, (time.monotonic() + delay, next(order), handle))
        return handle

    inspector._pace.later = lambda: later

    def cell() -> Any:
        result = agent.run("please add some items")
        inspector._after_cell()
        now = time.monotonic()
        while due and due[0][0] <= now:
            heapq.heappop(due)[2].fire()
        return result

    return cell


class Later:
    """A callback the loop will call, unless cancelled (``asyncio.TimerHandle``)."""

    def __init__(self, callback: Callable[[], None]) -> None:
        self.callback: Callable[[], None] | None = callback

    def cancel(self) -> None:
        self.callback = None

    def fire(self) -> None:
        if self.callback is not None:
            self.callback()


def make_check(agent: Any, model: Any, k: int) -> Callable[[Any], None]:
    def check(result: Any) -> None:
        assert result.content == f"done after {k} tool calls", result.content
        assert result.state["items"] == [f"item-{i}" for i in range(k)], result.state
        turn = agent.history[-1]
        assert len(turn.tool_calls) == k and turn.status == "ok"
        # The model keeps every request it received; drop them so memory stays flat (the
        # turn record keeps its own copy of every request).
        model.requests.clear()
        agent.session_state["items"] = []

    return check


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--mode",
        choices=["recording", "inspector", "inspector-nokernel", "inspector-cell"],
        default="inspector",
    )
    p.add_argument("--n1", type=int, default=200, help="measured turns for K=1")
    p.add_argument("--n10", type=int, default=50, help="measured turns for K=10")
    p.add_argument("--warmup1", type=int, default=20)
    p.add_argument("--warmup10", type=int, default=5)
    p.add_argument("--tag", default="")
    p.add_argument("--out", default=None, help="folder for the JSON result")
    args = p.parse_args(argv)

    socket = None
    if args.mode in ("inspector", "inspector-cell"):
        import kernel_stub

        socket = kernel_stub.install()
    t0 = time.perf_counter()
    import agentnb

    import_s = time.perf_counter() - t0
    out: dict = {
        "framework": "agentnb",
        "version": agentnb.__version__,
        "mode": args.mode,
        "python": platform.python_version(),
        "in_process_import_s": import_s,
        "loadavg_start": Path("/proc/loadavg").read_text().strip(),
        "turns": {},
    }
    for k, n, w in ((1, args.n1, args.warmup1), (10, args.n10, args.warmup10)):
        agent, model, inspector = make_agent(k, args.mode)
        st = run_series(
            make_turn(agent, model, inspector if args.mode == "inspector-cell" else None),
            n,
            w,
            make_check(agent, model, k),
        )
        st["history_len"] = len(agent.history)
        if inspector is not None:
            st["inspector_messages"] = inspector.messages_sent
            st["inspector_bytes"] = inspector.bytes_sent
            if socket is not None:
                st["wire_messages"], st["wire_bytes"] = socket.messages, socket.bytes
                socket.reset()
            inspector.close()
        out["turns"][f"K{k}"] = st
        print(
            f"agentnb {args.mode} K={k}: median {st['median_ms']:.3f} ms  p95 {st['p95_ms']:.3f} ms | "
            f"cpu median {st['cpu_median_ms']:.3f} ms",
            flush=True,
        )
    out["loadavg_end"] = Path("/proc/loadavg").read_text().strip()
    out["peak_rss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, f"agentnb_{args.mode}{args.tag}.json"), "w") as f:
            json.dump(out, f, indent=2)
    return out


if __name__ == "__main__":
    main()
