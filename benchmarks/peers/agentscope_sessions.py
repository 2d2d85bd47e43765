"""AgentScope 1.x JSONSession over many turns, and loading it (run with the anchors' venv_agentscope1).

What an AgentScope app saves after each reply: ``save_session_state(session_id, agent=...)``,
the whole state of its modules. Here one ``StateModule`` holds the same 1 MB state as
``bench_sessions.py`` (``states.flat_1mb``, one key changed per turn) and an ``InMemoryMemory``
that gains a turn's four messages (the user's, the tool call, the tool result, the answer) each
turn. The AgentScope agent loop itself is not run (the anchor harness does not measure its
per-turn cost): per turn only the changes and the save are timed. Loading: a fresh
``JSONSession`` and fresh modules, after ``--load-at`` turns. JSONSession writes the file through
aiofiles and does not fsync.

    ANCHORS=/tmp/anchors $ANCHORS/venv_agentscope1/bin/python benchmarks/peers/agentscope_sessions.py
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(BENCH))
sys.path.insert(0, os.environ.get("ANCHORS", "/tmp/anchors"))

import common  # noqa: E402  (the anchor harness: network guard)

common.install_netguard()

from importlib.metadata import version  # noqa: E402
from typing import Any  # noqa: E402

import measure  # noqa: E402
import states  # noqa: E402
from agentscope.memory import InMemoryMemory  # noqa: E402
from agentscope.message import Msg, TextBlock, ToolResultBlock, ToolUseBlock  # noqa: E402
from agentscope.module import StateModule  # noqa: E402
from agentscope.session import JSONSession  # noqa: E402


class BenchAgent(StateModule):
    """The saved parts of an agent: its state data and its memory."""

    def __init__(self, data: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.data = data
        self.memory = InMemoryMemory()
        self.register_state("data")


def turn_messages(turn: int, name: str, arguments: dict[str, Any]) -> list[Msg]:
    call_id = f"call_{turn}"
    return [
        Msg("user", "change one key", "user"),
        Msg("bench", [ToolUseBlock(type="tool_use", id=call_id, name=name, input=arguments)], "assistant"),
        Msg(
            "system",
            [
                ToolResultBlock(
                    type="tool_result",
                    id=call_id,
                    name=name,
                    output=[TextBlock(type="text", text=f"{arguments['key']} set")],
                )
            ],
            "system",
        ),
        Msg("bench", "done", "assistant"),
    ]


async def load_times(session_dir: str, expect: BenchAgent, reps: int) -> dict[str, Any]:
    wall, cpu = [], []
    for _ in range(reps):
        session = JSONSession(save_dir=session_dir)
        fresh = BenchAgent()
        c0, t0 = time.process_time_ns(), time.perf_counter_ns()
        await session.load_session_state("bench", agent=fresh)
        wall.append((time.perf_counter_ns() - t0) / 1e6)
        cpu.append((time.process_time_ns() - c0) / 1e6)
        assert fresh.data == expect.data and len(fresh.memory.content) == len(expect.memory.content)
    return {
        "turns": len(expect.memory.content) // 4,
        "wall_ms": measure.summary(wall),
        "cpu_ms": measure.summary(cpu),
    }


async def run(turns: int, load_at: list[int], load_reps: int, session_dir: str) -> dict[str, Any]:
    session = JSONSession(save_dir=session_dir)
    agent = BenchAgent(states.flat_1mb())
    rows: dict[str, list[float]] = {"turn": [], "save": [], "save_cpu": []}
    loads = []
    pc, pt = time.perf_counter_ns, time.process_time_ns
    for i in range(1, turns + 1):
        t0 = pc()
        name, arguments = states.tool_call_for("flat_one", i)
        states.apply_tool(agent.data, name, arguments)
        await agent.memory.add(turn_messages(i, name, arguments))
        c1, t1 = pt(), pc()
        await session.save_session_state("bench", agent=agent)
        t2, c2 = pc(), pt()
        rows["turn"].append((t2 - t0) / 1e6)
        rows["save"].append((t2 - t1) / 1e6)
        rows["save_cpu"].append((c2 - c1) / 1e6)
        if i in load_at:
            loads.append(await load_times(session_dir, agent, load_reps))
    size = sum(os.path.getsize(os.path.join(session_dir, f)) for f in os.listdir(session_dir))
    return {
        "turns": turns,
        "turn_ms": measure.summary(rows["turn"]),
        "save_ms": measure.summary(rows["save"]),
        "save_cpu_ms": measure.summary(rows["save_cpu"]),
        "save_ms_first_100": measure.summary(rows["save"][:100])["median"],
        "save_ms_last_100": measure.summary(rows["save"][-100:])["median"],
        "bytes_on_disk": size,
        "loads": loads,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--turns", type=int, default=1000)
    p.add_argument("--load-at", type=int, nargs="*", default=[100, 1000])
    p.add_argument("--load-reps", type=int, default=5)
    p.add_argument("--out", default=None)
    args = p.parse_args()
    logging.getLogger("as").setLevel(logging.WARNING)  # one INFO line per save otherwise
    out: dict[str, Any] = {
        "framework": "agentscope",
        "version": version("agentscope"),
        "store": "JSONSession",
        "loadavg_start": measure.loadavg(),
    }
    with tempfile.TemporaryDirectory(prefix="agentnb-bench-agentscope-") as tmp:
        out["autosave"] = a = asyncio.run(run(args.turns, args.load_at, args.load_reps, tmp))
    out["loadavg_end"] = measure.loadavg()
    out["net"] = common.net_report()
    print(
        f"agentscope JSONSession save per turn over {a['turns']} turns: median {a['save_ms']['median']:.1f} ms "
        f"p99 {a['save_ms']['p99']:.1f} max {a['save_ms']['max']:.1f}, CPU {a['save_cpu_ms']['median']:.1f} ms "
        f"(first 100 {a['save_ms_first_100']:.1f}, last 100 {a['save_ms_last_100']:.1f}); {a['bytes_on_disk'] / 1e6:.1f} MB on disk",
        flush=True,
    )
    for load in a["loads"]:
        print(
            f"agentscope JSONSession load after {load['turns']:5d} turns: {load['wall_ms']['median']:.1f} ms "
            f"[{load['wall_ms']['min']:.1f}–{load['wall_ms']['max']:.1f}] (CPU {load['cpu_ms']['median']:.1f})",
            flush=True,
        )
    measure.write_json(args.out, "sessions_agentscope_scale", out)


if __name__ == "__main__":
    main()
