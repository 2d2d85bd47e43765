"""The magics through a real IPython shell: %%tool, %%agent, %%chat, %agentnb."""

from __future__ import annotations

import json

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

import agentnb
from agentnb import Agent, JSONSession, ScriptedModel, Tool, tool_call
from agentnb.history.render import turn_html, turn_text

IMG = "<img src=x onerror=alert(1)>"


@pytest.fixture()
def shell(shell):
    """The shared shell (tests/conftest.py) with what the magics' cells use imported."""
    shell.run_cell("from agentnb import ScriptedModel, Toolkit, tool, tool_call")
    return shell


def run(ip, kind: str, line: str, body: str = ""):
    """Run a magic, returning (value, captured output)."""
    with capture_output() as captured:
        value = ip.run_cell_magic(kind, line, body) if kind != "agentnb" else ip.run_line_magic(kind, line)
    return value, captured


def usage_error(ip, kind: str, line: str, body: str = "") -> str:
    with pytest.raises(UsageError) as info:
        run(ip, kind, line, body)
    text = str(info.value)
    assert "\n" not in text, text  # one line, never a wall
    return text


ADD_ITEM = '''
def add_item(item: str, session_state) -> str:
    """Add an item to the shopping list."""
    session_state["shopping_list"].append(item)
    return f"added {item}"

def _helper():
    pass
'''


def define_shop(ip, extra: str = "", body: str = "You keep {shopping_list}."):
    run(ip, "tool", "", ADD_ITEM)
    ip.run_cell(
        "model = ScriptedModel(lambda request: 'ok' if request.messages[-1]['role'] == 'tool' "
        "else tool_call('add_item', item=request.messages[-1]['content']))"
    )
    return run(
        ip,
        "agent",
        f"""shop --model model --state '{{"shopping_list": []}}' --tools add_item {extra}""",
        body,
    )


# --- loading -------------------------------------------------------------------------------


def test_load_ext_registers_the_magics(shell):
    magics = shell.magics_manager.magics
    assert {"agent", "tool", "chat"} <= set(magics["cell"])
    assert "agentnb" in magics["line"]


def test_agent_magic_documents_its_options(shell):
    doc = shell.find_cell_magic("agent").__doc__
    for option in (
        "--model",
        "--state",
        "--schema",
        "--agentic-state",
        "--state-in-context",
        "--tools",
        "--hooks",
        "--context",
        "--session",
        "--max-iterations",
        "--fresh",
    ):
        assert option in doc


# --- %%tool --------------------------------------------------------------------------------


def test_tool_registers_new_functions_as_callable_tools(shell):
    _, out = run(shell, "tool", "", "import json\nfrom os.path import join\n" + ADD_ITEM)
    registered = shell.user_ns["add_item"]
    assert isinstance(registered, Tool)
    assert registered("milk", {"shopping_list": []}) == "added milk"  # still callable
    assert not isinstance(shell.user_ns["_helper"], Tool)
    assert not isinstance(shell.user_ns["join"], Tool)  # imported, not defined here
    assert out.stdout.splitlines()[0] == "tool add_item"
    assert '"description": "Add an item to the shopping list."' in out.stdout
    schema = json.loads(out.stdout.split("\n", 1)[1])
    assert schema == registered.schema()
    assert schema["function"]["parameters"]["required"] == ["item"]
    assert "session_state" not in out.stdout  # injected, hidden from the model


def test_tool_options_set_state_wiring(shell):
    body = "def process(docs: list, top: int = 2) -> dict:\n    return {'best': docs[:top]}\n"
    _, out = run(
        shell, "tool", "--inputs-from-state documents=docs --outputs-to-state best=best --name pick", body
    )
    made = shell.user_ns["process"]
    assert made.name == "pick"
    assert made.inputs_from_state == {"documents": "docs"}
    assert made.outputs_to_state == {"best": {"source": "best"}}
    assert "docs" not in made.parameters["properties"]
    assert out.stdout.startswith(
        "tool pick (inputs_from_state={'documents': 'docs'}; outputs_to_state={'best': {'source': 'best'}})"
    )


def test_tool_output_whole_result_with_empty_source(shell):
    run(shell, "tool", "--outputs-to-state total=", "def add(a: int, b: int) -> int:\n    return a + b\n")
    assert shell.user_ns["add"].outputs_to_state == {"total": {}}
    agent = Agent("calc", ScriptedModel([tool_call("add", a=1, b=2), "3"]), tools=[shell.user_ns["add"]])
    assert agent.run("1+2?").state == {"total": 3}  # the docstring's example: an int result, stored whole


