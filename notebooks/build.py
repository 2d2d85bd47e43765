"""Write the notebooks of this folder from the cell sources below, then execute them.

    .venv/bin/python notebooks/build.py            # write, execute, strip volatile metadata
    .venv/bin/python notebooks/build.py --no-run   # write only (outputs empty: nbval would skip them)

The notebooks are regression tests (``pytest notebooks``): nbval re-runs every code cell and
compares its outputs with the committed ones, so every notebook is committed executed. Each
one also checks what matters with plain ``assert`` cells. Editing a notebook by hand in
JupyterLab is fine too; then run ``build.py --execute-only`` to execute and strip it in place.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent
JUPYTER = Path(sys.executable).with_name("jupyter")

OFFLINE_NOTE = (
    "Runs offline: `ScriptedModel` plays back the steps it is given and records every request. "
    "For a real model write `--model openai:gpt-5-mini` (with `OPENAI_API_KEY` set), or for any "
    "OpenAI-compatible server `server = OpenAIChat(\"my-model\", base_url=\"http://127.0.0.1:8080/v1\")` "
    "(from `agentnb.models`) and `--model server`."
)


def md(text: str) -> nbformat.NotebookNode:
    return new_markdown_cell(text.strip("\n"))


def code(text: str) -> nbformat.NotebookNode:
    return new_code_cell(text.strip("\n"))


# --- quickstart -------------------------------------------------------------------------------

QUICKSTART = [
    md(f"""
# agentnb quickstart

An agent with a tool, two turns with `%%chat`, the inspector, the state diff of a turn, the
session saved beside this notebook, and the history as pandas DataFrames.

{OFFLINE_NOTE}
"""),
    code("%load_ext agentnb"),
    md("""
The model. Each step answers one model call: a tool call (a list of them runs in parallel) or
the final text. `model.requests` keeps every request exactly as it was sent.
"""),
    code('''
from agentnb import ScriptedModel, tool_call

model = ScriptedModel([
    [tool_call("add_item", item="milk"), tool_call("add_item", item="eggs")],
    "Added milk and eggs.",
    tool_call("remove_item", item="eggs"),
    "Took the eggs off; milk is left.",
])
'''),
    md("""
`%%tool` turns the functions of a cell into tools and prints the JSON schema the model sees.
`session_state` is injected at call time and hidden from the model.
"""),
    code('''
%%tool
def add_item(item: str, session_state) -> str:
    """Add an item to the shopping list."""
    session_state["shopping_list"].append(item)
    return f"added {item}"


def remove_item(item: str, session_state) -> str:
    """Remove an item from the shopping list."""
    session_state["shopping_list"].remove(item)
    return f"removed {item}"
'''),
    md("""
