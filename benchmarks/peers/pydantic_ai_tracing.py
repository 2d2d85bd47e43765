"""pydantic-ai, the turn of ``bench_tracing.py`` with ``instrument=`` on or off (run in a venv
with ``pydantic-ai-slim`` and ``opentelemetry-sdk``).

The anchor harness's pydantic-ai fake model (``FunctionModel`` counting the tool returns in the
request; one ``add_item`` call at a time, then the answer) and tool. ``on``: ``Agent(...,
instrument=True)`` (content included, pydantic-ai's default) with OpenTelemetry's global
provider set, in this process only, to an SDK ``TracerProvider`` whose ``BatchSpanProcessor``
hands spans to an exporter that counts and drops them (what ``bench_tracing.py`` gives agentnb);
``nocontent``: ``InstrumentationSettings(include_content=False)``.

    /tmp/pai/bin/python benchmarks/peers/pydantic_ai_tracing.py --mode on --out results/
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


from pydantic_ai import RunContext  # noqa: E402  (module level: the tool's annotations are resolved here)


@dataclass
class Deps:
    items: list[str] = field(default_factory=list)


def make_agent(k: int, instrument: Any) -> Any:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel

    def fake_model(messages: list, info: Any) -> ModelResponse:
        n_done = sum(
            1
            for m in messages
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, ToolReturnPart)
        )
        if n_done < k:
            return ModelResponse(
                parts=[
                    ToolCallPart(
                        tool_name="add_item", args={"item": f"item-{n_done}"}, tool_call_id=f"call_{n_done}"
                    )
                ]
            )
        return ModelResponse(parts=[TextPart(f"done after {n_done} tool calls")])

    agent = Agent(FunctionModel(fake_model), deps_type=Deps)
    agent.instrument = instrument  # pydantic-ai 2.x: the instrument= of 1.x is this attribute

    @agent.tool
    def add_item(ctx: RunContext[Deps], item: str) -> str:
        """Add an item to the list kept in the run deps."""
        ctx.deps.items.append(item)
        return f"added {item}"

    return agent


def counting_exporter(include_content: bool = True) -> tuple[Any, Any]:
    """OpenTelemetry's global provider (this process only) with a batch processor and an
    exporter that counts and drops; returns (the exporter, pydantic-ai's instrument= value)."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
    from pydantic_ai.models.instrumented import InstrumentationSettings

    class Counting(SpanExporter):
        spans = 0

        def export(self, spans: Any) -> SpanExportResult:
            self.spans += len(spans)
            return SpanExportResult.SUCCESS

    exporter = Counting()
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return exporter, True if include_content else InstrumentationSettings(include_content=False)


def instruction_case(mode: str) -> tuple[Any, Any]:
    """For ``instructions.py``: an object whose ``run(message)`` is one K=1 turn, and its check."""
    instrument: Any = False
    if mode != "tracing-off":
        _, instrument = counting_exporter(mode != "tracing-nocontent")
    agent = make_agent(1, instrument)

    class Turn:
        def run(self, message: str) -> Any:
            deps = Deps()
            return agent.run_sync(message, deps=deps), deps

    def check(r: Any) -> None:
        result, deps = r
        assert result.output == "done after 1 tool calls" and deps.items == ["item-0"], (
            result.output,
            deps.items,
        )

    return Turn(), check


def run_series(turn: Any, n: int, warmup: int, check: Any) -> dict:
    import gc
    import statistics

    for _ in range(warmup):
        check(turn())
    gc.collect()
    wall, cpu = [], []
    for _ in range(n):
        c0, t0 = time.process_time_ns(), time.perf_counter_ns()
        result = turn()
        t1, c1 = time.perf_counter_ns(), time.process_time_ns()
        wall.append(t1 - t0)
        cpu.append(c1 - c0)
        check(result)
    s = sorted(wall)
    return {
        "n": n,
        "median_ms": statistics.median(s) / 1e6,
        "p95_ms": s[min(n - 1, max(0, round(0.95 * n) - 1))] / 1e6,
        "cpu_median_ms": statistics.median(cpu) / 1e6,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mode", choices=["off", "on", "nocontent"], default="on")
    p.add_argument("--n1", type=int, default=200)
    p.add_argument("--n10", type=int, default=50)
    p.add_argument("--warmup1", type=int, default=20)
    p.add_argument("--warmup10", type=int, default=5)
    p.add_argument("--tag", default="")
    p.add_argument("--out", default=None)
    args = p.parse_args()

    exporter = None
    instrument: Any = False
    if args.mode != "off":
        exporter, instrument = counting_exporter(args.mode == "on")

    out: dict = {
        "framework": "pydantic-ai",
        "version": version("pydantic-ai-slim"),
        "mode": f"tracing-{args.mode}",
        "python": platform.python_version(),
        "loadavg_start": Path("/proc/loadavg").read_text().strip(),
        "turns": {},
    }
    for k, n, w in ((1, args.n1, args.warmup1), (10, args.n10, args.warmup10)):
        agent = make_agent(k, instrument)

        # Each closure binds this iteration's agent and k (run_series calls them before the next).
        def turn(agent: Any = agent) -> Any:
            deps = Deps()
            return agent.run_sync("please add some items", deps=deps), deps

        def check(r: Any, k: int = k) -> None:
            result, deps = r
            assert result.output == f"done after {k} tool calls", result.output
            assert deps.items == [f"item-{i}" for i in range(k)], deps.items

        st = run_series(turn, n, w, check)
        if exporter is not None:
            from opentelemetry import trace

            trace.get_tracer_provider().force_flush()
            st["spans_exported"] = exporter.spans
            exporter.spans = 0
        out["turns"][f"K{k}"] = st
        print(
            f"pydantic-ai tracing-{args.mode} K={k}: median {st['median_ms']:.3f} ms  p95 {st['p95_ms']:.3f} ms | cpu median {st['cpu_median_ms']:.3f} ms"
            + (f" | spans {st['spans_exported']}" if exporter is not None else ""),
            flush=True,
        )
    out["loadavg_end"] = Path("/proc/loadavg").read_text().strip()
    out["peak_rss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, f"pydantic_ai_tracing_{args.mode}{args.tag}.json"), "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
