"""Agno: the first tool call in a fresh process against later ones (run with the anchors' venv).

The same shape as ``bench_first_call.py``: each repetition is a new process that imports Agno,
builds the agent (not timed), then times its first ``run`` and the next ones (K=1, the fake
model of the anchor harness). Variants: ``agentic`` (Agno's ``update_session_state``,
``enable_agentic_state=True``) and ``function`` (a plain function tool). Agno has no tool with an
explicit JSON schema validated by jsonschema, so there is no ``schema`` variant.

    ANCHORS=/tmp/anchors $ANCHORS/venv/bin/python benchmarks/peers/agno_first_call.py --procs 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

VARIANTS = ("agentic", "function")


def child(variant: str, later: int) -> dict[str, Any]:
    sys.path.insert(0, os.environ.get("ANCHORS", "/tmp/anchors"))
    import common

    common.install_netguard()
    t0 = time.perf_counter()
    from dataclasses import dataclass

    from agno.agent import Agent
    from agno.models.openai import OpenAIChat
    from agno.models.response import ModelResponse

    import_ms = (time.perf_counter() - t0) * 1000

    @dataclass
    class FakeOpenAIChat(OpenAIChat):
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
            if any(m.role == "tool" for m in messages):
                return ModelResponse(role="assistant", content="done")
            if variant == "agentic":
                name, arguments = "update_session_state", {"session_state_updates": {"city": "Paris"}}
            else:
                name, arguments = "lookup", {"city": "Paris"}
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

    def lookup(city: str) -> str:
        """Look a city up."""
        return f"{city}: 2.1 million people"

    kwargs: dict[str, Any] = {"enable_agentic_state": True} if variant == "agentic" else {"tools": [lookup]}
    agent = Agent(model=FakeOpenAIChat(id="gpt-4o-mini"), session_state={"city": None}, **kwargs)
    before = set(sys.modules)
    times = []
    for _ in range(1 + later):
        t0 = time.perf_counter()
        r = agent.run("how many people live in Paris?")
        times.append((time.perf_counter() - t0) * 1000)
        assert r.content == "done", r.content
        if variant == "agentic":
            assert r.session_state["city"] == "Paris", r.session_state
        if len(times) == 1:
            imported = sorted({m.split(".")[0] for m in set(sys.modules) - before})
    return {
        "import_ms": import_ms,
        "first_ms": times[0],
        "later_ms": statistics.median(times[1:]),
        "imported": imported,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--procs", type=int, default=5)
    p.add_argument("--later", type=int, default=10)
    p.add_argument("--child", choices=VARIANTS, help=argparse.SUPPRESS)
    p.add_argument("--out", default=None)
    args = p.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.later)))
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import measure

    runs: dict[str, list[dict[str, Any]]] = {v: [] for v in VARIANTS}
    for _ in range(args.procs):
        for variant in VARIANTS:
            proc = subprocess.run(
                [sys.executable, __file__, "--child", variant, "--later", str(args.later)],
                check=True,
                capture_output=True,
                text=True,
            )
            runs[variant].append(json.loads(proc.stdout.splitlines()[-1]))
    out: dict[str, Any] = {"framework": "agno", "variants": {}}
    for variant, rs in runs.items():
        row = {k: [r[k] for r in rs] for k in ("import_ms", "first_ms", "later_ms")}
        out["variants"][variant] = row | {"imported_by_first_run": rs[0]["imported"]}
        first, later = statistics.median(row["first_ms"]), statistics.median(row["later_ms"])
        print(
            f"agno first call, {variant:8}: first run {first:7.1f} ms [{min(row['first_ms']):.1f}–{max(row['first_ms']):.1f}], "
            f"later runs {later:.2f} ms; the first run imported {len(rs[0]['imported'])} top-level modules",
            flush=True,
        )
    measure.write_json(args.out, "first_call_agno", out)


if __name__ == "__main__":
    main()