`%%agent` defines the agent; the cell body is its instructions. `--state-in-context` appends the
state to the system prompt as a `<session_state>` block. The agent is saved after every turn into
`quickstart.agentnb/` beside this notebook; re-running the cell restores it from there, unless
`--fresh` (used here so that every run of this notebook starts over). The inspector appears under the cell; it follows every turn.
"""),
    code('''
%%agent shop --model model --state '{"shopping_list": []}' --state-in-context --tools add_item,remove_item --fresh
You keep the user's shopping list.
'''),
    md("Two turns. Each cell streams the turn while it runs, then keeps its record: tool calls, state changes and who made them, the answer."),
    code('''
%%chat shop
Add milk and eggs.
'''),
    code('''
%%chat shop
I bought the eggs; take them off the list.
'''),
    md("What the model received, checked: the second turn's system prompt shows the state as it was when the turn began."),
    code('''
assert shop.session_state == {"shopping_list": ["milk"]}
assert shop.history[1].system_prompt == (
    "You keep the user's shopping list.\\n\\n\\n<session_state>\\n{'shopping_list': ['milk', 'eggs']}\\n</session_state>"
)
assert model.requests[2].messages[0]["content"] == shop.history[1].system_prompt
assert model.requests[2].messages[1] == {"role": "user", "content": "I bought the eggs; take them off the list."}
assert [t["function"]["name"] for t in model.requests[0].tools] == ["add_item", "remove_item"]
assert [(c.name, c.arguments, c.result) for c in shop.history[0].tool_calls] == [
    ("add_item", '{"item": "milk"}', "added milk"),
    ("add_item", '{"item": "eggs"}', "added eggs"),
]
print("checked", len(model.requests), "requests")
'''),
    md("The inspector again (`%agentnb show`): the same widget, now with both turns. Click a turn for its prompt sections, the request as sent, the tool calls and the state."),
    code("%agentnb show shop"),
    md("The state diff of the second turn: each top-level key that changed, with its author, and the JSON patches as recorded."),
    code('''
from agentnb.render import state_diff

second = shop.history[1]
for change in second.state_changes:
    print(change.cause.label(), list(change.patch))
state_diff(second)
'''),
    code('''
assert [(c.cause.kind, c.cause.name) for c in second.state_changes] == [("tool", "remove_item")]
assert second.state_changes[0].patch == ({"op": "remove", "path": "/shopping_list/1"},)
assert second.state_before == {"shopping_list": ["milk", "eggs"]}
assert second.state_after == {"shopping_list": ["milk"]}
'''),
    md("What the model would receive next, without calling it (no `?` at the end of a line magic: IPython reads that as a request for help):"),
    code("%agentnb preview shop What is still on my list"),
    md("""
The session beside the notebook: `quickstart.agentnb/shop.json*` holds the state, the messages
and every turn as plain JSON. A new agent built from it has the same state and history.
"""),
    code('''
from pathlib import Path

from agentnb import Agent, JSONSession

folder = Path("quickstart.agentnb")
# shop.jsonl grows by one line per turn and is folded into shop.json now and then.
assert any(folder.glob("shop.json*"))

again = Agent("shop", ScriptedModel([]))
assert JSONSession(folder).load_session_state_sync("shop", agent=again)
assert again.session_state == shop.session_state
assert [t.message for t in again.history] == [t.message for t in shop.history]
again
'''),
    md("The history as DataFrames (the duration columns vary from run to run, so they are dropped here)."),
    code('shop.history.turns().drop(columns="duration_ms")'),
    code('shop.history.tool_calls().drop(columns="duration_ms")'),
    code("shop.history.states()"),
    code('''
frame = shop.history.tool_calls()
assert list(frame["name"]) == ["add_item", "add_item", "remove_item"]
assert shop.history.states().loc[1, "shopping_list"] == ["milk"]
'''),
]


# --- seed 000: agentic state -------------------------------------------------------------------

AGENTIC_STATE = [
    md(f"""
# Agentic session state: a shopping list

Agno's `enable_agentic_state`: the agent gets a built-in `update_session_state` tool, and
`add_session_state_to_context` shows the state to the model as a `<session_state>` block, so the
model manages the state itself. Here: `--agentic-state --state-in-context`.

{OFFLINE_NOTE}
"""),
    code("%load_ext agentnb"),
    code('''
from agentnb import ScriptedModel, tool_call

model = ScriptedModel([
    tool_call("update_session_state", session_state_updates={"shopping_list": ["milk", "eggs", "bread"]}),
    "I've added milk, eggs, and bread to your shopping list.",
    tool_call("update_session_state", session_state_updates={"shopping_list": ["milk", "bread"]}),
    "Your list now has milk and bread.",
])
'''),
    md("""
