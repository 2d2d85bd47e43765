"""Sessions at scale: autosave over a long run, loading a long session, whole save/load (on demand).

1. Autosave over ``--turns`` (1,000) K=1 turns of an agent whose 1 MB state
   (``states.flat_1mb``: 8,500 keys) changes one key per turn through a tool, for the JSON and
   the SQLite backend. Every turn is timed whole (``agent.run``: the turn's own work plus the
   autosave subscriber, and the wait for a background compaction's locked steps and for the
   interpreter it shares); inside it the save (wall and
   process CPU), the time in ``os.fsync`` (the JSON backend calls it from Python; SQLite syncs
   inside its C library, so there only wall − CPU shows the wait) and each compaction.
2. Loading that session into a fresh agent through a fresh session object, after 100 and after
   1,000 turns (``--load-at``): wall time, median of ``--load-reps`` loads.
3. Whole save/load of a 1 MB nested dict and of 10,000 short strings, against a plain
   ``json.dump`` / ``json.load`` of the same data in this process (what AgentScope's
   JSONSession does).

``benchmarks/peers/agno_sessions.py`` and ``peers/agentscope_sessions.py`` do 1 and 2 with
Agno's SqliteDb and AgentScope's JSONSession.

    python benchmarks/bench_sessions.py [--turns 1000] [--json results/sessions_agentnb.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import measure  # noqa: E402
import states  # noqa: E402

from agentnb import Agent, ScriptedModel, tool_call  # noqa: E402
from agentnb.sessions import JSONSession, SQLiteSession, StateModule  # noqa: E402


class Blob(StateModule):
    def __init__(self, value: Any = None) -> None:
        self.value = value
        self.register_state("value")


class Probe:
    """Per-turn figures collected by wrapping the session's save, compaction and ``os.fsync``."""

    def __init__(self) -> None:
        self.save_wall = self.save_cpu = self.fsync = self.compact = 0
        self.compactions = 0
        self.background: list[float] = []
        """Durations of compactions run in a thread, off the turn's path (ms)."""
        self.background_cpu: list[float] = []
        """This process's CPU time for each of them (its thread's: the work done in the fold's
        child process is not in it), which the turns running meanwhile compete with (ms)."""

    def reset(self) -> None:
        self.save_wall = self.save_cpu = self.fsync = self.compact = 0

    def wrap_session(self, session: Any) -> None:
        save, compact = session.append_session_state_sync, session._compact

        def timed_save(*args: Any, **kwargs: Any) -> None:
            c0, t0 = time.process_time_ns(), time.perf_counter_ns()
            try:
                save(*args, **kwargs)
            finally:
                self.save_wall += time.perf_counter_ns() - t0
                self.save_cpu += time.process_time_ns() - c0

        def timed_compact(*args: Any, **kwargs: Any) -> None:
            t0 = time.perf_counter_ns()
            try:
                compact(*args, **kwargs)
            finally:
                self.compact += time.perf_counter_ns() - t0
                self.compactions += 1

        background = session._compact_off_path

        def timed_background(*args: Any, **kwargs: Any) -> None:
            c0, t0 = time.thread_time_ns(), time.perf_counter_ns()
            try:
                background(*args, **kwargs)
            finally:
                self.background.append((time.perf_counter_ns() - t0) / 1e6)
                self.background_cpu.append((time.thread_time_ns() - c0) / 1e6)

        session.append_session_state_sync = timed_save
        session._compact = timed_compact
        session._compact_off_path = timed_background

    def wrap_fsync(self) -> None:
        real = os.fsync

        def timed_fsync(fd: int) -> None:
            t0 = time.perf_counter_ns()
            try:
                real(fd)
            finally:
                self.fsync += time.perf_counter_ns() - t0

        os.fsync = timed_fsync


