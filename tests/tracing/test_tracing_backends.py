"""Opt-in: a real Arize Phoenix and a real MLflow tracking server on 127.0.0.1 receive a turn's
spans over OTLP/HTTP, and their own APIs give back the right kinds, inputs, tokens and tree.

Both are heavy (hundreds of MB, a minute to install), so they live in venvs of their own and are
named by environment variables; without them these tests skip::

    python3 -m venv /tmp/phx && /tmp/phx/bin/pip install arize-phoenix
    python3 -m venv /tmp/mlf && /tmp/mlf/bin/pip install "mlflow==3.17.2"
    AGENTNB_PHOENIX=/tmp/phx/bin/phoenix AGENTNB_MLFLOW=/tmp/mlf/bin/mlflow \\
        .venv/bin/python -m pytest -m tracing_backends tests/tracing/test_tracing_backends.py
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from agentnb import Agent, DocumentContext, OpenAIChat, ScriptedModel, Team, tool_call, tracing
from agentnb.evals import Case, check
from agentnb.tracing.spans import span_id_of, trace_id_of

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from openai_server import OpenAIServer, Reply  # noqa: E402

pytestmark = [pytest.mark.tracing_backends, pytest.mark.timeout(600)]

PROJECT = "agentnb-backends"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, headers: dict[str, str] | None = None) -> Any:
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=30) as r:
        return json.loads(r.read())


def _post(url: str, body: dict[str, Any]) -> Any:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as r:
        return json.loads(r.read())


def _wait(what: str, check, seconds: float = 180) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        try:
            found = check()
            if found:
                return found
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not there after {seconds} s")
        time.sleep(0.5)


def _server(command: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen]:
    with open(log, "wb") as out:
        process = subprocess.Popen(
            command, env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        yield process
    finally:  # the server and any workers it started: its own process group, by its id
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


def lookup(city: str, session_state: dict) -> str:
    """Weather for a city."""
    session_state["last_city"] = city
    return f"sunny in {city}"


def audit(function_call, arguments):
    return function_call(**arguments)


def _turn(provider: TracerProvider) -> tuple[Agent, str]:
    """One turn through the real openai client: context, a tool with a hook, two model calls."""
    tracing.instrument(provider, capture_content=True)
    try:
        with OpenAIServer(api_key="sk-test-backends-0000000000") as server:
            server.add(
                Reply(tool_calls=[("lookup", {"city": "Oslo"})], usage=(30, 5)),
                Reply(text="Sunny in Oslo.", usage=(44, 4)),
            )
            model = OpenAIChat(
                "gpt-test",
                base_url=server.url,
                api_key="sk-test-backends-0000000000",
                stream=False,
                max_retries=0,
            )
            notes = DocumentContext(["Oslo is in Norway."], label="ATLAS")
            agent = Agent(
                "weather",
                model,
                tools=[lookup],
                tool_hooks=[audit],
                context_providers=[notes],
                session_state={"last_city": None},
            )
            agent.run("Weather in Oslo?")
        assert tracing.flush(timeout=60)
    finally:
        tracing.uninstrument()
    return agent, agent.history[-1].run_id


EVALUATION = "backends-eval"


def _team_and_evaluation(provider: TracerProvider, folder: Path) -> tuple[Team, Any]:
    """A team's turn (two members, one with a tool) and a two-case evaluation, traced."""
    researcher = Agent(
        "researcher",
        model=ScriptedModel([tool_call("lookup", city="Oslo"), "notes on Oslo"]),
        tools=[lookup],
        session_state={"last_city": None},
    )
    writer = Agent("writer", model=ScriptedModel(["a draft"]))
    lead = ScriptedModel(
        [
            tool_call("delegate_task_to_member", member_id="researcher", task="research Oslo"),
            tool_call("delegate_task_to_member", member_id="writer", task="write it"),
            "Done.",
        ]
    )
    team = Team("team", members=[researcher, writer], model=lead, mode="coordinate", tracer_provider=provider)
    team.run("write about Oslo")
    forecaster = Agent(
        "forecaster",
        ScriptedModel([tool_call("lookup", city="Oslo"), "Sunny in Oslo."]),
        tools=[lookup],
        session_state={"last_city": None},
        tracer_provider=provider,
    )
    run = forecaster.evaluate(
        [Case("Weather in Oslo?", id="oslo"), Case("Weather in Bergen?", id="bergen")],
        [check.answer_contains("Bergen", name="says_bergen")],
        name=EVALUATION,
        folder=folder,
        display=False,
    )
    assert tracing.flush(timeout=60)
    return team, run


