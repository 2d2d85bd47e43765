"""Sessions: AgentScope save/load, autosave beside the notebook, format errors, secrets."""

from __future__ import annotations

import asyncio
import datetime
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from agentnb import Agent, ScriptedModel, State, Toolkit, tool_call
from agentnb.errors import SessionEncodeError, SessionFormatError, SessionNotFoundError
from agentnb.sessions import (
    JSONSession,
    SQLiteSession,
    StateModule,
    find_notebook_path,
    load_history,
    notebook_session_dir,
    register_encoder,
    unregister_encoder,
)
from agentnb.sessions import format as fmt


def add_item(item: str, session_state: dict) -> str:
    """Add an item to the shopping list."""
    session_state.setdefault("items", []).append(item)
    return f"added {item}"


def reply(request):
    return (
        f"done ({len(request.tool_results())})"
        if request.tool_results()
        else tool_call("add_item", item="milk")
    )


def make_agent(context: bool = True, **kw) -> Agent:
    return Agent(
        "shop",
        ScriptedModel(reply),
        tools=[add_item],
        session_state={"items": []},
        add_session_state_to_context=context,
        **kw,
    )


# -- AgentScope API ---------------------------------------------------------------------------


def test_json_session_writes_agentscope_layout(tmp_path):
    agent = make_agent()
    agent.run("buy milk")
    asyncio.run(JSONSession(tmp_path).save_session_state("run-1", agent=agent))
    data = json.loads((tmp_path / "run-1.json").read_text())
    assert data["__agentnb__"]["format"] == "agentnb.session"
    assert data["__agentnb__"]["version"] == fmt.VERSION
    assert data["agent"]["state"] == {"items": ["milk"]}
    turn = data["agent"]["history"]["turns"][0]
    assert [e["kind"] for e in turn["events"]][0] == "run_started"
    assert turn["state_after_patch"]["set"] == {"items": ["milk"]}


def test_round_trip_restores_state_messages_and_history(session):
    agent = make_agent()
    agent.run("buy milk")
    agent.run("and more")
    session.save_session_state_sync("run-1", agent=agent)

    fresh = make_agent()
    assert session.load_session_state_sync("run-1", agent=fresh) is True
    assert fresh.session_state == {"items": ["milk", "milk"]}
    assert len(fresh.history) == 2
    assert fresh.history[0].system_prompt == agent.history[0].system_prompt
    assert "<session_state>" in fresh.history[1].system_prompt
    assert fresh.history[1].state_before == {"items": ["milk"]}
    assert fresh.history[1].state_after == {"items": ["milk", "milk"]}
    assert [c.request for c in fresh.history[1].model_calls] == [
        c.request for c in agent.history[1].model_calls
    ]
    assert fresh.history[1].events == agent.history[1].events
    assert fresh.state.messages == agent.state.messages
    assert fresh.session_id == agent.session_id
    # The next turn diffs against the restored state: only the new item shows as a change.
    fresh.run("third")
    assert [op for ch in fresh.history[2].state_changes for op in ch.patch] == [
        {"op": "add", "path": "/items/2", "value": "milk"}
    ]


def test_async_api_and_missing_session(tmp_path):
    session = JSONSession(tmp_path)
    agent = make_agent()
    assert asyncio.run(session.load_session_state("nope", agent=agent)) is False
    with pytest.raises(ValueError, match="nope.json"):
        asyncio.run(session.load_session_state("nope", allow_not_exist=False, agent=agent))
    with pytest.raises(SessionNotFoundError):
        session.load_session_state_sync("nope", allow_not_exist=False, agent=agent)


def test_sync_calls_work_inside_a_running_event_loop(tmp_path):
    session = JSONSession(tmp_path)
    agent = make_agent()
    agent.run("buy")

    async def in_kernel():
        session.save_session_state_sync("k", agent=agent)
        other = make_agent()
        session.load_session_state_sync("k", agent=other)
        return len(other.history)

    assert asyncio.run(in_kernel()) == 1


