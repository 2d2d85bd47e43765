"""The driver of an evaluation: plan, gate, pool, store, progress (``agent.evaluate``).

The driver owns a thread pool sized to ``concurrency`` (never a default pool capped by the CPU
count), the per-model in-flight limits, the budget gate, the store and the display. Each pool
thread takes one (case, repeat): it runs it on a fresh agent — here, or on ``executor`` (any
``concurrent.futures.Executor``: Dask's ``Client.get_executor()``, ``agentnb.evals.ray``) with a
picklable ``CaseTask`` —, scores it, appends its line to the store (fsynced) and only then takes
the next. The kernel's thread only waits and renders, so it works inside a running event loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import copy
import math
import numbers
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from .. import slots
from ..errors import ConfigurationError
from ..history.history import TurnRecord
from ..sessions import find_notebook_path
from ..sessions.recording import replay_mode
from .cases import Case, as_cases
from .checks.base import CaseView, Check, as_checks, run_checks
from .engine.judge_calls import JudgeCalls
from .engine.limiter import RATE_LIMIT_TRIES, Limiter, quiet_copy
from .engine.parts import held, receive
from .engine.plan import Plan, RequestChars, gate, make_plan, price_of
from .engine.progress import Progress, Sink, Tracker
from .engine.store import EvalStore, check_name
from .engine.store_format import SCORED
from .engine.tree import delegates_of
from .engine.worker import CaseOutcome, CaseTask, evaluated, run_case
from .report.case_row import CaseRow
from .report.eval_run import EvalRun

SHOW_EVERY = 0.25
"""Seconds between two updates of the progress line while cases run."""


class Evaluation:
    """One call of ``evaluate`` (see the module docstring)."""

    def __init__(
        self,
        agent: Any,
        cases: Any,
        checks: Any,
        *,
        name: str | None,
        concurrency: int,
        repeat: int,
        executor: Any,
        folder: Any,
        retry_errors: int,
        max_errors: int | float | None,
        max_cost: float | None,
        prices: Mapping[str, Any] | None,
        on_progress: Sink | None,
        display: bool | None,
    ) -> None:
        self.cases: list[Case] = as_cases(cases)
        self.checks: list[Check] = as_checks(checks)
        self.name = check_name(name or agent.name)
        self.concurrency = _positive("concurrency", concurrency)
        self.repeat = _positive("repeat", repeat)
        self.retry_errors = _whole("retry_errors", retry_errors)
        if max_errors is not None and not _finite(max_errors):
            raise ConfigurationError(
                f"max_errors must be a count (>= 0) or a fraction of the runs (0.1), got {max_errors!r}"
            )
        self.max_errors = max_errors
        if max_cost is not None and not _finite(max_cost):
            raise ConfigurationError(
                f"max_cost must be the most dollars the live calls may cost (a number >= 0, e.g. 0.50), "
                f"or None for no limit; got {max_cost!r}"
            )
        if executor is not None and not isinstance(executor, concurrent.futures.Executor):
            raise ConfigurationError(
                "executor must be a concurrent.futures.Executor (Dask: client.get_executor(); "
                f"Ray: agentnb.evals.ray.RayExecutor()), got {type(executor).__name__}"
            )
        self.agent = agent
        self.definition = evaluated(agent)
        self.delegates = delegates_of(agent)
        if executor is not None and self.delegates:
            raise ConfigurationError(
                f"agent {agent.name!r} delegates to other agents "
                f"({', '.join(d.path for d in self.delegates)}): its cases run in this process, each on "
                "fresh copies of them; evaluate it without executor="
            )
        self.executor = executor
        self.max_cost, self.prices = max_cost, prices
        self.model = quiet_copy(agent.model)
        self.mode = replay_mode()
        root = Path(folder) if folder is not None else find_notebook_path(None).session_dir
        self.store = EvalStore(root / "evals" / self.name)
        self.limiters: dict[str, Limiter] = {}
        self.on_progress = on_progress
        self.display = display
        self._quiet: dict[int, Any] = {}

    # -- limits --------------------------------------------------------------------------------

    def limiter_for(self, model: Any) -> Limiter | None:
        """The in-flight limit of ``model`` (one per label, shared by agent and judge calls)."""
        label = model.label
        if label not in self.limiters:
            self.limiters[label] = Limiter(label, self.concurrency)
        return self.limiters[label]

    def judge_model(self, model: Any) -> Any:
        """A judge's model, with the client's own retries off."""
        key = id(model)
        if key not in self._quiet:
            self._quiet[key] = quiet_copy(model)
        return self._quiet[key]

    def _limits(self) -> tuple[tuple[str, int, int], ...]:
        return tuple((label, lim.limit, lim.cuts) for label, lim in sorted(self.limiters.items()))

    # -- the run -------------------------------------------------------------------------------

    def tasks(self, rows: Mapping[tuple[str, int], Mapping[str, Any]]) -> list[CaseTask]:
        """One task per (case, repeat); a finished one (its output valid or not) carries its
        recorded turns."""
        out = []
        for case in self.cases:
            for repeat in range(self.repeat):
                row = rows.get((case.id, repeat))
                recorded = (
                    row["turns"]
                    if row is not None and row.get("status") in SCORED and self.mode != "live"
                    else None
                )
                delegated = (
                    dict(row.get("delegates") or {}) if recorded is not None and row is not None else {}
                )
                out.append(
                    CaseTask(
                        self.definition,
                        self.model,
                        case,
                        repeat,
                        recorded,
                        self.mode,
                        delegates=self.delegates,
                        stands_for=id(self.agent),
                        recorded_delegates=delegated,
                    )
                )
        return out

    def plan(self, tasks: list[CaseTask], rows: Mapping[tuple[str, int], Mapping[str, Any]]) -> Plan:
        """What will replay and what will go live (and what that costs)."""
        live = [(t.case.id, t.case) for t in tasks if t.recorded is None]
        return make_plan(
            live, len(tasks), rows, self.model, self.prices, RequestChars(self.definition, self.agent.model)
        )

    def run(self) -> EvalRun:
        """Plan, gate, run every (case, repeat), and return the results."""
        if self.model.external:
            self.limiter_for(self.model)
        self.store.read_manifest()  # a folder another tool (or format) wrote is refused, untouched
        rows = self.store.rows()
        tasks = self.tasks(rows)
        plan = self.plan(tasks, rows)
        gate(plan, self.max_cost)
        if self.mode != "strict":  # under nbval nothing is written, as with a notebook's recording
            self.store.write_manifest(self.manifest())
        price = price_of(self.prices, self.model.label) if self.model.external else None
        tracker = Tracker(self.name, len(tasks), [c.name for c in self.checks], self._limits, price)
        sink = self._sink(len(tasks))
        if sink is not None and hasattr(sink, "plan"):
            sink.plan(plan.text())
        done: dict[int, CaseRow] = {}
        errors = [0]
        stop = [False]
        limit = self._error_limit(len(tasks))

        def one(position: int, task: CaseTask) -> None:
            if stop[0]:
                tracker.skipped()
                return
            tracker.started()
            with _observed(self, task) as finished:
                row = self.run_one(task, rows.get((task.case.id, task.repeat)), tracker)
                finished(row)
            done[position] = row
            if row.status == "error":
                errors[0] += 1
                if limit is not None and errors[0] > limit:
                    stop[0] = True

        pool = concurrent.futures.ThreadPoolExecutor(
            self.concurrency, thread_name_prefix=f"agentnb-eval-{self.name}"
        )
        futures: list[concurrent.futures.Future[None]] = []
        try:
            futures.extend(pool.submit(one, i, t) for i, t in enumerate(tasks))
            self._wait(futures, sink, tracker)
        except BaseException:
            stop[0] = True
            for submitted in futures:
                submitted.cancel()
            raise
        finally:
            pool.shutdown(wait=True)
            self.store.close()
        if self.mode != "strict":  # cases that ran again: the images of their old turns go
            self.store.drop_unused_blobs()
        progress = tracker.snapshot(finished=True)
        run = EvalRun(
            self.name,
            [done[i] for i in sorted(done)],
            [c.name for c in self.checks],
            checks=self.checks,
            store=self.store,
            plan=plan,
            progress=progress,
            model=self.model,
            limiter_for=self.limiter_for,
            judge_model=self.judge_model,
            price=price,
        )
        run.definition = self.definition
        run.stopped = (
            f"stopped after {errors[0]} error(s) (max_errors={self.max_errors})"
            if stop[0] and progress.skipped
            else None
        )
        self._show(sink, progress)
        if sink is not None:
            sink.close(run)
        return run

    def _wait(self, futures: list[concurrent.futures.Future[None]], sink: Any, tracker: Tracker) -> None:
        """Wait for every case (raising what one raised), showing the progress line every
        ``SHOW_EVERY`` seconds and once all are done. The kernel's thread sleeps in between: a
        finished case does not wake it (a thousand wake-ups would each take the GIL from the
        cases)."""
        pending = set(futures)
        while pending:
            done, pending = concurrent.futures.wait(
                pending, timeout=SHOW_EVERY, return_when=concurrent.futures.FIRST_EXCEPTION
            )
            for future in done:
                future.result()
            self._show(sink, tracker.snapshot())

    def run_one(self, task: CaseTask, stored: Mapping[str, Any] | None, tracker: Tracker) -> CaseRow:
        """Run, score and store one (case, repeat); returns its row."""
        earlier: list[str] = []
        while True:
            outcome = self._execute(task, tracker)
            if outcome.status != "error" or len(earlier) >= self.retry_errors:  # a pause is no error
                break
            earlier.append(f"{outcome.error_type}: {outcome.error}")
            tracker.retried()
        records = outcome.records or [TurnRecord.from_dict(t) for t in outcome.turns]
        delegates = outcome.delegate_records or {
            path: [TurnRecord.from_dict(t) for t in turns] for path, turns in outcome.delegates.items()
        }
        calls = JudgeCalls(
            recorded=list(stored.get("judge_calls") or []) if stored else [],
            default_model=self.model,
            limiter_for=self.limiter_for,
            mode=self.mode,
            prepare=self.judge_model,
        )
        view = CaseView(task.case, task.repeat, records, outcome.status, outcome.error, calls)
        verdicts = run_checks(self.checks, view)
        row = CaseRow.build(
            task.case, task.repeat, outcome, records, verdicts, calls.used, earlier, delegates=delegates
        )
        if (not outcome.replayed or calls.live) and self.mode != "strict":
            self.store.append(row.to_dict(outcome.turns, outcome.delegates))
        tracker.finished(
            error=outcome.status == "error",
            replayed=outcome.replayed,
            verdicts=verdicts,
            tokens=(0, 0) if outcome.replayed else row.tokens,
            retries=outcome.stats.retries + calls.stats.retries,
        )
        return row

    def _execute(self, task: CaseTask, tracker: Tracker) -> CaseOutcome:
        if self.executor is None:
            return run_case(
                task,
                self.limiter_for(self.model) if self.model.external else None,
                keep_records=True,
                limiter_for=lambda model: self.limiter_for(model) if model.external else None,
            )
        remote = copy.copy(task)
        remote.model = task.model.without_credentials()
        remote.blobs = held([task.recorded or [], task.case.to_dict()])
        limiter = self.limiter_for(self.model) if self.model.external else None
        for attempt in range(RATE_LIMIT_TRIES):
            if limiter is not None:
                limiter.acquire()
            clean = False
            try:
                outcome: CaseOutcome = self.executor.submit(run_case, remote).result()
                clean = outcome.stats.pending_pause is None
            finally:
                if limiter is not None:
                    limiter.release(clean=clean)
            receive(outcome.blobs, outcome)
            pause = outcome.stats.pending_pause
            if pause is None or limiter is None or attempt == RATE_LIMIT_TRIES - 1:
                return outcome
            limiter.cut(pause)  # the worker handed its 429 back: cut here, send the case again
            tracker.retried()
        return outcome

    def _error_limit(self, total: int) -> int | None:
        if self.max_errors is None:
            return None
        if isinstance(self.max_errors, float) and self.max_errors < 1:
            return int(self.max_errors * total)
        return int(self.max_errors)

    def _sink(self, total: int) -> Any:
        display = slots.eval_display.get()
        if self.display is False or display is None:
            return None
        return display(self.name, total)

    def _show(self, sink: Any, progress: Progress) -> None:
        if self.on_progress is not None:
            self.on_progress(progress)
        if sink is not None:
            sink.update(progress)

    def manifest(self) -> dict[str, Any]:
        """What the store's manifest says of this evaluation."""
        prompt = self.definition.settings["prompt"]
        return {
            "name": self.name,
            "agent": self.definition.name,
            "model": self.model.label,
            "repeat": self.repeat,
            "instructions": prompt.instructions
            if isinstance(prompt.instructions, (str, list))
            else repr(prompt.instructions),
            "tools": [t.name for t in self.agent.all_tools()],
            "checks": [{"name": c.name, "fingerprint": c.fingerprint()} for c in self.checks],
            "cases": [c.to_dict() for c in self.cases],
        }


