"""The built-in checks: ``from agentnb.evals import check``; ``check.called("add_item")``.

On the answer: ``answer_contains``, ``answer_equals``, ``answer_matches`` (a regex),
``answer_json`` (a field of a JSON answer). On tool calls that executed: ``called``,
``not_called``, ``trajectory``. On the typed output: ``output`` (a JSON pointer into it) and
``attempts`` (``agentnb.evals.checks.output``). On the final state: ``state`` (the value at a
JSON pointer) and ``changed_by`` (who changed it). ``that`` names a plain function; ``judge`` asks a model.
Arguments left out compare with the case's ``expected`` value (``EXPECTED``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...errors import EvalCheckError
from ...state.diff import MISSING, json_equal, lookup
from ..cases import plain
from .base import EXPECTED, CaseView, Check, FunctionCheck, Verdict, arguments_of, call_evidence, resolve
from .judge import judge
from .output import attempts, output

_UNSET: Any = object()


def _short(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(plain(value), ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Answer(Check):
    def __init__(self, name: str, test: str, value: Any, ignore_case: bool) -> None:
        self.name, self.test, self.value, self.ignore_case = name, test, value, ignore_case

    def evaluate(self, view: CaseView) -> Verdict:
        value = resolve(self.value, view, self.name, "the text")
        answer = view.answer or ""
        folded = answer.casefold() if self.ignore_case else answer
        if self.test == "contains":
            wanted = value if isinstance(value, list) else [value]
            missing = [w for w in wanted if (str(w).casefold() if self.ignore_case else str(w)) not in folded]
            if missing:
                return Verdict(
                    self.name,
                    "fail",
                    f"the answer lacks {', '.join(map(repr, missing))}: {_short(answer)!r}",
                    {"answer": answer},
                )
            return Verdict(
                self.name, "pass", f"the answer contains {', '.join(map(repr, wanted))}", {"answer": answer}
            )
        if self.test == "equals":
            want = str(value).strip()
            same = folded.strip() == (want.casefold() if self.ignore_case else want)
            return Verdict(
                self.name,
                "pass" if same else "fail",
                "the answer is as expected"
                if same
                else f"the answer is {_short(answer)!r}, expected {_short(want)!r}",
                {"answer": answer},
            )
        match = re.search(value, answer, re.IGNORECASE if self.ignore_case else 0)
        if match is None:
            return Verdict(
                self.name,
                "fail",
                f"the answer does not match /{value}/: {_short(answer)!r}",
                {"answer": answer},
            )
        return Verdict(
            self.name, "pass", f"matched {match.group(0)!r}", {"match": match.group(0), "at": match.start()}
        )


def answer_contains(
    text: str | Sequence[str] = EXPECTED, *, ignore_case: bool = False, name: str = "answer_contains"
) -> Check:
    """The last answer contains ``text`` (each of a list of texts); default: the case's expected."""
    return _Answer(name, "contains", list(text) if isinstance(text, (list, tuple)) else text, ignore_case)


def answer_equals(text: str = EXPECTED, *, ignore_case: bool = False, name: str = "answer_equals") -> Check:
    """The last answer equals ``text`` (whitespace at the ends ignored); default: the case's expected."""
    return _Answer(name, "equals", text, ignore_case)


def answer_matches(pattern: str, *, ignore_case: bool = False, name: str = "answer_matches") -> Check:
    """The last answer matches the regular expression ``pattern`` (``re.search``)."""
    try:
        re.compile(pattern)
    except re.error as exc:
        raise EvalCheckError(f"answer_matches: {pattern!r} is not a regular expression ({exc})") from None
    return _Answer(name, "matches", pattern, ignore_case)


class _AnswerJson(Check):
    def __init__(self, pointer: str, equals: Any, name: str) -> None:
        self.pointer, self.equals, self.name = pointer, equals, name

    def evaluate(self, view: CaseView) -> Verdict:
        want = resolve(self.equals, view, self.name, "equals=")
        try:
            data = json.loads(view.answer or "")
        except ValueError:
            return Verdict(
                self.name,
                "fail",
                f"the answer is not JSON: {_short(view.answer or '')!r}",
                {"answer": view.answer},
            )
        found = lookup(data, self.pointer)
        if found is MISSING:
            return Verdict(
                self.name, "fail", f"the answer's JSON has nothing at {self.pointer}", {"answer": data}
            )
        same = json_equal(found, want)
        return Verdict(
            self.name,
            "pass" if same else "fail",
            f"{self.pointer} is {_short(found)}" + ("" if same else f", expected {_short(want)}"),
            {"value": found},
        )


def answer_json(pointer: str, equals: Any = EXPECTED, *, name: str | None = None) -> Check:
    """The answer parses as JSON and holds ``equals`` at the JSON pointer ``pointer`` (``/total``)."""
    return _AnswerJson(_pointer(pointer, "answer_json"), equals, name or f"answer_json:{pointer}")


