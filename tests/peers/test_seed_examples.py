"""Every code example of the seeds, run with only its imports changed.

Seeds 000 and 001 describe Agno cookbook scripts (cookbook/02_agents/05_state_and_session/
agentic_session_state.py and dynamic_session_state.py in agno-agi/agno); they run here as
written, with their ``agno`` imports pointed at agentnb and the OpenAI model swapped for a
ScriptedModel (the script's ``OpenAIResponses`` name is bound to a factory that returns it).
Seed 004's MASFactory blocks run verbatim the same way; seed 002's Haystack snippets are in
test_seed_examples_haystack.py. Seed 003 has no code block: its SOP's statements are checked.
The scripts are kept as text and executed, so what runs is exactly what the seed shows.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentnb import JSONSession, ScriptedModel, Toolkit, tool_call
from agentnb.sessions import StateModule

# --- seed 000: cookbook/02_agents/05_state_and_session/agentic_session_state.py ---------------

AGENTIC_SESSION_STATE = """
from agno.agent import Agent
from agno.db.sqlite import SqliteDb
from agno.models.openai import OpenAIResponses

db = SqliteDb(db_file="tmp/agents.db")
agent = Agent(
    model=OpenAIResponses(id="gpt-5-mini"),
    db=db,
    session_state={"shopping_list": []},
    add_session_state_to_context=True,  # Required so the agent is aware of the session state
    enable_agentic_state=True,
)

if __name__ == "__main__":
    agent.print_response("Add milk, eggs, and bread to the shopping list")

    agent.print_response("I picked up the eggs, now what's on my list?")

    print(f"Session state: {agent.get_session_state()}")
"""

SEED_000_TOOL = {
    "type": "function",
    "function": {
        "name": "update_session_state",
        "description": "Update the shared session state. Provide any updates as a dictionary of key-value pairs.\n"
        'Example:\n    "session_state_updates": {"shopping_list": ["milk", "eggs", "bread"]}',
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


# seed 000 (agentic_session_state.py, the whole script)
def test_seed_000_agentic_session_state_script(
    run_seed_script: Callable[..., dict[str, Any]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    model = ScriptedModel(
        [
            tool_call(
                "update_session_state", session_state_updates={"shopping_list": ["milk", "eggs", "bread"]}
            ),
            "I've added milk, eggs, and bread to your shopping list.",
            "You still need milk and bread.",
        ]
    )
    run_seed_script(
        AGENTIC_SESSION_STATE,
        {
            "from agno.agent import Agent": "from agentnb import Agent",
            "from agno.db.sqlite import SqliteDb": "from agentnb.sessions import SqliteDb",
            "from agno.models.openai import OpenAIResponses": "",
        },
        {"OpenAIResponses": lambda id: model},
    )
    out = capsys.readouterr().out
    assert model.requests[0].messages == [
        {"role": "system", "content": "<session_state>\n{'shopping_list': []}\n</session_state>"},
        {"role": "user", "content": "Add milk, eggs, and bread to the shopping list"},
    ]
    assert model.requests[0].tools == [SEED_000_TOOL]
    assert (
        model.requests[1].messages[-1]["content"]
        == "Updated session state: {'shopping_list': ['milk', 'eggs', 'bread']}"
    )
    assert (
        model.requests[2].messages[0]["content"]
        == "<session_state>\n{'shopping_list': ['milk', 'eggs', 'bread']}\n</session_state>"
    )
    assert "I've added milk, eggs, and bread to your shopping list." in out
    assert "You still need milk and bread." in out
    assert "Session state: {'shopping_list': ['milk', 'eggs', 'bread']}" in out
    assert (tmp_path / "tmp" / "agents.db").exists()


# --- seed 001: cookbook/02_agents/05_state_and_session/dynamic_session_state.py ---------------

DYNAMIC_SESSION_STATE = """
import json
from typing import Any, Dict

from agno.agent import Agent
from agno.db.in_memory import InMemoryDb
from agno.models.openai import OpenAIResponses
from agno.run import RunContext
from agno.tools.toolkit import Toolkit
from agno.utils.log import log_info, log_warning


class CustomerDBTools(Toolkit):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register(self.process_customer_request)

    def process_customer_request(
        self,
        agent: Agent,
        customer_id: str,
        action: str = "retrieve",
        name: str = "John Doe",
    ):
        log_warning("Tool called, this shouldn't happen.")
        return "This should not be seen."