def test_state_toolkit_history_and_user_modules(session):
    class Counter(StateModule):
        def __init__(self):
            self.count = 0
            self.register_state("count")

    class Notes(Toolkit):
        def __init__(self):
            super().__init__()
            self.notes: list[str] = []
            self.register(self.note)
            self.register_state("notes")

        def note(self, text: str) -> str:
            """Keep a note."""
            self.notes.append(text)
            return "ok"

    agent = make_agent()
    agent.run("buy")
    state = State(data={"a": 1})
    state.set("messages", [{"role": "user", "content": "hi"}])
    counter, notes = Counter(), Notes()
    counter.count = 5
    notes.notes.append("n1")
    session.save_session_state_sync("m", state=state, counter=counter, notes=notes, history=agent.history)

    state2, counter2, notes2, agent2 = State(), Counter(), Notes(), make_agent()
    session.load_session_state_sync("m", state=state2, counter=counter2, notes=notes2, history=agent2.history)
    assert state2.data == {"a": 1} and state2.messages[0].content == "hi"
    assert counter2.count == 5 and notes2.notes == ["n1"]
    assert len(agent2.history) == 1 and agent2.history[0].content == agent.history[0].content


def test_saving_some_modules_keeps_the_others(session):
    class Box(StateModule):
        def __init__(self, v):
            self.v = v
            self.register_state("v")

    session.save_session_state_sync("s", a=Box(1), b=Box(2))
    session.save_session_state_sync("s", b=Box(3))
    a, b = Box(0), Box(0)
    session.load_session_state_sync("s", a=a, b=b)
    assert (a.v, b.v) == (1, 3)


# -- autosave, per-turn appends ---------------------------------------------------------------


def test_autosave_restores_on_construction_and_fresh_starts_over(session):
    agent = make_agent(session=session)
    agent.run("one")
    agent.run("two")
    again = make_agent(session=session)
    assert len(again.history) == 2 and again.session_state == {"items": ["milk", "milk"]}
    again.run("three")
    third = make_agent(session=session)
    assert [t.message for t in third.history] == ["one", "two", "three"]
    new = make_agent(session=session, fresh=True)
    assert len(new.history) == 0
    new.run("solo")
    assert [t.message for t in make_agent(session=session).history] == ["solo"]


def test_autosave_appends_only_the_change(tmp_path):
    session = JSONSession(tmp_path)
    agent = make_agent(context=False, session=session)  # the prompt itself would hold the state
    agent.session_state["big"] = "x" * 200_000
    agent.run("one")
    log = tmp_path / "shop.jsonl"
    size = log.stat().st_size
    for i in range(3):
        agent.run(f"turn {i}")
    lines = log.read_text().splitlines()
    assert len(lines) == 4
    assert all(len(line) < 20_000 for line in lines[1:])  # the big value is not rewritten
    assert log.stat().st_size - size < 60_000
    assert json.loads(lines[-1])["op"] == "delta"
    restored = make_agent(context=False, session=JSONSession(tmp_path))
    assert restored.session_state["big"] == "x" * 200_000 and len(restored.history) == 4


def test_compaction_folds_the_log_into_the_snapshot(tmp_path):
    session = JSONSession(tmp_path, compact_min_bytes=2_000)
    agent = make_agent(session=session)
    for i in range(30):
        agent.run(f"turn {i}")
    session.flush()  # compactions run in the background
    folded = json.loads((tmp_path / "shop.json").read_text())["__agentnb__"]["seq"]
    lines = [json.loads(line) for line in (tmp_path / "shop.jsonl").read_text().splitlines()]
    # The log restarts at the snapshot's seq and holds only what was appended after the fold.
    assert folded > 1 and lines[0] == {"v": fmt.VERSION, "seq": folded, "op": "base"}
    assert [line["seq"] for line in lines[1:]] == list(range(folded + 1, folded + len(lines)))
    restored = make_agent(session=JSONSession(tmp_path))
    assert [t.message for t in restored.history] == [f"turn {i}" for i in range(30)]
    assert restored.session_state["items"] == ["milk"] * 30


def test_load_history_for_replay(tmp_path):
    agent = make_agent(session=tmp_path)
    agent.run("one")
    history = load_history(tmp_path, "shop")
    assert history[0].message == "one" and history[0].model_calls[0].response.content is None
    assert load_history(tmp_path / "shop.jsonl")[0].run_id == agent.history[0].run_id
    db = tmp_path / "x.db"
    SQLiteSession(db).save_session_state_sync("a", agent=agent)
    assert len(load_history(db, "a")) == 1


