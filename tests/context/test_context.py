"""Context providers: passive injection into CONTEXT, active retrieval tools, built-in providers."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agentnb import Agent, ContextBlock, DocumentContext, ScriptedModel, tool_call
from agentnb.context import BM25, ContextQuery, ConversationMemory, DataFrameContext, render_context, tokenize
from agentnb.errors import ConfigurationError, ContextProviderError
from agentnb.events import EVENT_ADAPTER, ContextRetrieved, PromptRendered


class DummyProvider:
    """Seed 004, example B."""

    context_label = "MEM"
    passive = True
    active = False
    supports_passive = True
    supports_active = True

    def __init__(self) -> None:
        self.queries: list[ContextQuery] = []

    def get_blocks(self, query: ContextQuery, *, top_k: int = 8) -> list[ContextBlock]:
        self.queries.append(query)
        return [ContextBlock(text="memory snippet", score=0.9)]


class ActiveProvider:
    """Seed 004, example C."""

    context_label = "RAG"
    passive = False
    active = True
    supports_passive = True
    supports_active = True

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def get_blocks(self, query: ContextQuery, *, top_k: int = 8) -> list[ContextBlock]:
        self.calls.append((query.query_text, top_k))
        return [ContextBlock(text=f"hit for: {query.query_text}", score=0.8)]


# -- seed 004 -------------------------------------------------------------------------------


def test_seed_example_b_passive_block_lands_in_context_field():
    model = ScriptedModel()  # no steps: a model call would raise
    provider = DummyProvider()
    agent = Agent(
        name="writer",
        model=model,
        instructions="你是一个简洁的写作者。",
        prompt_template="主题：{topic}",
        memories=[provider],
    )
    _, user_prompt, messages = agent.observe({"topic": "解释 DAG"})
    assert user_prompt.endswith("CONTEXT:\n[Context]\n(MEM) memory snippet")
    assert user_prompt.startswith("MESSAGE TO YOU: 主题：解释 DAG\n\n")
    assert [m["role"] for m in messages] == ["system", "user"]
    assert model.requests == []
    # The provider got a ContextQuery built from the rendered message.
    (query,) = provider.queries
    assert isinstance(query, ContextQuery)
    assert query.query_text == "主题：解释 DAG"
    assert query.inputs == {"topic": "解释 DAG"}


def test_seed_example_c_active_provider_adds_tools_and_is_not_queried_up_front():
    model = ScriptedModel()
    provider = ActiveProvider()
    agent = Agent(
        name="writer",
        model=model,
        instructions="你是一个简洁的写作者。",
        prompt_template="{query}",
        retrievers=[provider],
    )
    observation = agent.observe({"query": "MASFactory context blocks"})
    names = [t.__name__ for t in agent.tools]  # as seed 004's example C prints them
    assert names == [t.name for t in agent.all_tools()] == ["list_context_sources", "retrieve_context"]
    assert [t["function"]["name"] for t in observation.tools] == ["list_context_sources", "retrieve_context"]
    assert "CONTEXT" not in observation.user_prompt
    assert provider.calls == []
    assert model.requests == []


def test_plain_chat_path_is_unchanged_without_providers_or_formatters():
    agent = Agent(model=ScriptedModel(), instructions="Be brief.")
    observation = agent.observe("hello {there}")
    assert observation.user_prompt == "hello {there}"
    assert observation.context == []
    assert [t["function"]["name"] for t in observation.tools] == []


# -- passive --------------------------------------------------------------------------------


def test_passive_run_records_blocks_and_emits_event_before_the_prompt():
    docs = DocumentContext(["The DAG scheduler orders nodes.", "Bananas are yellow."], label="DOCS")
    model = ScriptedModel(["ok"])
    agent = Agent(model=model, context_providers=[docs])
    result = agent.run("How does the DAG scheduler work?")
    sent = model.requests[0].last_user_message
    assert sent == (
        "MESSAGE TO YOU: How does the DAG scheduler work?\n\n"
        "CONTEXT:\n[Context]\n(DOCS) The DAG scheduler orders nodes."
    )
    turn = result.turn
    (retrieved,) = turn.context
    assert retrieved.via == "passive"
    assert retrieved.label == "DOCS"
    assert retrieved.provider == "DocumentContext"
    assert retrieved.query == "How does the DAG scheduler work?"
    assert [b.text for b in retrieved.blocks] == ["The DAG scheduler orders nodes."]
    assert retrieved.blocks[0].score > 0
    assert retrieved.blocks[0].source == "doc 0"
    kinds = [e.kind for e in turn.events]
    assert kinds.index("context_retrieved") < kinds.index("prompt_rendered")
    prompt = next(e for e in turn.events if isinstance(e, PromptRendered))
    assert prompt.user_prompt == sent
    again = EVENT_ADAPTER.validate_json(EVENT_ADAPTER.dump_json(retrieved))
    assert again == retrieved


def test_several_passive_providers_render_in_one_context_field_and_empty_ones_add_nothing():
    class Second:
        context_label = "NOTES"

        def get_blocks(self, query, top_k=8):
            return ["first note", ContextBlock(text="second note")]

    class Empty:
        context_label = "EMPTY"

        def get_blocks(self, query, top_k=8):
            return []

    agent = Agent(model=ScriptedModel(), context_providers=[DummyProvider(), Empty(), Second()])
    observation = agent.observe("hi")
    assert observation.user_prompt == (
        "MESSAGE TO YOU: hi\n\nCONTEXT:\n[Context]\n(MEM) memory snippet\n(NOTES) first note\n(NOTES) second note"
    )
    assert [c.label for c in observation.context] == ["MEM", "EMPTY", "NOTES"]

    quiet = Agent(model=ScriptedModel(), context_providers=[Empty()])
    assert quiet.observe("hi").user_prompt == "MESSAGE TO YOU: hi"


def test_query_is_a_str_so_plain_string_providers_work():
    seen = []

    class Lower:
        context_label = "L"

        def get_blocks(self, query, top_k=8):
            seen.append(query.lower())
            return []

    Agent(model=ScriptedModel(), context_providers=[Lower()]).observe("MiXeD Case")
    assert seen == ["mixed case"]


def test_a_failing_provider_fails_the_run_with_a_clear_error():
    class Broken:
        context_label = "BROKEN"

        def get_blocks(self, query, top_k=8):
            raise RuntimeError("index missing")

    agent = Agent(model=ScriptedModel(["never"]), context_providers=[Broken()])
    with pytest.raises(
        ContextProviderError, match=r"'BROKEN' \(Broken\) failed in get_blocks: RuntimeError: index missing"
    ):
        agent.observe("hi")
    with pytest.raises(ContextProviderError):
        agent.run("hi")
    turn = agent.history[-1]
    assert turn.status == "failed"
    assert turn.events[-1].kind == "run_failed"
    assert turn.events[-1].error_type == "ContextProviderError"
    assert agent.model.requests == []


def test_bad_providers_are_rejected_with_the_fix():
    with pytest.raises(ConfigurationError, match="needs a method get_blocks"):
        Agent(model=ScriptedModel(), context_providers=[object()])

    class Off:
        context_label = "OFF"
        passive = False
        active = False

        def get_blocks(self, query, top_k=8):
            return []

    with pytest.raises(ConfigurationError, match="neither passive nor active"):
        Agent(model=ScriptedModel(), memories=[Off()])

    class Garbage:
        context_label = "G"

        def get_blocks(self, query, top_k=8):
            return [42]

    agent = Agent(model=ScriptedModel(), context_providers=[Garbage()])
    with pytest.raises(ContextProviderError, match="must return ContextBlock"):
        agent.observe("hi")


# -- active ---------------------------------------------------------------------------------


def test_model_lists_sources_then_retrieves_and_the_turn_keeps_the_call():
    provider = ActiveProvider()
    model = ScriptedModel(
        [
            tool_call("list_context_sources"),
            tool_call("retrieve_context", source="RAG", query="dag scheduling", top_k=2),
            "Done.",
        ]
    )
    agent = Agent(model=model, instructions="Use the sources.", retrievers=[provider])
    result = agent.run("How are DAGs scheduled?")
    assert result.content == "Done."
    assert provider.calls == [("dag scheduling", 2)]

    listed, retrieved = result.tool_calls
    assert json.loads(listed.result) == {
        "sources": [{"name": "RAG", "label": "RAG", "type": "ActiveProvider"}]
    }
    payload = json.loads(retrieved.result)
    assert payload == {
        "provider": "RAG",
        "query": "dag scheduling",
        "blocks": [{"text": "hit for: dag scheduling", "score": 0.8, "source": None, "metadata": {}}],
        "rendered": "[Context]\n(RAG) hit for: dag scheduling",
    }
    # The model saw the result in its next request.
    assert model.requests[2].tool_results()[-1]["content"] == retrieved.result

    (event,) = result.turn.context
    assert event.via == "tool"
    assert event.label == "RAG"
    assert event.query == "dag scheduling"
    assert event.top_k == 2
    assert event.rendered == "[Context]\n(RAG) hit for: dag scheduling"
    kinds = [e.kind for e in result.turn.events]
    at = kinds.index("context_retrieved")
    assert kinds[at - 1] == "tool_call_started" and kinds[at + 1] == "tool_call_finished"
    # Active-only providers leave the user message alone.
    assert model.requests[0].last_user_message == "How are DAGs scheduled?"


def test_retrieve_errors_go_back_to_the_model_and_the_run_goes_on():
    first, second = ActiveProvider(), ActiveProvider()
    model = ScriptedModel(
        [
            [
                tool_call("retrieve_context", source="NOPE", query="x"),
                tool_call("retrieve_context", source="RAG", query="x"),
                tool_call("retrieve_context", source="RAG#2", query="x"),
            ],
            "ok",
        ]
    )
    agent = Agent(model=model, retrievers=[first, second])
    result = agent.run("q")
    unknown, ambiguous, good = result.tool_calls
    assert unknown.error_kind == "tool_error"
    assert "unknown context source 'NOPE'; available: ['RAG#1', 'RAG#2']" in unknown.error
    assert "ambiguous; choose one of ['RAG#1', 'RAG#2']" in ambiguous.error
    assert good.error is None
    assert first.calls == [] and second.calls == [("x", 8)]
    assert [e.label for e in result.turn.context] == ["RAG#2"]


def test_context_tool_names_step_aside_for_a_user_tool_of_the_same_name():
    def retrieve_context(topic: str) -> str:
        """The user's own tool."""
        return topic

    agent = Agent(model=ScriptedModel(), tools=[retrieve_context], retrievers=[ActiveProvider()])
    assert [t.name for t in agent.all_tools()] == [
        "retrieve_context",
        "list_context_sources",
        "agentnb_retrieve_context",
    ]