def customer_management_hook(run_context: RunContext, arguments: Dict[str, Any]):
    if run_context.session_state is None:
        run_context.session_state = {}

    action = arguments.get("action", "retrieve")
    cust_id = arguments.get("customer_id")
    name = arguments.get("name", None)

    if not cust_id:
        raise ValueError("customer_id is required.")

    if action == "create":
        run_context.session_state["customer_profiles"][cust_id] = {"name": name}
        log_info(f"Hook: UPDATED session_state for customer '{cust_id}'.")
        return f"Success! Customer {cust_id} has been created."

    if action == "retrieve":
        profile = run_context.session_state.get("customer_profiles", {}).get(cust_id)
        if profile:
            log_info(f"Hook: FOUND customer '{cust_id}' in session_state.")
            return f"Profile for {cust_id}: {json.dumps(profile)}"
        else:
            raise ValueError(f"Customer '{cust_id}' not found.")

    log_info(f"Session state: {run_context.session_state}")


def run_test():
    agent = Agent(
        model=OpenAIResponses(id="gpt-5.2"),
        tools=[CustomerDBTools()],
        tool_hooks=[customer_management_hook],
        session_state={"customer_profiles": {"123": {"name": "Jane Doe"}}},
        instructions="Your profiles: {customer_profiles}. Use `process_customer_request`. Use either create or retrieve as action for the tool.",
        resolve_in_context=True,
        db=InMemoryDb(),
    )

    prompt = "First, create customer 789 named 'Tom'. Then, retrieve Tom's profile. Step by step."
    log_info(f" Prompting: '{prompt}'")
    agent.print_response(prompt, stream=False)

    log_info("\\n--- TEST ANALYSIS ---")
    log_info(
        "Check logs for the second tool call. The system prompt will NOT contain customer '789'."
    )


if __name__ == "__main__":
    run_test()
"""

SEED_001_PROMPT = (
    "Your profiles: {'123': {'name': 'Jane Doe'}}. Use `process_customer_request`. "
    "Use either create or retrieve as action for the tool."
)


# seed 001 (dynamic_session_state.py, the whole script)
def test_seed_001_dynamic_session_state_script(
    run_seed_script: Callable[..., dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = ScriptedModel(
        [
            tool_call("process_customer_request", customer_id="789", action="create", name="Tom"),
            tool_call("process_customer_request", customer_id="789", action="retrieve"),
            "Customer 789 (Tom) was created and retrieved.",
        ]
    )
    with caplog.at_level(logging.INFO):
        run_seed_script(
            DYNAMIC_SESSION_STATE,
            {
                "from agno.agent import Agent": "from agentnb import Agent",
                "from agno.db.in_memory import InMemoryDb": "from agentnb.sessions import InMemoryDb",
                "from agno.models.openai import OpenAIResponses": "",
                "from agno.run import RunContext": "from agentnb import RunContext",
                "from agno.tools.toolkit import Toolkit": "from agentnb import Toolkit",
                "from agno.utils.log import log_info, log_warning": "from logging import info as log_info, warning as log_warning",
            },
            {"OpenAIResponses": lambda id: model},
        )
    assert [r.messages[0]["content"] for r in model.requests] == [SEED_001_PROMPT] * 3
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
    assert [m["content"] for m in model.requests[2].messages if m["role"] == "tool"] == [
        "Success! Customer 789 has been created.",
        'Profile for 789: {"name": "Tom"}',
    ]
    assert "Tool called, this shouldn't happen." not in caplog.text
    assert "Hook: FOUND customer '789' in session_state." in caplog.text
    assert "Customer 789 (Tom) was created and retrieved." in capsys.readouterr().out


# --- seed 003: AgentScope session SOP (no code block; its statements) --------------------------


class _Plan(StateModule):
    def __init__(self) -> None:
        super().__init__()
        self.steps = ["draft"]
        self.register_state("steps")


# seed 003, "调用 save_session_state("run-1", agent=agent, toolkit=tk, plan=plan)"; "JSONSession 构建
# <save_dir>/<session_id>.json 并确保目录存在"; "当文件缺失且 allow_not_exist=False 时抛 ValueError"
def test_seed_003_session_sop(tmp_path: Path) -> None:
    from agentnb import Agent

    def note(text: str) -> str:
        """Take a note."""
        return text

    save_dir = tmp_path / "not" / "yet"
    session = JSONSession(save_dir=str(save_dir))
    agent = Agent(name="friday", model=ScriptedModel(["ok"]), session_state={"n": 1})
    agent.run("hi")
    tk, plan = Toolkit(name="tk", tools=[note]), _Plan()
    asyncio.run(session.save_session_state("run-1", agent=agent, toolkit=tk, plan=plan))
    saved = json.loads((save_dir / "run-1.json").read_text(encoding="utf-8"))
    assert {"agent", "toolkit", "plan"} <= set(saved)
    assert saved["plan"] == {"steps": ["draft"]}

    fresh = Agent(name="friday", model=ScriptedModel([]))
    fresh_plan = _Plan()
    fresh_plan.steps = []
    asyncio.run(
        session.load_session_state(
            "run-1", agent=fresh, toolkit=Toolkit(name="tk", tools=[note]), plan=fresh_plan
        )
    )
    assert fresh.session_state == {"n": 1}
    assert fresh_plan.steps == ["draft"]
    assert len(fresh.history) == 1

    asyncio.run(session.save_session_state("run-1", plan=fresh_plan))  # the same id again overwrites
    with pytest.raises(ValueError):
        asyncio.run(session.load_session_state("run-2", allow_not_exist=False, agent=fresh))


# --- seed 004: MASFactory Observe → Think → Act, examples A, B and C ---------------------------

MASFACTORY_IMPORTS = {
    "from masfactory.adapters.context.types import ContextBlock, ContextQuery": "from agentnb.context import ContextBlock, ContextQuery",
    "from masfactory import Agent": "from agentnb import Agent",
}

EXAMPLE_A = """
from masfactory import Agent

