"""Damaged session files: every kind of damage is a ``SessionFormatError`` naming the file, the
file is left byte-identical, nothing is written into a foreign file, special files never hang a
load, read-only sessions load, and leftovers from killed writers are cleaned.

Named cases cover each kind once; hypothesis then damages real sessions (JSON snapshot, JSON
log, SQLite rows and raw SQLite bytes) by truncation, bit flips, inserted bytes, duplicated and
swapped lines and values of the wrong type. A failure is attributed to the module whose code
raised it, so storage problems and agent-module problems are told apart.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import tempfile
import threading
import traceback
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from campaign import Scale, Tally, json_paths, replaced
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentnb import Agent, ScriptedModel, Team, tool_call
from agentnb.errors import SessionFormatError
from agentnb.sessions import JSONSession, SQLiteSession
from agentnb.sessions import format as fmt

GIVE_UP = 20.0
NAMED = Tally("damaged files, named kinds")
STORAGE = (
    "sessions/json_session.py",
    "sessions/sqlite_session.py",
    "sessions/fileio.py",
    "sessions/format.py",
    "sessions/codec.py",
)


def bump(key: str, session_state: dict) -> str:
    """Count a key up."""
    session_state[key] = session_state.get(key, 0) + 1
    return "ok"


def agent_for(session: Any) -> Agent:
    script = [tool_call("bump", key="a"), "one", "two", tool_call("bump", key="b"), "three", "four"]
    return Agent("s", ScriptedModel(script), tools=[bump], session=session)


def build(kind: str, root: Path) -> tuple[Any, list[Path]]:
    """A session of four turns (a snapshot and a log after it); returns the backend and its files."""
    session = JSONSession(root) if kind == "json" else SQLiteSession(root / "s.db")
    agent = agent_for(session)
    agent.run("first")
    agent.run("second")
    session.compact("s")
    agent.run("third")
    agent.run("fourth")
    if kind == "json":
        return session, [root / "s.json", root / "s.jsonl"]
    session.close()
    return session, [root / "s.db"]


def origin(exc: BaseException) -> str:
    """The agentnb module whose code raised ``exc`` (innermost frame)."""
    where = "outside agentnb"
    for frame in traceback.extract_tb(exc.__traceback__):
        if "/agentnb/" in frame.filename:
            where = frame.filename.split("/agentnb/", 1)[1]
    return where


def load(session_factory: Callable[[], Any]) -> tuple[bool, Any]:
    """Load in a thread: (finished, agent or exception)."""
    box: list[Any] = []

    def target() -> None:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                box.append(Agent("s", ScriptedModel([]), session=session_factory()))
        except BaseException as exc:  # noqa: BLE001 - classified by the caller
            box.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(GIVE_UP)
    return (not thread.is_alive()), (box[0] if box else None)


def judge(
    session_factory: Callable[[], Any], files: list[Path], *, must_fail: bool
) -> tuple[str | None, str]:
    """(what went wrong or None, which module it belongs to)."""
    before = {p: _snapshot(p) for p in files}
    finished, outcome = load(session_factory)
    if not finished:
        return "hang", "storage"
    changed = [p.name for p in files if _snapshot(p) != before[p]]
    if changed:
        return f"{', '.join(changed)} changed by a load", "storage"
    if isinstance(outcome, SessionFormatError):
        if not any(str(p) in str(outcome) for p in files):
            return "SessionFormatError does not name the file", origin(outcome)
        return None, ""
    if isinstance(outcome, BaseException):
        return f"raw {type(outcome).__name__}: {outcome}"[:120], origin(outcome)
    if must_fail:
        return f"loaded silently ({len(outcome.history)} turns)", "storage"
    return None, ""


def _snapshot(path: Path) -> Any:
    try:
        st_ = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISREG(st_.st_mode):
        return path.read_bytes()
    return (stat.S_IFMT(st_.st_mode), os.readlink(path) if stat.S_ISLNK(st_.st_mode) else None)


# -- named cases ------------------------------------------------------------------------------


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def _edit_snapshot(path: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))


def _last_role_unknown(line: bytes) -> bytes:
    """The line's last message (a turn's own, stored after its events) gets an unknown role."""
    head, found, tail = line.rpartition(b'"role":"assistant"')
    assert found
    return head + b'"role":"wizard"' + tail


def _unknown_role(data: dict[str, Any]) -> None:
    """The first stored message of the first turn gets a role no message has."""
    data["agent"]["history"]["turns"][0]["messages"][0]["role"] = "wizard"


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


JSON_DAMAGE: dict[str, Callable[[Path, Path], None]] = {
    "snapshot truncated": lambda s, log: s.write_bytes(s.read_bytes()[: s.stat().st_size // 2]),
    "snapshot 0 bytes": lambda s, log: s.write_bytes(b""),
    "snapshot not UTF-8": lambda s, log: s.write_bytes(b"\xff\xfe" + s.read_bytes()),
    "snapshot a JSON list": lambda s, log: s.write_text("[1, 2]"),
    "snapshot version 99": lambda s, log: _edit_snapshot(s, lambda d: d["__agentnb__"].update(version=99)),
    "snapshot seq a string": lambda s, log: _edit_snapshot(s, lambda d: d["__agentnb__"].update(seq="x")),
    "snapshot nested 100000 deep": lambda s, log: s.write_text('{"agent": ' + _nested(100_000) + "}"),
    "snapshot with a 5000-digit integer": lambda s, log: s.write_text('{"agent": {"n": ' + "7" * 5000 + "}}"),
    "log line duplicated": lambda s, log: log.write_bytes(b"".join(_lines(log) + _lines(log)[-1:])),
    "log seq going backwards": lambda s, log: log.write_bytes(
        b"".join([*_lines(log)[:-2], _lines(log)[-1], _lines(log)[-2]])
    ),
    "log line of a newer version": lambda s, log: log.write_bytes(
        _lines(log)[-1].replace(b'"v":%d' % fmt.VERSION, b'"v":%d' % (fmt.VERSION + 1))
    ),
    "log line cut in the middle": lambda s, log: log.write_bytes(
        b"".join([_lines(log)[0][:20] + b"\n", *_lines(log)[1:]])
    ),
    "log line a JSON list": lambda s, log: log.write_bytes(b"".join([*_lines(log), b"[1]\n"])),
    "log line nested 100000 deep": lambda s, log: log.write_bytes(
        b"".join([*_lines(log), _nested(100_000).encode() + b"\n"])
    ),
    "log line with a 5000-digit seq": lambda s, log: log.write_bytes(
        b"".join([*_lines(log), b'{"v":1,"seq":' + b"9" * 5000 + b',"op":"base"}\n'])
    ),
    "snapshot of the next version": lambda s, log: _edit_snapshot(
        s, lambda d: d["__agentnb__"].update(version=fmt.VERSION + 1)
    ),
    "snapshot holding NaN": lambda s, log: s.write_text(
        s.read_text().replace('"turns":[', '"nan":NaN,"turns":[', 1)
    ),
    "snapshot holding Infinity": lambda s, log: s.write_text(
        s.read_text().replace('"turns":[', '"x":-Infinity,"turns":[', 1)
    ),
    "snapshot message of an unknown role": lambda s, log: _edit_snapshot(s, _unknown_role),
    "log line with a negative seq": lambda s, log: log.write_bytes(
        b"".join([*_lines(log), b'{"v":%d,"seq":-5,"op":"base"}\n' % fmt.VERSION])
    ),
    "log's only lines with negative seqs": lambda s, log: log.write_bytes(
        b'{"v":%d,"seq":-2,"op":"base"}\n' % fmt.VERSION
    ),
    "log line holding NaN": lambda s, log: log.write_bytes(
        b"".join([*_lines(log)[:-1], _lines(log)[-1].replace(b'"op":', b'"x":NaN,"op":', 1)])
    ),
    "log message of an unknown role": lambda s, log: log.write_bytes(
        b"".join([*_lines(log)[:-1], _last_role_unknown(_lines(log)[-1])])
    ),
    "snapshot is a FIFO": lambda s, log: (s.unlink(), os.mkfifo(s)),
    "log is a FIFO": lambda s, log: (log.unlink(), os.mkfifo(log)),
    "snapshot is a symlink loop": lambda s, log: (s.unlink(), log.unlink(), os.symlink(s.name, s)),
    "snapshot is a folder": lambda s, log: (s.unlink(), s.mkdir()),
}


def _sql(path: Path, *statements: str) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in statements:
        conn.execute(statement)
    conn.close()


SQLITE_DAMAGE: dict[str, Callable[[Path], None]] = {
    "not a database": lambda db: db.write_bytes(b"hello, I am a text file\n" * 10),
    "truncated": lambda db: db.write_bytes(db.read_bytes()[: 4096 + 100]),
    "pages overwritten": lambda db: db.write_bytes(
        db.read_bytes()[:2048] + b"\x13" * 4096 + db.read_bytes()[2048 + 4096 :]
    ),
    "foreign database": lambda db: (
        db.unlink(),
        _sql(db, "CREATE TABLE people (name TEXT)", "INSERT INTO people VALUES ('ada')"),
    ),
    "our version, no tables": lambda db: (db.unlink(), _sql(db, "PRAGMA user_version=1")),
    "version 7": lambda db: _sql(db, "PRAGMA user_version=7"),
    "the next version": lambda db: _sql(db, f"PRAGMA user_version={fmt.VERSION + 1}"),
    "a log row with a negative seq": lambda db: _sql(
        db, "UPDATE log SET seq=-seq, line=replace(line, '\"seq\":' || seq, '\"seq\":-' || seq)"
    ),
    "a snapshot row holding NaN": lambda db: _sql(
        db, 'UPDATE snapshots SET data=replace(data, \'"turns":[\', \'"nan":NaN,"turns":[\')'
    ),
    "a message of an unknown role": lambda db: _sql(
        db, 'UPDATE log SET line=replace(line, \'"role":"user"\', \'"role":"wizard"\')'
    ),
    "snapshot row not JSON": lambda db: _sql(db, "UPDATE snapshots SET data='{oops'"),
    "log row not JSON": lambda db: _sql(
        db, "UPDATE log SET line='{oops' WHERE seq=(SELECT MAX(seq) FROM log)"
    ),
    "log row seq disagrees with its line": lambda db: _sql(
        db, "UPDATE log SET seq=seq+100 WHERE seq=(SELECT MAX(seq) FROM log)"
    ),
    "log row nested 100000 deep": lambda db: _sql(
        db, f"UPDATE log SET line='{_nested(100_000)}' WHERE seq=(SELECT MAX(seq) FROM log)"
    ),
    "database is a FIFO": lambda db: (db.unlink(), os.mkfifo(db)),
    "database is a symlink loop": lambda db: (db.unlink(), os.symlink(db.name, db)),
    "database is a folder": lambda db: (db.unlink(), db.mkdir()),
}


@pytest.mark.parametrize("damage", list(JSON_DAMAGE))
def test_damaged_json_session_is_a_clear_error_and_untouched(tmp_path, damage):
    session, files = build("json", tmp_path)
    JSON_DAMAGE[damage](*files)
    problem, where = judge(lambda: JSONSession(tmp_path), files, must_fail=True)
    NAMED.check(problem, damage)
    assert problem is None, f"{problem} ({where})"


@pytest.mark.parametrize("damage", list(SQLITE_DAMAGE))
def test_damaged_sqlite_session_is_a_clear_error_and_untouched(tmp_path, damage):
    session, files = build("sqlite", tmp_path)
    for suffix in ("-wal", "-shm"):
        Path(str(files[0]) + suffix).unlink(missing_ok=True)
    SQLITE_DAMAGE[damage](files[0])
    problem, where = judge(lambda: SQLiteSession(files[0]), files, must_fail=True)
    NAMED.check(problem, damage)
    assert problem is None, f"{problem} ({where})"


AGENT_DAMAGE: dict[str, Callable[[dict[str, Any]], None]] = {
    "turns a number": lambda d: d["agent"]["history"].update(turns=5),
    "a turn without its index": lambda d: d["agent"]["history"]["turns"][0].pop("index"),
    "usage a string": lambda d: d["agent"]["history"]["turns"][0].update(usage="many"),
    "a message a list": lambda d: d["agent"].update(messages=[[1]]),
    "state a list": lambda d: d["agent"].update(state=[1]),
    "an event of an unknown kind": lambda d: d["agent"]["history"]["turns"][0]["events"].append(
        {"kind": "nope"}
    ),
    "history an object without turns": lambda d: d["agent"].update(history={"runs": []}),
    "history an empty list": lambda d: d["agent"].update(history=[]),
    "history of another kind": lambda d: d["agent"]["history"].update(kind="agentnb.Agent"),
}


@pytest.mark.parametrize("damage", list(AGENT_DAMAGE))
def test_an_agent_module_of_the_wrong_shape_is_a_clear_error(tmp_path, damage):
    session, files = build("json", tmp_path)
    files[1].unlink()
    _edit_snapshot(files[0], AGENT_DAMAGE[damage])
    problem, where = judge(lambda: JSONSession(tmp_path), files[:1], must_fail=True)
    NAMED.check(problem, damage)
    assert problem is None, f"{problem} ({where})"


def shop_team() -> Team:
    shopper = Agent("shopper", ScriptedModel([tool_call("bump", key="tea"), "added"]), tools=[bump])
    return Team(
        "team",
        members=[shopper],
        model=ScriptedModel([tool_call("delegate_task_to_member", member_id="shopper", task="tea"), "done"]),
    )


TEAM_DAMAGE: dict[str, tuple[str, Any]] = {
    "the team's history an object": ("team", {"runs": []}),
    "a member's history an object": ("team/shopper", {"runs": []}),
    "a member's history a number": ("team/shopper", 0),
}


@pytest.mark.parametrize("damage", list(TEAM_DAMAGE))
def test_a_team_module_whose_history_is_of_the_wrong_shape_is_a_clear_error(tmp_path, damage):
    team = shop_team()
    team.run("tea please")
    JSONSession(tmp_path).save_session_state_sync("team", **team.modules())
    module, value = TEAM_DAMAGE[damage]
    snapshot = tmp_path / "team.json"
    _edit_snapshot(snapshot, lambda d: d[module].update(history=value))
    before = snapshot.read_bytes()
    with pytest.raises(SessionFormatError) as info:
        JSONSession(tmp_path).load_session_state_sync("team", **shop_team().modules())
    text = str(info.value)
    assert f"{snapshot} (module {module!r})" in text
    assert (
        "has no 'turns' (keys: 'runs')" if isinstance(value, dict) else "a history must be an object"
    ) in text
    assert snapshot.read_bytes() == before
    NAMED.check(None, damage)


def test_a_team_session_whose_member_history_is_an_object_is_a_clear_error(tmp_path):
    """The same through Team(session=...), which saves and restores the whole tree."""

    def team_in(session: JSONSession) -> Team:
        shopper = Agent("shopper", ScriptedModel([tool_call("bump", key="tea"), "added"]), tools=[bump])
        script = [tool_call("delegate_task_to_member", member_id="shopper", task="tea"), "done"]
        return Team("team", members=[shopper], model=ScriptedModel(script), session=session)

    team_in(JSONSession(tmp_path)).run("tea please")
    JSONSession(tmp_path).compact("team")
    snapshot = tmp_path / "team.json"
    _edit_snapshot(snapshot, lambda d: d["agent/shopper"].update(history={"runs": []}))
    before = snapshot.read_bytes()
    with pytest.raises(SessionFormatError) as info:
        team_in(JSONSession(tmp_path))
    assert f"{snapshot} (module 'agent/shopper')" in str(info.value)
    assert "has no 'turns' (keys: 'runs')" in str(info.value)
    assert snapshot.read_bytes() == before


def test_a_module_saved_without_a_history_loads_with_no_turns(tmp_path):
    """AgentScope's shape: a module's state without a history is not damage."""
    agent = Agent("s", ScriptedModel(["hi"]))
    agent.run("hello")
    state = agent.state_dict()
    del state["history"]
    fresh = Agent("s", ScriptedModel([]))
    fresh.load_state_dict(state)
    assert len(fresh.history) == 0 and fresh.state.messages == agent.state.messages


def test_a_zero_byte_database_is_a_damaged_session_never_written_into(tmp_path):
    db = tmp_path / "s.db"
    db.write_bytes(b"")
    with pytest.raises(SessionFormatError, match=r"s\.db is an empty file \(0 bytes\), not a SQLite session"):
        Agent("s", ScriptedModel([]), session=SQLiteSession(db))
    # Nor by a save: the agent runs, its save is refused, the file stays empty.
    agent = Agent("s", ScriptedModel(["hi"]))
    with pytest.raises(SessionFormatError, match="empty file"):
        SQLiteSession(db).save_session_state_sync("s", agent=agent)
    assert db.read_bytes() == b"" and sorted(
        p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")
    ) == ["s.db"]
    NAMED.check(None, "database 0 bytes")


def test_saving_into_a_foreign_database_is_refused_and_leaves_it_alone(tmp_path):
    db = tmp_path / "people.db"
    _sql(db, "CREATE TABLE people (name TEXT)", "INSERT INTO people VALUES ('ada')")
    before = db.read_bytes()
    agent = Agent("s", ScriptedModel(["hi"]))
    with pytest.raises(SessionFormatError, match="people.db"):
        SQLiteSession(db).save_session_state_sync("s", agent=agent)
    assert db.read_bytes() == before


def test_old_lines_before_the_snapshot_still_load(tmp_path):
    """A crash between the snapshot's rename and the log's leaves lines the snapshot holds."""
    session, (snap, log) = build("json", tmp_path)
    lines = _lines(log)
    agent = agent_for(session)
    session.compact("s")
    log.write_bytes(b"".join(lines))  # the old log, as if the second rename never happened
    restored = Agent("s", ScriptedModel([]), session=JSONSession(tmp_path))
    assert [t.message for t in restored.history] == [t.message for t in agent.history]


# -- read-only sessions and leftovers --------------------------------------------------------


def _as_nobody(fn: Callable[[], Any]) -> Any:
    """Run ``fn`` in a child process that cannot write (root ignores file modes, so drop to nobody)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.close(read)
            if os.getuid() == 0:
                os.setgid(65534)
                os.setuid(65534)
            result = fn()
            os.write(write, json.dumps({"ok": result}).encode())
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            os.write(write, json.dumps({"error": f"{type(exc).__name__}: {exc}"}).encode())
            code = 1
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    return json.loads(data or b'{"error": "no answer"}')


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.parametrize("kind", ["json", "sqlite"])
def test_a_read_only_session_can_be_loaded(kind):
    root = Path(tempfile.mkdtemp(prefix="agentnb-ro-"))  # outside pytest's private tmp, so nobody can enter
    try:
        _, files = build(kind, root)
        for path in root.iterdir():
            if path.suffix == ".lock":
                path.unlink()
            else:
                path.chmod(0o444)
        root.chmod(0o555)
        factory = (lambda: JSONSession(root)) if kind == "json" else (lambda: SQLiteSession(root / "s.db"))
        before = {p: p.read_bytes() for p in files}
        answer = _as_nobody(lambda: len(Agent("s", ScriptedModel([]), session=factory()).history))
        assert answer == {"ok": 4}
        assert {p: p.read_bytes() for p in files} == before
        assert sorted(p.name for p in root.iterdir()) == sorted(p.name for p in files)
    finally:
        root.chmod(0o755)
        for path in root.iterdir():
            path.chmod(0o644)
            path.unlink()
        root.rmdir()


