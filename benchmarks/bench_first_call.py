"""The first tool call in a fresh process against later ones (run on demand).

Each repetition is a new Python process (as a fresh kernel is): it imports agentnb, builds an
agent (not timed: a notebook has done both before the first ``%%chat``), then times its first
``run`` and the next ones. A run is K=1: the fake model asks for one tool call, then answers.
Variants, by the tool called:

* ``schema``: a tool given an explicit JSON schema (Haystack style), whose arguments are
  validated against it;
* ``agentic``: the built-in ``update_session_state`` (``enable_agentic_state=True``), also an
  explicit schema;
* ``function``: a plain function tool (schema and validation from its signature).

Also listed: the modules the first run imported. ``benchmarks/peers/agno_first_call.py`` does the
same in Agno.

    python benchmarks/bench_first_call.py [--procs 5] [--json results/first_call_agentnb.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
VARIANTS = ("schema", "agentic", "function")


def child(variant: str, later: int) -> dict[str, Any]:
    sys.path.insert(0, str(HERE.parent))
    t0 = time.perf_counter()
    from agentnb import Agent, ScriptedModel, Tool, tool_call

    import_ms = (time.perf_counter() - t0) * 1000

    def model(request: Any) -> Any:
        if request.tool_results():
            return "done"
        if variant == "agentic":
            return tool_call("update_session_state", session_state_updates={"city": "Paris"})
        return tool_call("lookup", city="Paris")

    def lookup(city: str) -> str:
        """Look a city up."""
        return f"{city}: 2.1 million people"

    kwargs: dict[str, Any] = {}
    if variant == "schema":
        kwargs["tools"] = [
            Tool(
                name="lookup",
                description="Look a city up.",
                parameters={
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                },
                function=lookup,
            )
        ]
    elif variant == "function":
        kwargs["tools"] = [lookup]
    else:
        kwargs["enable_agentic_state"] = True
    agent = Agent("bench", ScriptedModel(model, stream=False), session_state={"city": None}, **kwargs)
    before = set(sys.modules)
    times = []
    for _ in range(1 + later):
        t0 = time.perf_counter()
        result = agent.run("how many people live in Paris?")
        times.append((time.perf_counter() - t0) * 1000)
        assert result.content == "done" and len(agent.history[-1].tool_calls) == 1
        assert agent.history[-1].tool_calls[0].error is None, agent.history[-1].tool_calls[0].error
        if len(times) == 1:
            imported = sorted({m.split(".")[0] for m in set(sys.modules) - before})
    return {
        "import_ms": import_ms,
        "first_ms": times[0],
        "later_ms": statistics.median(times[1:]),
        "imported": imported,
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--procs", type=int, default=5, help="fresh processes per variant")
    p.add_argument("--later", type=int, default=10, help="runs timed after the first")
    p.add_argument("--child", choices=VARIANTS, help=argparse.SUPPRESS)
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.later)))
        return {}
    out: dict[str, Any] = {"framework": "agentnb", "variants": {}}
    runs: dict[str, list[dict[str, Any]]] = {v: [] for v in VARIANTS}
    for _ in range(args.procs):  # interleaved, so the machine's load hits every variant alike
        for variant in VARIANTS:
            proc = subprocess.run(
                [sys.executable, __file__, "--child", variant, "--later", str(args.later)],
                check=True,
                capture_output=True,
                text=True,
            )
            runs[variant].append(json.loads(proc.stdout.splitlines()[-1]))
    for variant, rs in runs.items():
        row = {k: [r[k] for r in rs] for k in ("import_ms", "first_ms", "later_ms")}
        out["variants"][variant] = row | {"imported_by_first_run": rs[0]["imported"]}
        first, later = statistics.median(row["first_ms"]), statistics.median(row["later_ms"])
        print(
            f"agentnb first call, {variant:8}: first run {first:7.1f} ms [{min(row['first_ms']):.1f}–{max(row['first_ms']):.1f}], "
            f"later runs {later:.2f} ms; the first run imported {len(rs[0]['imported'])} top-level modules "
            f"{[m for m in rs[0]['imported'] if not m.startswith('_')][:15]}",
            flush=True,
        )
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
