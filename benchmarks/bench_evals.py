"""Evaluation throughput: 1,000 cases against a loopback OpenAI-compatible server with a fixed latency.

    .venv/bin/python benchmarks/bench_evals.py [--cases 1000] [--latency 0.05] [--concurrency 16]
        [--dask] [--pydantic-evals PYTHON] [--out result.json]

One run measures, against the same server (a separate process, so it takes no time from the
process measured):
- ``bare``: the real ``openai`` client alone, the same calls from a pool of ``concurrency`` threads
  (the floor: what any Python client pays);
- ``agentnb``: ``agent.evaluate`` over the cases (a fresh agent per case, a check, a line fsynced
  per case), its wall time against the ideal ``cases × latency / concurrency`` and against
  ``bare``; the driver's CPU time per case (agentnb's overhead plus the client's); memory
  retained per stored case (tracemalloc, the EvalRun kept) and bytes per stored line;
- ``resume``: the same call again (every case replays from the store: no model call);
- ``dask`` (``--dask``): the same cases on a Dask LocalCluster of two worker processes;
- ``pydantic-evals`` (``--pydantic-evals PY``): the same cases through pydantic-evals'
  ``Dataset.evaluate(max_concurrency=…)`` in the interpreter ``PY`` (its own venv).
Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

HERE = Path(__file__).resolve().parent
SERVER = """
import json, sys, time
sys.path.insert(0, {tests!r})
from http.server import ThreadingHTTPServer
ThreadingHTTPServer.request_queue_size = 256  # listen()'s backlog: room for every connection at once
from openai_server import OpenAIServer, Reply
server = OpenAIServer()
server.add(Reply(text="ok", delay={latency}, repeat=True))
with server:
    print(server.url, flush=True)
    sys.stdin.read()
    print(len(server.requests), flush=True)
    print(json.dumps(sorted(set(server.problems))[:5]), flush=True)
"""


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    """The loopback server in a process of its own; returns it and its URL."""
    script = SERVER.format(tests=str(HERE.parent / "tests"), latency=latency)
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    url = proc.stdout.readline().strip()
    return proc, url


STREAM = False
"""Whether calls stream (``--stream``); the test server closes a streamed answer's connection."""


def bare(url: str, cases: int, concurrency: int) -> float:
    """Wall seconds for the same calls with the openai client alone."""
    import openai

    client = openai.OpenAI(base_url=url, api_key="x", max_retries=0)

    def call(i: int) -> str:
        messages = [
            {"role": "system", "content": "Answer briefly."},
            {"role": "user", "content": f"question {i}"},
        ]
        if not STREAM:
            return (
                client.chat.completions.create(model="gpt-bench", messages=messages)
                .choices[0]
                .message.content
                or ""
            )
        stream = client.chat.completions.create(
            model="gpt-bench", messages=messages, stream=True, stream_options={"include_usage": True}
        )
        return "".join(c.choices[0].delta.content or "" for c in stream if c.choices)

    cpu, start = time.process_time(), time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(call, range(cases)))
    return time.perf_counter() - start, time.process_time() - cpu


def agentnb_run(
    url: str, cases: int, concurrency: int, folder: str, name: str, executor=None, memory: bool = False
) -> dict:
    """Wall, CPU and memory of ``agent.evaluate`` over the cases."""
    from agentnb import Agent
    from agentnb.evals import Case, check
    from agentnb.models import OpenAIChat

    agent = Agent(
        "bench", model=OpenAIChat("gpt-bench", base_url=url, stream=STREAM), instructions="Answer briefly."
    )
    items = [Case(f"question {i}", id=f"q{i:04d}", expected="ok") for i in range(cases)]
    gc.collect()
    if memory:
        tracemalloc.start()
    cpu, start = time.process_time(), time.perf_counter()
    run = agent.evaluate(
        items, [check.answer_contains()], name=name, folder=folder, concurrency=concurrency, executor=executor
    )
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    out = {
        "wall_s": wall,
        "cpu_s": cpu,
        "rows": len(run.rows),
        "errors": len(run.errors),
        "replayed": sum(r.replayed for r in run.rows),
        "rate": run.rate(),
    }
    if memory:
        gc.collect()
        retained = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        out["retained_bytes_per_case"] = retained / cases
    lines = Path(folder, "evals", name, "cases.jsonl")
    out["stored_bytes_per_case"] = lines.stat().st_size / cases
    del run
    return out


def pydantic_evals(python: str, url: str, cases: int, concurrency: int) -> dict:
    """The same cases through pydantic-evals in its own interpreter."""
    script = HERE / "peers" / "pydantic_evals_cases.py"
    done = subprocess.run(
        [python, str(script), url, str(cases), str(concurrency), "stream" if STREAM else "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--dask", action="store_true")
    parser.add_argument("--pydantic-evals", metavar="PYTHON")
    parser.add_argument("--stream", action="store_true", help="stream the answers (SSE)")
    parser.add_argument("--out")
    args = parser.parse_args()
    global STREAM
    STREAM = args.stream
    ideal = args.cases * args.latency / args.concurrency
    proc, url = start_server(args.latency)
    result: dict = {
        "cases": args.cases,
        "latency_s": args.latency,
        "concurrency": args.concurrency,
        "ideal_s": ideal,
        "cpus": os.cpu_count(),
        "load": os.getloadavg(),
    }
    try:
        bare(url, 50, args.concurrency)  # warm-up: imports, connections
        result["bare_s"], bare_cpu = bare(url, args.cases, args.concurrency)
        result["bare_cpu_ms_per_case"] = bare_cpu * 1000 / args.cases
        with tempfile.TemporaryDirectory() as folder:
            agentnb_run(url, 50, args.concurrency, folder, "warmup")
            result["agentnb"] = agentnb_run(url, args.cases, args.concurrency, folder, "bench", memory=False)
            result["agentnb_memory"] = agentnb_run(
                url, args.cases, args.concurrency, folder, "bench-memory", memory=True
            )
            result["resume"] = agentnb_run(url, args.cases, args.concurrency, folder, "bench")
            if args.dask:
                from distributed import Client, LocalCluster

                with (
                    LocalCluster(
                        n_workers=2,
                        threads_per_worker=args.concurrency // 2,
                        processes=True,
                        dashboard_address=None,
                    ) as cluster,
                    Client(cluster) as client,
                ):
                    executor = client.get_executor()
                    agentnb_run(url, 50, args.concurrency, folder, "dask-warmup", executor=executor)
                    result["dask"] = agentnb_run(
                        url, args.cases, args.concurrency, folder, "dask", executor=executor
                    )
        if args.pydantic_evals:
            try:
                result["pydantic_evals"] = pydantic_evals(
                    args.pydantic_evals, url, args.cases, args.concurrency
                )
            except subprocess.CalledProcessError as exc:
                result["pydantic_evals_error"] = exc.stderr[-1000:]
    finally:
        proc.stdin.close()
        result["server_requests"] = int(proc.stdout.readline() or 0)
        result["server_problems"] = json.loads(proc.stdout.readline() or "[]")
        proc.wait()
    for key in ("agentnb", "resume", "dask", "pydantic_evals"):
        if key in result:
            result[key]["x_ideal"] = result[key]["wall_s"] / ideal
            result[key]["x_bare"] = result[key]["wall_s"] / result["bare_s"]
    result["bare_x_ideal"] = result["bare_s"] / ideal
    result["agentnb"]["cpu_ms_per_case"] = result["agentnb"]["cpu_s"] * 1000 / args.cases
    text = json.dumps(result, indent=1)
    print(text)
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
