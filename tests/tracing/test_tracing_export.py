"""Export after the fact: recorded turns become the same spans, with the same ids and times, as
when they ran; a notebook's recording exports with its recorded times; %agentnb trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from span_tree import Spans
from test_tracing_spans import shop_agent

import agentnb
from agentnb import JSONSession, ScriptedModel, tracing
from agentnb.errors import ConfigurationError
from agentnb.tracing.spans import span_id_of, trace_id_of

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def _memory() -> tuple[TracerProvider, Spans]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, Spans(exporter)


def _shape(spans: Spans) -> set:
    """Everything a backend would store of each span."""
    return {
        (
            s.name,
            s.context.trace_id,
            s.context.span_id,
            s.parent.span_id if s.parent else None,
            s.start_time,
            s.end_time,
            s.status.status_code,
            json.dumps(dict(s.attributes), sort_keys=True, default=str),
        )
        for s in spans.all
    }


def test_an_exported_history_gives_the_spans_the_live_run_gave(provider, tmp_path):
    tp, live_spans = provider
    agent = shop_agent(tp)
    agent.attach_session(str(tmp_path), "shop")
    agent.run("add milk")
    assert len(live_spans.all) == 8

    again, spans = _memory()
    ids = tracing.export(agent, again)
    assert ids == [f"{trace_id_of(agent.history[0].run_id):032x}"]
    assert _shape(spans) == _shape(live_spans)

    # the same recording read back from its folder, exported twice: the same ids and times
    first, second = _memory(), _memory()
    assert (
        tracing.export(str(tmp_path), first[0])
        == tracing.export(JSONSession(str(tmp_path)), second[0], session_id="shop")
        == ids
    )
    assert _shape(first[1]) == _shape(second[1])
    assert {(s.context.span_id, s.start_time, s.end_time) for s in first[1].all} == {
        (s.context.span_id, s.start_time, s.end_time) for s in live_spans.all
    }


def test_a_notebooks_recording_exports_with_its_recorded_times_and_ids():
    folder = NOTEBOOKS / "02_tool_hooks.agentnb"
    session = JSONSession(str(folder))
    agent = agentnb.Agent("crm")
    session.load_session_state_sync("crm", allow_not_exist=False, agent=agent)
    turns = [t for t in agent.history if t.status != "running"]
    assert turns

    provider, spans = _memory()
    ids = tracing.export(str(folder), provider, capture_content=True)
    assert ids == [f"{trace_id_of(t.run_id):032x}" for t in turns]
    roots = sorted((s for s in spans.all if s.parent is None), key=lambda s: s.start_time)
    assert [r.start_time for r in roots] == [int(t.started_at * 1e9) for t in turns]
    assert [r.context.span_id for r in roots] == [span_id_of(t.run_id, "run") for t in turns]
    assert [r.attributes["input.value"] for r in roots] == [t.message for t in turns]
    hooks = [s for s in spans.all if s.name.startswith("agentnb.hook ")]
    assert hooks and all(
        s.attributes["agentnb.hook.outcome"] in ("passed", "answered", "raised") for s in hooks
    )


def test_export_says_what_is_wrong(tmp_path):
    provider, _ = _memory()
    with pytest.raises(ConfigurationError, match="no recorded session at"):
        tracing.export(str(tmp_path / "missing"), provider)
    with pytest.raises(ConfigurationError, match="export takes an agent"):
        tracing.export(42, provider)
    with pytest.raises(ConfigurationError, match="holds no recorded session"):
        tracing.export(str(tmp_path), provider)
    with pytest.raises(ConfigurationError, match="export needs a tracer provider"):
        tracing.export([], None)


def _magic(ip, kind: str, line: str, body: str = "") -> str:
    with capture_output() as captured:
        ip.run_cell_magic(kind, line, body) if kind != "agentnb" else ip.run_line_magic(kind, line)
    return captured.stdout


def _usage(ip, line: str) -> str:
    with pytest.raises(UsageError) as info:
        _magic(ip, "agentnb", line)
    assert "\n" not in str(info.value)
    return str(info.value)


def test_agentnb_trace_exports_a_notebook_agents_turns(shell):
    provider, spans = _memory()
    shell.user_ns["model"] = ScriptedModel(["Hello!", "Again."])
    _magic(shell, "agent", "greeter --model model", "Greet people.")
    assert "no finished turn" in _usage(shell, "trace greeter")
    _magic(shell, "chat", "greeter", "hi")
    _magic(shell, "chat", "greeter", "hi again")
    assert "needs a tracer provider" in _usage(shell, "trace greeter")
    tracing.instrument(provider)
    out = _magic(shell, "agentnb", "trace greeter")
    agent = shell.user_ns["greeter"]
    traces = [f"{trace_id_of(t.run_id):032x}" for t in agent.history]
    assert out.strip() == f"exported 2 turn(s) of greeter as traces: {', '.join(traces)}"
    assert [s.name for s in spans.all if s.parent is None] == ["invoke_agent greeter"] * 2
    assert "input.value" not in spans.all[-1].attributes
    spans.clear()
    _magic(shell, "agentnb", "trace greeter --content")
    assert [s.attributes["input.value"] for s in spans.all if s.parent is None] == ["hi", "hi again"]
    assert "--content belongs to %agentnb trace" in _usage(shell, "list --content")
    assert "expected %agentnb trace NAME" in _usage(shell, "trace")


def test_a_recorded_delegation_exports_nested_under_its_delegate_tool_span():
    from types import SimpleNamespace

    from test_tracing_spans import _started

    from agentnb.events import RunFinished, ToolCallFinished, ToolCallStarted

    call = dict(run_id="P", call=0, tool_call_id="call_d", name="ask_writer", arguments="{}")
    events = [
        _started("P", "lead"),
        ToolCallStarted(**call, at=1000.1),
        _started("C", "writer", parent_run_id="P", parent_tool_call_id="call_d"),
        RunFinished(run_id="C", content="draft", duration_ms=50),
        ToolCallFinished(**call, result="draft", duration_ms=80),
        RunFinished(run_id="P", content="done", duration_ms=200),
    ]
    provider, spans = _memory()
    assert tracing.export([SimpleNamespace(events=events, status="ok")], provider, session_id="team") == [
        f"{trace_id_of('P'):032x}"
    ]
    assert spans.tree() == [
        ("invoke_agent lead", [("execute_tool ask_writer", [("invoke_agent writer", [])])])
    ]
    assert spans.one("invoke_agent writer").attributes["gen_ai.conversation.id"] == "team"

    # as a team keeps them: the member's run in the turn's children, not among its events
    child = SimpleNamespace(run_id="C", events=events[2:4], status="ok", children=[])
    parent = SimpleNamespace(run_id="P", events=[*events[:2], *events[4:]], status="ok", children=[child])
    again, nested = _memory()
    tracing.export([parent], again, session_id="team")
    assert _shape(nested) == _shape(spans)
    # a member's history exported alone: its runs are traces of their own
    alone, own = _memory()
    assert tracing.export([child], alone) == [f"{trace_id_of('C'):032x}"]
    assert [s.parent for s in own.all] == [None]


def test_a_real_team_nests_its_members_under_the_delegate_tool_spans_live_and_exported(provider):
    """Runs once agentnb has teams (skipped before): a Team's turn, live and exported again."""
    Team = getattr(agentnb, "Team", None)
    if Team is None:
        pytest.skip("agentnb has no Team yet")
    from agentnb import Agent, tool_call

    tp, spans = provider

    def search(q: str) -> str:
        """Search."""
        return f"found {q}"

    researcher = Agent(
        "researcher", model=ScriptedModel([tool_call("search", q="otel"), "notes on otel"]), tools=[search]
    )
    writer = Agent("writer", model=ScriptedModel(["a draft"]))
    lead = ScriptedModel(
        [
            tool_call("delegate_task_to_member", member_id="researcher", task="research otel"),
            tool_call("delegate_task_to_member", member_id="writer", task="write it"),
            "Done.",
        ]
    )
    team = Team("team", members=[researcher, writer], model=lead, mode="coordinate", tracer_provider=tp)
    assert team.run("write about otel").content == "Done."
    delegate = "execute_tool delegate_task_to_member"
    assert spans.tree() == [
        (
            "invoke_agent team",
            [
                ("chat scripted", []),
                (
                    delegate,
                    [
                        (
                            "invoke_agent researcher",
                            [("chat scripted", []), ("execute_tool search", []), ("chat scripted", [])],
                        )
                    ],
                ),
                ("chat scripted", []),
                (delegate, [("invoke_agent writer", [("chat scripted", [])])]),
                ("chat scripted", []),
            ],
        )
    ]
    assert spans.one("invoke_agent researcher").attributes["agentnb.path"] == "team/researcher"
    again, exported = _memory()
    assert tracing.export(team, again) == [f"{trace_id_of(team.history[-1].run_id):032x}"]
    assert {(s.name, s.context.span_id, s.parent.span_id if s.parent else None) for s in exported.all} == {
        (s.name, s.context.span_id, s.parent.span_id if s.parent else None) for s in spans.all
    }