def test_temporary_files_left_by_killed_writers_are_cleaned_by_the_next_save(tmp_path):
    session, (snap, log) = build("json", tmp_path)
    leftovers = [tmp_path / f".s.json.{n}.tmp" for n in ("k1l2", "x9y8")] + [tmp_path / ".s.jsonl.q7.tmp"]
    for path in leftovers:
        path.write_bytes(b"half a snapshot")
    other = tmp_path / ".t.json.k1l2.tmp"  # another session's: not ours to remove while it may be writing
    other.write_bytes(b"x")
    session.compact("s")
    assert [p for p in leftovers if p.exists()] == []
    assert other.exists()


# -- fuzzed damage ----------------------------------------------------------------------------


@st.composite
def byte_damage(draw: st.DrawFn, size: int) -> Callable[[bytes], bytes]:
    """Truncate, flip a bit, insert or delete bytes at a random place."""
    kind = draw(st.sampled_from(["truncate", "flip", "insert", "delete"]))
    at = draw(st.integers(0, max(0, size - 1)))
    if kind == "truncate":
        return lambda b: b[:at]
    if kind == "flip":
        bit = 1 << draw(st.integers(0, 7))
        return lambda b: b[:at] + bytes([b[at] ^ bit]) + b[at + 1 :] if at < len(b) else b
    if kind == "insert":
        extra = draw(st.binary(min_size=1, max_size=8))
        return lambda b: b[:at] + extra + b[at:]
    length = draw(st.integers(1, 64))
    return lambda b: b[:at] + b[at + length :]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=5,
)