def _provider(endpoint: str, headers: dict[str, str] | None = None) -> TracerProvider:
    provider = TracerProvider(
        resource=Resource.create({"service.name": "agentnb", "openinference.project.name": PROJECT})
    )
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint, headers=headers)))
    return provider


@pytest.fixture
def phoenix(tmp_path: Path) -> Iterator[str]:
    executable = os.environ.get("AGENTNB_PHOENIX")
    if not executable:
        pytest.skip(
            "set AGENTNB_PHOENIX to a phoenix executable (pip install arize-phoenix in a venv of its own)"
        )
    port = _free_port()
    env = {
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(_free_port()),  # an unused port: Phoenix always opens its gRPC receiver
        "PHOENIX_WORKING_DIR": str(tmp_path / "phoenix"),
        "PHOENIX_TELEMETRY_ENABLED": "false",
        "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
    }
    for _ in _server([executable, "serve"], env, tmp_path / "phoenix.log"):
        url = f"http://127.0.0.1:{port}"
        _wait("Phoenix", lambda url=url: urllib.request.urlopen(f"{url}/healthz", timeout=5).status == 200)
        yield url


def test_phoenix_shows_kinds_inputs_tokens_and_the_tree(phoenix):
    provider = _provider(f"{phoenix}/v1/traces")
    agent, run_id = _turn(provider)
    provider.shutdown()
    spans = _wait(
        "the spans in Phoenix",
        lambda: (lambda d: d if len(d) >= 6 else None)(
            _get(f"{phoenix}/v1/projects/{PROJECT}/spans?limit=100")["data"]
        ),
    )
    by_name: dict[str, list[dict]] = {}
    for span in spans:
        by_name.setdefault(span["name"], []).append(span)
    assert sorted(by_name) == [
        "agentnb.hook audit",
        "chat gpt-test",
        "execute_tool lookup",
        "invoke_agent weather",
        "retrieval ATLAS",
    ]
    kinds = {name: {s["span_kind"] for s in group} for name, group in by_name.items()}
    assert kinds == {
        "invoke_agent weather": {"AGENT"},
        "chat gpt-test": {"LLM"},
        "execute_tool lookup": {"TOOL"},
        "agentnb.hook audit": {"CHAIN"},
        "retrieval ATLAS": {"RETRIEVER"},
    }
    root = by_name["invoke_agent weather"][0]
    assert (
        root["context"]["trace_id"] == f"{trace_id_of(run_id):032x}"
        and root["context"]["span_id"] == f"{span_id_of(run_id, 'run'):016x}"
    )
    assert root["parent_id"] is None
    tool = by_name["execute_tool lookup"][0]
    hook = by_name["agentnb.hook audit"][0]
    assert tool["parent_id"] == root["context"]["span_id"] and hook["parent_id"] == tool["context"]["span_id"]
    assert {c["parent_id"] for c in by_name["chat gpt-test"]} == {root["context"]["span_id"]}
    attributes = lambda s: _flat(s["attributes"])  # noqa: E731
    assert (
        attributes(root)["input.value"] == "Weather in Oslo?"
        and attributes(root)["output.value"] == "Sunny in Oslo."
    )
    assert attributes(root)["session.id"] == agent.session_id
    assert (
        json.loads(attributes(tool)["input.value"]) == {"city": "Oslo"}
        and attributes(tool)["output.value"] == "sunny in Oslo"
    )
    assert json.loads(attributes(tool)["agentnb.state.patch"]) == [
        {"op": "replace", "path": "/last_city", "value": "Oslo"}
    ]
    chats = sorted(by_name["chat gpt-test"], key=lambda s: s["start_time"])
    assert [attributes(c)["llm.token_count.prompt"] for c in chats] == [30, 44]
    assert [attributes(c)["llm.token_count.completion"] for c in chats] == [5, 4]
    first = attributes(chats[0])
    assert (
        first["llm.input_messages.0.message.role"] == "user"
        and "Weather in Oslo?" in first["llm.input_messages.0.message.content"]
    )
    assert (
        attributes(chats[1])["llm.input_messages.1.message.tool_calls.0.tool_call.function.name"] == "lookup"
    )
    assert "llm.token_count.prompt" not in attributes(root)  # totals only as agentnb.usage.*: no double count
    assert "sk-test-backends" not in json.dumps(spans)