def test_tool_registers_an_explicit_schema_tool(shell):
    body = (
        "def f(city: str) -> str:\n    return city\n"
        "weather = Tool(name='weather', description='d', parameters={'type': 'object', 'properties': {'city': {'type': 'string'}}}, function=f)\n"
    )
    shell.user_ns["Tool"] = agentnb.Tool
    run(shell, "tool", "", body)
    assert shell.user_ns["weather"].inputs_from_state is None


def test_tool_registers_a_toolkit_class_and_its_tools(shell):
    body = (
        "class Shop(Toolkit):\n"
        "    def __init__(self):\n"
        "        super().__init__(name='shop_tools')\n"
        "        self.register(self.price)\n"
        "    def price(self, item: str) -> float:\n"
        "        'Price of an item.'\n"
        "        return 1.5\n"
    )
    _, out = run(shell, "tool", "", body)
    assert out.stdout.splitlines()[:2] == ["toolkit shop_tools: 1 tool(s)", "  tool price"]
    run(shell, "agent", "a --tools price", "Price things.")  # a toolkit's tool, by its name from the registry
    assert [t.name for t in shell.user_ns["a"].tools] == ["price"]


@pytest.mark.parametrize(
    ("line", "body", "expected"),
    [
        ("", "x = 1\n", "defined no function or Toolkit"),
        ("", "def f():\n    return 1/0\nf()\n", "the cell raised ZeroDivisionError"),
        ("--inputs-from-state docs", "def f(docs: list): ...\n", "must look like documents=docs"),
        ("--inputs-from-state documents=nope", "def f(docs: list): ...\n", "no function of the cell takes"),
        ("--name x", "def f(): ...\ndef g(): ...\n", "defines 2 (f, g); split the cell"),
        ("--name 1x", "def f(): ...\n", "not a valid Python name"),
        ("--bogus", "def f(): ...\n", "unrecognized arguments: --bogus. See %%tool? for the options."),
        (
            "--name x",
            "@tool\ndef f(): ...\n",
            "'f' is already a Tool (@tool); give the options to @tool(...)",
        ),
    ],
)
def test_tool_bad_input_is_a_one_line_usage_error(shell, line, body, expected):
    assert expected in usage_error(shell, "tool", line, body)


# --- %%agent -------------------------------------------------------------------------------


def test_agent_binds_name_with_all_options(shell):
    shell.run_cell(
        "def log(function_name, function_call, arguments):\n    return function_call(**arguments)\n"
    )
    _, out = define_shop(
        shell,
        "--agentic-state --state-in-context --hooks log --max-iterations 3 --markdown "
        "--description 'Shop helper'",
    )
    agent = shell.user_ns["shop"]
    assert isinstance(agent, Agent) and agent.name == "shop"
    assert agent.model is shell.user_ns["model"]
    assert agent.session_state == {"shopping_list": []}
    assert [t.name for t in agent.all_tools()] == ["add_item", "update_session_state"]
    assert [h.__name__ for h in agent.tool_hooks] == ["log"]
    assert agent.max_tool_iterations == 3 and agent.markdown and agent.description == "Shop helper"
    assert agent.instructions == "You keep {shopping_list}."
    system = agent.observe("hi").system_prompt
    assert "You keep []." in system and system.endswith(
        "<session_state>\n{'shopping_list': []}\n</session_state>"
    )
    assert (
        "Agent('shop', model=scripted, tools=[add_item, update_session_state], state keys=" in out.stdout
        and "turns=" not in out.stdout
    )


def test_agent_state_and_schema_from_variables_are_copied(shell):
    shell.run_cell("start = {'items': ['a']}\nschema = {'items': {'type': list}}")
    run(shell, "agent", "a --state start --schema schema", "Track {items}.")
    agent = shell.user_ns["a"]
    agent.session_state["items"].append("b")
    assert shell.user_ns["start"] == {"items": ["a"]}
    assert agent.state.has_schema


def test_rerunning_agent_starts_from_its_definition(shell):
    define_shop(shell, "--no-session")
    shell.user_ns["shop"].run("milk")
    _, out = define_shop(shell, "--no-session", body="New instructions {shopping_list}.")
    agent = shell.user_ns["shop"]
    assert "redefined" not in out.stdout
    assert agent.session_state == {"shopping_list": []} and len(agent.history) == 0
    assert agent.instructions == "New instructions {shopping_list}."
    agent.run("eggs")
    assert agent.history[-1].number == 1