@st.composite
def value_damage(draw: st.DrawFn, text: bytes) -> Callable[[bytes], bytes]:
    """Replace any JSON value (at any depth) by any other."""
    data = json.loads(text)
    path = draw(st.sampled_from(json_paths(data)))
    new = draw(json_values)
    encoded = json.dumps(replaced(data, path, new)).encode()
    return lambda b: encoded


@st.composite
def line_damage(draw: st.DrawFn, count: int) -> tuple[Callable[[list[bytes]], list[bytes]], bool]:
    """Duplicate, swap or drop log lines; (edit, whether the damage must be an error)."""
    kind = draw(st.sampled_from(["duplicate", "swap", "drop"]))
    i = draw(st.integers(0, count - 1))
    j = draw(st.integers(0, count - 1))
    if kind == "duplicate":
        return (lambda ls: [*ls[: i + 1], ls[i], *ls[i + 1 :]]), True
    if kind == "swap":

        def swap(ls: list[bytes]) -> list[bytes]:
            out = list(ls)
            out[i], out[j] = out[j], out[i]
            return out

        return swap, i != j
    return (lambda ls: ls[:i] + ls[i + 1 :]), False


class Campaign:
    """Results of one fuzzed damage run, shared by the strict and the storage-only tests."""

    def __init__(self, area: str) -> None:
        self.tally = Tally(area)
        self.by_origin: dict[str, int] = {}

    def record(self, problem: str | None, where: str, example: str) -> None:
        self.tally.check(problem, example)
        if problem is not None:
            self.by_origin[where] = self.by_origin.get(where, 0) + 1

    @property
    def storage_failures(self) -> int:
        return sum(n for where, n in self.by_origin.items() if where == "storage" or where in STORAGE)


