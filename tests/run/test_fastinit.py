"""``fast_init``: the frozen dataclasses built on every turn get an ``__init__`` that stores fields
without ``object.__setattr__``; everything a caller can see must stay what ``@dataclass`` made."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import InitVar, dataclass, field
from typing import Any

import pytest

from agentnb import Agent, ScriptedModel, tool_call
from agentnb.util.fastinit import MADE_FAST, fast_init


def dataclass_init(cls: type, *args: Any, **kwargs: Any) -> Any:
    """An instance built by the ``__init__`` ``@dataclass`` wrote."""
    obj = cls.__new__(cls)
    cls.__init__.__wrapped_dataclass_init__(obj, *args, **kwargs)
    return obj


@fast_init
@dataclass(frozen=True)
class Every:
    a: int
    b: str = "b"
    c: list[int] = field(default_factory=list)
    d: int = field(default=4, init=False)
    e: dict[str, int] = field(default_factory=dict, init=False)
    f: int = field(default=6, kw_only=True)
    g: tuple[int, ...] = field(default=(), kw_only=True, compare=False)
    seen: list[str] = field(default_factory=list, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.seen.append(f"post {self.a}")


@fast_init(read_often=True)
@dataclass(frozen=True)
class EveryReadOften:
    """``Every`` with its fields in a dict of the instance's own."""

    a: int
    b: str = "b"
    c: list[int] = field(default_factory=list)
    d: int = field(default=4, init=False)
    e: dict[str, int] = field(default_factory=dict, init=False)
    f: int = field(default=6, kw_only=True)
    g: tuple[int, ...] = field(default=(), kw_only=True, compare=False)
    seen: list[str] = field(default_factory=list, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.seen.append(f"post {self.a}")


BOTH = pytest.mark.parametrize("cls", [Every, EveryReadOften], ids=["shared", "read_often"])


@BOTH
def test_every_kind_of_field_is_set_as_the_dataclass_sets_it(cls: Any) -> None:
    for args, kwargs in (((1,), {}), ((1, "x", [2]), {"f": 7, "g": (1,)}), ((), {"a": 3, "c": [9], "f": 0})):
        fast, slow = cls(*args, **kwargs), dataclass_init(cls, *args, **kwargs)
        assert fast.__dict__ == slow.__dict__ and fast == slow and repr(fast) == repr(slow)
        assert list(fast.__dict__) == list(slow.__dict__)  # the fields in the same order
        assert fast.seen == [f"post {fast.a}"]  # __post_init__ ran once
    assert cls(1).c is not cls(1).c  # each instance its own default list
    assert cls(1).e == {} and cls(1).d == 4


@BOTH
def test_the_signature_and_its_errors_are_the_dataclasses(cls: Any) -> None:
    fast = inspect.signature(cls.__init__)
    slow = inspect.signature(cls.__init__.__wrapped_dataclass_init__)
    assert [(p.name, p.kind) for p in fast.parameters.values()] == [
        (p.name, p.kind) for p in slow.parameters.values()
    ]
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'a'"):
        cls()
    with pytest.raises(TypeError, match="positional argument"):
        cls(1, "x", [], 5)  # f is keyword-only
    with pytest.raises(TypeError, match="unexpected keyword argument 'd'"):
        cls(1, d=5)  # init=False


@BOTH
def test_the_instance_stays_frozen_and_hashable(cls: Any) -> None:
    value = cls(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        value.a = 2
    with pytest.raises(dataclasses.FrozenInstanceError):
        del value.b
    with pytest.raises(dataclasses.FrozenInstanceError):
        value.__dict__ = {}  # (read_often's __init__ sets it once, past the frozen __setattr__)
    assert cls.__init__.__qualname__ == f"{cls.__name__}.__init__"
    assert cls(1, "x") == cls(1, "x") and cls(1) != cls(2)


def test_classes_it_cannot_speed_up_keep_their_own_init_and_others_are_refused() -> None:
    @dataclass(frozen=True)
    class WithInitVar:
        a: int
        scale: InitVar[int] = 1

        def __post_init__(self, scale: int) -> None:
            object.__setattr__(self, "a", self.a * scale)

    @dataclass(frozen=True, slots=True)
    class Slotted:
        a: int

    for cls in (WithInitVar, Slotted):
        own = cls.__init__
        assert fast_init(cls) is cls and cls.__init__ is own
    assert WithInitVar(2, 3).a == 6 and Slotted(1).a == 1

    @dataclass
    class Plain:
        a: int

    with pytest.raises(TypeError, match="frozen dataclass"):
        fast_init(Plain)


def _instances(value: Any, found: dict[type, list[Any]], depth: int = 0) -> None:
    """Every instance of a class in MADE_FAST reachable from ``value`` (a turn's record)."""
    if depth > 6:
        return
    if type(value) in MADE_FAST:
        found.setdefault(type(value), []).append(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            _instances(getattr(value, f.name, None), found, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _instances(item, found, depth + 1)


def test_what_a_real_turn_builds_rebuilds_the_same_through_both_inits() -> None:
    """Each fast class met in real turns (events, messages, prompt sections, usage) built again
    from its own field values by both ``__init__``s: the same fields, equal, the same repr."""

    def add_item(session_state: dict, item: str) -> str:
        """Add an item."""
        session_state.setdefault("items", []).append(item)
        return f"added {item}"

    model = ScriptedModel([tool_call("add_item", item="pen"), "Added a pen."])
    agent = Agent("shop", model, tools=[add_item], instructions="Cart: {items}", session_state={"items": []})
    agent.run("add a pen")
    found: dict[type, list[Any]] = {}
    record = agent.history[-1]
    _instances([*record.events, *record.model_calls, *record.tool_calls, *record.messages], found)
    assert len(found) >= 12, sorted(c.__name__ for c in found)
    for cls, values in found.items():
        for value in values:
            kwargs = {f.name: getattr(value, f.name) for f in dataclasses.fields(cls) if f.init}
            fast, slow = cls(**kwargs), dataclass_init(cls, **kwargs)
            assert fast.__dict__ == slow.__dict__, cls
            assert fast == slow == value and repr(fast) == repr(slow), cls


def test_evolve_gives_what_dataclasses_replace_gives() -> None:
    from agentnb.events import PromptRendered, PromptTokens, Usage
    from agentnb.util.fastinit import evolve

    usage = Usage(input_tokens=3, output_tokens=4)
    changed = evolve(usage, output_tokens=9)
    assert (
        changed == dataclasses.replace(usage, output_tokens=9)
        and changed.__dict__ == dataclasses.replace(usage, output_tokens=9).__dict__
    )
    assert usage.output_tokens == 4 and type(changed) is Usage  # the original is left as it was
    event = PromptRendered(run_id="r", system_prompt="s", sections=(), user_prompt="u")
    tokens = PromptTokens(counter="estimate", exact=False, system=1, user=2)
    assert evolve(event, tokens=tokens) == dataclasses.replace(event, tokens=tokens)
    with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
        evolve(usage, nope=1)
    # A read_often class's copy: the same fields, its own dict, the original left as it was.
    from agentnb.run.prompt import RenderedPrompt

    rendered = RenderedPrompt(text="t", sections=(), notes=("n",))
    copied = evolve(rendered, notes=())
    assert copied == dataclasses.replace(rendered, notes=()) and rendered.notes == ("n",)
    assert list(copied.__dict__) == list(dataclasses.replace(rendered, notes=()).__dict__)
    # A class with __post_init__ or fields __init__ does not set goes through dataclasses.replace.
    every = Every(1, c=[1])
    again = evolve(every, a=2)
    assert again.a == 2 and again.seen == ["post 2"] and again == dataclasses.replace(every, a=2)