def test_rerun_with_a_new_schema_needs_nothing_from_the_old_state(shell):
    define_shop(shell)
    shell.user_ns["shop"].run("milk")
    shell.run_cell("schema = {'other': {'type': str}}")
    run(shell, "agent", "shop --schema schema --state '{}' --model model", "Shop.")
    assert shell.user_ns["shop"].session_state == {}
    text = usage_error(shell, "agentnb", "resume shop")  # the recording's state does not fit the schema
    assert text.startswith("%agentnb resume shop:") and "'shopping_list'" in text


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("", "the following arguments are required: name"),
        ("1bad", "'1bad' is not a valid Python name"),
        ("a --nope", "unrecognized arguments: --nope. See %%agent? for the options."),
        ("a --model missing_model", "--model missing_model: unknown model 'missing_model'"),
        ("a --model number", "--model number is a int, not a model"),
        ("a --state '{bad json'", "not valid JSON"),
        ("a --state undefined_state", "no variable named 'undefined_state'"),
        ("a --state '[1, 2]'", "--state must be a dict (JSON object), got list"),
        ("a --schema nothing_here", "--schema nothing_here: no variable named 'nothing_here'"),
        ("a --schema number", "--schema number is a int"),
        ("a --schema bad_schema", "state_schema['k'] must be a dict with a 'type' entry"),
        (
            "a --tools ghost",
            "--tools names 'ghost', which is neither a variable nor a tool registered by %%tool",
        ),
        ("a --tools number", "--tools number is a int"),
        ("a --tools ,", "has an empty name"),
        ("a --hooks ghost", "--hooks names 'ghost'"),
        ("a --hooks number", "--hooks number holds a int"),
        ("a --hooks bad_hook", "tool hook 'bad_hook' asks for ['weird']"),
        ("a --max-iterations -1", "--max-iterations must be 0 or more"),
        ("a --max-iterations many", "argument --max-iterations: invalid int value: 'many'"),
        ("a --context ghost", "--context names 'ghost'"),
        ('a --state \'{"x": 1}', "close every quote"),
    ],
)
def test_agent_bad_options_are_one_line_usage_errors(shell, line, expected):
    shell.run_cell("number = 3\nbad_schema = {'k': 1}\ndef bad_hook(weird): ...\n")
    assert expected in usage_error(shell, "agent", line, "instructions")
    assert "a" not in shell.user_ns or not isinstance(shell.user_ns["a"], Agent)


def test_agent_shows_the_inspector(shell, monkeypatch):
    inspector = pytest.importorskip("agentnb.ipython.inspector")
    shown = []
    monkeypatch.setattr("IPython.display.display", lambda obj, **kw: shown.append((obj, kw)))
    define_shop(shell)
    assert len(shown) == 1 and isinstance(shown[0][0], inspector.Inspector)
    assert shown[0][0] is inspector.Inspector.for_agent(shell.user_ns["shop"])
    assert shown[0][1] == {"display_id": shown[0][0].display_id}  # its static view can be kept current


# --- %%chat --------------------------------------------------------------------------------


def test_chat_runs_a_turn_streams_and_leaves_the_record(shell):
    define_shop(shell)
    value, out = run(shell, "chat", "shop", f"{IMG}\n")
    assert value is None
    agent = shell.user_ns["shop"]
    assert agent.session_state == {"shopping_list": [IMG]}
    assert len(agent.history) == 1 and agent.history[0].message == IMG
    final = out.outputs[-1]
    assert final.update is False  # the record is an output of its own; the live area ends empty
    assert out.outputs[-2].update is True and out.outputs[-2].data == {"text/plain": ""}
    assert final.data == {"text/plain": turn_text(agent.history[0]), "text/html": turn_html(agent.history[0])}
    assert (
        "<img" not in final.data["text/html"]
        and "&lt;img src=x onerror=alert(1)&gt;" in final.data["text/html"]
    )
    assert any("→ add_item" in o.data["text/plain"] for o in out.outputs[:-1])
    # plain Python runs the same agent and history
    agent.run("eggs")
    assert [t.message for t in agent.history] == [IMG, "eggs"]


def test_chat_failure_leaves_the_record_and_says_why_once(shell):
    shell.run_cell("empty = ScriptedModel([])")
    run(shell, "agent", "a --model empty", "Say hi.")
    with capture_output() as out:
        result = shell.run_cell("%%chat a\nhello")
    error = result.error_in_exec
    assert type(error).__name__ == "TurnFailed"
    (line,) = error._render_traceback_()  # what the notebook (and nbval) shows: one line, no wall
    assert line.startswith("%%chat a 'hello': turn 1 failed: ScriptedModel has no reply left")
    record = out.outputs[-1].data["text/plain"]
    assert record.startswith("a · turn 1 · failed") and "no reply left" not in record  # said once


@pytest.mark.parametrize(
    ("line", "body", "expected"),
    [
        ("nobody", "hi", "there is no agent named 'nobody'; define it with %%agent nobody"),
        ("number", "hi", "'number' is a int, not an agent"),
        ("shop", "  \n", "the cell is empty"),
        ("", "hi", "the following arguments are required: name"),
    ],
)
def test_chat_bad_input(shell, line, body, expected):
    define_shop(shell)
    shell.run_cell("number = 3")
    assert expected in usage_error(shell, "chat", line, body)


