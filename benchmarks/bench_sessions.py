"""Session save/load timings (run on demand: ``python benchmarks/bench_sessions.py``).

1. Per-turn autosave of an agent whose 1 MB state changes one key per turn, with 10, 100
   and 1,000 turns of history already saved: the time must stay flat (O(change)).
2. Whole save/load of a 1 MB nested dict and of 10,000 short strings, against a baseline run
   in this process: a plain ``json.dump`` to a file, which is what AgentScope's JSONSession does.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentnb import Agent, ScriptedModel  # noqa: E402
from agentnb.sessions import JSONSession, SQLiteSession, StateModule  # noqa: E402


class Blob(StateModule):
    def __init__(self, value=None):
        self.value = value
        self.register_state("value")


def one_mb_state() -> dict:
    return {f"key{i:05d}": {"text": "x" * 90, "n": i} for i in range(8_500)}


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.2f}"


def per_turn(kind: str, history: int, root: Path, measured: int = 15) -> tuple[float, float, float]:
    session = JSONSession(root / f"{kind}-{history}") if kind == "json" else SQLiteSession(root / f"{kind}-{history}.db")
    agent = Agent("bench", ScriptedModel(lambda request: "ok"), session_state=one_mb_state())
    agent.attach_session(session, "bench", fresh=True)
    for i in range(history):  # autosave writes each turn as it happens
        agent.session_state[f"key{i % 8_500:05d}"] = {"text": "y" * 90, "n": -i}
        agent.run(f"turn {i}")
    agent._autosave.unsubscribe()
    times = []
    for i in range(measured):
        agent.session_state["key00000"] = {"text": "z" * 90, "n": i}
        agent.run("measured")
        start = time.perf_counter()
        session.append_session_state_sync("bench", _after_turn=True, agent=agent)  # what autosave does
        times.append(time.perf_counter() - start)
    return statistics.median(times), max(times), statistics.mean(times)


def whole(value, root: Path, name: str) -> tuple[float, float, float, float]:
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
    return save, load, base_save, base_load


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [10, 100, 1000]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        print(f"state: {len(json.dumps(one_mb_state())) / 1e6:.2f} MB, one key changed per turn")
        print(f"{'backend':8} {'history':>8} {'median ms':>10} {'max ms':>9} {'mean ms':>9} {'vs first':>9}")
        for kind in ("json", "sqlite"):
            first = None
            for history in sizes:
                median, worst, mean = per_turn(kind, history, root)
                first = first or median
                print(f"{kind:8} {history:8d} {ms(median):>10} {ms(worst):>9} {ms(mean):>9} {median / first:8.2f}x")
        print()
        print(f"{'whole save/load':26} {'save ms':>9} {'load ms':>9} {'json.dump':>10} {'json.load':>10} {'save ratio':>11}")
        cases = {"1MB-nested-dict": one_mb_state(), "10k-short-strings": [f"item {i}" for i in range(10_000)]}
        for name, value in cases.items():
            save, load, base_save, base_load = whole(value, root, name)
            print(f"{name:26} {ms(save):>9} {ms(load):>9} {ms(base_save):>10} {ms(base_load):>10} {save / base_save:10.2f}x")


if __name__ == "__main__":
    main()
