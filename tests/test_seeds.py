"""The seed scenarios (Agno agentic state, Agno tool hooks, Haystack State) reproduced exactly."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from agentnb import Agent, RunContext, ScriptedModel, Tool, Toolkit, tool_call

# --- seed 000: Agno agentic session state --------------------------------------------------

SEED_000_TOOL = {
    "type": "function",
    "function": {
        "name": "update_session_state",
        "description": 'Update the shared session state. Provide any updates as a dictionary of key-value pairs.\nExample:\n    "session_state_updates": {"shopping_list": ["milk", "eggs", "bread"]}',
        "parameters": {
            "type": "object",
            "properties": {
                "session_state_updates": {
                    "type": "object",
                    "description": "The updates to apply to the shared session state.",
                }
            },
            "required": ["session_state_updates"],
        },
    },
}


def test_seed_000_agentic_shopping_list():
    model = ScriptedModel(
        [
            tool_call(
                "update_session_state", session_state_updates={"shopping_list": ["milk", "eggs", "bread"]}
            ),
            "I've added milk, eggs, and bread to your shopping list.",
            "Your list has milk, eggs and bread.",
        ]
    )
    initial = {"shopping_list": []}
    agent = Agent(
        model=model,
        session_state=initial,
        add_session_state_to_context=True,
        enable_agentic_state=True,
    )
    first = agent.run("Add milk, eggs, and bread to the shopping list")

    request = model.requests[0]
    assert request.messages[0] == {
        "role": "system",
        "content": "<session_state>\n{'shopping_list': []}\n</session_state>",
    }
    assert request.messages[1] == {
        "role": "user",
        "content": "Add milk, eggs, and bread to the shopping list",
    }
    assert request.tools == [SEED_000_TOOL]

    # The tool's result goes back to the model, and the prompt does not change mid-run.
    tool_message = model.requests[1].messages[-1]
    assert tool_message["role"] == "tool"
    assert tool_message["content"] == "Updated session state: {'shopping_list': ['milk', 'eggs', 'bread']}"
    assert (
        model.requests[1].messages[0]["content"] == "<session_state>\n{'shopping_list': []}\n</session_state>"
    )

    assert first["shopping_list"] == ["milk", "eggs", "bread"]
    assert agent.session_state == {"shopping_list": ["milk", "eggs", "bread"]}
    assert initial == {"shopping_list": []}, "the caller's dict must not be shared"

    agent.run("I picked up the eggs, now what's on my list?")
    assert model.requests[2].messages == [
        {
            "role": "system",
            "content": "<session_state>\n{'shopping_list': ['milk', 'eggs', 'bread']}\n</session_state>",
        },
        {"role": "user", "content": "I picked up the eggs, now what's on my list?"},
    ]

    change = first.turn.state_changes[0]
    assert change.cause.kind == "agentic" and change.cause.name == "update_session_state"
    assert [op["op"] for op in change.patch] == ["add", "add", "add"]


# --- seed 001: Agno dynamic session state with tool hooks ------------------------------------


class CustomerDBTools(Toolkit):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.calls = 0
        self.register(self.process_customer_request)

    def process_customer_request(self, agent, customer_id, action="retrieve", name="John Doe"):
        self.calls += 1
        return "This should not be seen."


def customer_management_hook(run_context: RunContext, arguments: dict[str, Any]):
    action = arguments.get("action", "retrieve")
    cust_id = arguments.get("customer_id")
    name = arguments.get("name")
    if not cust_id:
        raise ValueError("customer_id is required.")
    if action == "create":
        run_context.session_state["customer_profiles"][cust_id] = {"name": name}
        return f"Success! Customer {cust_id} has been created."
    if action == "retrieve":
        profile = run_context.session_state.get("customer_profiles", {}).get(cust_id)
        if profile:
            return f"Profile for {cust_id}: {json.dumps(profile)}"
        raise ValueError(f"Customer '{cust_id}' not found.")
    raise ValueError(f"Unknown action {action!r}")


INSTRUCTIONS_001 = (
    "Your profiles: {customer_profiles}. Use `process_customer_request`. "
    "Use either create or retrieve as action for the tool."
)


def make_customer_agent(steps):
    toolkit = CustomerDBTools()
    model = ScriptedModel(steps)
    agent = Agent(
        model=model,
        tools=[toolkit],
        tool_hooks=[customer_management_hook],
        session_state={"customer_profiles": {"123": {"name": "Jane Doe"}}},
        instructions=INSTRUCTIONS_001,
    )
    return agent, model, toolkit


def test_seed_001_hook_creates_then_retrieves_in_one_run():
    agent, model, toolkit = make_customer_agent(
        [
            tool_call("process_customer_request", customer_id="789", action="create", name="Tom"),
            tool_call("process_customer_request", customer_id="789", action="retrieve"),
            "Tom (789) was created and retrieved.",
            "Two customers.",
        ]
    )
    result = agent.run("First, create customer 789 named 'Tom'. Then, retrieve Tom's profile. Step by step.")

    assert toolkit.calls == 0, "the hook answers; the tool body never runs"
    expected_prompt = (
        "Your profiles: {'123': {'name': 'Jane Doe'}}. Use `process_customer_request`. "
        "Use either create or retrieve as action for the tool."
    )
    # The prompt was rendered once at the start of the run: all three calls show only 123.
    assert [r.messages[0]["content"] for r in model.requests] == [expected_prompt] * 3
    assert model.requests[0].tools == [
        {
            "type": "function",
            "function": {
                "name": "process_customer_request",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "customer_id": {"type": "string"},
                        "action": {"type": "string", "default": "retrieve"},
                        "name": {"type": "string", "default": "John Doe"},
                    },
                    "required": ["customer_id"],
                },
            },
        }
    ]
    results = [c.result for c in result.tool_calls]
    assert results == ["Success! Customer 789 has been created.", 'Profile for 789: {"name": "Tom"}']
    assert all(c.answered_by == "customer_management_hook" for c in result.tool_calls)
    assert [s.outcome for s in result.tool_calls[0].hooks] == ["answered"]
    assert result.tool_calls[0].changed_keys == ("customer_profiles",)

    change = result.turn.state_changes[0]
    assert change.cause.kind == "hook" and change.cause.name == "customer_management_hook"
    assert change.patch == ({"op": "add", "path": "/customer_profiles/789", "value": {"name": "Tom"}},)

    agent.run("How many customers?")
    assert model.requests[3].messages[0]["content"] == (
        "Your profiles: {'123': {'name': 'Jane Doe'}, '789': {'name': 'Tom'}}. Use "
        "`process_customer_request`. Use either create or retrieve as action for the tool."
    )


def test_seed_001_unknown_customer_returns_hook_error_to_model():
    agent, model, toolkit = make_customer_agent(
        [tool_call("process_customer_request", customer_id="999"), "No such customer."]
    )
    result = agent.run("Retrieve customer 999")
    call = result.tool_calls[0]
    assert call.error_kind == "hook_error"
    assert call.result.startswith("Error: Customer '999' not found.")
    assert "customer_management_hook" in call.result
    assert model.requests[1].messages[-1]["content"] == call.result
    assert [s.outcome for s in call.hooks] == ["raised"]
    assert result.content == "No such customer."
    assert toolkit.calls == 0


# --- seed 002: Haystack State, tools chaining through state ----------------------------------


def retrieve_documents(query: str) -> dict:
    """Retrieve documents based on query."""
    return {
        "documents": [
            {"title": "Doc 1", "content": "Content about Python"},
            {"title": "Doc 2", "content": "More about Python"},
        ],
        "count": 2,
        "query": query,
    }


retrieval_tool = Tool(
    name="retrieve",
    description="Retrieve relevant documents",
    parameters={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    function=retrieve_documents,
    outputs_to_state={
        "documents": {"source": "documents"},
        "result_count": {"source": "count"},
        "last_query": {"source": "query"},
    },
)


def process_documents(documents: list, max_results: int) -> dict:
    """Process documents and return filtered results."""
    processed = documents[:max_results]
    return {"processed_docs": processed, "processed_count": len(processed)}


processing_tool = Tool(
    name="process",
    description="Process retrieved documents",
    parameters={
        "type": "object",
        "properties": {"max_results": {"type": "integer"}},
        "required": ["max_results"],
    },
    function=process_documents,
    inputs_from_state={"documents": "documents"},
    outputs_to_state={
        "final_docs": {"source": "processed_docs"},
        "final_count": {"source": "processed_count"},
    },
)


def test_seed_002_retrieve_then_process_chain_through_state():
    model = ScriptedModel(
        [
            tool_call("retrieve", query="Find information about Python"),
            tool_call("process", max_results=1),
            "Processed 1 document.",
        ]
    )
    agent = Agent(
        model=model,
        tools=[retrieval_tool, processing_tool],
        state_schema={
            "documents": {"type": list},
            "result_count": {"type": int},
            "last_query": {"type": str},
            "final_docs": {"type": list},
            "final_count": {"type": int},
        },
    )
    result = agent.run("Find and process 1 document about Python")
    assert result["documents"] == retrieve_documents("x")["documents"]
    assert result["result_count"] == 2
    assert result["last_query"] == "Find information about Python"
    assert result["final_docs"] == [{"title": "Doc 1", "content": "Content about Python"}]
    assert result["final_count"] == 1
    # documents came from state, not from the model, and are hidden from the schema
    assert model.requests[0].tools[1]["function"]["parameters"]["properties"] == {
        "max_results": {"type": "integer"}
    }
    assert json.loads(result.tool_calls[1].arguments) == {"max_results": 1}
    causes = [(c.cause.kind, c.cause.name, c.cause.handler) for c in result.turn.state_changes]
    assert ("output", "retrieve", "merge_lists") in causes
    assert ("output", "process", "replace_values") in causes
    roles = [m.role for m in result["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    assert result["messages"][-1].text == "Processed 1 document."


def factorial(n: int) -> dict:
    """Calculate the factorial of a number."""
    return {"result": math.factorial(n)}


def calculate(expression: str) -> dict:
    """Evaluate a mathematical expression."""
    return {"result": eval(expression, {"__builtins__": {}})}


def test_seed_002_factorial_then_calculator():
    factorial_tool = Tool(
        name="factorial",
        description="Calculate the factorial of a number",
        parameters={"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        function=factorial,
        outputs_to_state={"factorial_result": {"source": "result"}},
    )
    calculator_tool = Tool(
        name="calculator",
        description="Evaluate basic math expressions",
        parameters={
            "type": "object",
            "properties": {"expression": {"type": "string"}},
            "required": ["expression"],
        },
        function=calculate,
        outputs_to_state={"calc_result": {"source": "result"}},
    )

    def decide(request):
        results = request.tool_results()
        if not results:
            return tool_call("factorial", n=5)
        if len(results) == 1:
            value = json.loads(results[0]["content"])["result"]
            return tool_call("calculator", expression=f"{value} * 2")
        return f"The answer is {json.loads(results[-1]['content'])['result']}."

    agent = Agent(
        model=ScriptedModel(decide),
        tools=[calculator_tool, factorial_tool],
        state_schema={"calc_result": {"type": int}, "factorial_result": {"type": int}},
    )
    result = agent.run("Calculate the factorial of 5, then multiply it by 2")
    assert result["factorial_result"] == 120
    assert result["calc_result"] == 240
    assert result.content == "The answer is 240."
    printed = [f"{m.role}: {m.text}" for m in result["messages"]]
    assert printed == [
        "user: Calculate the factorial of 5, then multiply it by 2",
        "assistant: ",
        'tool: {"result": 120}',
        "assistant: ",
        'tool: {"result": 240}',
        "assistant: The answer is 240.",
    ]


def test_seed_002_whole_result_and_custom_handler_and_run_kwargs():
    def get_user_info() -> dict:
        """Get user information."""
        return {"name": "Alice", "email": "alice@example.com", "role": "admin"}

    info_tool = Tool(
        name="get_info",
        description="Get user information",
        parameters={"type": "object", "properties": {}},
        function=get_user_info,
        outputs_to_state={"user_info": {}},
    )

    def search_documents(query: str, user_context: str) -> dict:
        """Search documents using query and user context."""
        return {"results": [f"Found results for '{query}' (user: {user_context})"]}

    search_tool = Tool(
        name="search",
        description="Search documents",
        parameters={
            "type": "object",
            "properties": {"query": {"type": "string"}, "user_context": {"type": "string"}},
            "required": ["query"],
        },
        function=search_documents,
        inputs_from_state={"user_name": "user_context"},
        outputs_to_state={
            "search_results": {"source": "results", "handler": lambda cur, new: sorted((cur or []) + new)}
        },
    )
    model = ScriptedModel(
        [
            [tool_call("get_info"), tool_call("search", query="Python tutorials")],
            "done",
        ]
    )
    agent = Agent(
        model=model,
        tools=[info_tool, search_tool],
        state_schema={
            "user_info": {"type": dict},
            "user_name": {"type": str},
            "search_results": {"type": list},
        },
    )
    result = agent.run("Search for Python tutorials", user_name="Alice")
    assert result["user_info"] == {"name": "Alice", "email": "alice@example.com", "role": "admin"}
    assert result["search_results"] == ["Found results for 'Python tutorials' (user: Alice)"]
    kwarg_change = result.turn.state_changes[0]
    assert kwarg_change.cause.kind == "run_kwarg" and kwarg_change.cause.name == "user_name"
    assert kwarg_change.patch == ({"op": "add", "path": "/user_name", "value": "Alice"},)


@pytest.mark.parametrize("fmt", ["repr", "json"])
def test_session_state_format_option(fmt):
    model = ScriptedModel(["ok"])
    agent = Agent(
        model=model, session_state={"a": [1]}, add_session_state_to_context=True, session_state_format=fmt
    )
    agent.run("hi")
    expected = "{'a': [1]}" if fmt == "repr" else '{\n  "a": [\n    1\n  ]\n}'
    assert model.requests[0].messages[0]["content"] == f"<session_state>\n{expected}\n</session_state>"