def test_chat_works_with_an_agent_made_in_plain_python(shell):
    shell.run_cell("from agentnb import Agent\nplain = Agent('plain', ScriptedModel(['hello there']))")
    run(shell, "chat", "plain", "hi")
    assert shell.user_ns["plain"].history[0].content == "hello there"


# --- %agentnb ------------------------------------------------------------------------------


def test_list_and_preview(shell):
    _, out = run(shell, "agentnb", "list")
    assert out.stdout == "no agents yet; define one with %%agent NAME\n"
    define_shop(shell, "--state-in-context")
    _, out = run(shell, "agentnb", "list")
    assert out.stdout == "shop: model scripted; tools: add_item; turns: 0; state keys: shopping_list\n"
    model = shell.user_ns["model"]
    _, out = run(shell, "agentnb", "preview shop add bread")
    system = shell.user_ns["shop"].observe("add bread").system_prompt
    assert system.endswith("<session_state>\n{'shopping_list': []}\n</session_state>")
    assert out.stdout == (
        f"system prompt:\n{system}\n\nuser prompt:\nadd bread\n\nmessages: 2; tools: add_item\n"
        "prompt tokens: ≈19 (instructions ≈3 · session_state ≈13 · user message ≈2) · ≈ estimate: no tokenizer known for scripted\n"
        "template map:\n  {shopping_list} ← session_state.shopping_list\n"
    )
    assert model.requests == [] and len(shell.user_ns["shop"].history) == 0  # no model call


def test_preview_lists_unused_and_hidden_keys_in_the_template_map(shell):
    define_shop(shell, """--state '{"shopping_list": [], "note": "x", "api_key": "k"}' --hide-keys api_key""")
    _, out = run(shell, "agentnb", "preview shop add tea")
    assert out.stdout.endswith(
        "template map:\n  {shopping_list} ← session_state.shopping_list\n"
        "  state keys used by no placeholder or block: note\n  state keys hidden from the model: api_key\n"
    )


def test_hide_keys_keeps_keys_out_of_the_block_and_the_placeholders(shell):
    define_shop(
        shell,
        """--state '{"shopping_list": [], "secret_a": 1, "secret_b": 2, "budget": 3}' --hide-keys 'secret_*, budget' --state-in-context""",
        body="Budget {budget}.",
    )
    shop = shell.user_ns["shop"]
    assert shop.hide_state_keys == ("secret_*", "budget")
    system = shop.observe("x").system_prompt
    assert system == "Budget {budget}.\n\n\n<session_state>\n{'shopping_list': []}\n</session_state>"
    assert "expected one argument" in usage_error(shell, "agent", "other --hide-keys", "Hi.")


def test_fork_from_a_turn_then_diff_the_two(shell):
    define_shop(shell, "--no-session")
    shop = shell.user_ns["shop"]
    for item in ("milk", "eggs", "tea"):
        shop.run(item)
    _, out = run(shell, "agentnb", "fork shop shop_v2 --turn 2")
    assert (
        out.stdout
        == "forked shop into shop_v2 at turn 2 of 3: copied state keys ['shopping_list'], 2 turn(s)\n"
    )
    fork = shell.user_ns["shop_v2"]
    assert fork.session_state == {"shopping_list": ["milk", "eggs"]}
    fork.instructions = "You keep {shopping_list}. No tea."
    fork.run("tea")
    _, out = run(shell, "agentnb", "diff shop shop_v2")
    text = out.outputs[0].data["text/plain"]
    assert text.startswith(
        "compare: shop · turn 3  ↔  shop_v2 · turn 3\nwhy: the system prompt differs in: instructions\n"
    )
    assert "<table" in out.outputs[0].data["text/html"]
    _, out = run(shell, "agentnb", "diff shop:2 shop:3")
    assert (
        out.outputs[0]
        .data["text/plain"]
        .startswith("compare: shop · turn 2  ↔  shop · turn 3\nwhy: the user message differs")
    )


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("fork shop twin --turn 9", "agent 'shop' has no turn 9: it has turns 1 to 1"),
        ("diff shop", "expected %agentnb diff A B"),
        ("diff shop:x shop", "'shop:x': write NAME:N with N a turn number"),
        ("diff shop:4 shop", "agent 'shop' has no turn 4"),
        ("diff shop ghost", "there is no agent named 'ghost'"),
        ("diff shop shop --turn 1", "--turn belongs to %agentnb fork"),
        ("edit shop budget", "expected %agentnb edit NAME PATH JSON"),
        ("edit shop budget ten", "ten is not a JSON value; write e.g. 20"),
        ("edit shop /shopping_list/5 1", "/shopping_list/5: index 5 is out of range"),
        ("remove shop ghost", "there is no state key 'ghost' to remove"),
        ("undo shop", "has no edit to undo since its last turn"),
    ],
)
def test_debugging_commands_bad_input(shell, line, expected):
    define_shop(shell, "--no-session")
    shell.user_ns["shop"].run("milk")
    assert expected in usage_error(shell, "agentnb", line)


