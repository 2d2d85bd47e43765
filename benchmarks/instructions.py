"""Instructions per K=1 tiny turn, counted by valgrind (on demand; not in the test suite).

Wall and CPU times on a shared machine vary by 2× between processes; the number of instructions
a turn executes does not. This runs each case twice under ``valgrind --tool=callgrind`` (20
warm-up turns, then 50 or 250 turns) and divides the difference by 200, so start-up and imports
cancel out. Cases: agentnb ``recording``, ``inspector`` (its messages through ipykernel's send
path, ``kernel_stub.py``) and ``inspector-cell`` (each turn a cell, as in JupyterLab, where a front end renders the
widget: the inspector's post-cell hook after every turn, the snapshot refresh it leaves for later
in back-to-back cells run on the turn clock as the kernel's loop would run it; ``inspector-cell-static`` adds what a
run without one, ``jupyter nbconvert --execute``, adds: the static view of the inspector's output
updated after every cell, and the snapshot refreshed after every cell, unpaced, as nbclient keeps
only the running cell's messages),
and Agno with no db (``peers/agno_turns.py``, run by ``--agno-python``). Instructions are not
time (Agno's code runs at fewer instructions per cycle than agentnb's here), but they show what a
change to agentnb's own code did, whatever the machine's load.

The inspector sends a run's end at once only if no batch went out in the last 50 ms
(``outbox.FLUSH_SECONDS``). Under valgrind a turn takes ~50× longer than natively, so by the
wall clock a batch would hold a turn or two where natively it holds ~150: the inspector's outbox
runs here on a clock that moves ``--turn-ms`` (default 0.3 ms, a K=1 turn with the inspector
natively) per turn, its deadlines called after each turn as the flush thread would, so batches
hold what they hold natively, the same in every run. ``--turn-ms 100`` gives every turn its own
batch (a turn that takes as long as a real model call).

Where the inspector's instructions go (``--modes`` adds these): ``inspector-queue`` queues the
events but drops each batch unbuilt (the subscriber and the queue), ``inspector-nokernel`` builds
and encodes every batch but no kernel sends it (the comm drops it); ``inspector`` minus
``inspector-nokernel`` is the kernel's send. ``--no-gc`` counts with the cyclic garbage collector
off, so that a share is not blurred by where its collections happen to fall.

    python benchmarks/instructions.py --agno-python $ANCHORS/venv/bin/python
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench_turns import Later  # the loop's timer handle, as bench_turns.py times cells with it

HERE = Path(__file__).resolve().parent
WARMUP = 20
COUNTS = (50, 250)


class TurnClock:
    """The outbox's clock and flush thread, and the kernel's event loop between cells: ``seconds``
    pass with each turn, and the deadlines that came due are called after it."""

    def __init__(self, seconds: float) -> None:
        self.now = 0.0
        self.seconds = seconds
        self.timers: list[tuple[float, Any]] = []
        self.next = math.inf  # the first deadline

    def __call__(self) -> float:
        return self.now

    def schedule(self, outbox: Any, at: float) -> None:
        """The flush thread's: ``outbox.timer()`` at ``at``."""
        self.timers.append((at, outbox))
        self.next = min(self.next, at)

    def later(self, delay: float, callback: Any) -> Any:
        """The event loop's ``call_later``: ``callback()`` after ``delay`` (``pacing.py``)."""
        handle = Later(callback)
        self.timers.append((self.now + delay, handle))
        self.next = min(self.next, self.now + delay)
        return handle

    def turned(self) -> None:
        self.now += self.seconds
        if self.now < self.next:  # what the sleeping flush thread costs a turn: nothing
            return
        due, self.timers = (
            [t for t in self.timers if t[0] <= self.now],
            [t for t in self.timers if t[0] > self.now],
        )
        self.next = min((t[0] for t in self.timers), default=math.inf)
        for _, target in due:
            if isinstance(target, Later):
                target.fire()
                continue
            again = target.timer()
            if again is not None:
                self.schedule(target, again)


