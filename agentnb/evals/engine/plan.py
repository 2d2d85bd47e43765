"""The budget gate: before any live call, what will replay and what will call which model, at what cost.

Tokens of a case that goes live are taken from its recorded runs (another repeat, an earlier
errored try), else the mean of the recorded cases, else the size of its first request (input
only). Cost is known where ``prices`` gives the model's price per million tokens.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...definition import AgentDefinition
from ...errors import EvalBudgetError
from ...messages import ImagePart
from ...models.tokens import CHARS_PER_TOKEN, image_tokens
from ..cases import Case
from .worker import case_agent


@dataclass(frozen=True)
class Plan:
    """What an evaluation will do before it does it."""

    total: int
    """(case, repeat) runs in all."""
    replay: int
    """Runs a finished recording answers (no model call)."""
    live: int
    """Runs that call the model."""
    model: str
    """The model they call."""
    external: bool
    """Whether that model is outside this process (it costs)."""
    input_tokens: int
    """Input tokens the live runs will cost, at recorded counts."""
    output_tokens: int
    """Output tokens the live runs will cost, at recorded counts (0 when none is recorded)."""
    cost: float | None
    """Their cost where the model's price is known, else None."""

    def text(self) -> str:
        """One line, as the progress display and the record show it."""
        head = f"plan: {self.replay} of {self.total} run(s) replay from the recording"
        if not self.live:
            return head + "; no model call"
        tokens = f"≈ {self.input_tokens + self.output_tokens:,} tokens at recorded counts"
        cost = f", ≈ ${self.cost:.4f}" if self.cost is not None else ""
        what = (
            f"call {self.model} ({tokens}{cost})"
            if self.external
            else f"run live on {self.model} (offline, no cost)"
        )
        return f"{head}; {self.live} {what}"


def price_of(prices: Mapping[str, Any] | None, label: str) -> tuple[float, float] | None:
    """(input, output) dollars per million tokens of ``label`` (``openai:gpt-5-mini`` or ``gpt-5-mini``)."""
    if not prices:
        return None
    key = label if label in prices else label.split(":", 1)[-1]
    value = prices.get(key)
    if value is None:
        return None
    try:
        given, taken = (
            (float(value[0]), float(value[1]))
            if isinstance(value, (list, tuple))
            else (float(value), float(value))
        )
    except (TypeError, ValueError, IndexError):
        given = taken = math.nan
    if not all(math.isfinite(x) and x >= 0 for x in (given, taken)):
        raise EvalBudgetError(
            f"prices[{key!r}] must be (input, output) dollars per million tokens, two numbers >= 0, "
            f"got {value!r}"
        )
    return given, taken


def usage_of(row: Mapping[str, Any]) -> tuple[int, int]:
    """(input, output) tokens a stored row's turns used."""
    turns = row.get("turns") or []
    return sum(t.get("usage", {}).get("input_tokens", 0) for t in turns), sum(
        t.get("usage", {}).get("output_tokens", 0) for t in turns
    )


def make_plan(
    live: list[tuple[str, Any]],
    total: int,
    rows: Mapping[tuple[str, int], Mapping[str, Any]],
    model: Any,
    prices: Mapping[str, Any] | None,
    request_chars: Any,
) -> Plan:
    """The plan for ``live`` (case id, case) runs out of ``total``, given the stored ``rows``;
    ``request_chars(case)`` is the length of a case's first request as JSON."""
    by_case: dict[str, tuple[int, int]] = {}
    for (case_id, _), row in rows.items():
        if row.get("turns"):
            by_case.setdefault(case_id, usage_of(row))
    recorded = list(by_case.values())
    mean = (
        (sum(u[0] for u in recorded) // len(recorded), sum(u[1] for u in recorded) // len(recorded))
        if recorded
        else None
    )
    given = taken = 0
    for case_id, case in live:
        usage = by_case.get(case_id) or mean
        if usage is None:
            chars = request_chars(case)
            usage = (max(1, chars // CHARS_PER_TOKEN) if chars else 0, 0)  # as estimate_tokens counts
        given += usage[0]
        taken += usage[1]
    price = price_of(prices, model.label)
    cost = None if price is None else (given * price[0] + taken * price[1]) / 1e6
    return Plan(
        total,
        total - len(live),
        len(live),
        model.label,
        bool(model.external),
        given,
        taken,
        cost if model.external else 0.0,
    )


def gate(plan: Plan, max_cost: float | None) -> None:
    """Refuse (``EvalBudgetError``) a plan above ``max_cost``, or one whose cost cannot be known."""
    if max_cost is None or not plan.live or not plan.external:
        return
    if plan.cost is None:
        raise EvalBudgetError(
            f"{plan.text()}; its cost is unknown: give prices={{'{plan.model}': (input, output)}} "
            "in dollars per million tokens, or drop max_cost"
        )
    if plan.cost > max_cost:
        raise EvalBudgetError(
            f"{plan.text()}; that is above max_cost=${max_cost:g}: nothing was called. "
            "Raise max_cost, or evaluate fewer cases"
        )


class RequestChars:
    """The length of a case's first request as JSON (what the plan estimates its tokens from).
    Cases that differ only in their one message share the rest of it: once ``SAMPLE`` of them
    gave the same rest, the others cost a length, not a fresh agent and a rendered prompt (a
    prompt that depends on the message — retrieval — keeps every case measured)."""

    SAMPLE = 3

    def __init__(self, definition: AgentDefinition, model: Any) -> None:
        self._definition, self._model = definition, model
        self._rests: set[int] = set()
        self._seen = 0

    def __call__(self, case: Case) -> int:
        message = case.turns[0]
        plain = case.state is None and case.start is None and isinstance(message, str)
        if plain and self._seen >= self.SAMPLE and len(self._rests) == 1:
            return next(iter(self._rests)) + _json_chars(message)
        size = len(json.dumps(self._request(case), ensure_ascii=False, default=str)) + _image_chars(message)
        if plain:
            self._rests.add(size - _json_chars(message))
            self._seen += 1
        return size

    def _request(self, case: Case) -> Any:
        try:
            message = case.turns[0]
            sent = list(message) if isinstance(message, tuple) else message  # a message of parts
            agent = case_agent(self._definition, self._model, case)
            return agent.observe(sent).request
        except Exception:
            return case.to_dict()


def _image_chars(message: Any) -> int:
    """The images of a message of parts, as the characters their tokens would be: a request
    names an image by its hash, and it costs what OpenAI's tile rule says (an estimate)."""
    if not isinstance(message, tuple):
        return 0
    images = [p for p in message if isinstance(p, ImagePart) and p.data is not None]
    return sum(image_tokens(p.width, p.height, p.detail) for p in images) * CHARS_PER_TOKEN


def _json_chars(text: str) -> int:
    """Characters ``text`` takes inside a JSON document (quotes left out)."""
    return len(json.dumps(text, ensure_ascii=False)) - 2


__all__ = ["Plan", "RequestChars", "gate", "make_plan", "price_of", "usage_of"]
