"""Evaluation against a loopback OpenAI-compatible server through the real ``openai`` client:
429s with Retry-After cut the in-flight limit, 5xx and timeouts are retried without cutting,
errors are recorded and retried on request, a killed run resumes with exactly the missing calls,
re-scoring calls nothing, and the budget gate refuses before any call."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from openai_server import OpenAIServer, Reply

from agentnb import Agent
from agentnb.errors import EvalBudgetError
from agentnb.evals import Case, check
from agentnb.models import OpenAIChat

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
TESTS = Path(__file__).parents[1]


def _agent(server: OpenAIServer, **options) -> Agent:
    return Agent(
        "helper", model=OpenAIChat("gpt-test", base_url=server.url, **options), instructions="Answer briefly."
    )


def _cases(n: int) -> list[Case]:
    return [Case(f"question {i}", id=f"q{i:03d}", expected="ok") for i in range(n)]


def test_429_with_retry_after_cuts_the_limit_and_no_case_errors(tmp_path):
    seen = []
    cut_shown = threading.Event()

    def progress(snapshot) -> None:
        seen.append(snapshot)
        limit, cuts = dict((m, (lim, cuts)) for m, lim, cuts in snapshot.limits)["openai:gpt-test"]
        if cuts >= 1 and limit < 6:
            cut_shown.set()

    with OpenAIServer() as server:
        # The first six requests meet at the server: three are refused, and the other three
        # answered once the progress shows the cut (their cases' next requests then find the pause).
        burst = server.received(6)
        server.add(
            *[
                Reply(status=429, error="slow down", headers={"retry-after": "1"}, after=burst)
                for _ in range(3)
            ],
            *[Reply(text="ok", after=cut_shown) for _ in range(3)],
            Reply(text="ok", repeat=True),
        )
        agent = _agent(server)
        run = agent.evaluate(
            _cases(12),
            [check.answer_contains()],
            name="limits",
            folder=tmp_path,
            concurrency=6,
            on_progress=progress,
        )
        requests = list(server.requests)
        assert server.problems == []  # every held answer found its event
    assert len(run.errors) == 0 and run.rate() == 1.0
    assert len(requests) == 12 + 3  # the SDK's own retries are off: each 429 reached the limiter once
    assert agent.model.max_retries is None  # the user's model is left as it was
    limits = [dict((m, (lim, cuts)) for m, lim, cuts in p.limits)["openai:gpt-test"] for p in seen]
    assert any(cuts >= 1 and lim < 6 for lim, cuts in limits)  # the cut shows in progress
    assert seen[-1].retries == 3
    # Retry-After was honoured: the 429s were answered after the sixth request of the burst came,
    # and nothing was sent for a second after them (a lower bound: a busy machine only adds to it).
    times = sorted(r.at for r in requests)
    assert min(times[6:]) - times[5] >= 1.0
    assert sum(r.retries for r in run.rows) == 3


def test_5xx_and_timeouts_are_retried_without_cutting(tmp_path):
    seen = []
    with OpenAIServer() as server:
        server.add(
            Reply(status=500, error="oops"),
            Reply(status=503, error="busy"),
            Reply(text="ok", delay=4.0),
            Reply(text="ok", repeat=True),
        )
        # A timeout well above a loaded machine's answer time, well below the slow reply's delay.
        agent = _agent(server, timeout=1.5)
        run = agent.evaluate(
            _cases(4),
            [check.answer_contains()],
            name="transient",
            folder=tmp_path,
            concurrency=1,
            on_progress=seen.append,
        )
    assert len(run.errors) == 0 and run.rate() == 1.0
    assert seen[-1].retries == 3 and all(cuts == 0 for p in seen for _, _, cuts in p.limits)


def test_errors_are_recorded_retried_on_request_and_stop_at_max_errors(tmp_path):
    with OpenAIServer() as server:
        server.add(Reply(status=400, error="bad thing"), Reply(text="ok", repeat=True))
        run = _agent(server).evaluate(
            _cases(3), [check.answer_contains()], name="retry", folder=tmp_path, concurrency=1, retry_errors=1
        )
    assert len(run.errors) == 0
    assert run.rows[0].retries == 1 and "bad thing" in run.rows[0].earlier_errors[0]
    with OpenAIServer() as server:
        server.add(Reply(status=400, error="always bad", repeat=True))
        run = _agent(server).evaluate(
            _cases(10), [check.answer_contains()], name="stop", folder=tmp_path, concurrency=1, max_errors=2
        )
        calls = len(server.requests)
    assert len(run.rows) == 3 and all(r.status == "error" for r in run.rows) and calls == 3
    assert "ModelError" in run.rows[0].error_type and "always bad" in run.rows[0].error
    assert run.stopped == "stopped after 3 error(s) (max_errors=2)" and "stopped after 3" in run.text()


def test_rerun_replays_and_editing_one_check_changes_one_column_with_zero_calls(tmp_path):
    def long_enough(result):
        assert len(result.answer) > 1, "too short"

    cases = [Case(f"question {i}", id=f"q{i}", expected="PASS") for i in range(5)]
    seen = []
    with OpenAIServer() as server:
        server.add(Reply(text="PASS it answers", repeat=True))
        agent = _agent(server)
        # Another object for the same model: its calls share the agent's in-flight limit.
        judge = check.judge("The reply is an answer.", model=OpenAIChat("gpt-test", base_url=server.url))
        first = agent.evaluate(
            cases,
            [check.answer_contains(), long_enough, judge],
            name="rescore",
            folder=tmp_path,
            on_progress=seen.append,
        )
        assert [label for label, _, _ in seen[-1].limits] == ["openai:gpt-test"]
        assert first.rows[0].judge_calls[0]["model"] == "openai:gpt-test"
        calls = len(server.requests)
        assert calls == 10  # five agent calls and five judge calls
        again = agent.evaluate(
            cases, [check.answer_contains(), long_enough, judge], name="rescore", folder=tmp_path
        )
        assert len(server.requests) == calls  # a finished evaluation replays: agent and judge
        assert (
            all(r.replayed for r in again.rows)
            and again.frame()["duration_ms"].tolist() == first.frame()["duration_ms"].tolist()
        )

        def long_enough(result):  # noqa: F811 — the edited check
            assert len(result.answer) > 50, "too short"

        edited = first.rescore([check.answer_contains(), long_enough, judge])
        assert len(server.requests) == calls
    before, after = first.frame(), edited.frame()
    changed = [c for c in before.columns if not before[c].equals(after[c])]
    assert changed == ["passed", "long_enough"]  # the check's column, and the summary of all checks
    assert first.rate() == 1.0 and first.rows[0].verdict("judge").reason == "it answers"
    assert edited.rate("long_enough") == 0.0 and edited.rows[0].verdict("long_enough").reason == "too short"


def test_the_budget_gate_refuses_before_any_call(tmp_path):
    with OpenAIServer() as server:
        server.add(Reply(text="ok", repeat=True))
        agent = _agent(server)
        with pytest.raises(EvalBudgetError, match="its cost is unknown"):
            agent.evaluate(_cases(4), name="budget", folder=tmp_path, max_cost=0.01)
        with pytest.raises(
            EvalBudgetError,
            match=r"plan: 0 of 4 run\(s\) replay from the recording; 4 call openai:gpt-test .* above max_cost",
        ):
            agent.evaluate(
                _cases(4), name="budget", folder=tmp_path, max_cost=1e-9, prices={"gpt-test": (1.0, 2.0)}
            )
        assert len(server.requests) == 0
        agent.evaluate(_cases(2), name="budget", folder=tmp_path)
        run = agent.evaluate(
            _cases(4), name="budget", folder=tmp_path, max_cost=1.0, prices={"gpt-test": (1.0, 2.0)}
        )
    assert run.plan.replay == 2 and run.plan.live == 2
    assert run.plan.input_tokens == 2 * 21 and run.plan.output_tokens == 2 * 9  # at the recorded counts
    assert run.frame()["cost"].iloc[0] == pytest.approx((21 * 1.0 + 9 * 2.0) / 1e6)


SCRIPT = """
import sys
sys.path.insert(0, {tests!r})
from agentnb import Agent
from agentnb.evals import Case, check
from agentnb.models import OpenAIChat
agent = Agent("helper", model=OpenAIChat("gpt-test", base_url={url!r}), instructions="Answer briefly.")
cases = [Case(f"question {{i}}", id=f"q{{i:03d}}", expected="ok") for i in range(100)]
agent.evaluate(cases, [check.answer_contains()], name="resume", folder={folder!r}, concurrency=1)
"""


def test_killed_after_60_of_100_the_rerun_makes_exactly_40_calls(tmp_path):
    lines = tmp_path / "evals" / "resume" / "cases.jsonl"
    with OpenAIServer() as server:
        server.add(
            *[Reply(text="ok") for _ in range(60)], Reply(text="ok", delay=60), Reply(text="ok", repeat=True)
        )
        script = textwrap.dedent(SCRIPT.format(tests=str(TESTS), url=server.url, folder=str(tmp_path)))
        child = subprocess.Popen(
            [sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        )
        try:
            deadline = time.monotonic() + 120
            while len(server.requests) < 61 and child.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert len(server.requests) == 61, child.poll()
            # The 61st request hangs; the 60 before it are on disk (each before the next took its slot).
            assert len(lines.read_text().splitlines()) == 60
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
        before = len(server.requests)
        agent = _agent(server)
        run = agent.evaluate(
            _cases(100), [check.answer_contains()], name="resume", folder=tmp_path, concurrency=4
        )
        live = len(server.requests) - before
    assert live == 40
    assert len(run.rows) == 100 and sum(r.replayed for r in run.rows) == 60 and run.rate() == 1.0
    stored = [json.loads(line) for line in lines.read_text().splitlines()]
    keys = [(s["case"]["id"], s["repeat"]) for s in stored]
    assert len(keys) == 100 == len(set(keys))  # no duplicate rows


def test_on_an_executor_a_429_comes_back_as_data_and_the_driver_cuts_and_resends(tmp_path):
    import concurrent.futures

    seen = []
    with OpenAIServer() as server:
        server.add(
            *[Reply(status=429, error="slow down", headers={"retry-after-ms": "300"}) for _ in range(2)],
            Reply(text="ok", repeat=True),
        )
        with concurrent.futures.ProcessPoolExecutor(2) as executor:  # pickles every task, as Dask and Ray do
            run = _agent(server, api_key="sk-local-only").evaluate(
                _cases(6),
                [check.answer_contains()],
                name="remote",
                folder=tmp_path,
                concurrency=3,
                executor=executor,
                on_progress=seen.append,
            )
        requests = list(server.requests)
    assert len(run.errors) == 0 and run.rate() == 1.0 and len(requests) == 6 + 2
    assert seen[-1].retries == 2 and any(cuts >= 1 for p in seen for _, _, cuts in p.limits)
    # Keys come from the worker's environment: the one given to the driver's model is not shipped.
    assert all(r.headers["authorization"] == "Bearer not-needed" for r in requests)


def test_a_line_cut_short_by_a_crash_is_ignored_and_that_case_runs_again(tmp_path):
    with OpenAIServer() as server:
        server.add(Reply(text="ok", repeat=True))
        agent = _agent(server)
        agent.evaluate(_cases(3), [check.answer_contains()], name="torn", folder=tmp_path, concurrency=1)
        lines = tmp_path / "evals" / "torn" / "cases.jsonl"
        text = lines.read_text().splitlines()
        lines.write_text(
            "\n".join(text[:2]) + "\n" + text[2][: len(text[2]) // 2]
        )  # the third line half written
        before = len(server.requests)
        run = agent.evaluate(_cases(3), [check.answer_contains()], name="torn", folder=tmp_path)
        assert len(server.requests) - before == 1 and [r.replayed for r in run.rows] == [True, True, False]
    from agentnb.evals.engine.store import EvalStore

    store = EvalStore(tmp_path / "evals" / "torn")
    assert len(store.rows()) == 3 and store.torn == 1


def test_cases_finishing_together_share_an_fsync_and_each_line_is_synced_before_it_returns(
    tmp_path, monkeypatch
):
    import threading

    from agentnb.evals.engine import store as store_module

    synced_sizes, lock = [], threading.Lock()
    real = os.fsync

    def fsync(fd):
        with lock:
            size = os.fstat(fd).st_size
        real(fd)
        synced_sizes.append(size)

    monkeypatch.setattr(store_module.os, "fsync", fsync)
    store = store_module.EvalStore(tmp_path)
    unsynced = []

    def append(i):
        store.append({"case": {"id": f"c{i}", "input": "x"}, "repeat": 0, "status": "ok", "pad": "x" * 100})
        # Returned: an fsync has covered this line (the rows read back from what was synced hold it).
        with lock:
            synced = (tmp_path / "cases.jsonl").read_bytes()[: max(synced_sizes)]
        if f'"c{i}"'.encode() not in synced:
            unsynced.append(i)

    threads = [threading.Thread(target=append, args=(i,)) for i in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    store.close()
    assert len(store.rows()) == 40 and unsynced == []
    assert len(synced_sizes) <= 40 and max(synced_sizes) == (tmp_path / "cases.jsonl").stat().st_size
