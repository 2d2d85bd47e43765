"""Typed output: what a typed turn costs against a plain one, and ``agent.map`` against the bare client.

    .venv/bin/python benchmarks/bench_typed.py turns [--turns 300] [--reps 5] [--pydantic-python PY]
    .venv/bin/python benchmarks/bench_typed.py map [--rows 1000] [--latency 0.05] [--concurrency 16]

``turns``: one process per (mode, repetition), interleaved, each timing ``--turns`` turns after a
warm-up with a zero-cost ``ScriptedModel`` (its own function's time is measured and taken out: the
*framework* time). Modes: ``plain`` (the model answers text), ``tool`` (it calls ``final_result``
with an ``Invoice``), ``native`` (it answers the JSON, as a model with structured output does),
``prompted`` (the same, the schema in the system prompt) and ``retry`` (a tool-mode turn whose
first answer fails validation: two attempts). Everything stays recorded (events, history). With
``--pydantic-python PY``, pydantic-ai's typed turn (``FunctionModel`` calling the output tool,
``peers/pydantic_ai_typed.py``, in the interpreter ``PY`` of its own venv) runs interleaved too.

``map``: ``agent.map`` over ``--rows`` texts into ``Invoice`` rows at ``--concurrency`` against a
loopback OpenAI-compatible server with a fixed latency (a process of its own), against the bare
``openai`` client making the same calls from a pool of as many threads; then the same map again
(every row replays from the store). Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

MODES = ("plain", "tool", "native", "prompted", "retry")
INVOICE = {"number": "A-101", "vendor": "ACME GmbH", "total": 1250.0, "currency": "EUR"}


def make_turn(mode: str) -> tuple[Any, Any]:
    """(a function running one turn of ``mode``, the clock of the fake model's own time)."""
    from typing import Literal

    from measure import ModelClock
    from pydantic import BaseModel

    from agentnb import Agent, ScriptedModel, tool_call

    class Invoice(BaseModel):
        number: str
        vendor: str
        total: float
        currency: Literal["EUR", "USD"]

    clock = ModelClock()
    answer = json.dumps(INVOICE)

    def fake(request: Any) -> Any:
        if mode == "plain":
            return "Invoice A-101 from ACME GmbH, 1,250.00 EUR."
        if mode in ("native", "prompted"):
            return answer
        refused = any(m.get("role") == "tool" for m in request.messages)
        if mode == "retry" and not refused:
            return tool_call("final_result", **{**INVOICE, "total": "1,250.00"})
        return tool_call("final_result", **INVOICE)

    model = ScriptedModel(fake, stream=False, native_output=mode == "native")
    # The whole test double is the model's time: its script, its JSON, its token estimate.
    model.stream = clock.timed_iter(model.stream)  # type: ignore[method-assign]
    options: dict[str, Any] = {} if mode == "plain" else {"output_type": Invoice}
    if mode in ("tool", "retry", "prompted"):
        options["output_mode"] = "tool" if mode != "prompted" else "prompted"
    agent = Agent("bench", model, instructions="Read the invoice.", **options)

    def turn() -> Any:
        result = agent.run("Invoice No. A-101 from ACME GmbH, total 1,250.00 EUR.")
        model.requests.clear()  # the test double's list, not the framework's
        return result

    return turn, clock


def one_series(mode: str, turns: int) -> dict[str, Any]:
    """This process's series of ``mode``: the medians of its turns (framework, wall, CPU)."""
    from measure import run_series

    turn, clock = make_turn(mode)

    def check(result: Any) -> None:
        if mode == "plain":
            assert result.output is None and result.content
        else:
            assert result.output.total == 1250.0 and len(result.turn.attempts) == (
                2 if mode == "retry" else 1
            )

    series = run_series(turn, check, turns, max(20, turns // 10), clock)
    return {name: series[name]["median"] for name in ("framework_ms", "wall_ms", "cpu_ms", "model_ms")}


def turns_part(args: argparse.Namespace) -> dict[str, Any]:
    runs: dict[str, list[dict[str, Any]]] = {m: [] for m in MODES}
    if args.pydantic_python:
        runs["pydantic_ai_tool"] = []
    for _ in range(args.reps):
        for mode in runs:
            if mode == "pydantic_ai_tool":
                script = [args.pydantic_python, str(HERE / "peers" / "pydantic_ai_typed.py")]
            else:
                script = [sys.executable, __file__, "series", mode]
            done = subprocess.run(
                [*script, "--turns", str(args.turns)], capture_output=True, text=True, check=True
            )
            runs[mode].append(json.loads(done.stdout.strip().splitlines()[-1]))
    out: dict[str, Any] = {"turns": args.turns, "reps": args.reps, "load": os.getloadavg()}
    for mode, results in runs.items():
        framework = [r["framework_ms"] for r in results]
        out[mode] = {
            "framework_ms": statistics.median(framework),
            "framework_min_max": [min(framework), max(framework)],
            "cpu_ms": statistics.median(r["cpu_ms"] for r in results),
            "model_ms": statistics.median(r["model_ms"] for r in results),
        }
    plain = out["plain"]["framework_ms"]
    for mode in runs:
        out[mode]["x_plain"] = out[mode]["framework_ms"] / plain
    if "pydantic_ai_tool" in out:
        out["tool"]["x_pydantic_ai"] = out["tool"]["framework_ms"] / out["pydantic_ai_tool"]["framework_ms"]
    return out


SERVER = """
import json, sys
sys.path.insert(0, {tests!r})
from http.server import ThreadingHTTPServer
ThreadingHTTPServer.request_queue_size = 256
from openai_server import OpenAIServer, Reply
server = OpenAIServer()
server.add(Reply(text={answer!r}, delay={latency}, repeat=True))
with server:
    print(server.url, flush=True)
    sys.stdin.read()
    print(len(server.requests), flush=True)
"""


def bare(url: str, rows: list[str], concurrency: int) -> tuple[float, float]:
    """Wall and CPU seconds of the same calls with the openai client alone (the JSON parsed)."""
    import concurrent.futures

    import openai

    client = openai.OpenAI(base_url=url, api_key="x", max_retries=0)

    def call(text: str) -> Any:
        reply = client.chat.completions.create(
            model="gpt-bench",
            messages=[{"role": "system", "content": "Read the invoice."}, {"role": "user", "content": text}],
            response_format={"type": "json_schema", "json_schema": {"name": "Invoice", "schema": {}}},
        )
        return json.loads(reply.choices[0].message.content or "{}")

    cpu, start = time.process_time(), time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(call, rows))
    return time.perf_counter() - start, time.process_time() - cpu


def mapped(url: str, rows: list[str], concurrency: int, folder: str, name: str) -> dict[str, Any]:
    """Wall and CPU of ``agent.map`` over the rows into typed ``Invoice`` rows."""
    from typing import Literal

    from pydantic import BaseModel

    from agentnb import Agent
    from agentnb.models import OpenAIChat

    class Invoice(BaseModel):
        number: str
        vendor: str
        total: float
        currency: Literal["EUR", "USD"]

    agent = Agent(
        "bench", OpenAIChat("gpt-bench", base_url=url, stream=False), instructions="Read the invoice."
    )
    cpu, start = time.process_time(), time.perf_counter()
    frame = agent.map(
        rows, output_type=Invoice, name=name, folder=folder, concurrency=concurrency, display=False
    )
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert (frame["status"] == "ok").all() and (frame["total"] == 1250.0).all()
    return {"wall_s": wall, "cpu_s": cpu, "rows": len(frame)}


def map_part(args: argparse.Namespace) -> dict[str, Any]:
    script = SERVER.format(tests=str(HERE.parent / "tests"), latency=args.latency, answer=json.dumps(INVOICE))
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    url = proc.stdout.readline().strip()
    rows = [f"Invoice No. A-{i} from ACME GmbH, total 1,250.00 EUR." for i in range(args.rows)]
    ideal = args.rows * args.latency / args.concurrency
    out: dict[str, Any] = {
        "rows": args.rows,
        "latency_s": args.latency,
        "concurrency": args.concurrency,
        "ideal_s": ideal,
        "load": os.getloadavg(),
    }
    try:
        bare(url, rows[:50], args.concurrency)  # warm-up: imports, connections
        with tempfile.TemporaryDirectory() as folder:
            mapped(url, rows[:50], args.concurrency, folder, "warmup")
            out["bare_s"], bare_cpu = bare(url, rows, args.concurrency)
            out["map"] = mapped(url, rows, args.concurrency, folder, "bench")
            out["bare_again_s"], _ = bare(url, rows, args.concurrency)
            out["resume"] = mapped(url, rows, args.concurrency, folder, "bench")
    finally:
        proc.stdin.close()
        out["server_requests"] = int(proc.stdout.readline() or 0)
        proc.wait()
    floor = min(out["bare_s"], out["bare_again_s"])
    out["bare_cpu_ms_per_row"] = bare_cpu * 1000 / args.rows
    out["map"]["x_bare"] = out["map"]["wall_s"] / floor
    out["map"]["x_ideal"] = out["map"]["wall_s"] / ideal
    out["map"]["cpu_ms_per_row"] = out["map"]["cpu_s"] * 1000 / args.rows
    out["resume"]["cpu_ms_per_row"] = out["resume"]["cpu_s"] * 1000 / args.rows
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=("turns", "map", "series"))
    parser.add_argument("mode", nargs="?", choices=MODES)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--pydantic-python", metavar="PY")
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.part == "series":
        print(json.dumps(one_series(args.mode, args.turns)))
        return
    result = turns_part(args) if args.part == "turns" else map_part(args)
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