def make_agent(clock: measure.ModelClock | None, state: dict[str, Any] | None) -> tuple[Agent, list[int]]:
    """The flat_one agent: the fake model asks for one ``set_key`` call per turn."""
    turn_no = [0]

    def fake_model(request: Any) -> Any:
        if not request.tool_results():
            turn_no[0] += 1
            name, arguments = states.tool_call_for("flat_one", turn_no[0])
            return tool_call(name, **arguments)
        return "done"

    def set_key(session_state: dict, key: str, n: int) -> str:
        """Replace one entry of the state."""
        return states.apply_tool(session_state, "set_key", {"key": key, "n": n})

    model = ScriptedModel(fake_model, stream=False)
    if clock is not None:
        model.stream = clock.timed_iter(model.stream)
    return Agent("bench", model, tools=[set_key], session_state=state if state is not None else {}), turn_no


def open_session(kind: str, where: Path) -> Any:
    return JSONSession(where) if kind == "json" else SQLiteSession(where / "sessions.db")


def load_times(kind: str, where: Path, expect: Agent, reps: int) -> dict[str, Any]:
    """Load the saved session into a fresh agent through a fresh session object, ``reps`` times."""
    wall, cpu = [], []
    for _ in range(reps):
        session = open_session(kind, where)
        agent, _ = make_agent(None, None)
        c0, t0 = time.process_time_ns(), time.perf_counter_ns()
        found = session.load_session_state_sync("bench", agent=agent)
        wall.append((time.perf_counter_ns() - t0) / 1e6)
        cpu.append((time.process_time_ns() - c0) / 1e6)
        assert found and len(agent.history) == len(expect.history), (len(agent.history), len(expect.history))
        assert agent.session_state == expect.session_state
        if kind == "sqlite":
            session.close()
    return {"turns": len(expect.history), "wall_ms": measure.summary(wall), "cpu_ms": measure.summary(cpu)}


def autosave(
    kind: str, root: Path, turns: int, load_at: list[int], load_reps: int, probe: Probe
) -> dict[str, Any]:
    where = root / kind
    where.mkdir()
    clock = measure.ModelClock()
    agent, turn_no = make_agent(clock, states.flat_1mb())
    session = open_session(kind, where)
    probe.wrap_session(session)
    agent.attach_session(session, "bench", fresh=True)
    rows: dict[str, list[float]] = {
        k: [] for k in ("turn", "turn_cpu", "model", "save", "save_cpu", "fsync", "compact")
    }
    loads = []
    probe.compactions = 0
    probe.background.clear()
    probe.background_cpu.clear()
    pc, pt = time.perf_counter_ns, time.process_time_ns
    for i in range(1, turns + 1):
        probe.reset()
        m0 = clock.ns
        c0, t0 = pt(), pc()
        result = agent.run("change one key")
        t1, c1 = pc(), pt()
        assert result.content == "done" and agent.history[-1].status == "ok"
        name, arguments = states.tool_call_for("flat_one", turn_no[0])
        assert agent.session_state[arguments["key"]]["n"] == arguments["n"]
        agent.model.requests.clear()  # the fake model's memory, not the framework's
        for key, value in (
            ("turn", t1 - t0),
            ("turn_cpu", c1 - c0),
            ("model", clock.ns - m0),
            ("save", probe.save_wall),
            ("save_cpu", probe.save_cpu),
            ("fsync", probe.fsync),
            ("compact", probe.compact),
        ):
            rows[key].append(value / 1e6)
        if i in load_at:
            loads.append(load_times(kind, where, agent, load_reps))
    session.flush()
    own = [t - s for t, s in zip(rows["turn"], rows["save"])]
    compactions = [c for c in rows["compact"] if c]
    size = sum(f.stat().st_size for f in where.iterdir() if f.is_file())
    if kind == "sqlite":
        session.close()
    return {
        "backend": kind,
        "turns": turns,
        "turn_ms": measure.summary(rows["turn"]),
        "turn_cpu_ms": measure.summary(rows["turn_cpu"]),
        "turn_without_save_ms": measure.summary(own),
        "model_ms": measure.summary(rows["model"]),
        "save_ms": measure.summary(rows["save"]),
        "save_cpu_ms": measure.summary(rows["save_cpu"]),
        "fsync_ms": measure.summary(rows["fsync"]),
        "save_ms_first_100": statistics.median(rows["save"][:100]),
        "save_ms_last_100": statistics.median(rows["save"][-100:]),
        "compactions": len(compactions),
        "compaction_ms": compactions,
        "background_compaction_ms": list(probe.background),
        "background_compaction_cpu_ms": list(probe.background_cpu),
        "bytes_on_disk": size,
        "loads": loads,
    }