def test_a_provider_can_be_both_passive_and_active():
    docs = DocumentContext({"a": "alpha beta", "b": "gamma delta"}, label="KB", passive=True, active=True)
    model = ScriptedModel([tool_call("retrieve_context", source="KB", query="gamma"), "fine"])
    agent = Agent(model=model, context_providers=[docs])
    result = agent.run("alpha?")
    assert model.requests[0].last_user_message.endswith("CONTEXT:\n[Context]\n(KB) alpha beta")
    assert [(e.via, [b.source for b in e.blocks]) for e in result.turn.context] == [
        ("passive", ["a"]),
        ("tool", ["b"]),
    ]


# -- built-in providers -----------------------------------------------------------------------


def test_bm25_ranks_matches_and_keeps_weights_positive_in_tiny_corpora():
    index = BM25(["the cat sat", "the dog sat", "a bird flew"])
    # "sat" is in 2 of 3 documents: the classic IDF would be negative, Lucene's stays > 0.
    top = index.top("sat", 0)
    assert [i for i, _ in top] == [0, 1]
    assert all(score > 0 for _, score in top)
    assert index.top("dog", 5)[0][0] == 1
    assert index.top("zebra", 5) == []
    assert BM25([]).top("x", 3) == []


def test_tokenize_splits_cjk_characters():
    assert tokenize("解释 DAG 调度") == ["解", "释", "dag", "调", "度"]