def _pointer(pointer: Any, check: str) -> str:
    if not isinstance(pointer, str) or (pointer and not pointer.startswith("/")):
        raise EvalCheckError(
            f"{check}: {pointer!r} is not a JSON pointer; write it like '/shopping_list' or '/order/items/0'"
        )
    return pointer


def _args_match(actual: Any, wanted: Mapping[str, Any]) -> bool:
    return isinstance(actual, Mapping) and all(
        k in actual and json_equal(actual[k], v) for k, v in wanted.items()
    )


class _Called(Check):
    def __init__(self, tool: str, args: Any, times: int | None, answered_by: str | None, name: str) -> None:
        self.tool, self.args, self.times, self.answered_by, self.name = tool, args, times, answered_by, name

    def evaluate(self, view: CaseView) -> Verdict:
        wanted = resolve(self.args, view, self.name, "args=") if self.args is not None else None
        if wanted is not None and not isinstance(wanted, Mapping):
            raise EvalCheckError(
                f"{self.name}: args must be a dict of the arguments to find, got {type(wanted).__name__}"
            )
        calls = [c for c in view.tool_calls if c.name == self.tool]
        matching = [
            c
            for c in calls
            if (wanted is None or _args_match(arguments_of(c), wanted))
            and (self.answered_by is None or c.answered_by == self.answered_by)
        ]
        refused = [c for c in view.all_tool_calls if c.name == self.tool and c.error is not None]
        if self.times is not None and len(matching) != self.times:
            return Verdict(
                self.name,
                "fail",
                f"{self.tool} executed {len(matching)} time(s) as asked, expected {self.times}",
                [call_evidence(view, c) for c in matching],
            )
        if self.times is not None:
            return Verdict(
                self.name,
                "pass",
                f"{self.tool} executed {self.times} time(s) as asked",
                [call_evidence(view, c) for c in matching],
            )
        if matching:
            first = matching[0]
            return Verdict(
                self.name,
                "pass",
                f"{self.tool}({_short(arguments_of(first), 60)}) executed in turn {view.turn_of(first)}, "
                f"answered by {first.answered_by}",
                call_evidence(view, first),
            )
        if calls:
            seen = "; ".join(f"{_short(arguments_of(c), 50)} answered by {c.answered_by}" for c in calls[:3])
            want = " and ".join(
                x
                for x in (
                    f"args {_short(wanted, 50)}" if wanted is not None else "",
                    f"answered by {self.answered_by}" if self.answered_by else "",
                )
                if x
            )
            return Verdict(
                self.name,
                "fail",
                f"{self.tool} executed, but not with {want}: {seen}",
                [call_evidence(view, c) for c in calls],
            )
        if refused:
            return Verdict(
                self.name,
                "fail",
                f"{self.tool} was called but did not execute ({refused[0].error_kind}: "
                f"{_short(refused[0].error or '', 60)})",
                call_evidence(view, refused[0]),
            )
        return Verdict(
            self.name,
            "fail",
            f"{self.tool} was never called"
            + (f" (calls: {', '.join(c.name for c in view.all_tool_calls)})" if view.all_tool_calls else ""),
            None,
        )


def called(
    tool: str,
    args: Mapping[str, Any] | None = None,
    *,
    times: int | None = None,
    answered_by: str | None = None,
    name: str | None = None,
) -> Check:
    """``tool`` executed (a call that raised does not count), with ``args`` among its arguments
    (values may be ``EXPECTED``), ``times`` times if given, answered by ``answered_by`` ('tool' or
    a hook's name) if given."""
    if not isinstance(tool, str) or not tool:
        raise EvalCheckError(f"called: give the tool's name, got {tool!r}")
    return _Called(tool, args, times, answered_by, name or f"called:{tool}")


def not_called(tool: str, *, name: str | None = None) -> Check:
    """``tool`` never executed."""
    return _Called(tool, None, 0, None, name or f"not_called:{tool}")


class _Trajectory(Check):
    def __init__(self, tools: Any, mode: str, name: str) -> None:
        self.tools, self.mode, self.name = tools, mode, name

    def evaluate(self, view: CaseView) -> Verdict:
        wanted = list(resolve(self.tools, view, self.name, "the tool names"))
        done = [c.name for c in view.tool_calls]
        if self.mode == "exact":
            ok = done == wanted
        elif self.mode == "any_order":
            ok = all(done.count(t) >= wanted.count(t) for t in set(wanted))
        else:
            it = iter(done)
            ok = all(t in it for t in wanted)
        how = {"exact": "exactly", "any_order": "in any order", "in_order": "in order"}[self.mode]
        return Verdict(
            self.name,
            "pass" if ok else "fail",
            f"executed {done or 'no tool'}" + ("" if ok else f", expected {wanted} {how}"),
            {"executed": done},
        )


