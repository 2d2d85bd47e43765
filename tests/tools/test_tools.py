"""Tools from functions: schemas, injection, validation, and the tool-hook chain."""

from __future__ import annotations

import asyncio
from typing import Literal

import pytest
from pydantic import BaseModel

from agentnb import Agent, RunContext, ScriptedModel, Tool, Toolkit, tool, tool_call
from agentnb.errors import ToolArgumentsError, ToolDefinitionError


def test_schema_from_type_hints_and_google_docstring():
    def search(
        query: str, limit: int = 5, tags: list[str] | None = None, mode: Literal["a", "b"] = "a"
    ) -> str:
        """Search the catalogue.

        Args:
            query: What to look for.
            limit: How many results.
        """
        return query

    t = Tool.from_function(search)
    assert t.description == "Search the catalogue."
    assert t.parameters["type"] == "object"
    assert t.parameters["required"] == ["query"]
    props = t.parameters["properties"]
    assert props["query"] == {"type": "string", "description": "What to look for."}
    assert props["limit"] == {"type": "integer", "default": 5, "description": "How many results."}
    assert props["mode"] == {"enum": ["a", "b"], "type": "string", "default": "a"}
    assert "title" not in str(t.parameters)


def test_injected_parameters_are_hidden_and_filled():
    seen = {}

    def act(x: int, run_context: RunContext, agent, session_state: dict, dependencies: dict) -> str:
        seen.update(ctx=run_context, agent=agent, state=session_state, deps=dependencies)
        session_state["touched"] = x
        return "ok"

    t = Tool.from_function(act)
    assert list(t.parameters["properties"]) == ["x"]
    assert t.injected == {p: p for p in ("run_context", "agent", "session_state", "dependencies")}
    agent = Agent(model=ScriptedModel([tool_call("act", x=2), "done"]), tools=[act], dependencies={"k": 1})
    agent.run("go")
    assert seen["agent"] is agent
    assert seen["state"] is agent.session_state
    assert seen["deps"] == {"k": 1}
    assert agent.session_state == {"touched": 2}


class Item(BaseModel):
    name: str
    qty: int = 1


def test_unresolvable_type_hint_is_a_clear_error():
    class Local(BaseModel):
        x: int

    def use(value: Local) -> str:
        return "x"

    with pytest.raises(
        ToolDefinitionError, match="cannot resolve the type hint 'Local' of 'value' in tool 'use'"
    ):
        Tool.from_function(use)


def test_pydantic_model_arguments_are_validated_and_coerced():
    def add(item: Item) -> str:
        return f"{item.qty} x {item.name}"

    t = Tool.from_function(add)
    args = t.validate_arguments({"item": {"name": "milk", "qty": "2"}})
    assert isinstance(args["item"], Item) and args["item"].qty == 2
    with pytest.raises(ToolArgumentsError, match="item.name: required argument missing"):
        t.validate_arguments({"item": {"qty": 1}})
    with pytest.raises(ToolArgumentsError, match="extra: unexpected argument"):
        t.validate_arguments({"item": {"name": "x"}, "extra": 1})


def test_decorator_keeps_function_callable_and_takes_options():
    @tool(name="adder", outputs_to_state={"total": {"source": "sum"}})
    def add(a: int, b: int) -> dict:
        """Add two numbers."""
        return {"sum": a + b}

    assert isinstance(add, Tool) and add.name == "adder"
    assert add(1, 2) == {"sum": 3}

    @tool
    def plain(a: int) -> int:
        return a

    assert plain.name == "plain" and plain(4) == 4


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: Tool.from_function(lambda x: x), "a lambda needs a name"),
        (lambda: Tool.from_function(3), "not callable"),
        (lambda: Tool.from_function(lambda x: x, name="bad name"), "not valid"),
        (lambda: Tool.from_function(print, name="p", inputs_from_state={"k": "nope"}), "nope"),
        (
            lambda: Tool(
                name="t", description=None, parameters={}, function=print, outputs_to_state={"k": 1}
            ),
            "outputs_to_state",
        ),
        (lambda: Agent(tools=[1]), "accepts functions"),
        (lambda: Agent(tool_hooks=[lambda weird: 1]), "asks for \\['weird'\\]"),
    ],
)
def test_bad_definitions_give_clear_errors(build, match):
    with pytest.raises(ToolDefinitionError, match=match):
        build()


def test_duplicate_tool_names_are_rejected():
    def a() -> str:
        return "1"

    class Kit(Toolkit):
        def __init__(self):
            super().__init__()
            self.register(self.a)

        def a(self) -> str:
            return "2"

    with pytest.raises(ToolDefinitionError, match="two tools are named 'a'"):
        Agent(tools=[a, Kit()])


def test_toolkit_include_exclude_and_instructions():
    class Kit(Toolkit):
        def __init__(self, **kw):
            super().__init__(name="kit", instructions="Use kit tools wisely.", add_instructions=True, **kw)
            self.register(self.one)
            self.register(self.two)

        def one(self) -> str:
            return "1"

        def two(self) -> str:
            return "2"

    assert [t.name for t in Kit(exclude_tools=["two"]).tools] == ["one"]
    assert [t.name for t in Kit(include_tools=["two"]).tools] == ["two"]
    agent = Agent(tools=[Kit(include_tools=["one"])], instructions="Be brief.")
    assert agent.observe("x").system_prompt == "Be brief.\n\nUse kit tools wisely."


def test_async_tools_and_hooks_run_in_sync_and_inside_a_running_loop():
    async def slow(x: int) -> int:
        await asyncio.sleep(0)
        return x * 2

    async def ahook(function_call, arguments):
        return function_call(**arguments)

    def make():
        return Agent(model=ScriptedModel([tool_call("slow", x=21), "done"]), tools=[slow], tool_hooks=[ahook])

    assert make().run("go").tool_calls[0].result == "42"

    async def inside_loop():
        return make().run("go")  # a Jupyter kernel calls run() with a loop running

    assert asyncio.run(inside_loop()).tool_calls[0].result == "42"