def test_document_context_returns_best_matches_first():
    docs = DocumentContext(
        ["Paris is the capital of France.", "Berlin is in Germany.", "France exports wine and cheese."],
        top_k=2,
    )
    blocks = docs.get_blocks(ContextQuery("capital of France"), top_k=2)
    assert [b.text for b in blocks] == ["Paris is the capital of France.", "France exports wine and cheese."]
    assert blocks[0].score > blocks[1].score
    assert docs.get_blocks("quantum", top_k=3) == []
    docs.add("Quantum physics is hard.", source="physics")
    assert [b.source for b in docs.get_blocks("quantum", top_k=3)] == ["physics"]
    with pytest.raises(ConfigurationError, match="a document must be a str or a ContextBlock"):
        docs.add(3)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="top_k must be"):
        DocumentContext([], top_k=-1)


def test_dataframe_context_ranks_rows_and_sees_later_edits():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(
        {
            "city": ["Paris", "Lyon", "Berlin"],
            "country": ["France", "France", "Germany"],
            "pop": [2100000, 513000, 3600000],
        }
    )
    table = DataFrameContext(frame, label="CITIES", columns=["city", "country"])
    blocks = table.get_blocks("cities in Germany", top_k=5)
    assert [b.text for b in blocks] == ["city: Berlin, country: Germany"]
    assert blocks[0].source == "row 2"
    assert blocks[0].metadata == {"row": 2} and type(blocks[0].metadata["row"]) is int
    frame.loc[3] = ["Munich", "Germany", 1500000]
    assert [b.source for b in table.get_blocks("Germany", top_k=5)] == ["row 2", "row 3"]

    agent = Agent(model=ScriptedModel(["ok"]), context_providers=[table])
    result = agent.run("Which city is in Germany?")
    event = result.turn.context[0]
    assert EVENT_ADAPTER.validate_json(EVENT_ADAPTER.dump_json(event)) == event
    with pytest.raises(ConfigurationError, match=r"no column\(s\) \['area'\]"):
        DataFrameContext(frame, columns=["area"])
    with pytest.raises(ConfigurationError, match="needs a pandas DataFrame"):
        DataFrameContext([1, 2])