def child(framework: str, mode: str, turns: int, turn_ms: float, collect: bool) -> None:
    """Run ``WARMUP`` + ``turns`` turns of one case (inside valgrind)."""
    sys.path.insert(0, str(HERE))
    import measure

    clock = measure.ModelClock()
    after: list[Any] = []
    if framework == "agno":
        sys.path.insert(0, str(HERE / "peers"))
        import agno_turns

        agent, turn_no = agno_turns.make_agent("tiny", clock, "none")
        check = agno_turns.make_check("tiny", turn_no, agent, "none")
    elif framework == "pydantic-ai":  # the turn of bench_tracing.py, instrument= on or off
        sys.path.insert(0, str(HERE / "peers"))
        import pydantic_ai_tracing as pai

        agent, check = pai.instruction_case(mode)
    else:
        sys.path.insert(0, str(HERE.parent))
        if mode in ("inspector", "inspector-cell", "inspector-cell-static"):
            import kernel_stub

            kernel_stub.install()
            if mode == "inspector-cell-static":
                kernel_stub.shell()  # displays and their updates through the kernel's session
        import bench_scale

        agent, model, turn_no = bench_scale.make_agent("tiny", clock)
        check = bench_scale.make_check("tiny", agent, model, turn_no)
        if mode.startswith("tracing"):  # spans to a private SDK provider, counted and dropped
            import bench_tracing

            from agentnb import tracing

            provider, _ = bench_tracing.counting_provider()
            tracing.instrument(provider, capture_content=mode == "tracing-content")
        elif mode != "recording":
            from agentnb.ipython.inspector import Inspector

            inspector = Inspector.for_agent(agent)
            outbox = inspector._outbox
            turn_clock = TurnClock(turn_ms / 1000)
            outbox._clock, outbox._schedule = turn_clock, turn_clock.schedule
            if mode == "inspector-queue":
                outbox._render = lambda items: (b"{}", len(items))  # the batch dropped unbuilt
            if mode.startswith("inspector-cell"):
                # What IPython's post_run_cell does after each cell; what it leaves for later runs
                # on the kernel's event loop, here the turn clock's (``pacing.py``).
                inspector._pace.later = lambda: turn_clock.later
                inspector._pace.aside = None  # the turn clock's loop is never blocked
                after.append(inspector._after_cell)
            after.append(turn_clock.turned)
            if mode == "inspector-cell-static":
                inspector.show()  # as %%agent shows it where no front end renders it (nbconvert)
    if not collect:
        gc.disable()  # to split a share: counts without the cyclic collector's
    for _ in range(WARMUP + turns):
        result: Any = agent.run("please add some items")
        for call in after:
            call()
        check(result)


def count(python: str, framework: str, mode: str, turns: int, turn_ms: float, collect: bool) -> int:
    """Instructions of one child process under callgrind."""
    command = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        python,
        __file__,
        "--child",
        framework,
        mode,
        str(turns),
        "--turn-ms",
        str(turn_ms),
    ]
    if not collect:
        command.append("--no-gc")
    env = dict(os.environ, PYTHONHASHSEED="0")
    env.setdefault("AGNO_TELEMETRY", "false")  # as run.sh: no report over the network per run
    if framework == "agno" and "ANCHORS" not in env:
        # peers/agno_turns.py imports the anchor harness from $ANCHORS: the one this venv is in.
        env["ANCHORS"] = str(Path(python).absolute().parents[2])
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=True)
    match = re.search(r"Collected : (\d+)", done.stderr)
    if match is None:
        raise RuntimeError(f"no instruction count in valgrind's output:\n{done.stderr[-2000:]}")
    return int(match.group(1))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--child", nargs=3, metavar=("FRAMEWORK", "MODE", "TURNS"), help=argparse.SUPPRESS)
    p.add_argument("--modes", nargs="*", default=["recording", "inspector", "inspector-cell"])
    p.add_argument("--agno-python", default=None, help="the anchors' venv python, to count Agno too")
    p.add_argument(
        "--pydantic-python",
        default=None,
        help="a venv python with pydantic-ai-slim and opentelemetry-sdk: pydantic-ai's K=1 turn with instrument= off and on",
    )
    p.add_argument(
        "--turn-ms", type=float, default=0.3, help="how long a turn takes on the inspector's clock"
    )
    p.add_argument(
        "--no-gc", action="store_true", help="count with the cyclic garbage collector off (to split a share)"
    )
    args = p.parse_args()
    if args.child:
        framework, mode, turns = args.child
        child(framework, mode, int(turns), args.turn_ms, not args.no_gc)
        return
    cases = [("agentnb", mode, sys.executable) for mode in args.modes]
    if args.agno_python:
        cases.append(("agno", "none", args.agno_python))
    if args.pydantic_python:
        cases += [
            ("pydantic-ai", "tracing-off", args.pydantic_python),
            ("pydantic-ai", "tracing-on", args.pydantic_python),
        ]
    per_turn: dict[str, float] = {}
    for framework, mode, python in cases:
        low, high = (count(python, framework, mode, n, args.turn_ms, not args.no_gc) for n in COUNTS)
        name = f"{framework} {mode}"
        per_turn[name] = (high - low) / (COUNTS[1] - COUNTS[0])
        print(f"{name:28} {per_turn[name] / 1e6:6.3f} M instructions per turn", flush=True)
    base = per_turn.get("agentnb recording")
    agno = per_turn.get("agno none")
    for name, value in per_turn.items():
        extra = f", {value / agno:.2f}× Agno's" if agno else ""
        if base and name != "agentnb recording" and name.startswith("agentnb"):
            extra += f"; {(value - base) / 1e6:.3f} M more than recording"
        print(f"{name:28} {value / 1e6:6.3f} M{extra}")


if __name__ == "__main__":
    main()