def test_edit_remove_and_undo_say_what_the_next_prompt_becomes(shell):
    define_shop(shell, "--no-session --state-in-context")
    shop = shell.user_ns["shop"]
    _, out = run(shell, "agentnb", 'edit shop shopping_list ["oat milk", "tea"]')
    assert out.stdout.splitlines() == [
        'shop: edited ~ /shopping_list: [] → ["oat milk", "tea"] (%agentnb undo shop takes it back)',
        "next system prompt changes in: instructions, session_state (≈17 → ≈25 tokens)",
    ]
    _, out = run(shell, "agentnb", 'edit shop note \'{"text": "a b"}\'')
    assert shop.session_state["note"] == {"text": "a b"}
    assert out.stdout.splitlines()[1] == "next system prompt changes in: session_state (≈25 → ≈32 tokens)"
    _, out = run(shell, "agentnb", "remove shop /shopping_list/0")
    assert shop.session_state["shopping_list"] == ["tea"]
    _, out = run(shell, "agentnb", "undo shop")
    assert out.stdout.splitlines()[0] == 'shop: undid - /shopping_list/0: "oat milk" (removed)'
    assert shop.session_state["shopping_list"] == ["oat milk", "tea"]
    shop.hide_state_keys = ["note"]
    _, out = run(shell, "agentnb", "edit shop note 1")
    assert out.stdout.splitlines()[1] == "next system prompt: unchanged ('note' is hidden from the model)"


def test_save_load_reset_fork(shell, tmp_path):
    (tmp_path / "shop.ipynb").write_text("{}")
    define_shop(shell, "--no-session")
    agent = shell.user_ns["shop"]
    agent.run("milk")
    _, out = run(shell, "agentnb", "save shop")  # beside the notebook, so it survives a restart
    assert out.stdout == "saved shop to shop.agentnb/shop.json: state keys ['shopping_list'], 1 turn(s)\n"
    agent.run("eggs")
    run(shell, "agentnb", "load shop")
    assert agent.session_state == {"shopping_list": ["milk"]} and len(agent.history) == 1
    assert [m.role for m in agent.state.messages] == ["system", "user", "assistant", "tool", "assistant"]

    run(shell, "agentnb", "fork shop twin")
    twin = shell.user_ns["twin"]
    assert twin is not agent and twin.name == "twin"
    assert twin.session_state == agent.session_state and len(twin.history) == 1
    twin.session_state["shopping_list"].append("only in twin")
    assert agent.session_state == {"shopping_list": ["milk"]}

    _, out = run(shell, "agentnb", "reset shop")
    assert out.stdout == "reset shop: state {'shopping_list': []}, no turns\n"
    assert agent.session_state == {"shopping_list": []} and len(agent.history) == 0


def test_a_fork_is_recorded_under_its_own_name(shell, tmp_path):
    (tmp_path / "shop.ipynb").write_text("{}")
    define_shop(shell)
    shell.user_ns["shop"].run("milk")
    run(shell, "agentnb", "fork shop twin")
    shell.user_ns["twin"].run("bread")
    saved = JSONSession(tmp_path / "shop.agentnb")
    twin = Agent("twin", ScriptedModel([]), session_state={"shopping_list": []})
    saved.load_session_state_sync("twin", agent=twin)
    assert twin.session_state == {"shopping_list": ["milk", "bread"]} and len(twin.history) == 2


def test_a_fork_from_a_turn_is_recorded_with_the_turns_it_took(shell, tmp_path):
    (tmp_path / "shop.ipynb").write_text("{}")
    define_shop(shell)
    for item in ("milk", "eggs", "tea"):
        shell.user_ns["shop"].run(item)
    run(shell, "agentnb", "fork shop twin --turn 1")
    shell.user_ns["twin"].run("bread")
    saved = JSONSession(tmp_path / "shop.agentnb")
    twin = Agent("twin", ScriptedModel([]), session_state={"shopping_list": []})
    saved.load_session_state_sync("twin", agent=twin)
    assert twin.session_state == {"shopping_list": ["milk", "bread"]}
    assert [t.message for t in twin.history] == ["milk", "bread"]