def test_conversation_memory_remembers_the_agents_turns():
    memory = ConversationMemory(top_k=2)
    model = ScriptedModel(["Nice to meet you, Ada.", "Your name is Ada.", "Bye."])
    agent = Agent(model=model, memories=[memory])
    agent.run("My name is Ada.")
    assert model.requests[0].last_user_message == "MESSAGE TO YOU: My name is Ada."
    agent.run("What is my name?")
    assert model.requests[1].last_user_message == (
        "MESSAGE TO YOU: What is my name?\n\n"
        "CONTEXT:\n[Context]\n(MEMORY) user: My name is Ada.\nassistant: Nice to meet you, Ada."
    )
    agent.run("Thanks")
    assert len(memory) == 3
    blocks = memory.get_blocks("x", top_k=2)
    assert [b.source for b in blocks] == ["turn 1", "turn 2"]

    saved = memory.state_dict()
    restored = ConversationMemory(mode="relevant")
    restored.load_state_dict(json.loads(json.dumps(saved)))
    assert [b.source for b in restored.get_blocks("nice to meet", top_k=1)] == ["turn 0"]
    with pytest.raises(ConfigurationError, match="expects"):
        restored.load_state_dict({"turns": "nope"})


def test_conversation_memory_keeps_at_most_max_turns():
    memory = ConversationMemory(max_turns=2)
    for i in range(4):
        memory.add(f"u{i}", f"a{i}")
    assert [t["user"] for t in memory.turns] == ["u2", "u3"]


def test_render_context_matches_masfactory():
    blocks = [ContextBlock(text="one"), ContextBlock(text="two  ")]
    assert render_context([("A", blocks), ("B", [])]) == "[Context]\n(A) one\n(A) two"
    assert render_context([("A", [])]) == ""


def test_context_module_does_not_import_pandas():
    code = "import sys, agentnb, agentnb.context; print('pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_context_retrieved_is_exported_event():
    assert ContextRetrieved(run_id="r", label="L").kind == "context_retrieved"