def trajectory(tools: Sequence[str] = EXPECTED, *, mode: str = "in_order", name: str = "trajectory") -> Check:
    """The executed tool calls, by name: ``in_order`` (these, in this order, others allowed
    between), ``exact`` (exactly these) or ``any_order``."""
    if mode not in ("in_order", "exact", "any_order"):
        raise EvalCheckError(f"trajectory: mode {mode!r} is not one of in_order, exact, any_order")
    return _Trajectory(list(tools) if tools is not EXPECTED else tools, mode, name)


class _State(Check):
    def __init__(self, pointer: str, equals: Any, contains: Any, name: str) -> None:
        self.pointer, self.equals, self.contains, self.name = pointer, equals, contains, name

    def evaluate(self, view: CaseView) -> Verdict:
        found = lookup(view.state, self.pointer)
        if found is MISSING:
            return Verdict(
                self.name, "fail", f"the final state has nothing at {self.pointer}", {"path": self.pointer}
            )
        found = plain(found)
        if self.contains is not _UNSET:
            item = resolve(self.contains, view, self.name, "contains=")
            items = item if isinstance(item, list) else [item]
            if isinstance(found, list):
                missing = [i for i in items if not any(json_equal(i, x) for x in found)]
            else:
                missing = [
                    i
                    for i in items
                    if not (isinstance(found, (str, Mapping)) and isinstance(i, str) and i in found)
                ]
            ok = not missing
            return Verdict(
                self.name,
                "pass" if ok else "fail",
                f"{self.pointer} = {_short(found)}" + ("" if ok else f", lacks {_short(missing)}"),
                {"path": self.pointer, "value": found},
            )
        want = resolve(self.equals, view, self.name, "equals=")
        ok = json_equal(found, want)
        return Verdict(
            self.name,
            "pass" if ok else "fail",
            f"{self.pointer} = {_short(found)}" + ("" if ok else f", expected {_short(want)}"),
            {"path": self.pointer, "value": found},
        )


def state(pointer: str, equals: Any = EXPECTED, *, contains: Any = _UNSET, name: str | None = None) -> Check:
    """The final state holds ``equals`` at the JSON pointer ``pointer`` (``/shopping_list``), or
    (``contains=``) a list/str/dict there contains it (each of a list)."""
    return _State(_pointer(pointer, "state"), equals, contains, name or f"state:{pointer}")


class _ChangedBy(Check):
    def __init__(self, pointer: str, author: str | None, name: str) -> None:
        self.pointer, self.author, self.name = pointer, author, name

    def evaluate(self, view: CaseView) -> Verdict:
        hits = [(turn, c) for turn, c in view.changes() if _covers(c.path, self.pointer)]
        evidence = [
            {"turn": turn, "path": c.path, "how": c.how, "authors": list(c.authors), "new": plain(c.new)}
            for turn, c in hits
        ]
        if not hits:
            return Verdict(self.name, "fail", f"nothing changed {self.pointer}", None)
        authors = list(dict.fromkeys(a for _, c in hits for a in c.authors))
        if self.author is None:
            return Verdict(self.name, "pass", f"{self.pointer} changed by {', '.join(authors)}", evidence)
        mine = [e for e in evidence if any(_author_is(a, self.author) for a in e["authors"])]
        if mine:
            return Verdict(
                self.name,
                "pass",
                f"{mine[0]['path']} {mine[0]['how']} by {', '.join(mine[0]['authors'])} in turn {mine[0]['turn']}",
                mine[0],
            )
        return Verdict(
            self.name,
            "fail",
            f"{self.pointer} was changed by {', '.join(authors)}, not {self.author}",
            evidence,
        )


def _covers(path: str, pointer: str) -> bool:
    return (
        path == pointer
        or path.startswith(pointer + "/")
        or pointer.startswith(path + "/")
        or pointer in ("", "/")
    )


def _author_is(label: str, author: str) -> bool:
    base = label.split(" (", 1)[0]  # "tool:add_item (merge_lists)"
    return base == author or base.split(":", 1)[-1] == author


def changed_by(pointer: str, author: str | None = None, *, name: str | None = None) -> Check:
    """Something at (or below) ``pointer`` changed during the case, by ``author`` if given:
    ``tool:add_item``, ``hook:guard``, ``agentic``, ``run_kwarg:…``, ``user`` or a bare tool/hook name."""
    return _ChangedBy(
        _pointer(pointer, "changed_by"),
        author,
        name or f"changed_by:{pointer}" + (f":{author}" if author else ""),
    )


def that(function: Callable[..., Any], *, name: str | None = None) -> Check:
    """A plain function as a check, under ``name`` (for a lambda, or two uses of one function)."""
    return FunctionCheck(function, name=name)


__all__ = [
    "EXPECTED",
    "answer_contains",
    "answer_equals",
    "answer_json",
    "answer_matches",
    "attempts",
    "called",
    "changed_by",
    "judge",
    "not_called",
    "output",
    "state",
    "that",
    "trajectory",
]