def test_defaults_sets_the_model_for_new_agents(shell):
    shell.run_cell("fixed = ScriptedModel(['from the default'])")
    _, out = run(shell, "agentnb", "defaults --model fixed --session-dir sessions")
    assert out.stdout == "defaults: model scripted; session dir sessions\n"
    run(shell, "agent", "a", "Use the default model.")
    assert shell.user_ns["a"].model is shell.user_ns["fixed"]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("", "the following arguments are required: command"),
        ("bogus", "invalid choice: 'bogus'"),
        ("show", "expected %agentnb show NAME"),
        ("preview shop", "expected %agentnb preview NAME MESSAGE"),
        ("fork shop", "expected %agentnb fork NAME NEW"),
        ("fork shop shop", "the name 'shop' is taken"),
        ("fork shop 2x", "'2x' is not a valid Python name"),
        ("load shop", "no saved session 'shop'"),
        ("save ghost", "there is no agent named 'ghost'"),
        ("save shop some/path.json", "PATH is a folder (JSON session files go inside it) or a .db file"),
        ("list --model x", "--model and --session-dir belong to %agentnb defaults"),
        ("defaults --model nonsense", "unknown model 'nonsense'"),
    ],
)
def test_agentnb_bad_input(shell, line, expected):
    define_shop(shell)
    assert expected in usage_error(shell, "agentnb", line)


def test_fork_of_a_plain_python_agent_copies_its_definition_and_state(shell):
    plain = Agent(
        "plain", ScriptedModel(["x", "y"]), instructions="Be {mood}.", session_state={"mood": "calm"}
    )
    plain.run("hi")
    shell.user_ns["plain"] = plain
    _, out = run(shell, "agentnb", "fork plain other")
    other = shell.user_ns["other"]
    assert "forked plain into other" in out.stdout
    assert (other.name, other.instructions, other.session_state, len(other.history)) == (
        "other",
        "Be {mood}.",
        {"mood": "calm"},
        1,
    )
    other.session_state["mood"] = "tense"
    assert plain.session_state == {"mood": "calm"}


def test_session_option_records_and_a_rerun_replays_it(shell, tmp_path):
    folder = tmp_path / "sessions"
    define_shop(shell, f"--session '{folder}'")
    shell.user_ns["shop"].run("milk")
    assert (folder / "shop.json").exists()
    agentnb.load_ipython_extension(shell)  # a new workspace: nothing kept in memory
    _, out = define_shop(shell, f"--session '{folder}'")
    assert out.stdout.splitlines()[0].startswith(
        "shop: recorded in sessions (unchanged turns replay from it;"
    )
    agent = shell.user_ns["shop"]
    assert agent.session_state == {"shopping_list": []} and len(agent.recording.turns) == 1
    agent.run("milk")
    assert agent.history[0].replayed is False  # a ScriptedModel is Python: it answers, like a tool
    assert agent.history[0].duration_ms == agent.recording.turns[0].duration_ms  # the recorded timing
    define_shop(shell, f"--session '{folder}' --fresh")
    assert shell.user_ns["shop"].recording.turns == []


def test_agents_record_beside_the_notebook_and_resume(shell, tmp_path):
    (tmp_path / "analysis.ipynb").write_text("{}")  # nbval and nbconvert run in the notebook's folder
    _, first = define_shop(shell)
    assert first.stdout.splitlines()[0] == (
        "shop: recorded in analysis.agentnb (unchanged turns replay from it; %agentnb resume shop takes it over without re-running)"
    )
    run(shell, "chat", "shop", "eggs")
    assert (tmp_path / "analysis.agentnb" / "shop.json").exists()
    agentnb.load_ipython_extension(shell)  # a restarted kernel: nothing kept in memory
    _, again = define_shop(shell)
    assert again.stdout == first.stdout  # the same output on every run of the notebook
    assert shell.user_ns["shop"].session_state == {"shopping_list": []}
    _, out = run(shell, "agentnb", "resume shop")
    assert out.stdout.startswith(
        "resumed shop from analysis.agentnb/shop.json: state keys ['shopping_list'], 1 turn(s)"
    )
    agent = shell.user_ns["shop"]
    assert agent.session_state == {"shopping_list": ["eggs"]} and agent.history[0].message == "eggs"
    run(shell, "chat", "shop", "milk")  # continues the recording
    saved = JSONSession(tmp_path / "analysis.agentnb")
    check = Agent("shop", ScriptedModel([]), session_state={"shopping_list": []})
    saved.load_session_state_sync("shop", agent=check)
    assert [t.message for t in check.history] == ["eggs", "milk"]


