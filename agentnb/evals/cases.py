"""Cases an agent is evaluated over: ``Case``, and cases from a DataFrame, a file or a recorded turn.

A case is one conversation to run on a fresh agent: one message (``input``) or several, one
turn each (``messages``); a message is text, a dict of input fields, or a list of parts (text,
figures, images, files: ``agentnb.messages.to_parts``), stored by their hashes with the
evaluation's blobs; the state it starts from is the agent's definition deep-merged with
the case's ``state`` (or the state a recorded turn started from, ``Case.from_turn``). Its ``id``
is what runs are paired and resumed by: given, or a hash of what the case sends.
"""

from __future__ import annotations

import copy
import csv
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import EvalCaseError, PartError
from ..messages import PROCESS_BLOBS, FilePart, ImagePart, TextPart, part_from_dict, to_parts
from ..messages.parts import unmarked
from ..util.extras import install_line
from .decisions import check_decisions

Message = "str | Mapping[str, Any]"


@dataclass(frozen=True)
class Start:
    """Where a case starts other than from the agent's definition: a recorded turn's state and conversation."""

    state: dict[str, Any]
    """The state data the case starts with (the case's own ``state`` is merged over it)."""
    messages: tuple[dict[str, Any], ...] = ()
    """The conversation before the case's first turn, as chat message dicts."""
    origin: str = ""
    """Where it was taken from (``shop · turn 3``), for records."""


