"""An evaluation's cases as traces: each (case, repeat) is the root of a trace holding its turns.

``observe_case`` is the tracing layer's evaluation observer (``slots.evaluation_observers``).
On the thread that runs a case it makes the case's span current (and the evaluation's session,
under the OpenTelemetry context key OpenInference's ``using_session`` uses), so the case's turns
go under it; once the case is scored it writes that span: the evaluation's name and id, the
case id and repeat, the verdicts (``agentnb.eval.verdicts`` and one GenAI
``gen_ai.evaluation.result`` event per check), and a link to each turn that ran elsewhere (an
executor's worker). Every case of one ``evaluate`` call shares a session, so Phoenix and MLflow
list an evaluation as one session and filter its traces by ``agentnb.eval.name``.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any

from . import conventions as sc
from .bounds import finish
from .handoff import handoff_for
from .live import OI_SESSION_KEY, route, settings_for, trace_of

_ids: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
_ids_lock = threading.Lock()


def evaluation_id(evaluation: Any) -> str:
    """The id of one ``evaluate`` call (random, the same for all its cases)."""
    with _ids_lock:
        found = _ids.get(evaluation)
        if found is None:
            found = _ids[evaluation] = os.urandom(8).hex()
        return found


def _ignore(row: Any) -> None:
    """What an untraced evaluation's cases are given to call."""


@contextlib.contextmanager
def observe_case(evaluation: Any, case_id: str, repeat: int) -> Iterator[Callable[[Any], None]]:
    """Around one (case, repeat) on the thread that runs it (see the module docstring)."""
    routed = route(getattr(evaluation, "agent", None))
    if routed is None:
        yield _ignore
        return
    from opentelemetry import context as otel_context
    from opentelemetry import trace

    from .spans import span_id_of, trace_id_of

    provider, capture = routed
    name = str(getattr(evaluation, "name", "evaluation"))
    eval_id = evaluation_id(evaluation)
    key = f"agentnb-eval/{eval_id}/{case_id}/{repeat}"
    session = f"eval/{name}/{eval_id}"
    case_span = trace.SpanContext(
        trace_id_of(key), span_id_of(key, "root"), False, trace.TraceFlags(trace.TraceFlags.SAMPLED)
    )
    ctx = trace.set_span_in_context(trace.NonRecordingSpan(case_span))
    token = otel_context.attach(otel_context.set_value(OI_SESSION_KEY, session, ctx))
    rows: list[Any] = []
    start = time.time_ns()
    try:
        yield rows.append
    finally:
        otel_context.detach(token)
    if not rows:  # the case was interrupted: no verdicts to give
        return
    end = time.time_ns()
    settings = settings_for(evaluation.agent, capture, session)
    case = _Case(name, eval_id, case_id, repeat, session, rows[-1])

    def write() -> None:
        from opentelemetry.trace import Status, StatusCode

        from .spans import start_root

        attrs = case.attributes(settings.content)
        span = start_root(
            provider, key, f"{sc.EVALUATE} {name}", attrs, start, case.links(case_span.trace_id), settings
        )
        for verdict in case.verdicts(settings.content):
            span.add_event(sc.EVALUATION_RESULT, finish(verdict, settings.redactor), timestamp=end)
        if case.row.status != "ok":
            error = case.row.error if settings.content else case.row.error_type
            span.set_status(Status(StatusCode.ERROR, settings.redactor.text(str(error or "error"))))
        span.end(end_time=end)

    handoff_for(provider).submit(write)


class _Case:
    """One scored (case, repeat) of an evaluation, as span attributes, events and links."""

    def __init__(self, name: str, eval_id: str, case_id: str, repeat: int, session: str, row: Any) -> None:
        self.name, self.eval_id, self.case_id, self.repeat = name, eval_id, case_id, repeat
        self.session, self.row = session, row
        self.run_ids = [t.run_id for t in getattr(row, "turns", ()) if getattr(t, "run_id", None)]

    def attributes(self, content: bool) -> dict[str, Any]:
        row = self.row
        passed = getattr(row, "passed", None)
        attrs: dict[str, Any] = {
            sc.OI_KIND: "CHAIN",
            sc.EVAL_NAME: self.name,
            sc.EVAL_ID: self.eval_id,
            sc.EVAL_CASE: self.case_id,
            sc.EVAL_REPEAT: self.repeat,
            sc.EVAL_STATUS: str(row.status),
            sc.EVAL_REPLAYED: bool(getattr(row, "replayed", False)),
            sc.EVAL_RUN_IDS: list(self.run_ids),
            sc.EVAL_VERDICTS: json.dumps(
                [self._verdict(v, content) for v in getattr(row, "verdicts", ())], default=str
            ),
            sc.CONVERSATION_ID: self.session,
            sc.OI_SESSION: self.session,
            sc.OI_METADATA: json.dumps(
                {"evaluation": self.name, "case_id": self.case_id, "repeat": self.repeat, "passed": passed}
            ),
        }
        if passed is not None:
            attrs[sc.EVAL_PASSED] = bool(passed)
        if row.status != "ok" and getattr(row, "error_type", None):
            attrs[sc.ERROR_TYPE] = str(row.error_type)
        if content:
            turns = getattr(getattr(row, "case", None), "turns", None)
            if turns is not None:
                attrs[sc.OI_INPUT] = json.dumps(list(turns), ensure_ascii=False, default=str)
                attrs[sc.OI_INPUT_MIME] = sc.JSON_MIME
            answer = getattr(row, "answer", None)
            if answer is not None:
                attrs[sc.OI_OUTPUT] = str(answer)
                attrs[sc.OI_OUTPUT_MIME] = sc.TEXT_MIME
        return attrs

    @staticmethod
    def _verdict(verdict: Any, content: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"check": verdict.check, "status": verdict.status}
        if verdict.score is not None:
            out["score"] = verdict.score
        if content and verdict.reason:  # an assert's message, a judge's words: content
            out["reason"] = verdict.reason
        return out

    def verdicts(self, content: bool) -> list[dict[str, Any]]:
        """One ``gen_ai.evaluation.result`` event's attributes per check."""
        events = []
        for verdict in getattr(self.row, "verdicts", ()):
            event: dict[str, Any] = {sc.EVALUATION_NAME: verdict.check, sc.EVALUATION_LABEL: verdict.status}
            if isinstance(verdict.score, (int, float)) and not isinstance(verdict.score, bool):
                event[sc.EVALUATION_SCORE] = float(verdict.score)
            if content and verdict.reason:
                event[sc.EVALUATION_EXPLANATION] = verdict.reason
            events.append(event)
        return events

    def links(self, case_trace: int) -> list[Any]:
        """Links to the root spans of the case's turns that are not in the case's trace (they
        ran on an executor's worker, or were not traced here)."""
        from opentelemetry import trace

        from .spans import span_id_of, trace_id_of

        out = []
        for run_id in self.run_ids:
            traced = trace_of(run_id)
            if traced == case_trace:
                continue
            context = trace.SpanContext(
                traced or trace_id_of(run_id),
                span_id_of(run_id, "run"),
                False,
                trace.TraceFlags(trace.TraceFlags.SAMPLED),
            )
            out.append(trace.Link(context))
        return out


__all__ = ["evaluation_id", "observe_case"]