def test_no_session_saves_nothing_and_a_guessed_location_is_announced(shell, tmp_path):
    _, out = define_shop(shell, "--no-session")
    run(shell, "chat", "shop", "eggs")
    assert list(tmp_path.iterdir()) == []
    assert "has no recording" in usage_error(shell, "agentnb", "resume shop")
    _, out = define_shop(shell, "--fresh")
    assert "could not tell which notebook this is" in out.stderr
    assert "shop: recorded in notebook.agentnb" in out.stdout
    assert "--session and --no-session contradict" in usage_error(
        shell, "agent", "a --session x --no-session", "x"
    )


def test_save_and_load_to_a_path(shell, tmp_path):
    define_shop(shell, "--no-session")
    run(shell, "chat", "shop", "milk")
    _, out = run(shell, "agentnb", "save shop saved")
    assert out.stdout.startswith("saved shop to saved/shop.json: state keys ['shopping_list'], 1 turn(s)")
    define_shop(shell, "--no-session --fresh")
    assert shell.user_ns["shop"].session_state == {"shopping_list": []}
    _, out = run(shell, "agentnb", "load shop saved")
    assert shell.user_ns["shop"].session_state == {"shopping_list": ["milk"]}
    assert len(shell.user_ns["shop"].history) == 1
    assert "no saved session" in usage_error(
        shell, "agentnb", "load shop elsewhere"
    ) or "elsewhere" in usage_error(shell, "agentnb", "load shop elsewhere")
    run(shell, "agentnb", "save shop db.sqlite")
    assert (tmp_path / "db.sqlite").exists()


def test_line_form_defines_an_agent_without_instructions(shell):
    shell.run_cell("m = ScriptedModel([])")
    with capture_output():
        shell.run_line_magic(
            "agent",
            "bare --model m --state '{\"shopping_list\": []}' --agentic-state --state-in-context --no-session",
        )
    agent = shell.user_ns["bare"]
    assert agent.instructions is None
    assert agent.observe("hi").system_prompt == "<session_state>\n{'shopping_list': []}\n</session_state>"


def test_session_option_bad_value(shell):
    shell.run_cell("number = 3")
    assert "--session number:" in usage_error(shell, "agent", "a --session number", "x")


# --- %%agent --context -----------------------------------------------------------------------

CONTEXT_SETUP = """
from agentnb import DocumentContext
docs = DocumentContext(["Milk is in aisle 3.", "Eggs are in aisle 5."], label="AISLES")
faq = DocumentContext({"returns": "Returns are accepted within 30 days."}, label="FAQ", passive=False, active=True)
more = [faq]
ctx_model = ScriptedModel([tool_call("retrieve_context", source="FAQ", query="returns"), "Aisle 3."])
"""


def test_agent_context_wires_providers_and_lists_of_them(shell):
    shell.run_cell(CONTEXT_SETUP)
    _, out = run(shell, "agent", "helper --model ctx_model --context docs,more", "Answer shoppers.")
    agent = shell.user_ns["helper"]
    assert list(agent.context_providers) == [shell.user_ns["docs"], shell.user_ns["faq"]]
    assert [t.name for t in agent.all_tools()] == ["list_context_sources", "retrieve_context"]
    assert "Agent('helper'" in out.stdout
    assert agent.run("where is the milk?").content == "Aisle 3."
    turn = agent.history[-1]
    assert [(c.label, c.via, [b.text for b in c.blocks]) for c in turn.context] == [
        ("AISLES", "passive", ["Milk is in aisle 3."]),
        ("FAQ", "tool", ["Returns are accepted within 30 days."]),
    ]
    user = turn.model_calls[0].request["messages"][-1]["content"]
    assert user.endswith("CONTEXT:\n[Context]\n(AISLES) Milk is in aisle 3.")


def test_agent_context_providers_survive_a_rerun_and_a_fork(shell):
    shell.run_cell(CONTEXT_SETUP)
    run(shell, "agent", "helper --model ctx_model --context docs", "Answer shoppers.")
    run(shell, "agent", "helper --model ctx_model --context docs,faq", "Answer shoppers briefly.")
    assert list(shell.user_ns["helper"].context_providers) == [shell.user_ns["docs"], shell.user_ns["faq"]]
    run(shell, "agentnb", "fork helper twin")
    assert list(shell.user_ns["twin"].context_providers) == [shell.user_ns["docs"], shell.user_ns["faq"]]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("a --context ghost", "%%agent: --context names 'ghost', but there is no variable with that name"),
        (
            "a --context number",
            "%%agent: --context number is a int, not a context provider (no get_blocks method)",
        ),
        (
            "a --context mixed",
            "%%agent: --context mixed holds a str, not a context provider (no get_blocks method)",
        ),
        ("a --context docs,", "has an empty name"),
        ("a --context idle", "%%agent a: context provider 'IDLE' is neither passive nor active"),
    ],
)
def test_agent_context_bad_values_are_one_line_usage_errors(shell, line, expected):
    shell.run_cell(CONTEXT_SETUP)
    shell.run_cell(
        "number = 3\nmixed = [docs, 'not a provider']\n"
        "class Idle:\n    context_label = 'IDLE'\n    passive = False\n    active = False\n"
        "    def get_blocks(self, query, top_k=8):\n        return []\nidle = Idle()\n"
    )
    assert expected in usage_error(shell, "agent", line, "instructions")
    assert "a" not in shell.user_ns or not isinstance(shell.user_ns["a"], Agent)