agent = Agent(
    name="writer",
    model=object(),  # 这里只演示 observe()，不需要可用的 model
    instructions="你是一个简洁的写作者。",
    prompt_template="主题：{topic}",
)

system_prompt, user_prompt, messages = agent.observe({"topic": "MASFactory 是什么？"})

print(system_prompt)
print("----")
print(user_prompt)
print("----")
print([m["role"] for m in messages])
"""

EXAMPLE_B = """
from masfactory import Agent
from masfactory.adapters.context.types import ContextBlock, ContextQuery

class DummyProvider:
    context_label = "MEM"
    passive = True
    active = False
    supports_passive = True
    supports_active = True

    def get_blocks(self, query: ContextQuery, *, top_k: int = 8) -> list[ContextBlock]:
        return [ContextBlock(text="memory snippet", score=0.9)]

agent = Agent(
    name="writer",
    model=object(),
    instructions="你是一个简洁的写作者。",
    prompt_template="主题：{topic}",
    memories=[DummyProvider()],
)

_, user_prompt, _ = agent.observe({"topic": "解释 DAG"})
print(user_prompt)
"""

EXAMPLE_C = """
from masfactory import Agent
from masfactory.adapters.context.types import ContextBlock, ContextQuery

class ActiveProvider:
    context_label = "RAG"
    passive = False
    active = True
    supports_passive = True
    supports_active = True

    def get_blocks(self, query: ContextQuery, *, top_k: int = 8) -> list[ContextBlock]:
        return [ContextBlock(text=f"hit for: {query.query_text}", score=0.8)]

agent = Agent(
    name="writer",
    model=object(),
    instructions="你是一个简洁的写作者。",
    prompt_template="{query}",
    retrievers=[ActiveProvider()],
)

agent.observe({"query": "MASFactory context blocks"})
print([t.__name__ for t in agent.tools])
"""


# seed 004, example A (verbatim)
def test_seed_004_example_a(
    run_seed_script: Callable[..., dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    run_seed_script(
        EXAMPLE_A, {"from masfactory import Agent": MASFACTORY_IMPORTS["from masfactory import Agent"]}
    )
    system_prompt, user_prompt, roles = capsys.readouterr().out.rstrip("\n").split("\n----\n")
    assert system_prompt == "你是一个简洁的写作者。"
    assert user_prompt.startswith("MESSAGE TO YOU: 主题：MASFactory 是什么？")
    assert "RESPONSE FORMAT REQUIREMENTS" in user_prompt
    assert roles == "['system', 'user']"


# seed 004, example B (verbatim)
def test_seed_004_example_b(
    run_seed_script: Callable[..., dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    run_seed_script(EXAMPLE_B, MASFACTORY_IMPORTS)
    assert capsys.readouterr().out.endswith("CONTEXT:\n[Context]\n(MEM) memory snippet\n")


# seed 004, example C (verbatim)
def test_seed_004_example_c(
    run_seed_script: Callable[..., dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    run_seed_script(EXAMPLE_C, MASFACTORY_IMPORTS)
    names = capsys.readouterr().out.strip()
    assert "list_context_sources" in names and "retrieve_context" in names