def test_phoenix_files_a_team_in_its_session_and_each_evaluation_case_as_a_trace(phoenix, tmp_path):
    provider = _provider(f"{phoenix}/v1/traces")
    team, run = _team_and_evaluation(provider, tmp_path)
    provider.shutdown()

    def arrived() -> list[dict] | None:
        spans = _get(f"{phoenix}/v1/projects/{PROJECT}/spans?limit=500")["data"]
        names = [s["name"] for s in spans]
        return (
            spans if names.count(f"evaluate {EVALUATION}") == 2 and "invoke_agent writer" in names else None
        )

    spans = _wait("the team's and the evaluation's spans in Phoenix", arrived)
    attributes = lambda s: _flat(s["attributes"])  # noqa: E731
    (team_trace,) = {s["context"]["trace_id"] for s in spans if s["name"] == "invoke_agent team"}
    in_team = [
        s
        for s in spans
        if s["context"]["trace_id"] == team_trace and s["name"].startswith(("invoke_agent", "chat"))
    ]
    assert {s["name"] for s in in_team} >= {"invoke_agent researcher", "invoke_agent writer"}
    # one trace, one session: the team's, members' spans included
    assert {attributes(s).get("session.id") for s in in_team} == {team.session_id}
    cases = [s for s in spans if s["name"] == f"evaluate {EVALUATION}"]
    assert sorted(attributes(c)["agentnb.eval.case_id"] for c in cases) == ["bergen", "oslo"]
    assert len({attributes(c)["session.id"] for c in cases}) == 1  # one evaluate() call, one session
    for case in cases:
        a = attributes(case)
        row = run.case(a["agentnb.eval.case_id"])
        assert case["span_kind"] == "CHAIN" and case["parent_id"] is None
        assert a["agentnb.eval.name"] == EVALUATION and a["agentnb.eval.repeat"] == 0
        assert json.loads(a["agentnb.eval.verdicts"]) == [
            {"check": "says_bergen", "status": row.verdicts[0].status}
        ]
        children = [s for s in spans if s["parent_id"] == case["context"]["span_id"]]
        assert [c["name"] for c in children] == ["invoke_agent forecaster"]
        assert attributes(children[0])["session.id"] == a["session.id"]
        events = [e["name"] for e in case.get("events") or ()]
        assert events == ["gen_ai.evaluation.result"]


