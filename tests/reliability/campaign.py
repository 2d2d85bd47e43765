"""What the campaign's tests share: how many cases to try, a tally of what failed, and where to
damage a JSON document.

Sized tests take the ``scale`` fixture and run twice: a fast variant (always) and a heavy one
marked ``campaign``, skipped unless ``--campaign`` is given (when running ``pytest
tests/reliability``) or ``AGENTNB_CAMPAIGN=1`` is set (anywhere); ``scale(fast, heavy)`` says
how many cases to try. Every area records its cases in a ``Tally``; the terminal summary prints
them as ``area | cases tried | failures``.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

TALLIES: list[Tally] = []
CONFIG: list[Any] = []
"""The pytest config, once the conftest has seen it."""


def campaign_enabled() -> bool:
    """Whether the heavy campaign was asked for."""
    if os.environ.get("AGENTNB_CAMPAIGN", "") not in ("", "0"):
        return True
    try:
        return bool(CONFIG and CONFIG[0].getoption("--campaign"))
    except ValueError:  # the conftest was not loaded at start-up, so the option does not exist
        return False


@dataclass(frozen=True)
class Scale:
    """How big a sized test's variant is."""

    heavy: bool

    def __call__(self, fast: int, heavy: int) -> int:
        return heavy if self.heavy else fast


@dataclass
class Tally:
    """Cases tried in one area and the failures seen, by kind."""

    area: str
    cases: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        TALLIES.append(self)

    def check(self, kind: str | None, example: Any = "") -> None:
        """Count one case: ``kind`` is None when it held, else what went wrong."""
        self.cases += 1
        if kind is not None:
            self.failures[kind] += 1
            self.examples.setdefault(kind, str(example)[:200])

    @property
    def failed(self) -> int:
        return sum(self.failures.values())

    def summary(self) -> str:
        kinds = "; ".join(f"{n} x {k} (e.g. {self.examples[k]!r})" for k, n in self.failures.most_common())
        return f"{self.area}: {self.failed} of {self.cases} cases failed: {kinds}"


def json_paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value, as the keys and indexes that reach it (``()`` is the whole)."""
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += json_paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out += json_paths(item, (*prefix, i))
    return out


def replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    """A copy of a JSON value with what is at ``path`` replaced by ``new`` (the original untouched)."""
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = replaced(value[path[0]], path[1:], new)
    return copy