No instructions and no tools of our own, so the line form `%agent` defines it (a `%%agent` cell's
body would become the instructions). `--fresh` starts over on every run of the notebook, so it
reads the same each time; without it, a re-run restores the session saved beside the notebook.
"""),
    code("""%agent shopping --model model --state '{"shopping_list": []}' --state-in-context --agentic-state --fresh"""),
    md("Before any turn, the prompt is only the `<session_state>` block, and the one tool is `update_session_state`:"),
    code("%agentnb preview shopping Add milk, eggs, and bread to the shopping list"),
    code('''
%%chat shopping
Add milk, eggs, and bread to the shopping list
'''),
    md("The first request, exactly as sent, and the tool result the model got back:"),
    code('''
first = model.requests[0]
assert first.messages == [
    {"role": "system", "content": "<session_state>\\n{'shopping_list': []}\\n</session_state>"},
    {"role": "user", "content": "Add milk, eggs, and bread to the shopping list"},
]
tool = first.tools[0]["function"]
assert tool["name"] == "update_session_state"
assert tool["parameters"]["required"] == ["session_state_updates"]
assert tool["description"].startswith("Update the shared session state.")

tool_message = model.requests[1].messages[-1]
assert tool_message["role"] == "tool"
assert tool_message["content"] == "Updated session state: {'shopping_list': ['milk', 'eggs', 'bread']}"
# The prompt is rendered once per turn: the follow-up call still shows the state the turn began with.
assert model.requests[1].messages[0] == first.messages[0]

change = shopping.history[0].state_changes[0]
assert (change.cause.kind, change.cause.name) == ("agentic", "update_session_state")
assert shopping.session_state == {"shopping_list": ["milk", "eggs", "bread"]}
print(tool_message["content"])
'''),
    md("Second turn: the prompt now carries the updated list."),
    code('''
%%chat shopping
I picked up the eggs, now what's on my list?
'''),
    code('''
assert shopping.history[1].system_prompt == "<session_state>\\n{'shopping_list': ['milk', 'eggs', 'bread']}\\n</session_state>"
assert model.requests[2].messages[1] == {"role": "user", "content": "I picked up the eggs, now what's on my list?"}
assert shopping.session_state == {"shopping_list": ["milk", "bread"]}
shopping.history.states()
'''),
]


# --- seed 001: tool hooks ----------------------------------------------------------------------

TOOL_HOOKS = [
    md(f"""
# Dynamic session state with tool hooks: customer profiles

Agno's `tool_hooks`: a hook wraps every tool call. This one answers `process_customer_request`
itself, reading and writing `session_state`, so the tool's own body never runs. The instructions
hold a `{{customer_profiles}}` placeholder, filled from the state when each turn starts.

{OFFLINE_NOTE}
"""),
    code("%load_ext agentnb"),
    md("The toolkit. Its method must never run: the hook answers for it."),
    code('''
%%tool
from agentnb import Toolkit


class CustomerDBTools(Toolkit):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls = 0
        self.register(self.process_customer_request)

    def process_customer_request(self, agent, customer_id: str, action: str = "retrieve", name: str = "John Doe"):
        self.calls += 1
        return "This should not be seen."


customer_db = CustomerDBTools()
'''),
    md("The hook. It receives what its signature names (`run_context`, `arguments`, ...); returning without calling the tool answers for it, raising becomes the call's error result."),
    code('''
import json

from agentnb import RunContext


def customer_management_hook(run_context: RunContext, arguments: dict):
    action = arguments.get("action", "retrieve")
    cust_id = arguments.get("customer_id")
    name = arguments.get("name", None)
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
'''),
    code('''
from agentnb import ScriptedModel, tool_call

profiles = {"customer_profiles": {"123": {"name": "Jane Doe"}}}
model = ScriptedModel([
    tool_call("process_customer_request", customer_id="789", action="create", name="Tom"),
    tool_call("process_customer_request", customer_id="789", action="retrieve"),
    "Tom (789) was created, then retrieved.",
    tool_call("process_customer_request", customer_id="999"),
    "There is no customer 999.",
])
'''),
    code('''
%%agent crm --model model --state profiles --tools customer_db --hooks customer_management_hook --fresh
Your profiles: {customer_profiles}. Use `process_customer_request`. Use either create or retrieve as action for the tool.
'''),
    code('''
%%chat crm
First, create customer 789 named 'Tom'. Then, retrieve Tom's profile. Step by step.
'''),
    md("""