def _finite(value: Any) -> bool:
    """Whether ``value`` is a finite real number >= 0 (not a bool, not NaN or infinity)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return False
    number = float(value)
    return math.isfinite(number) and number >= 0


@contextlib.contextmanager
def _observed(evaluation: Evaluation, task: CaseTask) -> Iterator[Callable[[CaseRow], None]]:
    """The evaluation observers (``slots.evaluation_observers``: traces) around one case."""
    with contextlib.ExitStack() as stack:
        seen = [
            stack.enter_context(o(evaluation, task.case.id, task.repeat)) for o in slots.evaluation_observers
        ]

        def finished(row: CaseRow) -> None:
            for observer in seen:
                observer(row)

        yield finished


def _positive(option: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigurationError(f"{option} must be a whole number >= 1, got {value!r}")
    return value


def _whole(option: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigurationError(f"{option} must be a whole number >= 0, got {value!r}")
    return value


def evaluate(
    agent: Any,
    cases: Any,
    checks: Any = (),
    *,
    name: str | None = None,
    concurrency: int = 8,
    repeat: int = 1,
    executor: Any = None,
    folder: Any = None,
    retry_errors: int = 0,
    max_errors: int | float | None = None,
    max_cost: float | None = None,
    prices: Mapping[str, Any] | None = None,
    on_progress: Sink | None = None,
    display: bool | None = None,
) -> EvalRun:
    """Run ``agent`` over ``cases`` and score each (case, repeat) with ``checks`` (see ``Agent.evaluate``)."""
    return Evaluation(
        agent,
        cases,
        checks,
        name=name,
        concurrency=concurrency,
        repeat=repeat,
        executor=executor,
        folder=folder,
        retry_errors=retry_errors,
        max_errors=max_errors,
        max_cost=max_cost,
        prices=prices,
        on_progress=on_progress,
        display=display,
    ).run()


async def aevaluate(agent: Any, cases: Any, checks: Any = (), **options: Any) -> EvalRun:
    """``evaluate`` for async code: the driver waits in a thread of its own, the loop stays free."""
    loop = asyncio.get_running_loop()
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="agentnb-eval-driver") as driver:
        return await loop.run_in_executor(driver, lambda: evaluate(agent, cases, checks, **options))


__all__ = ["Evaluation", "aevaluate", "evaluate"]
