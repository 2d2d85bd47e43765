"""Instructions per K=1 tiny turn, counted by valgrind (on demand; not in the test suite).

Wall and CPU times on a shared machine vary by 2× between processes; the number of instructions
a turn executes does not. This runs each case twice under ``valgrind --tool=callgrind`` (20
warm-up turns, then 50 or 250 turns) and divides the difference by 200, so start-up and imports
cancel out. Cases: agentnb ``recording``, ``inspector`` (its messages through ipykernel's send
path, ``kernel_stub.py``) and ``inspector-cell`` (the snapshot trait refreshed after every turn),
and Agno with no db (``peers/agno_turns.py``, run by ``--agno-python``). Instructions are not
time (Agno's code runs at fewer instructions per cycle than agentnb's here), but they show what a
change to agentnb's own code did, whatever the machine's load.

    python benchmarks/instructions.py --agno-python $ANCHORS/venv/bin/python
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WARMUP = 20
COUNTS = (50, 250)


def child(framework: str, mode: str, turns: int) -> None:
    """Run ``WARMUP`` + ``turns`` turns of one case (inside valgrind)."""
    sys.path.insert(0, str(HERE))
    import measure

    clock = measure.ModelClock()
    if framework == "agno":
        sys.path.insert(0, str(HERE / "peers"))
        import agno_turns

        agent, turn_no = agno_turns.make_agent("tiny", clock, "none")
        check = agno_turns.make_check("tiny", turn_no, agent, "none")
        after = None
    else:
        sys.path.insert(0, str(HERE.parent))
        if mode != "recording":
            import kernel_stub

            kernel_stub.install()
        import bench_scale

        agent, model, turn_no = bench_scale.make_agent("tiny", clock)
        check = bench_scale.make_check("tiny", agent, model, turn_no)
        after = None
        if mode != "recording":
            from agentnb.ipython.inspector import Inspector

            inspector = Inspector.for_agent(agent)
            after = inspector._after_cell if mode == "inspector-cell" else None
    for _ in range(WARMUP + turns):
        result: Any = agent.run("please add some items")
        if after is not None:
            after()  # what IPython's post_run_cell does after each cell
        check(result)


def count(python: str, framework: str, mode: str, turns: int) -> int:
    """Instructions of one child process under callgrind."""
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", python, __file__, "--child", framework, mode, str(turns)]
    done = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ, PYTHONHASHSEED="0"), check=True)
    match = re.search(r"Collected : (\d+)", done.stderr)
    if match is None:
        raise RuntimeError(f"no instruction count in valgrind's output:\n{done.stderr[-2000:]}")
    return int(match.group(1))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--child", nargs=3, metavar=("FRAMEWORK", "MODE", "TURNS"), help=argparse.SUPPRESS)
    p.add_argument("--modes", nargs="*", default=["recording", "inspector", "inspector-cell"])
    p.add_argument("--agno-python", default=None, help="the anchors' venv python, to count Agno too")
    args = p.parse_args()
    if args.child:
        framework, mode, turns = args.child
        child(framework, mode, int(turns))
        return
    cases = [("agentnb", mode, sys.executable) for mode in args.modes]
    if args.agno_python:
        cases.append(("agno", "none", args.agno_python))
    per_turn: dict[str, float] = {}
    for framework, mode, python in cases:
        low, high = (count(python, framework, mode, n) for n in COUNTS)
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