@dataclass(frozen=True)
class Case:
    """One case: what to send, what is expected, and the state to start from."""

    input: Any = None
    """The user's message (a str, a dict of input fields, or a list of parts: ``["What changed?",
    fig]``, kept as a tuple of ``TextPart`` / ``ImagePart`` / ``FilePart``), for a one-turn case."""
    id: str = ""
    """What runs are paired and resumed by; a hash of the case's content when not given."""
    expected: Any = None
    """The expected value checks compare with when they are given none of their own."""
    state: Mapping[str, Any] | None = None
    """Deep-merged into the agent's initial state before the first turn."""
    messages: tuple[Any, ...] | None = None
    """For a multi-turn case: the user's messages, one turn each, in order (instead of
    ``input``); a turn that is a list is its parts."""
    start: Start | None = None
    """Start from a recorded turn's state and conversation (``Case.from_turn``)."""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    """Anything else carried along to the results (tags, a source row)."""
    decisions: tuple[Any, ...] | None = None
    """What a person decides when a turn pauses, one per pending item in order: ``"approve"``,
    ``{"approve": {arguments}}``, ``{"reject": "why"}``, ``{"answer": value}``, ``{"edit":
    {request}}``; a pause with none left ends the case with the status ``paused``."""

    def __post_init__(self) -> None:
        if (self.input is None) == (self.messages is None):
            raise EvalCaseError(
                f"case {self.id or '?'}: give input='...' (one turn) or messages=[...] (one turn each), "
                "exactly one of them"
            )
        if self.messages is not None:
            if isinstance(self.messages, (str, bytes)) or not isinstance(self.messages, Sequence):
                raise EvalCaseError(
                    f"case {self.id or '?'}: messages must be a list of user messages, "
                    f"got {type(self.messages).__name__}"
                )
            object.__setattr__(self, "messages", tuple(_message(m, self.id) for m in self.messages))
            if not self.messages:
                raise EvalCaseError(f"case {self.id or '?'}: messages=[] holds no message; give at least one")
        else:
            object.__setattr__(self, "input", _message(self.input, self.id))
        if self.state is not None and not isinstance(self.state, Mapping):
            raise EvalCaseError(
                f"case {self.id or '?'}: state must be a dict, got {type(self.state).__name__}"
            )
        if self.decisions is not None:
            object.__setattr__(self, "decisions", check_decisions(self.decisions, str(self.id)))
        if not isinstance(self.id, str):
            object.__setattr__(self, "id", str(self.id))
        if not self.id:
            object.__setattr__(self, "id", content_id(self))

    @property
    def turns(self) -> tuple[Any, ...]:
        """The messages to send, one turn each."""
        return (self.input,) if self.messages is None else self.messages

    @property
    def text(self) -> str:
        """The case's input as shown in results (the turns' messages joined; an image or file
        as ``[image NAME]``)."""
        return " ⏎ ".join(_message_text(m) for m in self.turns)

    def to_dict(self) -> dict[str, Any]:
        """The case as plain data (what the store's manifest and lines keep): a message of parts
        as their stored form, each image or file by its hash (its bytes go to this process's
        blob memory, which the evaluation's store writes to its blobs folder)."""
        out: dict[str, Any] = {"id": self.id}
        out["messages" if self.messages is not None else "input"] = (
            [_stored(m) for m in self.turns] if self.messages is not None else _stored(self.input)
        )
        if self.expected is not None:
            out["expected"] = plain(self.expected)
        if self.state is not None:
            out["state"] = plain(dict(self.state))
        if self.start is not None:
            out["start"] = {
                "state": plain(self.start.state),
                "messages": list(self.start.messages),
                "origin": self.start.origin,
            }
        if self.metadata:
            out["metadata"] = plain(dict(self.metadata))
        if self.decisions is not None:
            out["decisions"] = list(self.decisions)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = "") -> Case:
        """A case from plain data (a file's record): ``input`` or ``messages``, ``id``, ``expected``, ``state``."""
        if not isinstance(data, Mapping):
            raise EvalCaseError(
                f"{where}a case must be an object with 'input' (or 'messages'), got {type(data).__name__}"
            )
        fields = {"id", "input", "messages", "expected", "state", "start", "metadata", "decisions"}
        unknown = sorted(set(data) - fields)
        if unknown:
            raise EvalCaseError(
                f"{where}unknown case field(s) {', '.join(map(repr, unknown))}; "
                "a case has id, input or messages, expected, state, metadata, decisions"
            )
        start = data.get("start")
        messages = data.get("messages")
        return cls(
            input=_loaded(data.get("input"), where),
            id=str(data["id"]) if data.get("id") not in (None, "") else "",
            expected=data.get("expected"),
            state=data.get("state"),
            messages=tuple(_loaded(m, where) for m in messages) if isinstance(messages, list) else messages,
            start=Start(dict(start["state"]), tuple(start.get("messages") or ()), start.get("origin", ""))
            if start
            else None,
            metadata=dict(data.get("metadata") or {}),
            decisions=data.get("decisions"),
        )

    @classmethod
    def from_turn(
        cls,
        agent: Any,
        turn: int,
        *,
        id: str = "",
        expected: Any = None,
        input: Any = None,
        state: Mapping[str, Any] | None = None,
    ) -> Case:
        """Turn ``turn`` (1 = the first) of ``agent``'s recorded history as a case: it starts from
        the state and conversation that turn started from, and sends its message (or ``input``)."""
        history = agent.history
        if isinstance(turn, bool) or not isinstance(turn, int) or not 1 <= turn <= len(history):
            raise EvalCaseError(
                f"agent {agent.name!r} has no turn {turn!r} (it has {len(history)}; turns are numbered from 1)"
            )
        record = history[turn - 1]
        sent = next((m for m in reversed(record.messages) if m.role == "user"), None)
        if input is None and sent is not None and sent.attachments:
            input = sent.parts  # the turn's images and files with its text
        before = agent.snapshot_at(turn - 1) if turn > 1 else None
        data = (
            copy.deepcopy(dict(before.state))
            if before is not None
            else copy.deepcopy(dict(agent._initial_state))
        )
        messages = tuple(m.to_openai() for m in before.messages) if before is not None else ()
        start = Start(data, messages, f"{agent.name} · turn {turn}")
        for part in (p for m in (before.messages if before is not None else ()) for p in m.attachments):
            if isinstance(part, (ImagePart, FilePart)) and part.data is not None:
                # The conversation refers to it by hash: its bytes go where stored parts' go,
                # held there for as long as the case's start is.
                PROCESS_BLOBS.put(part.data, part.media_type or "", part.sha256, holder=start)
        return cls(
            input=record.message if input is None else input,
            id=id or f"{agent.name}-turn-{turn}",
            expected=expected,
            state=state,
            start=start,
        )


def content_id(case: Case) -> str:
    """A stable id from what the case sends and starts from (never from its position)."""
    content = {
        "turns": [plain(_stored(m, marked=False)) for m in case.turns],
        "state": plain(case.state),
        "start": plain(case.start.state) if case.start else None,
    }
    if case.decisions is not None:  # (only then: the ids of cases without stay as they were)
        content["decisions"] = list(case.decisions)
    text = json.dumps(
        content,
        sort_keys=True,
        default=str,
    )
    return "c-" + hashlib.sha1(text.encode()).hexdigest()[:10]


def _message(message: Any, case_id: str) -> Any:
    """A case's message as kept: a str or a dict as given, a list (or tuple) as its parts."""
    if isinstance(message, (str, Mapping)):
        return message
    if isinstance(message, (list, tuple)):
        try:
            return to_parts(message)
        except PartError as exc:
            raise EvalCaseError(f"case {case_id or '?'}: {exc}") from None
    raise EvalCaseError(
        f"case {case_id or '?'}: a message must be a str, a dict of input fields or a list of parts "
        f"(text, figures, images, files), got {type(message).__name__}"
    )