Checked: the hook answered both calls (the tool body never ran); the state change is credited to
the hook; and the prompt was rendered once at the start of the turn, so all three model calls
show only customer 123 even though 789 existed by the second.
"""),
    code('''
turn = crm.history[0]
assert customer_db.calls == 0
assert [c.result for c in turn.tool_calls] == ["Success! Customer 789 has been created.", 'Profile for 789: {"name": "Tom"}']
assert all(c.answered_by == "customer_management_hook" for c in turn.tool_calls)
assert [[h.outcome for h in c.hooks] for c in turn.tool_calls] == [["answered"], ["answered"]]

first_prompt = (
    "Your profiles: {'123': {'name': 'Jane Doe'}}. Use `process_customer_request`. "
    "Use either create or retrieve as action for the tool."
)
assert [r.messages[0]["content"] for r in model.requests] == [first_prompt] * 3

change = turn.state_changes[0]
assert (change.cause.kind, change.cause.name) == ("hook", "customer_management_hook")
assert change.patch == ({"op": "add", "path": "/customer_profiles/789", "value": {"name": "Tom"}},)
assert model.requests[0].tools[0]["function"]["parameters"]["required"] == ["customer_id"]
'''),
    md("A second turn: the placeholder now shows both customers. The hook raises for an unknown id; the error goes back to the model as that call's result and the turn goes on."),
    code('''
%%chat crm
Retrieve customer 999.
'''),
    code('''
turn = crm.history[1]
assert turn.system_prompt == (
    "Your profiles: {'123': {'name': 'Jane Doe'}, '789': {'name': 'Tom'}}. Use `process_customer_request`. "
    "Use either create or retrieve as action for the tool."
)
call = turn.tool_calls[0]
assert call.error_kind == "hook_error"
assert call.result.startswith("Error: Customer '999' not found.")
assert model.requests[-1].messages[-1]["content"] == call.result
assert turn.content == "There is no customer 999."
assert customer_db.calls == 0
'''),
    code('crm.history.tool_calls().drop(columns="duration_ms")'),
]


# --- seed 002: state schema and tool chaining ----------------------------------------------------

STATE_SCHEMA = [
    md(f"""
# State schema and tool chaining (Haystack)

Haystack's `State`: a schema gives each key a type and a merge handler (`merge_lists` for
lists, `replace_values` otherwise). Tools read their inputs from state (`inputs_from_state`) and
write their outputs to it (`outputs_to_state`), so one tool's output feeds the next without the
model copying it.

{OFFLINE_NOTE}
"""),
    code("%load_ext agentnb"),
    md("`%%tool --outputs-to-state KEY=SOURCE` maps entries of the tool's result into state keys."),
    code('''
%%tool --name retrieve --outputs-to-state documents=documents result_count=count last_query=query
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
'''),
    md("`--inputs-from-state KEY=PARAM` fills a parameter from state at call time; it disappears from the schema the model sees."),
    code('''
%%tool --name process --inputs-from-state documents=documents --outputs-to-state final_docs=processed_docs final_count=processed_count
def process_documents(documents: list, max_results: int) -> dict:
    """Process documents and return filtered results."""
    processed = documents[:max_results]
    return {"processed_docs": processed, "processed_count": len(processed)}
'''),
    code('''
from agentnb import ScriptedModel, tool_call

schema = {
    "documents": {"type": list},
    "result_count": {"type": int},
    "last_query": {"type": str},
    "final_docs": {"type": list},
    "final_count": {"type": int},
}
model = ScriptedModel([
    tool_call("retrieve", query="Find information about Python"),
    tool_call("process", max_results=1),
    "Processed 1 document.",
])
'''),
    code('''
%%agent researcher --model model --schema schema --tools retrieve,process --fresh
Find documents, then process them.
'''),
    code('''
%%chat researcher
Find and process 1 document about Python
'''),
    code('''
state = researcher.session_state
assert state["result_count"] == 2
assert state["last_query"] == "Find information about Python"
assert state["final_docs"] == [{"title": "Doc 1", "content": "Content about Python"}]
assert state["final_count"] == 1

turn = researcher.history[0]
# documents came from state, not from the model: hidden from the schema and absent from the call.
process_schema = model.requests[0].tools[1]["function"]
assert process_schema["name"] == "process"
assert process_schema["parameters"]["properties"] == {"max_results": {"type": "integer"}}
assert turn.tool_calls[1].arguments == '{"max_results": 1}'
causes = [(c.cause.kind, c.cause.name, c.cause.handler) for c in turn.state_changes]
assert ("output", "retrieve", "merge_lists") in causes
assert ("output", "process", "replace_values") in causes
[(c.cause.label(), c.cause.handler, [op["path"] for op in c.patch]) for c in turn.state_changes]
'''),
    md("A schema rejects a value of the wrong type, naming the key, the expected and the actual type:"),
    code('''
from agentnb import StateTypeError

try:
    researcher.state.set("final_count", "three")
except StateTypeError as exc:
    print(type(exc).__name__, "-", exc)
assert researcher.session_state["final_count"] == 1
'''),
    md("""
