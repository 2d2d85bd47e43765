"""pydantic-ai, the typed turn of ``bench_typed.py turns`` (run in a venv with ``pydantic-ai-slim``).

A ``FunctionModel`` calls the output tool with an ``Invoice`` (what agentnb's ``tool`` mode
gets from its ``ScriptedModel``); the fake model's own time is measured and taken out, as on
agentnb's side. One process, one series; prints one JSON line of medians.

    /tmp/pai/bin/python benchmarks/peers/pydantic_ai_typed.py --turns 300
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Literal

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from measure import ModelClock, run_series  # noqa: E402  (the benchmarks' own helpers, standard library)
from pydantic import BaseModel  # noqa: E402

INVOICE = {"number": "A-101", "vendor": "ACME GmbH", "total": 1250.0, "currency": "EUR"}


class Invoice(BaseModel):
    number: str
    vendor: str
    total: float
    currency: Literal["EUR", "USD"]


def main() -> None:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=300)
    args = parser.parse_args()
    clock = ModelClock()

    def fake_model(messages: list, info: Any) -> ModelResponse:
        return ModelResponse(
            parts=[ToolCallPart(info.output_tools[0].name, dict(INVOICE), tool_call_id="c1")]
        )

    agent = Agent(
        FunctionModel(clock.timed(fake_model)), output_type=Invoice, instructions="Read the invoice."
    )

    def turn() -> Any:
        return agent.run_sync("Invoice No. A-101 from ACME GmbH, total 1,250.00 EUR.")

    def check(result: Any) -> None:
        assert result.output.total == 1250.0

    series = run_series(turn, check, args.turns, max(20, args.turns // 10), clock)
    print(
        json.dumps(
            {name: series[name]["median"] for name in ("framework_ms", "wall_ms", "cpu_ms", "model_ms")}
        )
    )


if __name__ == "__main__":
    main()