# --- hooks ---------------------------------------------------------------------------------


def test_hooks_nest_first_outermost_and_can_modify_arguments_and_results():
    order = []

    def outer(function_name, function_call, arguments):
        order.append(f"outer>{function_name}")
        result = function_call(**arguments)
        order.append("outer<")
        return f"[{result}]"

    def inner(name, func, args):
        order.append("inner>")
        result = func(**{**args, "x": args["x"] + 1})
        order.append("inner<")
        return result

    def double(x: int) -> int:
        order.append(f"tool({x})")
        return x * 2

    agent = Agent(
        model=ScriptedModel([tool_call("double", x=1), "ok"]), tools=[double], tool_hooks=[outer, inner]
    )
    call = agent.run("go").tool_calls[0]
    assert order == ["outer>double", "inner>", "tool(2)", "inner<", "outer<"]
    assert call.result == "[4]"
    assert [(s.name, s.outcome) for s in call.hooks] == [("outer", "passed"), ("inner", "passed")]
    assert call.hooks[1].arguments == {"x": 1}
    assert call.answered_by == "tool"


def test_every_injectable_hook_name():
    received = {}

    def hook(
        function_name,
        name,
        function_call,
        function,
        func,
        arguments,
        args,
        run_context,
        agent,
        session_state,
        dependencies,
    ):
        received.update(locals())
        return function_call(**arguments)

    def t(x: int) -> int:
        return x

    agent = Agent(
        model=ScriptedModel([tool_call("t", x=1), "ok"]),
        tools=[t],
        tool_hooks=[hook],
        session_state={"s": 1},
        dependencies={"d": 2},
    )
    agent.run("go")
    assert received["function_name"] == received["name"] == "t"
    assert received["function_call"] is received["function"] is received["func"]
    assert received["arguments"] == received["args"] == {"x": 1}
    assert isinstance(received["run_context"], RunContext)
    assert received["agent"] is agent
    assert received["session_state"] is agent.session_state
    assert received["dependencies"] == {"d": 2}


def test_short_circuit_hook_answers_and_tool_never_runs():
    ran = []

    def guard(function_name, arguments):
        return f"blocked {function_name}"

    def outer(function_call, arguments):
        return function_call(**arguments).upper()

    def t(x: int) -> int:
        ran.append(x)
        return x

    agent = Agent(model=ScriptedModel([tool_call("t", x=1), "ok"]), tools=[t], tool_hooks=[outer, guard])
    call = agent.run("go").tool_calls[0]
    assert ran == []
    assert call.result == "BLOCKED T"
    assert call.answered_by == "guard"
    assert [(s.name, s.outcome) for s in call.hooks] == [("outer", "passed"), ("guard", "answered")]


def test_raising_hook_becomes_error_result_and_run_continues():
    def hook(function_call, arguments):
        raise PermissionError("not allowed today")

    def t(x: int) -> int:
        return x

    model = ScriptedModel([tool_call("t", x=1), "sorry"])
    result = Agent(model=model, tools=[t], tool_hooks=[hook]).run("go")
    call = result.tool_calls[0]
    assert call.error_kind == "hook_error"
    assert call.result == "Error: not allowed today (PermissionError raised by hook 'hook')"
    assert call.hooks[0].outcome == "raised" and "PermissionError" in call.hooks[0].error
    assert model.requests[1].messages[-1]["content"] == call.result
    assert result.content == "sorry"


def test_state_changes_are_attributed_to_the_hook_or_tool_that_made_them():
    def audit(run_context, function_call, arguments):
        run_context.session_state["audit"] = run_context.session_state.get("audit", 0) + 1
        result = function_call(**arguments)
        run_context.session_state["last"] = result
        return result

    def add_item(item: str, session_state: dict) -> str:
        session_state.setdefault("items", []).append(item)
        return f"added {item}"

    agent = Agent(
        model=ScriptedModel([tool_call("add_item", item="milk"), "ok"]), tools=[add_item], tool_hooks=[audit]
    )
    result = agent.run("go")
    changes = [
        (c.cause.kind, c.cause.name, [op["path"] for op in c.patch]) for c in result.turn.state_changes
    ]
    assert changes == [
        ("hook", "audit", ["/audit"]),
        ("tool", "add_item", ["/items"]),
        ("hook", "audit", ["/last"]),
    ]
    assert result.tool_calls[0].changed_keys == ("audit", "items", "last")


def test_toolkit_filters_naming_an_unknown_tool_fail_when_the_toolkit_is_used():
    class Kit(Toolkit):
        def __init__(self, **kw):
            super().__init__(name="kit", **kw)
            self.register(self.one)

        def one(self) -> str:
            return "1"

    kit = Kit(include_tools=["onee"])  # registered after __init__: checked when an agent takes it
    with pytest.raises(
        ToolDefinitionError, match="Included tool\\(s\\) not present in the toolkit 'kit': onee"
    ):
        Agent(tools=[kit])


def test_a_tool_decorated_method_is_bound_once_per_instance():
    class Kit(Toolkit):
        def __init__(self, factor):
            self.factor = factor
            super().__init__(name="kit", tools=[self.scale])

        @tool
        def scale(self, x: int) -> int:
            """Scale x."""
            return x * self.factor

    two, three = Kit(2), Kit(3)
    assert two.scale is two.scale and two.scale(5) == 10 and three.scale(5) == 15
    assert list(two.scale.parameters["properties"]) == ["x"]
    assert Kit.scale.function(two, 1) == 2  # on the class: the plain function's Tool
