"""An evaluation case in the inspector: its turns in the usual tabs, its verdicts in the Checks tab,
and — for a case that flipped between two runs — the Compare tab on the two runs' turns. It opens
on the tab that answers the question asked: Checks for a case of a run (why did it fail?),
Compare for a case of a comparison (why did it flip?).

A case is shown through an agent built from the evaluation's definition whose history is the
case's stored turns (nothing runs); the inspector is the usual one plus one synced trait holding
the verdicts. For a flipped case the candidate's case agent has the baseline's as its parent, so
Compare opens on the two turns side by side.
"""

from __future__ import annotations

import json
import weakref

import traitlets

from ..agent import Agent
from ..evals import CaseRow, EvalComparison, EvalRun
from ..evals.engine.worker import case_agent as fresh_case_agent
from .inspector import Inspector

_KEPT: dict[str, Agent] = {}
"""Case agents shown, by name (a fork's parent is a weak reference: this keeps it alive)."""


class CaseInspector(Inspector):
    """The inspector of one evaluation case: the usual tabs, plus Checks."""

    case_checks = traitlets.Unicode("").tag(sync=True)  # named wire.TRAIT_CHECKS
    """The case's verdicts as JSON ``{case, repeat, status, error, verdicts}``."""
    open_tab = traitlets.Unicode("checks").tag(sync=True)  # named wire.TRAIT_TAB
    """The tab a view opens on (checks, or compare for a case of a comparison)."""


def case_agent(run: EvalRun, row: CaseRow) -> Agent:
    """An agent holding ``row``'s turns (built from the run's definition; it never runs them)."""
    name = f"{run.name}:{row.case.id}" + (f"#{row.repeat + 1}" if row.repeat else "")
    definition = getattr(run, "definition", None)
    agent = fresh_case_agent(definition, run.model, row.case) if definition is not None else Agent(name)
    agent.name = name
    agent.history.replace(row.turns)
    if row.turns:
        agent.state.replace_data(dict(row.turns[-1].state_after))
    _KEPT[name] = agent
    return agent


def checks_json(row: CaseRow) -> str:
    """What the Checks tab reads."""
    return json.dumps(
        {
            "case": row.case.id,
            "repeat": row.repeat,
            "status": row.status,
            "error": row.error,
            "verdicts": [v.to_dict() for v in row.verdicts],
        },
        ensure_ascii=False,
        default=str,
    )


def case_inspector(
    run: EvalRun, case_id: str, repeat: int = 0, *, baseline: EvalRun | None = None
) -> CaseInspector:
    """The inspector of a case of ``run`` (beside ``baseline``'s same case in Compare, if given)."""
    row = run.case(case_id, repeat)
    agent = case_agent(run, row)
    if baseline is not None:
        parent = case_agent(baseline, baseline.case(case_id, repeat))
        agent._parent = weakref.ref(parent)
        agent.forked_at = 0
    inspector = CaseInspector(agent, open_tab="checks" if baseline is None else "compare")
    inspector.case_checks = checks_json(row)
    return inspector


def inspect(target: EvalRun | EvalComparison, case_id: str, repeat: int = 0) -> CaseInspector:
    """The inspector of a case of a run, or of a comparison (Compare pairs the two runs' turns);
    a cell ending with it shows it."""
    if isinstance(target, EvalComparison):
        return case_inspector(target.candidate, case_id, repeat, baseline=target.baseline)
    return case_inspector(target, case_id, repeat)


__all__ = ["CaseInspector", "case_agent", "case_inspector", "checks_json", "inspect"]