def profile(kind: str, root: Path, turns: int) -> None:
    """Print where a load of a ``turns``-turn session and the next turns' saves spend their time."""
    import cProfile
    import io
    import pstats

    where = root / f"profile-{kind}"
    where.mkdir()
    agent, _ = make_agent(None, states.flat_1mb())
    session = open_session(kind, where)
    agent.attach_session(session, "bench", fresh=True)
    for _ in range(turns):
        agent.run("change one key")
        agent.model.requests.clear()
    for what, fn in (
        ("load", lambda: load_times(kind, where, agent, 1)),
        ("20 more turns with their saves", lambda: [agent.run("change one key") for _ in range(20)]),
        ("a compaction", lambda: session.compact("bench")),
    ):
        profiler = cProfile.Profile()
        profiler.enable()
        fn()
        profiler.disable()
        buf = io.StringIO()
        pstats.Stats(profiler, stream=buf).sort_stats("cumulative").print_stats(
            "agentnb|json|sqlite|copy", 25
        )
        print(f"-- {kind}: {what} after {turns} turns (cProfile, cumulative)")
        print("\n".join(line for line in buf.getvalue().splitlines()[6:] if line.strip()))


def whole(value: Any, root: Path, name: str) -> dict[str, float]:
    path = root / f"baseline-{name}.json"
    start = time.perf_counter()
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"blob": {"value": value}}, f, ensure_ascii=False)
    base_save = time.perf_counter() - start
    start = time.perf_counter()
    with open(path, encoding="utf-8") as f:
        json.load(f)
    base_load = time.perf_counter() - start
    session = JSONSession(root / f"whole-{name}")
    start = time.perf_counter()
    session.save_session_state_sync(name, blob=Blob(value))
    save = time.perf_counter() - start
    out = Blob()
    start = time.perf_counter()
    session.load_session_state_sync(name, blob=out)
    load = time.perf_counter() - start
    assert out.value == value
    return {
        "save_ms": save * 1e3,
        "load_ms": load * 1e3,
        "json_dump_ms": base_save * 1e3,
        "json_load_ms": base_load * 1e3,
    }