def test_jq_reads_the_files(tmp_path):
    if not Path("/usr/bin/jq").exists():
        pytest.skip("jq not installed")
    agent = make_agent(session=tmp_path)
    agent.run("one")
    JSONSession(tmp_path).compact("shop")
    out = subprocess.run(
        ["jq", "-r", ".agent.history.turns[0].message", str(tmp_path / "shop.json")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "one"


# -- encoding ---------------------------------------------------------------------------------


def test_unstorable_value_names_the_key_path(session):
    agent = make_agent()
    agent.session_state["orders"] = [{"when": object()}]
    with pytest.raises(
        SessionEncodeError, match=r"agent\.state\.orders\[0\]\.when.*builtins\.object.*register_encoder"
    ):
        session.save_session_state_sync("bad", agent=agent)
    assert not session.exists("bad")
    agent.session_state["orders"] = {1: "a"}
    with pytest.raises(SessionEncodeError, match=r"dict key 1 is a int"):
        session.save_session_state_sync("bad", agent=agent)


def test_builtin_and_registered_encoders_round_trip(session):
    class Point:
        def __init__(self, x, y):
            self.x, self.y = x, y

    register_encoder(Point, "test.Point", lambda p: [p.x, p.y], lambda v: Point(*v))
    try:
        agent = make_agent()
        when = datetime.datetime(2024, 5, 1, 12, 30)
        agent.session_state.update(when=when, tags={"a"}, p=Point(1, 2), tricky={"$agentnb": "user data"})
        session.save_session_state_sync("enc", agent=agent)
        other = make_agent()
        session.load_session_state_sync("enc", agent=other)
        assert other.session_state["when"] == when and other.session_state["tags"] == {"a"}
        assert (other.session_state["p"].x, other.session_state["p"].y) == (1, 2)
        assert other.session_state["tricky"] == {"$agentnb": "user data"}
    finally:
        unregister_encoder(Point)
    with pytest.raises(SessionFormatError, match="test.Point.*register_encoder"):
        session.load_session_state_sync("enc", agent=make_agent())


def test_autosave_error_is_a_warning_not_a_failed_turn(tmp_path):
    agent = make_agent(session=tmp_path)
    agent.session_state["bad"] = {1: "int keys do not survive JSON"}
    with pytest.warns(UserWarning, match=r"could not save session 'shop'.*agent\.state\.bad.*dict key 1"):
        result = agent.run("one")
    assert result.content.startswith("done")


# -- corrupt files ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content, problem",
    [
        (b"", "is empty"),
        (b'{"agent": {"state": ', "not valid JSON"),
        (b"\xff\xfe garbage", "not UTF-8"),
        (b"[1, 2]", "holds a JSON list"),
        (
            b'{"__agentnb__": {"format": "agentnb.session", "version": 99}}',
            "written by a newer agentnb.*version 99.*upgrade agentnb",
        ),
    ],
)
def test_corrupt_snapshot_is_a_clear_error_and_untouched(tmp_path, content, problem):
    path = tmp_path / "s.json"
    path.write_bytes(content)
    agent = make_agent()
    with pytest.raises(SessionFormatError, match=problem) as info:
        JSONSession(tmp_path).load_session_state_sync("s", agent=agent)
    assert str(path) in str(info.value)
    assert path.read_bytes() == content
    assert len(agent.history) == 0  # nothing half-loaded


def test_corrupt_log_line_names_the_line_and_keeps_other_sessions(tmp_path):
    session = JSONSession(tmp_path)
    make_agent(session=session).run("one")
    other = Agent("other", ScriptedModel(["hi"]), session=session)
    other.run("x")
    log = tmp_path / "shop.jsonl"
    text = log.read_text()
    log.write_text("{not json\n" + text)
    with pytest.raises(SessionFormatError, match=r"shop\.jsonl line 1 is not valid JSON"):
        make_agent(session=JSONSession(tmp_path))
    assert log.read_text() == "{not json\n" + text
    assert len(Agent("other", ScriptedModel(["hi"]), session=JSONSession(tmp_path)).history) == 1


def test_interrupted_last_line_is_ignored_with_a_warning(tmp_path):
    session = JSONSession(tmp_path)
    agent = make_agent(session=session)
    agent.run("one")
    agent.run("two")
    log = tmp_path / "shop.jsonl"
    data = log.read_bytes()
    log.write_bytes(data[: len(data) - 40])  # the second save was cut short
    with pytest.warns(UserWarning, match="incomplete last line"):
        restored = make_agent(session=JSONSession(tmp_path))
    assert [t.message for t in restored.history] == ["one"]
    restored.run("three")  # the torn tail is cut before appending
    assert [t.message for t in make_agent(session=JSONSession(tmp_path)).history] == ["one", "three"]


def test_not_a_database_is_a_session_format_error(tmp_path):
    path = tmp_path / "s.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(SessionFormatError, match="s.db"):
        SQLiteSession(path).load_session_state_sync("x", agent=make_agent())
    assert path.read_bytes() == b"this is not sqlite" * 100


# -- secrets ----------------------------------------------------------------------------------


def test_no_secret_in_session_files(tmp_path, monkeypatch):
    secret = "sk-test-SECRET-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    agent = make_agent(session=JSONSession(tmp_path / "j"))
    agent.run("one")
    agent.session_state["leak"] = f"the key is {secret}"
    agent.run("two")
    JSONSession(tmp_path / "j").save_session_state_sync("full", agent=agent)
    SQLiteSession(tmp_path / "s.db").save_session_state_sync("full", agent=agent)
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


# -- next to the notebook ---------------------------------------------------------------------


def test_notebook_session_dir_and_find_notebook_path(tmp_path):
    assert notebook_session_dir("work/analysis.ipynb") == Path("work/analysis.agentnb")
    with pytest.raises(ValueError, match="not a notebook"):
        notebook_session_dir("analysis.py")
    vs = find_notebook_path({"__vsc_ipynb_file__": "/home/u/a.ipynb"}, environ={}, cwd=tmp_path)
    assert (vs.source, vs.session_dir) == ("vscode", Path("/home/u/a.agentnb"))
    (tmp_path / "lab.ipynb").write_text("{}")
    lab = find_notebook_path({}, environ={"JPY_SESSION_NAME": "sub/lab.ipynb"}, cwd=tmp_path)
    assert (lab.source, lab.path) == ("jupyter", tmp_path / "lab.ipynb")
    cwd = find_notebook_path({}, environ={}, cwd=tmp_path)
    assert (cwd.source, cwd.session_dir, cwd.notice) == ("cwd", tmp_path / "lab.agentnb", None)
    (tmp_path / "other.ipynb").write_text("{}")
    fallback = find_notebook_path({}, environ={}, cwd=tmp_path)
    assert fallback.source == "fallback" and fallback.path is None
    assert str(tmp_path / "notebook.agentnb") in fallback.notice and "\n" not in fallback.notice
    plain = find_notebook_path({}, environ={})
    assert plain.notice is None or "saving sessions in notebook.agentnb/ " in plain.notice
    explicit = find_notebook_path(
        {}, explicit="x/y.ipynb", environ={"JPY_SESSION_NAME": "z.ipynb"}, cwd=tmp_path
    )
    assert (explicit.source, explicit.session_dir) == ("explicit", tmp_path / "x" / "y.agentnb")


def test_sessions_modules_do_not_import_ipython(tmp_path):
    code = (
        "import sys; sys.modules['IPython'] = None\n"
        "import agentnb.sessions, agentnb.sessions.locate, agentnb.sessions.autosave\n"
        "print('ok')"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert out.stdout.strip() == "ok", out.stderr


def test_sqlite_log_is_folded_into_the_snapshot_as_it_grows(tmp_path):
    import sqlite3

    from agentnb.sessions.sqlite_session import SIZE_CHECK_EVERY

    session = SQLiteSession(tmp_path / "s.db", compact_min_bytes=2_000)
    agent = Agent("a", ScriptedModel(lambda request: "ok" * 100), session=session)
    for i in range(2 * SIZE_CHECK_EVERY):
        agent.run(f"turn {i}")
    session.flush()
    rows = sqlite3.connect(tmp_path / "s.db").execute("SELECT COUNT(*) FROM log").fetchone()[0]
    assert rows < SIZE_CHECK_EVERY  # folded at least once; each turn appended one row
    fresh = Agent("a", ScriptedModel([]), session=SQLiteSession(tmp_path / "s.db"))
    assert [t.message for t in fresh.history] == [f"turn {i}" for i in range(2 * SIZE_CHECK_EVERY)]


def test_user_id_keeps_users_apart(session):
    class Box(StateModule):
        def __init__(self, v):
            self.v = v
            self.register_state("v")

    session.save_session_state_sync("s", user_id="alice", box=Box(1))
    session.save_session_state_sync("s", user_id="bob", box=Box(2))
    alice, bob, nobody = Box(0), Box(0), Box(0)
    assert session.load_session_state_sync("s", user_id="alice", box=alice)
    assert session.load_session_state_sync("s", user_id="bob", box=bob)
    assert not session.load_session_state_sync("s", box=nobody)
    assert (alice.v, bob.v, nobody.v) == (1, 2, 0)
    assert session.exists("alice_s")
    with pytest.raises(ValueError, match="session id '../x_s'"):
        session.save_session_state_sync("s", user_id="../x", box=Box(3))


def test_agno_db_classes_save_every_turn_under_the_agents_session_id(tmp_path):
    from agentnb.sessions import InMemoryDb, JsonDb, SqliteDb

    for db in (
        SqliteDb(db_file=tmp_path / "tmp" / "agents.db"),
        JsonDb(db_path=tmp_path / "json_db"),
        InMemoryDb(),
    ):
        agent = Agent(
            model=ScriptedModel([tool_call("add_item", item="milk"), "ok"]),
            tools=[add_item],
            session_state={"items": []},
            db=db,
            session_id="s1",
        )
        agent.run("add milk")
        assert db.exists("s1")
        again = Agent(
            model=ScriptedModel([]), tools=[add_item], session_state={"items": []}, db=db, session_id="s1"
        )
        assert again.session_state == {"items": ["milk"]} and len(again.history) == 1
        # Agno: an agent without session_id= starts a session of its own
        assert Agent(model=ScriptedModel([]), session_state={"items": []}, db=db).session_state == {
            "items": []
        }
    assert (tmp_path / "tmp" / "agents.db").exists() and any((tmp_path / "json_db").glob("s1.json*"))
    with pytest.raises(Exception, match="session= or db="):
        Agent(model=ScriptedModel([]), db=InMemoryDb(), session=tmp_path / "s")


def test_among_several_notebooks_the_one_holding_the_cell_is_found(tmp_path):
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    cell = "%%agent shop --model model\nYou keep {shopping_list}."
    nbformat.write(new_notebook(cells=[new_code_cell("print(1)")]), tmp_path / "a.ipynb")
    nbformat.write(
        new_notebook(cells=[new_code_cell("%load_ext agentnb"), new_code_cell(cell)]), tmp_path / "b.ipynb"
    )
    (tmp_path / "c.ipynb").write_text("not json")
    found = find_notebook_path({}, environ={}, cwd=tmp_path, cell=cell + "\n")
    assert (found.source, found.path, found.notice) == ("cwd", tmp_path / "b.ipynb", None)
    assert found.session_dir == tmp_path / "b.agentnb"
    assert find_notebook_path({}, environ={}, cwd=tmp_path, cell="%%agent other").source == "fallback"


# -- values JSON text cannot hold ---------------------------------------------------------------


def test_nan_infinities_and_lone_surrogates_round_trip(session):
    agent = make_agent()
    values = {
        "nan": float("nan"),
        "inf": float("inf"),
        "ninf": float("-inf"),
        "text": "a\ud800b",
        "\udfff": [1.5],
    }
    agent.session_state.update(values)
    session.save_session_state_sync("odd", agent=agent)
    other = make_agent()
    session.load_session_state_sync("odd", agent=other)
    loaded = other.session_state
    assert (
        loaded["nan"] != loaded["nan"] and loaded["inf"] == float("inf") and loaded["ninf"] == float("-inf")
    )
    assert loaded["text"] == "a\ud800b" and loaded["\udfff"] == [1.5]


def test_snapshots_with_odd_values_are_strict_utf8_json(tmp_path):
    agent = make_agent()
    agent.session_state.update(score=float("nan"), text="x\ud83dy")
    JSONSession(tmp_path).save_session_state_sync("odd", agent=agent)
    data = json.loads((tmp_path / "odd.json").read_bytes().decode("utf-8"))  # strict: raises on bad bytes
    assert data["agent"]["state"]["score"] == {"$agentnb": "float", "value": "nan"}
    assert data["agent"]["state"]["text"] == "x\ud83dy"


def test_a_malformed_tag_is_a_format_error(tmp_path):
    (tmp_path / "t.json").write_text(json.dumps({"agent": {"state": {"$agentnb": "dict", "value": 5}}}))
    with pytest.raises(SessionFormatError, match=r"t\.json.*tagged 'dict' holds 5"):
        JSONSession(tmp_path).load_session_state_sync("t", agent=make_agent())


def test_a_sqlite_session_sees_sessions_another_writer_created_after_it_looked(tmp_path):
    path = tmp_path / "s.db"
    # An empty database (a SQLite file holding no table; a 0-byte file is damage, not this):
    # nothing to load, and loading must not create tables.
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE t (x); DROP TABLE t;")
    conn.close()
    empty = path.read_bytes()
    assert empty
    reader, writer = SQLiteSession(path), SQLiteSession(path)
    assert reader.load_session_state_sync("shop", agent=make_agent()) is False
    assert path.read_bytes() == empty
    writer.save_session_state_sync("shop", agent=make_agent())
    assert reader.load_session_state_sync("shop", agent=make_agent()) is True
