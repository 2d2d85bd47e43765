"""Evaluating an agent over cases: ``agent.evaluate(cases, checks, name=...)``.

Every (case, repeat) runs on a fresh agent built from the definition, concurrently under one
in-flight limit per model, and is stored beside the notebook (``<notebook>.agentnb/evals/NAME/``)
before the next takes its slot; re-running is resuming, re-scoring calls no agent, and two runs
compare case by case. See docs/guides/evaluation.md.
"""

from __future__ import annotations

from . import check
from .cases import Case, Start, cases_from_frame, load_cases
from .checks import EXPECTED, CaseView, Check, Verdict
from .compare import EvalComparison
from .limiter import Limiter
from .plan import Plan
from .progress import Progress
from .results import CaseRow, EvalRun, load_run
from .runner import aevaluate, evaluate

__all__ = [
    "EXPECTED",
    "Case",
    "CaseRow",
    "CaseView",
    "Check",
    "EvalComparison",
    "EvalRun",
    "Limiter",
    "Plan",
    "Progress",
    "Start",
    "Verdict",
    "aevaluate",
    "cases_from_frame",
    "check",
    "evaluate",
    "load_cases",
    "load_run",
]