def hold(kind: str, root: Path, folds: int = 6) -> dict[str, Any]:
    """How long the interpreter is out of reach while a background fold runs: a loop in the
    main thread (a turn's stand-in) times the gaps between its own iterations while a fold of a
    300-turn, 1 MB-state session runs, 60 turns of log each time."""
    where = root / f"hold-{kind}"
    where.mkdir()
    session = (
        JSONSession(where, compact_min_bytes=1 << 40)
        if kind == "json"
        else SQLiteSession(where / "s.db", compact_min_bytes=1 << 40)
    )
    agent, _ = make_agent(None, states.flat_1mb())
    agent.attach_session(session, "bench", fresh=True)

    def turns(count: int) -> None:
        for _ in range(count):
            agent.run("change one key")
            agent.model.requests.clear()

    turns(300)
    longest, lost = [], []
    for _ in range(folds):
        turns(60)
        session._compact_soon("bench")
        thread = session._compactions.get("bench")
        gaps, last = [], time.perf_counter()
        while thread is not None and thread.is_alive():
            sum(range(100))
            now = time.perf_counter()
            gaps.append(now - last)
            last = now
        session.flush()
        longest.append(max(gaps, default=0) * 1000)
        lost.append(sum(g for g in gaps if g > 0.002) * 1000)
    if kind == "sqlite":
        session.close()
    return {"backend": kind, "longest_gap_ms": longest, "gaps_over_2ms_ms": lost}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--turns", type=int, default=1000)
    p.add_argument("--load-at", type=int, nargs="*", default=[100, 1000])
    p.add_argument("--load-reps", type=int, default=5)
    p.add_argument("--backends", nargs="*", default=["json", "sqlite"])
    p.add_argument(
        "--profile",
        action="store_true",
        help="print where a load and a save of a --turns session go, and stop",
    )
    p.add_argument("--json", default=None, help="write the figures here")
    p.add_argument(
        "--hold",
        action="store_true",
        help="measure how long a background fold keeps the main thread waiting, and stop",
    )
    args = p.parse_args(argv)
    if args.hold:
        with tempfile.TemporaryDirectory() as tmp:
            for kind in args.backends:
                r = hold(kind, Path(tmp))
                print(
                    f"agentnb {kind:6} main thread during a fold: longest gap {[round(g, 1) for g in r['longest_gap_ms']]} ms, "
                    f"time in gaps over 2 ms {[round(g) for g in r['gaps_over_2ms_ms']]} ms",
                    flush=True,
                )
        return {}
    if args.profile:
        with tempfile.TemporaryDirectory() as tmp:
            for kind in args.backends:
                profile(kind, Path(tmp), args.turns)
        return {}
    probe = Probe()
    probe.wrap_fsync()
    out: dict[str, Any] = {
        "framework": "agentnb",
        "loadavg_start": measure.loadavg(),
        "state_json_bytes": states.json_bytes(states.flat_1mb()),
        "autosave": [],
        "whole": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for kind in args.backends:
            r = autosave(kind, root, args.turns, args.load_at, args.load_reps, probe)
            out["autosave"].append(r)
            print(
                f"agentnb {kind:6} autosave over {r['turns']} turns: turn median {r['turn_ms']['median']:.2f} ms "
                f"p99 {r['turn_ms']['p99']:.2f} max {r['turn_ms']['max']:.2f} (without the save {r['turn_without_save_ms']['median']:.2f}); "
                f"save median {r['save_ms']['median']:.2f} p99 {r['save_ms']['p99']:.2f} max {r['save_ms']['max']:.2f} ms, "
                f"CPU {r['save_cpu_ms']['median']:.2f} ms, fsync {r['fsync_ms']['median']:.2f} ms; "
                f"{r['compactions']} compactions in turns {[round(c) for c in r['compaction_ms']]} ms, "
                f"{len(r['background_compaction_ms'])} in the background {[round(c) for c in r['background_compaction_ms']]} ms "
                f"(this process's CPU {[round(c) for c in r['background_compaction_cpu_ms']]} ms); "
                f"{r['bytes_on_disk'] / 1e6:.1f} MB on disk",
                flush=True,
            )
            for load in r["loads"]:
                print(
                    f"agentnb {kind:6} load after {load['turns']:5d} turns: {load['wall_ms']['median']:.1f} ms "
                    f"[{load['wall_ms']['min']:.1f}–{load['wall_ms']['max']:.1f}] (CPU {load['cpu_ms']['median']:.1f})",
                    flush=True,
                )
        for name, value in {
            "nested_dict_1MB": states.flat_1mb(),
            "list_10k_strings": [f"item {i}" for i in range(10_000)],
        }.items():
            out["whole"][name] = w = whole(value, root, name)
            print(
                f"agentnb whole {name:18} save {w['save_ms']:.1f} ms load {w['load_ms']:.1f} ms "
                f"(json.dump {w['json_dump_ms']:.1f} json.load {w['json_load_ms']:.1f})",
                flush=True,
            )
    out["loadavg_end"] = measure.loadavg()
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
