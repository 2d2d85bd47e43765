"""Per-turn cost against the state's size: time and retained memory of a K=1 turn (on demand).

The cases are ``states.CASES``: a tiny state (the control), one node changed in a 10,000-node
nested state, the same state left untouched, one key changed in an 8,500-key 1 MB state. One
turn = one ``agent.run(...)``: the fake model asks for one tool call, the tool changes the state
as the case says (``states.apply_tool``), the model answers. ``benchmarks/peers/agno_turns.py``
runs the same cases, the same states and the same fake model logic in Agno.

Reported per turn: wall time, process CPU time, the fake model's own time (``ScriptedModel``
with its token estimate, measured around its ``stream``) and the framework's time (wall minus
model); then the memory still allocated after more turns with the history kept (tracemalloc).
Modes: ``recording`` (the agent alone, everything recorded) and ``inspector`` (plus
``Inspector.for_agent``, its messages going through ipykernel's real send path: see
``kernel_stub.py``; wire messages and bytes per turn are counted).

    python benchmarks/bench_scale.py --case nested_one --mode recording --out results/
"""

from __future__ import annotations

import argparse
import platform
import resource
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import measure  # noqa: E402
import states  # noqa: E402


def make_agent(case: str, clock: measure.ModelClock) -> tuple[Any, Any, list[int]]:
    """The agent for ``case``, its fake model and the turn counter the model advances."""
    from agentnb import Agent, ScriptedModel, tool_call

    turn_no = [0]

    def fake_model(request: Any) -> Any:
        n_done = sum(1 for m in request.messages if m.get("role") == "tool")
        if n_done < 1:
            turn_no[0] += 1
            name, arguments = states.tool_call_for(case, turn_no[0])
            return tool_call(name, **arguments)
        return f"done after {n_done} tool calls"

    def add_item(session_state: dict, item: str) -> str:
        """Add an item to the list kept in session state."""
        return states.apply_tool(session_state, "add_item", {"item": item})

    def set_node(session_state: dict, key: str, value: int) -> str:
        """Set one node's value."""
        return states.apply_tool(session_state, "set_node", {"key": key, "value": value})

    def set_key(session_state: dict, key: str, n: int) -> str:
        """Replace one entry of the state."""
        return states.apply_tool(session_state, "set_key", {"key": key, "n": n})

    tools = {"add_item": add_item, "set_node": set_node, "set_key": set_key}
    name = states.tool_call_for(case, 0)[0]
    model = ScriptedModel(fake_model, stream=False)
    model.stream = clock.timed_iter(model.stream)  # the fake model's time, token estimate included
    agent = Agent("bench", model, tools=[tools[name]], session_state=states.initial_state(case))
    return agent, model, turn_no


def make_check(case: str, agent: Any, model: Any, turn_no: list[int]) -> Callable[[Any], None]:
    def check(result: Any) -> None:
        assert result.content == "done after 1 tool calls", result.content
        record = agent.history[-1]
        assert record.status == "ok" and len(record.tool_calls) == 1, record
        name, arguments = states.tool_call_for(case, turn_no[0])
        state = agent.session_state
        if name == "add_item":
            assert state["items"] == ["item-0"], state["items"]
            state["items"] = []  # every turn does the same work (recorded as the user's change)
        elif name == "set_node":
            assert state["nodes"][arguments["key"]]["value"] == arguments["value"]
        else:
            assert state[arguments["key"]]["n"] == arguments["n"]
        # The fake model keeps every request it received; that is the test double's memory,
        # not the framework's (the turn record keeps its own copy of every request).
        model.requests.clear()

    return check


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--case", choices=sorted(states.CASES), required=True)
    p.add_argument("--mode", choices=["recording", "inspector"], default="recording")
    p.add_argument("--n", type=int, default=None, help="measured turns (default 200 tiny, 60 otherwise)")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--mem-turns", type=int, default=30, help="turns for the retained-memory measurement")
    p.add_argument(
        "--profile",
        action="store_true",
        help="print where the time and the retained memory go (cProfile, tracemalloc) and stop",
    )
    p.add_argument("--tag", default="")
    p.add_argument("--out", default=None, help="folder for the JSON result")
    args = p.parse_args(argv)
    n = args.n or (200 if args.case == "tiny" else 60)

    socket = None
    if args.mode == "inspector":
        import kernel_stub

        socket = kernel_stub.install()
    import agentnb

    clock = measure.ModelClock()
    agent, model, turn_no = make_agent(args.case, clock)
    inspector = None
    if socket is not None:
        from agentnb.ipython.inspector import Inspector

        inspector = Inspector.for_agent(agent)
    check = make_check(args.case, agent, model, turn_no)

    def turn() -> Any:
        return agent.run("please add some items")

    out: dict[str, Any] = {
        "framework": "agentnb",
        "version": agentnb.__version__,
        "case": args.case,
        "case_text": states.CASES[args.case],
        "mode": args.mode,
        "python": platform.python_version(),
        "state_json_bytes": states.json_bytes(agent.session_state),
        "loadavg_start": measure.loadavg(),
    }
    if args.profile:
        for _ in range(args.warmup):
            check(turn())
        print(measure.profile_turns(turn, check, 10, "agentnb"))
        return {}
    out["series"] = measure.run_series(turn, check, n, args.warmup, clock)
    if socket is not None and inspector is not None:
        inspector._outbox.flush()  # what the series left queued is not this count's
        socket.reset()
        m0, b0 = inspector.messages_sent, inspector.bytes_sent
        turns = 20
        for _ in range(turns):
            check(turn())
        inspector._outbox.flush()  # what the flush thread would send within 50 ms
        out["inspector"] = {
            "wire_messages_per_turn": socket.messages / turns,
            "wire_bytes_per_turn": socket.bytes / turns,
            "own_json_bytes_per_turn": (inspector.bytes_sent - b0) / turns,
            "own_messages_per_turn": (inspector.messages_sent - m0) / turns,
        }
    out["memory"] = measure.retained_per_turn(turn, check, args.mem_turns)
    out["history_len"] = len(agent.history)
    out["loadavg_end"] = measure.loadavg()
    out["peak_rss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    s = out["series"]
    print(
        f"agentnb {args.mode:9} {args.case:16} wall {s['wall_ms']['median']:8.3f} ms (p95 {s['wall_ms']['p95']:.3f}) "
        f"framework {s['framework_ms']['median']:8.3f} ms  model {s['model_ms']['median']:.3f} ms  "
        f"cpu {s['cpu_ms']['median']:.3f} ms | retained {out['memory']['retained_bytes_per_turn'] / 1024:8.1f} KiB/turn"
        + (
            f" | {out['inspector']['wire_messages_per_turn']:.2f} msgs {out['inspector']['wire_bytes_per_turn']:.0f} B on the wire"
            if "inspector" in out
            else ""
        ),
        flush=True,
    )
    measure.write_json(args.out, f"scale_agentnb_{args.mode}_{args.case}{args.tag}", out)
    return out


if __name__ == "__main__":
    main()
