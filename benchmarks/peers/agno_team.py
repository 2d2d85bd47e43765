"""Agno, the cases of ``bench_delegation.py`` (run with the anchor harness's venv).

``plain``: an agent whose fake model asks for one tool call (``add_item`` on
``run_context.session_state``), then answers. ``team``: a ``Team`` whose fake leader asks for one
``delegate_task_to_member`` to a member whose fake model asks for the same tool call, then
answers; the leader then answers. Fake models (``OpenAIChat`` with ``invoke`` overridden) answer
at once; their time is measured and reported apart. No db, as the anchor harness runs Agno.

    $ANCHORS/venv/bin/python benchmarks/peers/agno_team.py --case team
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(BENCH))
os.environ.setdefault("AGNO_TELEMETRY", "false")

import measure  # noqa: E402
from agno.agent import Agent  # noqa: E402
from agno.models.openai import OpenAIChat  # noqa: E402
from agno.models.response import ModelResponse  # noqa: E402
from agno.run import RunContext  # noqa: E402
from agno.team.team import Team  # noqa: E402


def fake(clock: measure.ModelClock, name: str, arguments: dict[str, Any]) -> Any:
    @dataclass
    class Fake(OpenAIChat):
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
                return ModelResponse(
                    role="assistant",
                    tool_calls=[
                        {
                            "id": "call_0",
                            "type": "function",
                            "function": {"name": name, "arguments": json.dumps(arguments)},
                        }
                    ],
                )
            return ModelResponse(role="assistant", content="done")

    Fake.invoke = clock.timed(Fake.invoke)
    return Fake(id="gpt-4o-mini")


def add_item(run_context: RunContext, item: str) -> str:
    """Add an item to the list kept in session state."""
    run_context.session_state["items"].append(item)
    return f"added {item}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--case", choices=["plain", "team"], required=True)
    p.add_argument("--n", type=int, default=200)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--out", default=None)
    args = p.parse_args()
    clock = measure.ModelClock()
    if args.case == "plain":
        runner: Any = Agent(
            model=fake(clock, "add_item", {"item": "x"}),
            tools=[add_item],
            session_state={"items": []},
            telemetry=False,
        )
    else:
        member = Agent(
            name="worker", model=fake(clock, "add_item", {"item": "x"}), tools=[add_item], telemetry=False
        )
        runner = Team(
            members=[member],
            model=fake(clock, "delegate_task_to_member", {"member_id": "worker", "task": "add x"}),
            session_state={"items": []},
            telemetry=False,
        )

    def check(r: Any) -> None:
        assert r.content == "done", r.content
        assert r.session_state["items"] == ["x"], r.session_state

    out = {
        "framework": "agno",
        "version": version("agno"),
        "case": args.case,
        "loadavg_start": measure.loadavg(),
    }
    out["series"] = measure.run_series(lambda: runner.run("add x"), check, args.n, args.warmup, clock)
    out["loadavg_end"] = measure.loadavg()
    s = out["series"]
    print(
        f"agno {args.case:6} framework {s['framework_ms']['median']:8.3f} ms  cpu {s['cpu_ms']['median']:.3f} ms",
        flush=True,
    )
    measure.write_json(args.out, f"delegation_agno_{args.case}", out)


if __name__ == "__main__":
    main()
