"""Agno, the same K=1 cases as ``bench_scale.py`` (run with the anchor harness's venv).

Same states (``states.py``), same fake model logic as the anchor harness's Agno script (an
``OpenAIChat`` whose ``invoke`` answers at once and counts the tool results in the request),
same tools (``states.apply_tool`` on ``run_context.session_state``). The fake model's time is
measured around ``invoke`` and reported apart. ``--db memory`` gives the agent an ``InMemoryDb``
so Agno keeps its runs (the history) as agentnb does; the default is no db, as in the anchor
harness (every run starts a fresh session from a deep copy of ``session_state``).

    ANCHORS=/tmp/anchors $ANCHORS/venv/bin/python benchmarks/peers/agno_turns.py --case nested_one
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(BENCH))
sys.path.insert(0, os.environ.get("ANCHORS", "/tmp/anchors"))

import common  # noqa: E402  (the anchor harness: network guard)

common.install_netguard()

import json  # noqa: E402
import resource  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from importlib.metadata import version  # noqa: E402
from typing import Any  # noqa: E402

import measure  # noqa: E402
import states  # noqa: E402
from agno.agent import Agent  # noqa: E402
from agno.models.openai import OpenAIChat  # noqa: E402
from agno.models.response import ModelResponse  # noqa: E402
from agno.run import RunContext  # noqa: E402


def make_agent(case: str, clock: measure.ModelClock, db: str) -> tuple[Any, list[int]]:
    turn_no = [0]

    @dataclass
    class FakeOpenAIChat(OpenAIChat):
        """OpenAIChat with invoke overridden: instant, deterministic, no network."""

        def invoke(
            self,
            messages,
            assistant_message,
            response_format=None,
            tools=None,
            tool_choice=None,
            run_response=None,
            compress_tool_results=False,
        ) -> ModelResponse:
            n_done = sum(1 for m in messages if m.role == "tool")
            if n_done < 1:
                turn_no[0] += 1
                name, arguments = states.tool_call_for(case, turn_no[0])
                return ModelResponse(
                    role="assistant",
                    tool_calls=[
                        {
                            "id": f"call_{n_done}",
                            "type": "function",
                            "function": {"name": name, "arguments": json.dumps(arguments)},
                        }
                    ],
                )
            return ModelResponse(role="assistant", content=f"done after {n_done} tool calls")

    FakeOpenAIChat.invoke = clock.timed(FakeOpenAIChat.invoke)

    def add_item(run_context: RunContext, item: str) -> str:
        """Add an item to the list kept in session state."""
        return states.apply_tool(run_context.session_state, "add_item", {"item": item})

    def set_node(run_context: RunContext, key: str, value: int) -> str:
        """Set one node's value."""
        return states.apply_tool(run_context.session_state, "set_node", {"key": key, "value": value})

    def set_key(run_context: RunContext, key: str, n: int) -> str:
        """Replace one entry of the state."""
        return states.apply_tool(run_context.session_state, "set_key", {"key": key, "n": n})

    tools = {"add_item": add_item, "set_node": set_node, "set_key": set_key}
    name = states.tool_call_for(case, 0)[0]
    kwargs: dict[str, Any] = {}
    if db == "memory":
        from agno.db.in_memory import InMemoryDb

        kwargs = {"db": InMemoryDb(), "session_id": "bench"}
    agent = Agent(
        model=FakeOpenAIChat(id="gpt-4o-mini"),
        tools=[tools[name]],
        session_state=states.initial_state(case),
        **kwargs,
    )
    return agent, turn_no


def make_check(case: str, turn_no: list[int], agent: Any, db: str) -> Callable[[Any], None]:
    def check(r: Any) -> None:
        assert r.content == "done after 1 tool calls", r.content
        name, arguments = states.tool_call_for(case, turn_no[0])
        state = r.session_state
        if name == "add_item":
            assert state["items"] == ["item-0"], state["items"]
            if db != "none":  # the session keeps its state: empty the list, as agentnb's check does
                agent.update_session_state({"items": []}, session_id="bench")
        elif name == "set_node":
            assert state["nodes"][arguments["key"]]["value"] == arguments["value"]
        else:
            assert state[arguments["key"]]["n"] == arguments["n"]

    return check


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--case", choices=sorted(states.CASES), required=True)
    p.add_argument("--db", choices=["none", "memory"], default="none")
    p.add_argument("--n", type=int, default=None)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--mem-turns", type=int, default=30)
    p.add_argument("--tag", default="")
    p.add_argument("--out", default=None)
    args = p.parse_args()
    n = args.n or (200 if args.case == "tiny" else 60)
    clock = measure.ModelClock()
    agent, turn_no = make_agent(args.case, clock, args.db)
    check = make_check(args.case, turn_no, agent, args.db)

    def turn() -> Any:
        return agent.run("please add some items")

    out: dict[str, Any] = {
        "framework": "agno",
        "version": version("agno"),
        "case": args.case,
        "db": args.db,
        "case_text": states.CASES[args.case],
        "state_json_bytes": states.json_bytes(states.initial_state(args.case)),
        "loadavg_start": measure.loadavg(),
    }
    out["series"] = measure.run_series(turn, check, n, args.warmup, clock)
    out["memory"] = measure.retained_per_turn(turn, check, args.mem_turns)
    out["loadavg_end"] = measure.loadavg()
    out["peak_rss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out["net"] = common.net_report()
    s = out["series"]
    print(
        f"agno db={args.db:6} {args.case:16} wall {s['wall_ms']['median']:8.3f} ms (p95 {s['wall_ms']['p95']:.3f}) "
        f"framework {s['framework_ms']['median']:8.3f} ms  model {s['model_ms']['median']:.3f} ms  "
        f"cpu {s['cpu_ms']['median']:.3f} ms | retained {out['memory']['retained_bytes_per_turn'] / 1024:8.1f} KiB/turn",
        flush=True,
    )
    measure.write_json(args.out, f"scale_agno_{args.db}_{args.case}{args.tag}", out)


if __name__ == "__main__":
    main()