def _fuzz(kind: str, examples: int) -> Campaign:
    campaign = Campaign(f"damaged files, {kind}")
    pristine_root = Path(tempfile.mkdtemp(prefix="agentnb-pristine-"))
    _, files = build("json" if kind != "sqlite bytes" else "sqlite", pristine_root)
    pristine = {p.name: p.read_bytes() for p in files}

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(data=st.data())
    def one(data: st.DataObject) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            for name, content in pristine.items():
                (root / name).write_bytes(content)
            must_fail = False
            if kind == "json snapshot":
                target = root / "s.json"
                text = target.read_bytes()
                edit = data.draw(st.one_of(byte_damage(len(text)), value_damage(text)))
                target.write_bytes(edit(text))
            elif kind == "json log":
                target = root / "s.jsonl"
                lines = _lines(target)
                if data.draw(st.booleans()):
                    edit_lines, must_fail = data.draw(line_damage(len(lines)))
                    target.write_bytes(b"".join(edit_lines(lines)))
                else:
                    k = data.draw(st.integers(0, len(lines) - 1))
                    body = lines[k].rstrip(b"\n")
                    edit = data.draw(st.one_of(byte_damage(len(body)), value_damage(body)))
                    new = edit(body).replace(b"\n", b" ")
                    lines[k] = new + b"\n"
                    target.write_bytes(b"".join(lines))
            else:
                target = root / "s.db"
                raw = target.read_bytes()
                target.write_bytes(data.draw(byte_damage(len(raw)))(raw))
            factory = (
                (lambda: SQLiteSession(root / "s.db"))
                if kind == "sqlite bytes"
                else (lambda: JSONSession(root))
            )
            problem, where = judge(factory, [root / n for n in pristine], must_fail=must_fail)
            campaign.record(problem, where, kind)

    try:
        one()
    finally:
        for path in pristine_root.iterdir():
            path.unlink()
        pristine_root.rmdir()
    return campaign


FUZZ_KINDS = ["json snapshot", "json log", "sqlite bytes"]


_FUZZED: dict[tuple[str, bool], Campaign] = {}


def fuzzed(kind: str, scale: Scale) -> Campaign:
    """One fuzz run per kind and size, shared by the two tests below."""
    if (kind, scale.heavy) not in _FUZZED:
        _FUZZED[kind, scale.heavy] = _fuzz(kind, scale(40, 1500))
    return _FUZZED[kind, scale.heavy]


@pytest.mark.parametrize("kind", FUZZ_KINDS)
def test_fuzzed_damage_never_gets_past_the_storage_layer(kind, scale):
    """What the storage layer reads is a SessionFormatError or a clean load; files untouched."""
    campaign = fuzzed(kind, scale)
    assert campaign.storage_failures == 0, f"{campaign.by_origin}: {campaign.tally.summary()}"


def test_fuzzed_damage_is_always_a_clear_error_or_a_clean_load(scale):
    failures = {kind: c.tally.summary() for kind in FUZZ_KINDS if (c := fuzzed(kind, scale)).tally.failed}
    assert not failures, failures