def test_print_response_shows_markdown_in_a_notebook_with_its_html_escaped(shell, monkeypatch):
    shown = []
    monkeypatch.setattr("agentnb.ipython.magics.display", shown.append)
    agent = Agent("md", ScriptedModel(["# Title\n\n- **one** <img src=x onerror=alert(1)>"]), markdown=True)
    with capture_output() as out:
        agent.print_response("hi", stream=True)
    (markdown,) = shown
    assert markdown._repr_markdown_() == "# Title\n\n- **one** &lt;img src=x onerror=alert(1)&gt;"
    assert out.stdout == ""
    plain = Agent("plain", ScriptedModel(["just text"]))
    with capture_output() as out:
        plain.print_response("hi", stream=True)
    assert out.stdout == "just text\n"


# --- the first hour: errors that say what to do ----------------------------------------------


def test_a_syntax_error_in_a_tool_cell_names_this_cell_and_its_own_line(shell):
    with capture_output() as captured:
        result = shell.run_cell("%%tool\ndef f(a: int) -> int:\n    return a +\n", store_history=True)
    number = shell.execution_count - 1  # the cell that just ran
    assert not result.success
    out = captured.stdout + captured.stderr
    assert f"Cell In[{number}], line 3" in out, out  # the %%tool line is line 1
    assert f"In[{number + 1}]" not in out
    assert "line 3 of the cell is not valid Python (invalid syntax); no tools were registered" in out
    assert "f" not in shell.user_ns or not isinstance(shell.user_ns.get("f"), Tool)


def test_an_error_raised_by_a_tool_cell_points_at_its_line_and_a_tool_keeps_the_cell_as_its_file(shell):
    with capture_output() as captured:
        shell.run_cell(
            "%%tool\ndef g(a: int) -> int:\n    '''Divide.'''\n    return 1 // a\ny = 1 // 0\n",
            store_history=True,
        )
    number = shell.execution_count - 1
    assert f"Cell In[{number}], line 5" in captured.stdout + captured.stderr
    assert "tool_magic.py" not in captured.stdout + captured.stderr  # no frame of agentnb's own
    with capture_output():
        shell.run_cell(
            "%%tool\ndef h(a: int) -> int:\n    '''Divide.'''\n    return 1 // a\n", store_history=True
        )
    tool_cell = shell.execution_count - 1
    with capture_output() as captured:
        shell.run_cell("h(0)", store_history=True)
    assert f"Cell In[{tool_cell}], line 4, in h" in captured.stdout + captured.stderr


@pytest.mark.parametrize(
    ("kind", "line", "body", "hint"),
    [
        ("agent", "shop --modle model", "x", "did you mean --model?"),
        ("agent", "shop --state-in-contxt", "x", "did you mean --state-in-context?"),
        (
            "tool",
            "--output-to-state total=",
            "def f() -> int:\n    return 1\n",
            "did you mean --outputs-to-state?",
        ),
        ("agentnb", "forkk shop shop2", "", "did you mean fork?"),
    ],
)
def test_a_misspelled_option_or_command_names_the_closest_one(shell, kind, line, body, hint):
    text = usage_error(shell, kind, line, body)
    assert hint in text, text


def test_an_option_nothing_resembles_gets_no_guess(shell):
    text = usage_error(shell, "agent", "shop --zzzzqq 1", "x")
    assert "unrecognized arguments: --zzzzqq 1" in text and "did you mean" not in text


@pytest.mark.parametrize(
    ("module", "spec", "extra"),
    [("openai", "openai:gpt-5-mini", "openai"), ("openai", "openai-responses:gpt-5-mini", "openai")],
)
def test_a_model_string_whose_extra_is_missing_names_the_extra(shell, monkeypatch, module, spec, extra):
    monkeypatch.setitem(__import__("sys").modules, module, None)  # as if not installed
    run(shell, "tool", "", ADD_ITEM)
    text = usage_error(shell, "agent", f"shop --model {spec}", "x")
    assert f'pip install "jupyter-agentnb[{extra}]"' in text and f"needs the {extra!r} extra" in text, text
