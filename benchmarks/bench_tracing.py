"""A turn with tracing on against off (run on demand, not in the test suite).

The turn of ``bench_turns.py`` (a zero-cost scripted model, K ``add_item`` calls, everything
agentnb records kept on), with ``agentnb.tracing`` writing every turn's spans to a private SDK
``TracerProvider`` whose ``BatchSpanProcessor`` hands them to an exporter that counts and drops
them (so the figure is agentnb's and the SDK's work, not a network's). Modes: ``off``, ``on``
(content off, the default), ``content`` (prompts, messages, tool arguments and results captured,
as pydantic-ai's ``instrument=True`` does by default). Process CPU time includes the flush
thread. ``peers/pydantic_ai_tracing.py`` is the same turn in pydantic-ai.

    python benchmarks/bench_tracing.py --mode on --out results/
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_turns import make_agent, make_check, make_turn, run_series  # noqa: E402


def counting_provider() -> tuple[Any, Any]:
    """A private SDK provider with a batch processor and an exporter that counts and drops."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    class Counting(SpanExporter):
        def __init__(self) -> None:
            self.spans = 0

        def export(self, spans: Any) -> SpanExportResult:
            self.spans += len(spans)
            return SpanExportResult.SUCCESS

    exporter = Counting()
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(exporter))
    return provider, exporter


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mode", choices=["off", "on", "content"], default="on")
    p.add_argument("--n1", type=int, default=200, help="measured turns for K=1")
    p.add_argument("--n10", type=int, default=50, help="measured turns for K=10")
    p.add_argument("--warmup1", type=int, default=20)
    p.add_argument("--warmup10", type=int, default=5)
    p.add_argument("--tag", default="")
    p.add_argument("--out", default=None, help="folder for the JSON result")
    args = p.parse_args(argv)

    import agentnb
    from agentnb import tracing

    out: dict = {
        "framework": "agentnb",
        "version": agentnb.__version__,
        "mode": f"tracing-{args.mode}",
        "python": platform.python_version(),
        "loadavg_start": Path("/proc/loadavg").read_text().strip(),
        "turns": {},
    }
    exporter = None
    if args.mode != "off":
        provider, exporter = counting_provider()
        tracing.instrument(provider, capture_content=args.mode == "content")
    for k, n, w in ((1, args.n1, args.warmup1), (10, args.n10, args.warmup10)):
        agent, model, _ = make_agent(k, "recording")
        st = run_series(make_turn(agent, model), n, w, make_check(agent, model, k))
        if exporter is not None:
            tracing.flush(timeout=60)
            st["spans_exported"] = exporter.spans
            exporter.spans = 0
        out["turns"][f"K{k}"] = st
        print(
            f"agentnb tracing-{args.mode} K={k}: median {st['median_ms']:.3f} ms  p95 {st['p95_ms']:.3f} ms | cpu median {st['cpu_median_ms']:.3f} ms"
            + (f" | spans {st['spans_exported']}" if exporter is not None else ""),
            flush=True,
        )
    out["loadavg_end"] = Path("/proc/loadavg").read_text().strip()
    out["peak_rss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, f"agentnb_tracing_{args.mode}{args.tag}.json"), "w") as f:
            json.dump(out, f, indent=2)
    return out


if __name__ == "__main__":
    main()
