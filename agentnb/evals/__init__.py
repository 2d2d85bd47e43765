"""Evaluating an agent over cases: ``agent.evaluate(cases, checks, name=...)``.

Every (case, repeat) runs on a fresh agent built from the definition, concurrently under one
in-flight limit per model, and is stored beside the notebook (``<notebook>.agentnb/evals/NAME/``)
before the next takes its slot; re-running is resuming, re-scoring calls no agent, and two runs
compare case by case. See docs/guides/evaluation.md.
"""

from __future__ import annotations

from .cases import Case, Start, cases_from_frame, load_cases
from .checks import builtin as check
from .checks.base import EXPECTED, CaseView, Check, Verdict
from .engine.limiter import Limiter
from .engine.plan import Plan
from .engine.progress import Progress
from .evaluation import aevaluate, evaluate
from .report.case_row import CaseRow
from .report.eval_comparison import EvalComparison
from .report.eval_run import EvalRun
from .report.load import load_run

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
