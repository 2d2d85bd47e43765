"""``agent.map(items, output_type=T)``: one run per item, a DataFrame of typed rows back.

Each item is a case of an evaluation with no checks (``evaluate``): it runs on a fresh agent
built from the definition, under the evaluation's per-model in-flight limit (429-aware), budget
gate (``max_cost``) and live progress line, and is stored beside the notebook
(``NOTEBOOK.agentnb/evals/NAME/``) as it finishes. Re-running the cell is resuming: finished items
replay from the store, with no model call (so under nbval too). The frame is aligned with the
input's index: one column per top-level field of the output, then ``status``, ``error``,
``attempts`` (the answers checked) and ``tokens``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..definition import AgentDefinition
from ..errors import ConfigurationError
from ..run.output import OutputSpec
from .cases import Case
from .evaluation import evaluate
from .report.case_row import CaseRow
from .report.eval_run import EvalRun

if TYPE_CHECKING:
    import pandas

BOOKKEEPING = ("status", "error", "attempts", "tokens")
"""The columns after the output's fields (a field of the same name moves them to ``_status``, ...)."""


def map_items(
    agent: Any,
    items: Any,
    *,
    output_type: Any = None,
    input: str | None = None,
    name: str | None = None,
    concurrency: int = 8,
    executor: Any = None,
    folder: Any = None,
    max_cost: float | None = None,
    prices: Mapping[str, Any] | None = None,
    retry_errors: int = 0,
    display: bool | None = None,
    on_progress: Any = None,
) -> pandas.DataFrame:
    """Run ``agent`` once per item (a list, a pandas Series or a DataFrame, with ``input=`` a
    column or a ``"{title}: {body}"`` template over the columns) and return a DataFrame aligned
    with the items' index: the output's fields, ``status``, ``error``, ``attempts``, ``tokens``.
    ``output_type`` overrides the agent's for these runs; ``name`` is the store's folder
    (default ``<agent>_map``). See ``agent.evaluate`` for ``concurrency``, ``executor``,
    ``max_cost`` / ``prices`` and ``retry_errors``."""
    labels, messages = _messages(items, input)
    cases = [Case(message, id=str(label)) for label, message in zip(labels, messages)]
    run = evaluate(
        _typed(agent, output_type),
        cases,
        (),
        name=name or f"{agent.name}_map",
        concurrency=concurrency,
        executor=executor,
        folder=folder,
        retry_errors=retry_errors,
        max_cost=max_cost,
        prices=prices,
        display=display,
        on_progress=on_progress,
    )
    return frame_of(run, labels, items.index if _is_pandas(items) else None)


def _typed(agent: Any, output_type: Any) -> Any:
    """The agent the items run on: ``agent`` itself, or (for another output type) a copy of its
    definition asking for that type."""
    if output_type is None:
        return agent
    OutputSpec(output_type)  # a type that cannot be an output type fails here, before any run
    definition = AgentDefinition.of(agent, configured=True)
    definition.settings["output_type"] = output_type
    return definition.build()


def _is_pandas(items: Any) -> bool:
    """Whether ``items`` is a pandas Series or DataFrame (its index is kept)."""
    return type(items).__module__.startswith("pandas") and hasattr(items, "index")


def _messages(items: Any, input: str | None) -> tuple[list[Any], list[Any]]:
    """The items' labels (their index, or their positions) and the message each sends."""
    if _is_pandas(items) and hasattr(items, "columns"):  # a DataFrame
        return list(items.index), _frame_messages(items, input)
    if input is not None:
        raise ConfigurationError(
            "map: input= names a column or a template of a DataFrame's columns; items is not a DataFrame"
        )
    if _is_pandas(items):  # a Series
        labels, values = list(items.index), items.tolist()
    elif isinstance(items, Iterable) and not isinstance(items, (str, bytes, Mapping)):
        values = list(items)
        labels = list(range(len(values)))
    else:
        raise ConfigurationError(
            f"map: items must be a list, a pandas Series or a DataFrame, got {type(items).__name__}"
        )
    for label, value in zip(labels, values):
        if not isinstance(value, (str, Mapping)):
            raise ConfigurationError(
                f"map: item {label!r} is a {type(value).__name__}; each item is a message (a str) or a "
                "dict of input fields"
            )
    _unique(labels)
    return labels, values


def _frame_messages(frame: Any, input: str | None) -> list[str]:
    columns = [str(c) for c in frame.columns]
    if input is None:
        if len(columns) != 1:
            raise ConfigurationError(
                f"map: give input= a column ({', '.join(columns)}) or a template like '{{{columns[0]}}}: ...'"
            )
        input = columns[0]
    _unique(list(frame.index))
    records = [{str(k): v for k, v in row.items()} for row in frame.to_dict("records")]
    if "{" not in input:
        if input not in columns:
            raise ConfigurationError(
                f"map: input={input!r} is not a column; the columns are {', '.join(columns)}"
            )
        return [str(row[input]) for row in records]
    try:
        return [input.format_map(row) for row in records]
    except KeyError as exc:
        raise ConfigurationError(
            f"map: the template {input!r} names {exc.args[0]!r}, which is not a column ({', '.join(columns)})"
        ) from None
    except (ValueError, IndexError) as exc:
        raise ConfigurationError(f"map: the template {input!r} does not read: {exc}") from None


def _unique(labels: list[Any]) -> None:
    seen: set[str] = set()
    for label in labels:
        key = str(label)
        if key in seen:
            raise ConfigurationError(
                f"map: the label {label!r} is there twice; each item needs its own (reset_index() numbers them)"
            )
        seen.add(key)


def frame_of(run: EvalRun, labels: list[Any], index: Any = None) -> pandas.DataFrame:
    """The run's rows as a DataFrame in the items' order, indexed as they were."""
    import pandas as pd

    by_id = {row.case.id: row for row in run.rows}
    rows = [_row(by_id.get(str(label))) for label in labels]
    fields: dict[str, None] = {}
    for output, _ in rows:
        fields.update(dict.fromkeys(output))
    columns = list(fields) + [f"_{c}" if c in fields else c for c in BOOKKEEPING]
    records = [{**output, **dict(zip(columns[len(fields) :], kept))} for output, kept in rows]
    frame_index = index if index is not None else pd.RangeIndex(len(labels))
    return pd.DataFrame(records, columns=columns, index=frame_index)


def _row(row: CaseRow | None) -> tuple[dict[str, Any], tuple[Any, ...]]:
    """(the output's fields, the bookkeeping values) of one item."""
    if row is None:  # not run: the evaluation stopped before it (max_errors)
        return {}, ("skipped", None, 0, 0)
    turn = row.turns[-1] if row.turns else None
    data = copy.deepcopy(turn.output_data) if turn is not None else None
    output = data if isinstance(data, dict) else {} if data is None else {"output": data}
    attempts = len(turn.attempts) if turn is not None else 0
    return output, (row.status, row.error, attempts, sum(row.tokens))


__all__ = ["BOOKKEEPING", "frame_of", "map_items"]