The factorial example in plain Python, with Haystack's own `Tool(name=, description=,
parameters=, function=, outputs_to_state=)`. The model is a function of the request here: it
reads the tool results so far and decides the next step.
"""),
    code('''
import json
import math

from agentnb import Agent, Tool


def factorial(n: int) -> dict:
    """Calculate the factorial of a number."""
    return {"result": math.factorial(n)}


def calculate(expression: str) -> dict:
    """Evaluate a mathematical expression."""
    return {"result": eval(expression, {"__builtins__": {}})}


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
    parameters={"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]},
    function=calculate,
    outputs_to_state={"calc_result": {"source": "result"}},
)


def decide(request):
    results = request.tool_results()
    if not results:
        return tool_call("factorial", n=5)
    if len(results) == 1:
        return tool_call("calculator", expression=f"{json.loads(results[0]['content'])['result']} * 2")
    return f"The answer is {json.loads(results[-1]['content'])['result']}."


calc = Agent(
    "calc",
    ScriptedModel(decide),
    tools=[calculator_tool, factorial_tool],
    state_schema={"calc_result": {"type": int}, "factorial_result": {"type": int}},
)
result = calc.run("Calculate the factorial of 5, then multiply it by 2")
for message in result["messages"]:
    print(f"{message.role}: {message.text}")
'''),
    code('''
assert result["factorial_result"] == 120
assert result["calc_result"] == 240
assert result.content == "The answer is 240."
assert [m.role for m in result["messages"]] == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
result
'''),
    md("Extra keywords of `run` go into state (Haystack: `agent.run(messages, user_name=\"Alice\")`), and a tool can take them through `inputs_from_state`:"),
    code('''
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
    outputs_to_state={"search_results": {"source": "results"}},
)
searcher = Agent(
    "searcher",
    ScriptedModel([tool_call("search", query="Python tutorials"), "Found one."]),
    tools=[search_tool],
    state_schema={"user_name": {"type": str}, "search_results": {"type": list}},
)
found = searcher.run("Search for Python tutorials", user_name="Alice")
assert found["search_results"] == ["Found results for 'Python tutorials' (user: Alice)"]
kwarg = found.turn.state_changes[0]
assert (kwarg.cause.kind, kwarg.cause.name) == ("run_kwarg", "user_name")
found["search_results"]
'''),
]


# --- seed 003: sessions --------------------------------------------------------------------------

