"""What a pause and a continue cost against the same turn unpaused, in one process.

The turn: one tool call, then the answer; the fake model answers at once. Cases, interleaved
round by round so the machine's load hits them alike:

- ``plain``: the tool needs no approval (the baseline);
- ``paused``: the tool requires approval: ``run`` pauses, the item is approved, ``continue_run``
  carries the same turn on (both calls timed together);
- ``plain+session`` / ``paused+session``: the same with a JSONSession autosaving beside it (a
  paused turn is saved when it pauses and again when it goes on);
- ``reloaded``: the paused turn continued by a new agent loaded from the session (the load
  included), as after a kernel restart.

Medians of ``--n`` turns after a warm-up; nothing asserts a time.

    .venv/bin/python benchmarks/bench_pauses.py --n 300
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def build(approval: bool, folder: Path | None, name: str) -> Any:
    from agentnb import Agent, ScriptedModel, tool, tool_call
    from agentnb.sessions import JSONSession

    @tool(requires_approval=approval)
    def add_item(item: str, session_state) -> str:  # type: ignore[no-untyped-def]
        """Add an item to the list kept in session state."""
        session_state["items"].append(item)
        return f"added {item}"

    def reply(request: Any) -> Any:
        return "done" if request.messages[-1]["role"] == "tool" else tool_call("add_item", item="x")

    session = JSONSession(folder) if folder is not None else None
    return Agent(
        name,
        ScriptedModel(reply, stream=False),
        tools=[add_item],
        session_state={"items": []},
        session=session,
    )


def turn(agent: Any) -> None:
    result = agent.run("add x")
    if result.status == "paused":
        result.pending[0].approve()
        result = agent.continue_run()
    assert result.content == "done", result.content
    agent.model.requests.clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        agents = {
            "plain": build(False, None, "plain"),
            "paused": build(True, None, "paused"),
            "plain+session": build(False, root, "plain_s"),
            "paused+session": build(True, root, "paused_s"),
        }
        times: dict[str, list[float]] = {name: [] for name in [*agents, "reloaded"]}
        for i in range(args.warmup + args.n):
            for name, agent in agents.items():
                started = time.perf_counter()
                turn(agent)
                if i >= args.warmup:
                    times[name].append(time.perf_counter() - started)
            if i < args.n // 10 + args.warmup:  # the reload case: fewer (each loads a session)
                times["reloaded"].append(reloaded(root / f"r{i}") * (1 if i >= args.warmup else -1))
    times["reloaded"] = [t for t in times["reloaded"] if t >= 0]
    base = statistics.median(times["plain"])
    print(f"{'case':16} {'median ms':>10} {'× plain':>8}   (n)")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:16} {median * 1000:10.3f} {median / base:8.2f}   ({len(values)})")


def reloaded(folder: Path) -> float:
    """A paused turn saved, then continued by a new agent loaded from the session (timed)."""
    first = build(True, folder, "again")
    first.run("add x")
    started = time.perf_counter()
    again = build(True, folder, "again")
    again.pending[0].approve()
    result = again.continue_run()
    elapsed = time.perf_counter() - started
    assert result.content == "done"
    return elapsed


if __name__ == "__main__":
    main()