def _flat(attributes: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Phoenix returns attributes nested by their dots (or flat, by version): flat keys either way."""
    if isinstance(attributes, list):  # [{"key": ..., "value": {...}}] (OTLP-shaped)
        return {a["key"]: next(iter(a["value"].values()), None) for a in attributes}
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_flat(value, f"{name}."))
        else:
            out[name] = value
    return out


@pytest.fixture
def mlflow(tmp_path: Path) -> Iterator[tuple[str, str]]:
    executable = os.environ.get("AGENTNB_MLFLOW")
    if not executable:
        pytest.skip(
            "set AGENTNB_MLFLOW to an mlflow executable (pip install mlflow==3.17.2 in a venv of its own)"
        )
    port = _free_port()
    command = [
        executable,
        "server",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--workers",
        "1",
        "--backend-store-uri",
        f"sqlite:///{tmp_path / 'mlflow.db'}",
        "--default-artifact-root",
        str(tmp_path / "artifacts"),
    ]
    env = {"MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true"}
    for _ in _server(command, env, tmp_path / "mlflow.log"):
        url = f"http://127.0.0.1:{port}"
        _wait("MLflow", lambda url=url: urllib.request.urlopen(f"{url}/health", timeout=5).status == 200)
        yield url, str(Path(executable).parent / "python")


READ_TRACES = """
import json, sys
import mlflow
mlflow.set_tracking_uri(sys.argv[1])
out = []
for t in mlflow.search_traces(locations=[sys.argv[2]], return_type="list"):
    out.append({
        "trace_id": t.info.trace_id,
        "token_usage": t.info.token_usage,
        "metadata": dict(t.info.trace_metadata or {}),
        "spans": [{"name": s.name, "span_type": s.span_type, "span_id": s.span_id, "parent_id": s.parent_id,
                   "inputs": s.inputs, "outputs": s.outputs, "attributes": s.attributes} for s in t.data.spans],
    })
print(json.dumps(out, default=str))
"""


def test_mlflow_shows_types_inputs_tokens_and_the_tree(mlflow):
    url, python = mlflow
    experiment = _post(f"{url}/api/2.0/mlflow/experiments/create", {"name": "agentnb-traces"})[
        "experiment_id"
    ]
    provider = _provider(f"{url}/v1/traces", {"x-mlflow-experiment-id": experiment})
    _, run_id = _turn(provider)
    provider.shutdown()

    def read() -> list[dict] | None:
        traces = _mlflow_traces(python, url, experiment)
        return traces if traces and len(traces[0]["spans"]) >= 6 else None

    (trace,) = _wait("the trace in MLflow", read)
    spans = {s["name"]: s for s in trace["spans"]}
    types = {name: s["span_type"] for name, s in spans.items()}
    assert (
        types["invoke_agent weather"] == "AGENT"
        and types["chat gpt-test"] == "LLM"
        and types["agentnb.hook audit"] == "CHAIN"
    )
    assert types["execute_tool lookup"] == "TOOL" and types["retrieval ATLAS"] == "RETRIEVER"
    root, tool = spans["invoke_agent weather"], spans["execute_tool lookup"]
    assert root["span_id"] == f"{span_id_of(run_id, 'run'):016x}" and root["parent_id"] is None
    assert (
        tool["parent_id"] == root["span_id"] and spans["agentnb.hook audit"]["parent_id"] == tool["span_id"]
    )
    assert "Weather in Oslo?" in json.dumps(root["inputs"])
    assert "Oslo" in json.dumps(tool["inputs"]) and "sunny in Oslo" in json.dumps(tool["outputs"])
    # the trace's tokens are the two chat calls' (30+44 in, 5+4 out): the root's totals are not added again
    usage = trace["token_usage"]
    assert (usage["input_tokens"], usage["output_tokens"]) == (74, 9)


def _mlflow_traces(python: str, url: str, experiment: str) -> list[dict]:
    done = subprocess.run(
        [python, "-c", READ_TRACES, url, experiment], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_mlflow_files_a_team_in_its_session_and_each_evaluation_case_as_a_trace(mlflow, tmp_path):
    url, python = mlflow
    experiment = _post(f"{url}/api/2.0/mlflow/experiments/create", {"name": "agentnb-sessions"})[
        "experiment_id"
    ]
    provider = _provider(f"{url}/v1/traces", {"x-mlflow-experiment-id": experiment})
    team, run = _team_and_evaluation(provider, tmp_path)
    provider.shutdown()

    def roots(trace: dict) -> list[str]:
        return [s["name"] for s in trace["spans"] if s["parent_id"] is None]

    def read() -> list[dict] | None:
        traces = _mlflow_traces(python, url, experiment)
        names = [name for t in traces for name in roots(t)]
        complete = names.count(f"evaluate {EVALUATION}") == 2 and "invoke_agent team" in names
        return traces if complete and any(len(t["spans"]) >= 10 for t in traces) else None

    traces = _wait("the team's and the evaluation's traces in MLflow", read)
    (team_trace,) = [t for t in traces if roots(t) == ["invoke_agent team"]]
    assert {"invoke_agent researcher", "invoke_agent writer"} <= {s["name"] for s in team_trace["spans"]}
    assert team_trace["metadata"].get("mlflow.trace.session") == team.session_id  # the team's, not a member's
    cases = [t for t in traces if roots(t) == [f"evaluate {EVALUATION}"]]
    assert len(cases) == 2
    assert len({t["metadata"].get("mlflow.trace.session") for t in cases}) == 1
    for trace in cases:
        root = next(s for s in trace["spans"] if s["parent_id"] is None)
        a = root["attributes"]
        assert a["agentnb.eval.name"] == EVALUATION and a["agentnb.eval.case_id"] in ("oslo", "bergen")
        row = run.case(a["agentnb.eval.case_id"])
        assert json.loads(a["agentnb.eval.verdicts"]) == [
            {"check": "says_bergen", "status": row.verdicts[0].status}
        ]
        agent = next(s for s in trace["spans"] if s["name"] == "invoke_agent forecaster")
        assert agent["parent_id"] == root["span_id"]