SESSIONS = [
    md(f"""
# Sessions: save, load into a fresh agent (AgentScope)

AgentScope's `JSONSession(save_dir)`: `save_session_state(session_id, **modules)` writes
`<save_dir>/<session_id>.json` with each module's `state_dict()`, and
`load_session_state(session_id, **modules)` calls each module's `load_state_dict()`. An agentnb
`Agent` is such a module: its state, its messages and every turn (events, requests, state) are
saved, as plain JSON.

This notebook writes into `04_sessions.agentnb/` beside it and clears that folder first, so every
run starts from nothing.

{OFFLINE_NOTE}
"""),
    code("%load_ext agentnb"),
    code('''
import json
import shutil
from pathlib import Path

from agentnb import Agent, JSONSession, ScriptedModel, tool_call

folder = Path("04_sessions.agentnb")
shutil.rmtree(folder, ignore_errors=True)
'''),
    code('''
%%tool
def add_note(text: str, session_state) -> str:
    """Add a note."""
    session_state["notes"].append(text)
    return f"noted: {text}"
'''),
    code('''
model = ScriptedModel([
    tool_call("add_note", text="buy milk"),
    "Noted: buy milk.",
    tool_call("add_note", text="call Bob"),
    "Noted: call Bob.",
])
'''),
    code('''
%%agent notes --model model --state '{"notes": []}' --state-in-context --tools add_note --fresh
You keep the user's notes.
'''),
    code('''
%%chat notes
Remember to buy milk.
'''),
    code('''
%%chat notes
And to call Bob.
'''),
    md("Save, AgentScope's way. In a notebook `await` works at the top level; `save_session_state_sync` is the same without it."),
    code('''
session = JSONSession(folder)
await session.save_session_state("run-1", agent=notes)
print(sorted(p.name for p in folder.iterdir() if p.suffix == ".json"))
'''),
    md("The file on disk: one key per module plus `__agentnb__` (format, version). The agent's module holds its state, its messages and its turns."),
    code('''
saved = json.loads((folder / "run-1.json").read_text(encoding="utf-8"))
agent_module = saved["agent"]
print("top-level keys:", sorted(saved))
print("format:", saved["__agentnb__"]["format"], "version", saved["__agentnb__"]["version"])
print("agent module keys:", sorted(agent_module))
print("state:", agent_module["state"])
print("turns:", [t["message"] for t in agent_module["history"]["turns"]])
print("messages:", [m["role"] for m in agent_module["messages"]])
'''),
    code('''
assert agent_module["state"] == {"notes": ["buy milk", "call Bob"]}
assert [t["message"] for t in agent_module["history"]["turns"]] == ["Remember to buy milk.", "And to call Bob."]
'''),
    md("Load into a freshly constructed agent: same definition, nothing run yet. It gets the state, the messages and both turns back, and carries on."),
    code('''
fresh_model = ScriptedModel([tool_call("add_note", text="water plants"), "Noted: water plants."])
restored = Agent(
    "notes",
    fresh_model,
    instructions="You keep the user's notes.",
    session_state={"notes": []},
    add_session_state_to_context=True,
    tools=[add_note],
)
assert restored.session_state == {"notes": []} and len(restored.history) == 0
found = await session.load_session_state("run-1", agent=restored)
assert found
assert restored.session_state == notes.session_state == {"notes": ["buy milk", "call Bob"]}
assert [t.message for t in restored.history] == [t.message for t in notes.history]
assert [t.tool_calls[0].result for t in restored.history] == ["noted: buy milk", "noted: call Bob"]
restored
'''),
    code('''
print(restored.run("Also water the plants.").content)
assert restored.session_state["notes"] == ["buy milk", "call Bob", "water plants"]
assert restored.history[2].system_prompt.endswith("{'notes': ['buy milk', 'call Bob']}\\n</session_state>")
'''),
    md("Several modules in one session, and a missing session: `allow_not_exist=False` raises, naming the file."),
    code('''
from agentnb.sessions import StateModule


class Settings(StateModule):
    def __init__(self):
        super().__init__()
        self.language = "en"
        self.register_state("language")


settings = Settings()
settings.language = "fr"
session.save_session_state_sync("run-2", agent=notes, settings=settings)

other_agent, other_settings = Agent("notes", ScriptedModel([])), Settings()
session.load_session_state_sync("run-2", agent=other_agent, settings=other_settings)
assert other_settings.language == "fr"
assert other_agent.session_state == notes.session_state

try:
    session.load_session_state_sync("no-such-run", allow_not_exist=False, agent=other_agent)
except ValueError as exc:
    print(type(exc).__name__, "-", exc)
'''),
    md("""
Autosave: `--session FOLDER` (or `Agent(..., session=FOLDER)`) restores what the folder holds,
then saves after every turn. Re-running the `%%agent` cell — or restarting the kernel and running
it again — brings the agent back where it was.
"""),
    code('''
model = ScriptedModel(["Hello.", "Still here."])
'''),
    code('''
%%agent keeper --model model --state '{"visits": 0}' --session 04_sessions.agentnb
Greet the user.
'''),
    code('''
%%chat keeper
Hi!
'''),
    code('''
%%agent keeper --model model --state '{"visits": 0}' --session 04_sessions.agentnb
Greet the user.
'''),
    code('''
assert len(keeper.history) == 1 and keeper.history[0].message == "Hi!"
print(sorted(p.name for p in folder.glob("keeper.*")))
'''),
]