def _stored(message: Any, *, marked: bool = True) -> Any:
    """A message as plain data: a message of parts as each part's stored form (by hash; without
    its mark for a case's id, so the ids of cases stored before the mark existed stay theirs)."""
    if isinstance(message, tuple):
        return [part.to_dict() if marked else unmarked(part.to_dict()) for part in message]
    return plain(message)


def _loaded(message: Any, where: str) -> Any:
    """A stored message back: a list of stored parts as the parts (their bytes from this
    process's blob memory, where the store read them)."""
    if not isinstance(message, list):
        return message
    try:
        return tuple(part_from_dict(p) for p in message)
    except (PartError, TypeError, KeyError, AttributeError) as exc:
        raise EvalCaseError(
            f"{where}a message given as a list must be parts ({{'type': 'text', 'text': ...}}, an "
            f"image or a file by its sha256): {exc}"
        ) from None


def _message_text(message: Any) -> str:
    if isinstance(message, str):
        return message
    if isinstance(message, tuple):
        return " ".join(p.text if isinstance(p, TextPart) else f"[{p.kind} {p.label}]" for p in message)
    return json.dumps(dict(message), ensure_ascii=False, default=str)


def plain(value: Any) -> Any:
    """``value`` as JSON-able data (a DataFrame cell's numpy scalars and arrays included)."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=_default))


def _default(value: Any) -> Any:
    for method in ("tolist", "item"):
        if hasattr(value, method):
            return getattr(value, method)()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def as_cases(cases: Any) -> list[Case]:
    """Cases from a list of ``Case`` (or of dicts, or of strings), a DataFrame (its ``input`` /
    ``id`` / ``expected`` / ``state`` columns), or a file path; ids checked unique."""
    if isinstance(cases, (str, Path)):
        out = load_cases(cases)
    elif hasattr(cases, "columns") and hasattr(cases, "to_dict"):
        if "input" not in cases.columns and "messages" not in cases.columns:
            raise EvalCaseError(
                f"the DataFrame has no 'input' column (it has {', '.join(map(str, cases.columns))}); "
                "use cases_from_frame(df, input='<column>')"
            )
        columns = {name: name for name in ("id", "expected", "state") if name in cases.columns}
        out = cases_from_frame(cases, input="input" if "input" in cases.columns else "messages", **columns)
    elif isinstance(cases, Case):
        out = [cases]
    elif isinstance(cases, Iterable) and not isinstance(cases, Mapping):
        out = []
        for i, item in enumerate(cases):
            if isinstance(item, Case):
                out.append(item)
            elif isinstance(item, str):
                out.append(Case(item))
            elif isinstance(item, Mapping):
                out.append(Case.from_dict(item, where=f"case {i + 1}: "))
            else:
                raise EvalCaseError(
                    f"case {i + 1} is a {type(item).__name__}; give Case(...), a dict with 'input', or a str"
                )
    else:
        raise EvalCaseError(
            "cases must be a list of Case, a pandas DataFrame or a .jsonl/.csv/.yaml file path, "
            f"got {type(cases).__name__}"
        )
    if not out:
        raise EvalCaseError("there are no cases to evaluate; give at least one")
    seen: dict[str, int] = {}
    for number, case in enumerate(out, 1):
        if case.id in seen:
            raise EvalCaseError(
                f"cases {seen[case.id]} and {number} have the same id {case.id!r}; "
                "ids must be unique (they pair runs and resume them)"
            )
        seen[case.id] = number
    return out


def cases_from_frame(
    frame: Any,
    *,
    input: str = "input",
    id: str | None = None,
    expected: str | None = None,
    state: str | None = None,
    metadata: Sequence[str] = (),
    attach: str | Sequence[str] = (),
) -> list[Case]:
    """One case per row of a pandas DataFrame: ``input`` names the message column (a cell that
    is a list is a multi-turn case), ``id`` / ``expected`` / ``state`` their columns (a state
    cell is a dict or its JSON text). ``attach`` names columns whose cells are sent with the
    row's message, after its text: a figure, PIL image, array, bytes, ``Image(...)`` /
    ``File(...)``, or a path (a ``str`` cell there is a file's path); an empty cell sends none."""
    columns = list(frame.columns)
    attached = [attach] if isinstance(attach, str) else list(attach)
    for option, column in (
        ("input", input),
        ("id", id),
        ("expected", expected),
        ("state", state),
        *(("metadata", m) for m in metadata),
        *(("attach", a) for a in attached),
    ):
        if column is not None and column not in columns:
            raise EvalCaseError(
                f"cases_from_frame: {option}={column!r} is not a column of the DataFrame "
                f"(it has {', '.join(map(str, columns))})"
            )
    out = []
    for position, row in enumerate(frame.to_dict("records")):
        where = f"row {position + 1}: "
        message = row[input]
        turns = (
            plain(message)
            if not isinstance(message, (str, Mapping)) and hasattr(message, "__len__")
            else None
        )
        start_state = _state_cell(row[state], where) if state is not None else None
        files = [_attachment(row[a]) for a in attached if not _missing(row[a])]
        if files and turns is not None:
            raise EvalCaseError(f"{where}attach= sends files with one message; the input cell holds several")
        if files:
            message = [message, *files]
        out.append(
            Case(
                input=None if turns is not None else message,
                messages=turns,
                id="" if id is None else str(row[id]),
                expected=None if expected is None or _missing(row[expected]) else plain(row[expected]),
                state=start_state,
                metadata={m: plain(row[m]) for m in metadata},
            )
        )
    return out


def _attachment(cell: Any) -> Any:
    """A cell of an ``attach`` column as ``to_parts`` takes it: a str is a file's path."""
    return Path(cell) if isinstance(cell, str) else cell


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def _state_cell(value: Any, where: str) -> dict[str, Any] | None:
    if _missing(value) or value == "":
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            raise EvalCaseError(f"{where}the state cell is not JSON: {value[:60]!r}") from None
    if not isinstance(value, Mapping):
        raise EvalCaseError(
            f"{where}the state cell must be a dict (or its JSON text), got {type(value).__name__}"
        )
    return plain(dict(value))


def load_cases(path: str | Path) -> list[Case]:
    """Cases from a file: ``.jsonl`` (one object a line), ``.json`` (a list), ``.csv`` (columns
    id, input, expected, state; state as JSON text), ``.yaml`` / ``.yml`` (a list, or
    ``cases: [...]``)."""
    file = Path(path)
    if not file.is_file():
        raise EvalCaseError(
            f"no case file at {str(file)!r}; give the path of a .jsonl, .json, .csv or .yaml file"
        )
    suffix = file.suffix.lower()
    if suffix not in (".jsonl", ".json", ".csv", ".yaml", ".yml"):
        raise EvalCaseError(
            f"{file.name}: cases are read from .jsonl, .json, .csv or .yaml files, "
            f"not {suffix or 'a file without a suffix'}"
        )
    text = _text_of(file)
    records: Any
    if suffix == ".jsonl":
        records = []
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except ValueError as exc:  # a JSONDecodeError, or an integer too long to convert
                    why = exc.msg if isinstance(exc, json.JSONDecodeError) else exc
                    raise EvalCaseError(
                        f"{file.name} line {number} is not JSON ({why}); each line must be one case object"
                    ) from None
    elif suffix == ".json":
        records = _parsed(lambda: json.loads(text), file)
    elif suffix in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError:
            raise EvalCaseError(f"reading YAML cases needs PyYAML: {install_line('evals')}") from None
        records = _parsed(lambda: yaml.safe_load(text), file)
    else:
        records = [
            _csv_record(row, f"{file.name} row {n}: ")
            for n, row in enumerate(csv.DictReader(text.splitlines()), 1)
        ]
    if isinstance(records, Mapping) and "cases" in records:
        records = records["cases"]
    if not isinstance(records, list):
        raise EvalCaseError(
            f"{file.name} must hold a list of cases (or cases: [...]), got {type(records).__name__}"
        )
    return [Case.from_dict(r, where=f"{file.name} case {n}: ") for n, r in enumerate(records, 1)]


def _text_of(file: Path) -> str:
    """The file's text, read as UTF-8 (a byte order mark, as Excel writes, is dropped)."""
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise EvalCaseError(f"cannot read {file.name}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise EvalCaseError(
            f"{file.name} is not UTF-8 text: byte 0x{data[exc.start]:02x} at byte {exc.start} (line {line}) "
            "does not decode; save it as UTF-8 (in Excel: CSV UTF-8; in a shell: "
            f"iconv -f <its encoding> -t utf-8 {file.name})"
        ) from None


def _parsed(parse: Any, file: Path) -> Any:
    try:
        return parse()
    except Exception as exc:
        raise EvalCaseError(f"{file.name} does not parse: {str(exc).splitlines()[0][:200]}") from None


def _csv_record(row: Mapping[str, Any], where: str) -> dict[str, Any]:
    record: dict[str, Any] = {k: v for k, v in row.items() if k and v not in (None, "")}
    if "state" in record:
        record["state"] = _state_cell(record["state"], where)
    if "messages" in record:
        try:
            record["messages"] = json.loads(record["messages"])
        except ValueError:
            raise EvalCaseError(f"{where}the messages cell must be a JSON list of messages") from None
    return record


__all__ = ["Case", "Start", "as_cases", "cases_from_frame", "content_id", "load_cases", "plain"]
