"""Agno with a session database: autosave over many turns and loading the session (anchors' venv).

The agent of ``bench_sessions.py`` in Agno: the same 1 MB state (``states.flat_1mb``), one key
changed per turn by a tool, the fake model of ``agno_turns.py``, ``db=SqliteDb(...)`` (Agno saves
the session and the run at the end of every ``run``). Each turn is timed whole; inside it the
database writes (``upsert_session`` + ``upsert_run``, wall and process CPU). Loading: a fresh
``SqliteDb`` on the same file and ``get_session`` (what ``Agent.run`` calls to read a session),
after ``--load-at`` turns. Agno stores the session state in every run's row (1 MB per turn
here), so ``--turns 1000`` writes about 1 GB (and a load needs several GB of RAM); the default is 300.

    ANCHORS=/tmp/anchors $ANCHORS/venv/bin/python benchmarks/peers/agno_sessions.py --turns 300
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(BENCH))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, os.environ.get("ANCHORS", "/tmp/anchors"))

import common  # noqa: E402  (the anchor harness: network guard)

common.install_netguard()

from importlib.metadata import version  # noqa: E402
from typing import Any  # noqa: E402

import agno_turns  # noqa: E402
import measure  # noqa: E402
import states  # noqa: E402
from agno.db.base import SessionType  # noqa: E402
from agno.db.sqlite import SqliteDb  # noqa: E402


def timed_db(db: Any, acc: dict[str, int]) -> None:
    """Add the wall and CPU time of every session/run write to ``acc``."""
    for name in ("upsert_session", "upsert_run"):
        real = getattr(db, name)

        def wrapper(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
            c0, t0 = time.process_time_ns(), time.perf_counter_ns()
            try:
                return _real(*args, **kwargs)
            finally:
                acc["wall"] += time.perf_counter_ns() - t0
                acc["cpu"] += time.process_time_ns() - c0

        setattr(db, name, wrapper)


def load_times(path: str, expect_runs: int, expect_state: dict[str, Any], reps: int) -> dict[str, Any]:
    wall, cpu = [], []
    for _ in range(reps):
        db = SqliteDb(db_file=path)
        c0, t0 = time.process_time_ns(), time.perf_counter_ns()
        session = db.get_session(session_id="bench", session_type=SessionType.AGENT)
        wall.append((time.perf_counter_ns() - t0) / 1e6)
        cpu.append((time.process_time_ns() - c0) / 1e6)
        assert len(session.runs or []) == expect_runs, (len(session.runs or []), expect_runs)
        assert session.session_data["session_state"] == expect_state
    return {"turns": expect_runs, "wall_ms": measure.summary(wall), "cpu_ms": measure.summary(cpu)}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--turns", type=int, default=300)
    p.add_argument("--load-at", type=int, nargs="*", default=[10, 100, 300, 1000])
    p.add_argument("--load-reps", type=int, default=3)
    p.add_argument("--out", default=None)
    args = p.parse_args()
    clock = measure.ModelClock()
    out: dict[str, Any] = {
        "framework": "agno",
        "version": version("agno"),
        "store": "SqliteDb",
        "loadavg_start": measure.loadavg(),
    }
    with tempfile.TemporaryDirectory(prefix="agentnb-bench-agno-") as tmp:
        path = os.path.join(tmp, "agno.db")
        agent, turn_no = agno_turns.make_agent("flat_one", clock, "none")
        agent.db = SqliteDb(db_file=path)
        agent.session_id = "bench"
        acc = {"wall": 0, "cpu": 0}
        timed_db(agent.db, acc)
        rows: dict[str, list[float]] = {k: [] for k in ("turn", "turn_cpu", "model", "save", "save_cpu")}
        loads = []
        pc, pt = time.perf_counter_ns, time.process_time_ns
        for i in range(1, args.turns + 1):
            acc["wall"] = acc["cpu"] = 0
            m0 = clock.ns
            c0, t0 = pt(), pc()
            r = agent.run("change one key")
            t1, c1 = pc(), pt()
            assert r.content == "done after 1 tool calls", r.content
            name, arguments = states.tool_call_for("flat_one", turn_no[0])
            assert r.session_state[arguments["key"]]["n"] == arguments["n"]
            for key, value in (
                ("turn", t1 - t0),
                ("turn_cpu", c1 - c0),
                ("model", clock.ns - m0),
                ("save", acc["wall"]),
                ("save_cpu", acc["cpu"]),
            ):
                rows[key].append(value / 1e6)
            if i in args.load_at:
                loads.append(load_times(path, i, r.session_state, args.load_reps))
        size = sum(os.path.getsize(os.path.join(tmp, f)) for f in os.listdir(tmp))
    out["autosave"] = {
        "turns": args.turns,
        "turn_ms": measure.summary(rows["turn"]),
        "turn_cpu_ms": measure.summary(rows["turn_cpu"]),
        "turn_without_save_ms": measure.summary([t - s for t, s in zip(rows["turn"], rows["save"])]),
        "model_ms": measure.summary(rows["model"]),
        "save_ms": measure.summary(rows["save"]),
        "save_cpu_ms": measure.summary(rows["save_cpu"]),
        "bytes_on_disk": size,
        "loads": loads,
    }
    out["loadavg_end"] = measure.loadavg()
    out["net"] = common.net_report()
    a = out["autosave"]
    print(
        f"agno SqliteDb autosave over {a['turns']} turns: turn median {a['turn_ms']['median']:.1f} ms p99 {a['turn_ms']['p99']:.1f} "
        f"max {a['turn_ms']['max']:.1f} (without the save {a['turn_without_save_ms']['median']:.1f}); save median "
        f"{a['save_ms']['median']:.1f} ms CPU {a['save_cpu_ms']['median']:.1f} ms; {size / 1e6:.0f} MB on disk",
        flush=True,
    )
    for load in loads:
        print(
            f"agno SqliteDb load after {load['turns']:5d} turns: {load['wall_ms']['median']:.1f} ms "
            f"[{load['wall_ms']['min']:.1f}–{load['wall_ms']['max']:.1f}] (CPU {load['cpu_ms']['median']:.1f})",
            flush=True,
        )
    measure.write_json(args.out, "sessions_agno_scale", out)


if __name__ == "__main__":
    main()