# --- seed 004: observe with passive and active context -------------------------------------------

OBSERVE_CONTEXT = [
    md(f"""
# Observe, with passive and active context (MASFactory)

MASFactory's agent assembles what the model receives in an explicit Observe step:
`system_prompt, user_prompt, messages = agent.observe(inputs)` — without calling the model. A
`prompt_template` is filled from input fields; context providers return `ContextBlock`s. A
**passive** provider is queried on every turn and its blocks land in the user message's
`CONTEXT` field; an **active** one is not queried up front: the agent gets `list_context_sources`
and `retrieve_context` tools and the model decides when to look.

{OFFLINE_NOTE}
"""),
    code("%load_ext agentnb"),
    md("Example A: only a `prompt_template`. The model is never called, so it has no steps."),
    code('''
from agentnb import Agent, ContextBlock, ContextQuery, ScriptedModel, tool_call

writer = Agent(
    name="writer",
    model=ScriptedModel(),
    instructions="你是一个简洁的写作者。",
    prompt_template="主题：{topic}",
)
system_prompt, user_prompt, messages = writer.observe({"topic": "MASFactory 是什么？"})
print(system_prompt)
print("----")
print(user_prompt)
print("----")
print([m["role"] for m in messages])
'''),
    code('''
assert system_prompt == "你是一个简洁的写作者。"
assert user_prompt.startswith("MESSAGE TO YOU: 主题：MASFactory 是什么？")
assert [m["role"] for m in messages] == ["system", "user"]
assert writer.model.requests == []
'''),
    md("Example B: a passive provider. Its block is injected into `CONTEXT`."),
    code('''
class DummyProvider:
    context_label = "MEM"
    passive = True
    active = False
    supports_passive = True
    supports_active = True

    def __init__(self):
        self.queries = []

    def get_blocks(self, query: ContextQuery, *, top_k: int = 8) -> list[ContextBlock]:
        self.queries.append(query)
        return [ContextBlock(text="memory snippet", score=0.9)]


memory = DummyProvider()
writer_b = Agent(
    name="writer",
    model=ScriptedModel(),
    instructions="你是一个简洁的写作者。",
    prompt_template="主题：{topic}",
    memories=[memory],
)
_, user_prompt, _ = writer_b.observe({"topic": "解释 DAG"})
print(user_prompt)
'''),
    code('''
assert user_prompt.startswith("MESSAGE TO YOU: 主题：解释 DAG\\n\\n")
assert user_prompt.endswith("CONTEXT:\\n[Context]\\n(MEM) memory snippet")
(query,) = memory.queries
assert query.query_text == "主题：解释 DAG" and query.inputs == {"topic": "解释 DAG"}
'''),
    md("Example C: an active provider. Nothing is retrieved up front; two tools are added for this agent."),
    code('''
class ActiveProvider:
    context_label = "RAG"
    passive = False
    active = True
    supports_passive = True
    supports_active = True

    def __init__(self):
        self.calls = []

    def get_blocks(self, query: ContextQuery, *, top_k: int = 8) -> list[ContextBlock]:
        self.calls.append((query.query_text, top_k))
        return [ContextBlock(text=f"hit for: {query.query_text}", score=0.8)]


rag = ActiveProvider()
writer_c = Agent(
    name="writer",
    model=ScriptedModel(),
    instructions="你是一个简洁的写作者。",
    prompt_template="{query}",
    retrievers=[rag],
)
observation = writer_c.observe({"query": "MASFactory context blocks"})
print([t.__name__ for t in writer_c.all_tools()])
'''),
    code('''
assert [t["function"]["name"] for t in observation.tools] == ["list_context_sources", "retrieve_context"]
assert "CONTEXT" not in observation.user_prompt
assert rag.calls == []
'''),
    md("""
The same with the magics: `%%agent --context` takes providers (passive and active together),
`%agentnb preview` shows what the model would receive, and `%%chat` runs a turn in which the
model looks things up itself.
"""),
    code('''
memory, rag = DummyProvider(), ActiveProvider()
model = ScriptedModel([
    tool_call("list_context_sources"),
    tool_call("retrieve_context", source="RAG", query="DAG scheduling", top_k=2),
    "A DAG scheduler runs each node after its inputs.",
])
'''),
    code('''
%%agent explainer --model model --context memory,rag --fresh
你是一个简洁的写作者。
'''),
    code("%agentnb preview explainer 解释 DAG"),
    code('''
%%chat explainer
解释 DAG
'''),
    code('''
turn = explainer.history[0]
# Passive: injected into the user message before the first call.
assert model.requests[0].messages[-1]["content"].endswith("CONTEXT:\\n[Context]\\n(MEM) memory snippet")
assert [t["function"]["name"] for t in model.requests[0].tools] == ["list_context_sources", "retrieve_context"]
# Active: retrieved only when the model asked, with the model's query and top_k.
assert rag.calls == [("DAG scheduling", 2)]
assert [(c.via, c.label) for c in turn.context] == [("passive", "MEM"), ("tool", "RAG")]
assert [b.text for b in turn.context[1].blocks] == ["hit for: DAG scheduling"]
assert [c.name for c in turn.tool_calls] == ["list_context_sources", "retrieve_context"]
for call in turn.tool_calls:
    print(call.name, "->", call.result)
'''),
]


