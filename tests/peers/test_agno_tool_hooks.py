"""Agno's tool hooks, ported to agentnb.

Peer files (agno-agi/agno, libs/agno/tests/): integration/agent/test_tool_hooks.py,
unit/tools/test_functions.py (the FunctionCall / @tool hook cases). Agno's tests log through
``logger.info``; the ports record into a list instead. Cases marked "differential" pin what
agno 3.1.10's ``FunctionCall._build_hook_args`` / ``_build_nested_execution_chain`` do.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from agentnb import Agent, RunContext, ScriptedModel, tool, tool_call


def _hooks(log: list[str]) -> tuple[Callable[..., Any], Callable[..., Any]]:
    def logger_hook(function_name: str, function_call: Callable[..., Any], arguments: dict[str, Any]) -> Any:
        log.append(f"HOOK PRE: Calling {function_name} with args {arguments}")
        result = function_call(**arguments)
        log.append(f"HOOK POST: {function_name} returned {result}")
        return result

    def confirmation_hook(
        function_name: str, function_call: Callable[..., Any], arguments: dict[str, Any]
    ) -> Any:
        if function_name == "add":
            log.append("This tool is not allowed to be called")
            return None
        log.append("This tool is allowed to be called")
        return function_call(**arguments)

    return logger_hook, confirmation_hook


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def mul(a: int, b: int) -> int:
    """Multiply two numbers."""
    return a * b


def _tool_results(model: ScriptedModel, request: int = 1) -> list[str]:
    return [m["content"] for m in model.requests[request].messages if m["role"] == "tool"]


# integration/agent/test_tool_hooks.py::test_logger_hook_invocation_sub_tool
def test_per_tool_logger_hook() -> None:
    log: list[str] = []
    logger_hook, _ = _hooks(log)

    @tool(tool_hooks=[logger_hook])
    def sub(a: int, b: int) -> int:
        return a - b

    model = ScriptedModel([tool_call("sub", a=6, b=5), "1"])
    result = Agent(model=model, tools=[sub], instructions="Always use the sub tool.").run("Compute 6 - 5")
    assert [(c.name, c.result) for c in result.tool_calls] == [("sub", "1")]
    assert log == ["HOOK PRE: Calling sub with args {'a': 6, 'b': 5}", "HOOK POST: sub returned 1"]


# integration/agent/test_tool_hooks.py::test_confirmation_hook_blocks_add_tool
def test_confirmation_hook_blocks_the_tool() -> None:
    log: list[str] = []
    _, confirmation_hook = _hooks(log)
    calls: list[tuple[int, int]] = []

    def add(a: int, b: int) -> int:
        calls.append((a, b))
        return a + b

    model = ScriptedModel([tool_call("add", a=4, b=5), "I may not add."])
    result = Agent(model=model, tools=[add], tool_hooks=[confirmation_hook]).run("Compute 4 + 5")
    assert log == ["This tool is not allowed to be called"]
    assert calls == []
    assert result.tool_calls[0].answered_by == "confirmation_hook"


# integration/agent/test_tool_hooks.py::test_confirmation_hook_allows_mul_tool
# (mul also carries its own @tool(tool_hooks=[confirmation_hook]); the agent's hooks replace it)
def test_confirmation_hook_allows_the_tool() -> None:
    log: list[str] = []
    _, confirmation_hook = _hooks(log)

    @tool(tool_hooks=[confirmation_hook])
    def mul(a: int, b: int) -> int:
        return a * b

    model = ScriptedModel([tool_call("mul", a=4, b=5), "20"])
    result = Agent(model=model, tools=[mul], tool_hooks=[confirmation_hook]).run("Compute 4 * 5")
    assert log == ["This tool is allowed to be called"]
    assert [(c.name, c.result) for c in result.tool_calls] == [("mul", "20")]


# integration/agent/test_tool_hooks.py::test_logger_hook_invocation_add_tool
# (Agno's assert compares the logged text, so the dict's key order is part of it)
def test_agent_logger_hook_on_add() -> None:
    log: list[str] = []
    logger_hook, _ = _hooks(log)
    model = ScriptedModel([tool_call("add", a=4, b=5), "9"])
    result = Agent(model=model, tools=[add], tool_hooks=[logger_hook]).run("Compute 4 + 5")
    assert [(c.name, c.result) for c in result.tool_calls] == [("add", "9")]
    assert log[1] == "HOOK POST: add returned 9"
    assert log[0] in (
        "HOOK PRE: Calling add with args {'a': 4, 'b': 5}",
        "HOOK PRE: Calling add with args {'b': 5, 'a': 4}",
    )


# integration/agent/test_tool_hooks.py::test_logger_hook_invocation_mul_tool
def test_agent_logger_hook_on_mul() -> None:
    log: list[str] = []
    logger_hook, _ = _hooks(log)
    model = ScriptedModel([tool_call("mul", a=3, b=3), "9"])
    result = Agent(model=model, tools=[mul], tool_hooks=[logger_hook]).run("Compute 3 * 3")
    assert [(c.name, c.result) for c in result.tool_calls] == [("mul", "9")]
    assert log[1] == "HOOK POST: mul returned 9"
    assert log[0] in (
        "HOOK PRE: Calling mul with args {'a': 3, 'b': 3}",
        "HOOK PRE: Calling mul with args {'b': 3, 'a': 3}",
    )


# differential: the `arguments` a hook receives are the model's, in the model's order (Agno hands
# over the parsed JSON object). Several calls with the keys in opposite orders, so the outcome
# cannot depend on how a set happens to iterate under one PYTHONHASHSEED.
def test_hook_arguments_keep_the_models_order() -> None:
    seen: list[list[str]] = []

    def spy(function_call: Callable[..., Any], arguments: dict[str, Any]) -> Any:
        seen.append(list(arguments))
        return function_call(**arguments)

    def f(alpha: int, beta: int, gamma: int = 0) -> int:
        return alpha + beta + gamma

    orders = [["alpha", "beta"], ["beta", "alpha"], ["gamma", "beta", "alpha"], ["alpha", "gamma", "beta"]]
    steps: list[Any] = [
        tool_call("f", raw_arguments="{" + ", ".join(f'"{k}": 1' for k in keys) + "}") for keys in orders
    ]
    model = ScriptedModel([*steps, "done"])
    Agent(model=model, tools=[f], tool_hooks=[spy], max_tool_iterations=10).run("go")
    assert seen == orders


# integration/agent/test_tool_hooks.py::test_logger_and_confirmation_hooks_combined
def test_logger_and_confirmation_hooks_combined() -> None:
    log: list[str] = []
    logger_hook, confirmation_hook = _hooks(log)
    model = ScriptedModel([[tool_call("add", a=2, b=3), tool_call("mul", a=4, b=5)], "done"])
    Agent(model=model, tools=[add, mul], tool_hooks=[logger_hook, confirmation_hook]).run(
        "Compute 2 + 3 and 4 * 5"
    )
    assert "This tool is not allowed to be called" in log
    assert "This tool is allowed to be called" in log
    assert (
        "HOOK PRE: Calling mul with args {'a': 4, 'b': 5}" in log
        or "HOOK PRE: Calling mul with args {'b': 5, 'a': 4}" in log
    )
    assert log[-1] == "HOOK POST: mul returned 20"
    # logger outermost: it sees the blocked call come back empty
    assert log.index("This tool is not allowed to be called") == 1
    assert _tool_results(model)[1] == "20"


# integration/agent/test_tool_hooks.py::test_logger_and_confirmation_hooks_combined_async
# (in an async run Agno hands an async hook a function_call that returns an awaitable)
def test_async_hooks_combined() -> None:
    log: list[str] = []

    async def logger_hook(
        function_name: str, function_call: Callable[..., Any], arguments: dict[str, Any]
    ) -> Any:
        log.append(f"PRE {function_name}")
        result = await function_call(**arguments)
        log.append(f"POST {function_name} returned {result}")
        return result

    async def confirmation_hook(
        function_name: str, function_call: Callable[..., Any], arguments: dict[str, Any]
    ) -> Any:
        if function_name == "add":
            log.append("blocked")
            return None
        return await function_call(**arguments)

    model = ScriptedModel([[tool_call("add", a=2, b=3), tool_call("mul", a=4, b=5)], "done"])
    agent = Agent(model=model, tools=[add, mul], tool_hooks=[logger_hook, confirmation_hook])
    asyncio.run(agent.arun("Compute 2 + 3 and 4 * 5"))
    assert log == ["PRE add", "blocked", "POST add returned None", "PRE mul", "POST mul returned 20"]
    assert _tool_results(model)[1] == "20"


# integration/agent/test_tool_hooks.py::test_tool_hook_receives_messages
def test_tool_hook_receives_messages() -> None:
    captured: dict[str, Any] = {}

    def messages_tool_hook(
        run_context: RunContext,
        function_name: str,
        function_call: Callable[..., Any],
        arguments: dict[str, Any],
    ) -> Any:
        msgs = run_context.messages
        captured["count"] = len(msgs)
        captured["has_user"] = any(m.role == "user" for m in msgs)
        return function_call(**arguments)

    def modulo(a: int, b: int) -> int:
        """Return a mod b."""
        return a % b

    model = ScriptedModel([tool_call("modulo", a=10, b=3), "1"])
    result = Agent(model=model, tools=[modulo], tool_hooks=[messages_tool_hook]).run("Compute 10 mod 3")
    assert [(c.name, c.result) for c in result.tool_calls] == [("modulo", "1")]
    assert captured["count"] > 0 and captured["has_user"] is True


# unit/tools/test_functions.py::test_function_call_with_tool_hooks
def test_function_call_with_tool_hooks() -> None:
    hook_calls: list[tuple[str, str, Any]] = []

    def tool_hook(function_name: str, function_call: Callable[..., Any], arguments: dict[str, Any]) -> Any:
        hook_calls.append(("before", function_name, arguments))
        result = function_call(**arguments)
        hook_calls.append(("after", function_name, result))
        return result

    @tool(tool_hooks=[tool_hook])
    def test_func(param1: str) -> str:
        return f"processed-{param1}"

    model = ScriptedModel([tool_call("test_func", param1="value1"), "ok"])
    Agent(model=model, tools=[test_func]).run("go")
    assert _tool_results(model) == ["processed-value1"]
    assert hook_calls == [
        ("before", "test_func", {"param1": "value1"}),
        ("after", "test_func", "processed-value1"),
    ]


# unit/tools/test_functions.py::test_tool_decorator_with_tool_hooks
def test_tool_decorator_keeps_its_tool_hooks() -> None:
    def tool_hook(function_name: str, function_call: Callable[..., Any], arguments: dict[str, Any]) -> Any:
        return function_call(**arguments)

    @tool(tool_hooks=[tool_hook])
    def tool_hooked_func(param1: str) -> str:
        return f"processed-{param1}"

    assert tool_hooked_func.tool_hooks == [tool_hook]


# unit/tools/test_functions.py::test_function_call_async_with_tool_hooks
def test_function_call_async_with_tool_hooks() -> None:
    hook_calls: list[tuple[str, str, Any]] = []

    async def tool_hook(
        function_name: str, function_call: Callable[..., Any], arguments: dict[str, Any]
    ) -> Any:
        hook_calls.append(("before", function_name, arguments))
        result = await function_call(**arguments)
        hook_calls.append(("after", function_name, result))
        return result

    @tool(tool_hooks=[tool_hook])
    async def test_func(param1: str) -> str:
        return f"processed-{param1}"

    model = ScriptedModel([tool_call("test_func", param1="value1"), "ok"])
    asyncio.run(Agent(model=model, tools=[test_func]).arun("go"))
    assert _tool_results(model) == ["processed-value1"]
    assert hook_calls[1] == ("after", "test_func", "processed-value1")


# unit/tools/test_functions.py::test_function_call_execution_with_error
def test_tool_error_goes_back_to_the_model() -> None:
    def test_func(param1: str) -> str:
        raise ValueError("Test error")

    model = ScriptedModel([tool_call("test_func", param1="value1"), "sorry"])
    result = Agent(model=model, tools=[test_func]).run("go")
    assert result.content == "sorry"
    assert result.tool_calls[0].error is not None and "Test error" in result.tool_calls[0].error
    assert "Test error" in _tool_results(model)[0]


# unit/tools/test_functions.py::test_function_call_execution_no_arguments
def test_tool_without_arguments() -> None:
    def test_func() -> str:
        return "no-args-result"

    model = ScriptedModel([tool_call("test_func"), "ok"])
    Agent(model=model, tools=[test_func]).run("go")
    assert _tool_results(model) == ["no-args-result"]


# unit/tools/test_functions.py::test_function_call_async_execution
def test_async_tool_execution() -> None:
    async def test_func(param1: str, param2: int = 42) -> str:
        return f"{param1}-{param2}"

    model = ScriptedModel([tool_call("test_func", param1="value1", param2=42), "ok"])
    asyncio.run(Agent(model=model, tools=[test_func]).arun("go"))
    assert _tool_results(model) == ["value1-42"]


# differential: _build_hook_args, the alias names and `team` (None for an agent)
def test_hook_aliases_and_team() -> None:
    got: dict[str, Any] = {}

    def alias_hook(
        name: str,
        func: Callable[..., Any],
        args: dict[str, Any],
        agent: Agent,
        team: Any,
        run_context: RunContext,
    ) -> Any:
        got.update(name=name, args=args, team=team, agent=agent, run_context=run_context)
        return func(**args)

    model = ScriptedModel([tool_call("add", a=2, b=3), "5"])
    agent = Agent(model=model, tools=[add], tool_hooks=[alias_hook])
    agent.run("go")
    assert got["name"] == "add" and got["args"] == {"a": 2, "b": 3} and got["team"] is None
    assert got["agent"] is agent and isinstance(got["run_context"], RunContext)
    assert _tool_results(model) == ["5"]


# differential: _build_hook_args without `team`: name / func / args aliases
def test_hook_alias_names() -> None:
    got: dict[str, Any] = {}

    def alias_hook(name: str, func: Callable[..., Any], args: dict[str, Any], agent: Agent) -> Any:
        got.update(name=name, args=args, agent=agent)
        return func(**args)

    model = ScriptedModel([tool_call("add", a=2, b=3), "5"])
    agent = Agent(model=model, tools=[add], tool_hooks=[alias_hook])
    agent.run("go")
    assert got == {"name": "add", "args": {"a": 2, "b": 3}, "agent": agent}
    assert _tool_results(model) == ["5"]


# differential: a hook that raises becomes that call's error result; the run goes on
def test_hook_that_raises_becomes_the_error_result() -> None:
    def hraise(function_name: str, function_call: Callable[..., Any], arguments: dict[str, Any]) -> Any:
        raise RuntimeError("hook says no")

    model = ScriptedModel([tool_call("add", a=1, b=2), "done"])
    result = Agent(model=model, tools=[add], tool_hooks=[hraise]).run("go")
    assert result.content == "done"
    assert "hook says no" in _tool_results(model)[0]
