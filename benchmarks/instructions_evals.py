"""Instructions per evaluated case against instructions per plain turn, counted by valgrind.

    .venv/bin/python benchmarks/instructions_evals.py

What ``agent.evaluate`` adds to a turn whatever the machine's load: each mode runs twice under
``valgrind --tool=callgrind`` (after warm-up, 20 and then 120 units of work) and the difference
is divided by 100, so start-up and imports cancel out. The agent is the shop of the tests (a
scripted model, one tool call through a hook, then an answer: two model calls a case).

- ``run``: ``agent.run(message)`` — one plain turn (the baseline);
- ``evaluate``: ``agent.evaluate`` over the cases, concurrency 1: a fresh agent per case, two
  checks, the case's line written and fsynced (the fsync's kernel time is not counted);
- ``replay``: the same evaluation again: every case replays from its line;
- ``rescore``: ``run.rescore(checks)`` over the stored turns (no agent call).
``replay`` and ``rescore`` run after an ``evaluate`` in the same process; their figures are net of it.

Against the loopback OpenAI-compatible server of ``bench_evals.py`` (started here, outside valgrind;
no latency), one model call a case:
- ``bare``: the ``openai`` client alone, one call after another (the floor any Python client pays);
- ``openai``: ``agent.evaluate`` over the cases with ``OpenAIChat``, concurrency 16 (threads, a
  reader per call, the in-flight limit, a fresh agent, one check, the line written).

Against the loopback server of ``bench_typed.py`` (it answers an ``Invoice`` as JSON):
- ``typed_bare``: the ``openai`` client alone with a ``response_format``, the JSON parsed;
- ``map``: ``agent.map`` over the items into ``Invoice`` rows, concurrency 16 (a fresh agent per
  row, native structured output, each answer validated, the line written).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
COUNTS = (20, 120)
MODES = ("run", "evaluate", "replay", "rescore", "bare", "openai", "typed_bare", "map")
SERVED = {"bare", "openai"}
TYPED = {"typed_bare", "map"}
BASE = {"openai": "bare", "map": "typed_bare"}
URL_ENV = "AGENTNB_BENCH_URL"


def child(mode: str, n: int) -> None:
    sys.path.insert(0, str(HERE.parent / "tests"))
    from evals_helpers import shop

    from agentnb.evals import Case, check

    checks = [check.called("add_item"), check.state("/items", contains=check.EXPECTED)]
    agent = shop()
    folder = tempfile.mkdtemp()

    def cases(count: int, tag: str) -> list:
        return [Case(f"item{i}", id=f"{tag}{i}", expected=f"item{i}") for i in range(count)]

    if mode in SERVED:
        server_calls(mode, n)
        return
    if mode in TYPED:
        typed_calls(mode, n)
        return
    if mode == "run":
        for i in range(5 + n):
            agent.run(f"item{i}")
        return
    agent.evaluate(cases(5, "w"), checks, name="warm", folder=folder, concurrency=1, display=False)
    run = agent.evaluate(cases(n, "c"), checks, name="bench", folder=folder, concurrency=1, display=False)
    if mode == "replay":
        agent.evaluate(cases(n, "c"), checks, name="bench", folder=folder, concurrency=1, display=False)
    elif mode == "rescore":
        run.rescore(checks)


def server_calls(mode: str, n: int) -> None:
    """``n`` model calls through the openai client alone, or ``n`` evaluated cases on OpenAIChat."""
    url = os.environ[URL_ENV]
    if mode == "bare":
        import openai

        client = openai.OpenAI(base_url=url, api_key="x", max_retries=0)
        for i in range(5 + n):
            client.chat.completions.create(
                model="gpt-bench",
                messages=[
                    {"role": "system", "content": "Answer briefly."},
                    {"role": "user", "content": f"question {i}"},
                ],
            )
        return
    from agentnb import Agent
    from agentnb.evals import Case, check
    from agentnb.models import OpenAIChat

    agent = Agent(
        "bench", model=OpenAIChat("gpt-bench", base_url=url, stream=False), instructions="Answer briefly."
    )
    folder = tempfile.mkdtemp()
    agent.evaluate(
        [Case(f"w{i}", id=f"w{i}", expected="ok") for i in range(5)],
        [check.answer_contains()],
        name="warm",
        folder=folder,
        concurrency=16,
        display=False,
    )
    items = [Case(f"question {i}", id=f"q{i:04d}", expected="ok") for i in range(n)]
    agent.evaluate(
        items, [check.answer_contains()], name="bench", folder=folder, concurrency=16, display=False
    )


def typed_calls(mode: str, n: int) -> None:
    """``n`` calls through the openai client alone asking for the JSON, or ``n`` rows of ``agent.map``."""
    from bench_typed import bare, mapped

    url = os.environ[URL_ENV]
    rows = [f"Invoice No. A-{i} from ACME GmbH, total 1,250.00 EUR." for i in range(n)]
    if mode == "typed_bare":
        bare(url, rows[:5], 1)
        bare(url, rows, 16)
        return
    folder = tempfile.mkdtemp()
    mapped(url, rows[:5], 16, folder, "warm")
    mapped(url, rows, 16, folder, "bench")


def count(mode: str, n: int) -> int:
    """Instructions of one child process under callgrind."""
    command = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        sys.executable,
        __file__,
        "--child",
        mode,
        str(n),
    ]
    done = subprocess.run(
        command, capture_output=True, text=True, env=dict(os.environ, PYTHONHASHSEED="0"), check=True
    )
    match = re.search(r"Collected : (\d+)", done.stderr)
    if match is None:
        raise RuntimeError(f"no instruction count in valgrind's output:\n{done.stderr[-2000:]}")
    return int(match.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", nargs=2, metavar=("MODE", "N"), help=argparse.SUPPRESS)
    parser.add_argument("--modes", nargs="*", default=list(MODES))
    args = parser.parse_args()
    if args.child:
        child(args.child[0], int(args.child[1]))
        return
    per: dict[str, float] = {}
    servers = []
    sys.path.insert(0, str(HERE))
    for mode in args.modes:
        if mode in SERVED | TYPED:
            for server in servers:  # one server at a time: each answers its own way
                server.stdin.close()
                server.wait()
            servers = [_server(typed=mode in TYPED)]
        low, high = (count(mode, n) for n in COUNTS)
        per[mode] = (high - low) / (COUNTS[1] - COUNTS[0])
        if mode in ("replay", "rescore") and "evaluate" in per:
            per[mode] -= per["evaluate"]
        base = per.get(BASE.get(mode, "run"))
        against = "the bare client's call" if mode in BASE else "a plain turn"
        shown = mode not in ("run", "bare", "typed_bare")
        ratio = f"  ({per[mode] / base:.2f}× {against})" if base and shown else ""
        print(f"{mode:10} {per[mode] / 1e6:7.3f} M instructions per case{ratio}", flush=True)
    for server in servers:
        server.stdin.close()
        server.wait()


def _server(typed: bool) -> subprocess.Popen:
    """The loopback server (``bench_typed.py``'s for the typed modes), its URL in ``URL_ENV``."""
    if not typed:
        from bench_evals import start_server

        server, os.environ[URL_ENV] = start_server(0.0)
        return server
    import json

    from bench_typed import INVOICE, SERVER

    script = SERVER.format(tests=str(HERE.parent / "tests"), latency=0.0, answer=json.dumps(INVOICE))
    server = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert server.stdout is not None
    os.environ[URL_ENV] = server.stdout.readline().strip()
    return server


if __name__ == "__main__":
    main()