NOTEBOOKS = {
    "quickstart.ipynb": QUICKSTART,
    "01_agentic_state.ipynb": AGENTIC_STATE,
    "02_tool_hooks.ipynb": TOOL_HOOKS,
    "03_state_schema.ipynb": STATE_SCHEMA,
    "04_sessions.ipynb": SESSIONS,
    "05_observe_context.ipynb": OBSERVE_CONTEXT,
}


def write(name: str, cells: list[nbformat.NotebookNode]) -> Path:
    nb = new_notebook(cells=cells)
    for number, cell in enumerate(nb.cells):
        cell.id = f"{Path(name).stem}-{number}"  # stable ids: rebuilding changes no line by itself
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    path = HERE / name
    nbformat.write(nb, path)
    return path


def execute(path: Path) -> None:
    """Execute in place, then drop what changes from run to run and is not an output."""
    # JPY_SESSION_NAME is how Jupyter tells a kernel its notebook; %%agent's default session
    # folder (NAME.agentnb beside the notebook) is found from it.
    env = {**os.environ, "JPY_SESSION_NAME": str(path)}
    subprocess.run(
        [str(JUPYTER), "nbconvert", "--to", "notebook", "--execute", "--inplace", str(path)],
        check=True,
        cwd=HERE,
        env=env,
    )
    nb = nbformat.read(path, as_version=4)
    # Widget state holds random model ids and the inspector's whole source: not a test reference.
    nb.metadata.pop("widgets", None)
    nb.metadata["language_info"] = {"name": "python"}  # no interpreter version in the file
    for cell in nb.cells:
        cell.metadata.pop("execution", None)  # nbclient's timestamps
    nbformat.write(nb, path)


def main(argv: list[str]) -> None:
    names = [a for a in argv if not a.startswith("--")] or list(NOTEBOOKS)
    for name in names:
        path = HERE / name if name in NOTEBOOKS else Path(name)
        if "--execute-only" not in argv:
            path = write(path.name, NOTEBOOKS[path.name])
        if "--no-run" not in argv:
            execute(path)
        print("wrote", path.relative_to(HERE.parent))


if __name__ == "__main__":
    main(sys.argv[1:])
