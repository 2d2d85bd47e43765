"""Seed 000 in a plain script: Agno-style agentic session state on the offline scripted model.

python examples/shopping_list.py
"""

from agentnb import Agent, ScriptedModel, tool_call

model = ScriptedModel(
    [
        tool_call("update_session_state", session_state_updates={"shopping_list": ["milk", "eggs", "bread"]}),
        "I've added milk, eggs, and bread to your shopping list.",
        "You still need milk and bread; eggs are done.",
    ]
)
agent = Agent(
    name="shop",
    model=model,
    session_state={"shopping_list": []},
    add_session_state_to_context=True,
    enable_agentic_state=True,
)

for message in (
    "Add milk, eggs, and bread to the shopping list",
    "I picked up the eggs, now what's on my list?",
):
    prompt = agent.observe(message).system_prompt
    result = agent.run(message)
    print(f"> {message}")
    print(f"system prompt sent:\n{prompt}")
    for call in result.tool_calls:
        print(f"tool {call.name}({call.arguments}) -> {call.result}")
    for change in result.turn.state_changes:
        print(f"state change by {change.cause.label()}: {list(change.patch)}")
    print(f"answer: {result.content}")
    print(f"state: {agent.session_state}\n")
