"""The attributes of each span of a run: GenAI conventions, OpenInference, and agentnb's own.

Content (prompts, messages, tool arguments and results, retrieved text) is added only when
``content`` is true; credentials are dropped whatever the setting (``content.scrub``).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..events import (
    ContextRetrieved,
    ModelResponded,
    PromptRendered,
    RunFailed,
    RunPaused,
    RunResumed,
    StateChanged,
    Usage,
)
from ..models.credentials import Redactor
from . import conventions as sc
from .content import (
    described,
    error_summary,
    genai_message,
    genai_output,
    oi_messages,
    oi_output,
    request_messages,
    scrub,
    text_of,
    to_json,
)
from .outline import ChatCall, Hook, RunOutline, ToolRun

Attributes = dict[str, Any]

PROVIDERS = {
    "openai": "openai",
    "openai-responses": "openai",
    "local": "llama_cpp",
    "scripted": "agentnb.scripted",
    "replay": "agentnb.replay",
}
"""A model label's prefix and the ``gen_ai.provider.name`` it stands for (local models are not
claimed as ``openai``: backends price and label spans by the provider)."""

NETWORK_PROVIDERS = frozenset({"openai", "llama_cpp"})
"""Providers reached over HTTP: their chat spans are CLIENT spans."""


@dataclass(frozen=True)
class SpanSettings:
    """What a run's spans may carry."""

    content: bool = False
    """Prompts, messages, tool arguments and results, retrieved text (opt-in)."""
    session_id: str | None = None
    """``gen_ai.conversation.id`` / ``session.id``: the agent's session or notebook."""
    tool_descriptions: Mapping[str, str] | None = None
    """Tool name -> description, when the agent is at hand."""
    tool_parameters: Mapping[str, Mapping[str, Any]] | None = None
    """Tool name -> JSON schema of its arguments, when the agent is at hand."""
    secrets: tuple[str, ...] = ()
    """The credentials the run's models are configured with (redacted from every attribute)."""
    server: tuple[str, int | None] | None = None
    """The model server's host and port (``server.address`` / ``server.port`` on chat spans)."""

    @functools.cached_property
    def redactor(self) -> Redactor:
        """What removes ``secrets`` from text."""
        return Redactor(self.secrets)


def provider_of(label: str) -> str:
    """``gen_ai.provider.name`` for a model label (``openai:gpt-4o`` -> ``openai``)."""
    prefix = label.split(":", 1)[0]
    return PROVIDERS.get(prefix, prefix or "agentnb")


def finish_reason(reason: str | None) -> str:
    """A finish reason as the conventions spell it (``tool_calls`` -> ``tool_call``)."""
    return sc.FINISH_REASON_VALUES.get(reason or "stop", reason or "stop")


def model_of(label: str, request: Mapping[str, Any] | None = None) -> str:
    """The requested model: the payload's ``model``, else the label's name part."""
    if request and isinstance(request.get("model"), str):
        return request["model"]
    return label.split(":", 1)[1] if ":" in label else label


def run_attributes(
    run: RunOutline, settings: SpanSettings, parent_run_id: str | None, path: Any
) -> Attributes:
    """The ``invoke_agent`` root span's attributes at its start."""
    started = run.started
    assert started is not None
    request = run.calls[0].requested.request if run.calls and run.calls[0].requested else None
    attrs: Attributes = {
        sc.OPERATION: sc.INVOKE_AGENT,
        sc.PROVIDER: provider_of(started.model),
        sc.AGENT_NAME: started.agent,
        sc.REQUEST_MODEL: model_of(started.model, request),
        sc.OI_KIND: "AGENT",
        sc.OI_AGENT: started.agent,
        sc.RUN_ID: started.run_id,
        sc.TURN: started.turn,
        sc.MODEL_LABEL: started.model,
        sc.OI_METADATA: json.dumps({"run_id": started.run_id, "turn": started.turn}),
    }
    if settings.session_id:
        attrs[sc.CONVERSATION_ID] = attrs[sc.OI_SESSION] = settings.session_id
    if parent_run_id:
        attrs[sc.PARENT_RUN_ID] = parent_run_id
    if path:
        attrs[sc.AGENT_PATH] = "/".join(map(str, path)) if isinstance(path, (list, tuple)) else str(path)
    if settings.content:
        attrs[sc.INPUT_MESSAGES] = to_json(
            [{"role": "user", "parts": [{"type": "text", "content": started.message}]}]
        )
        attrs[sc.OI_INPUT] = scrub(started.message)
        attrs[sc.OI_INPUT_MIME] = sc.TEXT_MIME
    if run.prompt is not None:
        attrs.update(prompt_attributes(run.prompt, settings.content))
    return attrs


def prompt_attributes(prompt: PromptRendered, content: bool) -> Attributes:
    """The prompt's assembly: sections, hidden and unused keys, notes, tokens."""
    tokens = prompt.tokens
    sections = [
        {
            "source": s.source,
            "start": s.start,
            "end": s.end,
            **({"tokens": tokens.sections[i]} if tokens and i < len(tokens.sections) else {}),
        }
        for i, s in enumerate(prompt.sections)
    ]
    attrs: Attributes = {sc.PROMPT_SECTIONS: json.dumps(sections)}
    if prompt.hidden_keys:
        attrs[sc.PROMPT_HIDDEN] = list(prompt.hidden_keys)
    if prompt.unused_keys:
        attrs[sc.PROMPT_UNUSED] = list(prompt.unused_keys)
    if prompt.notes:
        attrs[sc.PROMPT_NOTES] = list(prompt.notes)
    if tokens is not None:
        attrs.update(
            {
                f"{sc.PROMPT_TOKENS}.system": tokens.system,
                f"{sc.PROMPT_TOKENS}.history": tokens.history,
                f"{sc.PROMPT_TOKENS}.user": tokens.user,
                f"{sc.PROMPT_TOKENS}.total": tokens.total,
                f"{sc.PROMPT_TOKENS}.counter": tokens.counter,
                f"{sc.PROMPT_TOKENS}.exact": tokens.exact,
            }
        )
        if tokens.template is not None:
            attrs[f"{sc.PROMPT_TOKENS}.template"] = tokens.template
    if content and prompt.system_prompt:
        attrs[sc.SYSTEM_INSTRUCTIONS] = to_json([{"type": "text", "content": prompt.system_prompt}])
    return attrs


def run_end_attributes(run: RunOutline, content: bool) -> Attributes:
    """What the root span learns when the run ends: totals (never in ``gen_ai.usage.*``, which
    backends sum over the tree), the answer, or the failure."""
    outcome = run.outcome
    if outcome is None:
        return {}
    attrs = usage_attributes(outcome.usage, own=False)
    if isinstance(outcome, RunFailed):
        attrs[sc.ERROR_TYPE] = outcome.error_type
        if content:  # the message may quote the model's answer or a tool's arguments
            attrs[sc.ERROR] = outcome.error
        return attrs
    attrs[sc.MODEL_CALLS] = outcome.model_calls
    attrs[sc.TOOL_CALLS] = outcome.tool_calls
    last = run.calls[-1].responded if run.calls else None
    if last is not None and last.finish_reason:
        attrs[sc.FINISH_REASONS] = [finish_reason(last.finish_reason)]
    if content and outcome.content is not None:
        attrs[sc.OUTPUT_MESSAGES] = to_json(
            genai_output(outcome.content, (), last.finish_reason if last else None)
        )
        attrs[sc.OI_OUTPUT] = scrub(outcome.content)
        attrs[sc.OI_OUTPUT_MIME] = sc.TEXT_MIME
    return attrs


def usage_attributes(usage: Usage, *, own: bool) -> Attributes:
    """Token counts: a model call's own provider counts go to ``gen_ai.usage.*`` and
    OpenInference's ``llm.token_count.*``; estimates and run totals only to ``agentnb.usage.*``."""
    if not usage.input_tokens and not usage.output_tokens:
        return {}
    if own and not usage.estimated:
        own_counts: Attributes = {
            sc.INPUT_TOKENS: usage.input_tokens,
            sc.OUTPUT_TOKENS: usage.output_tokens,
            sc.OI_PROMPT_TOKENS: usage.input_tokens,
            sc.OI_COMPLETION_TOKENS: usage.output_tokens,
            sc.OI_TOTAL_TOKENS: usage.total_tokens,
        }
        if usage.reasoning_tokens:
            own_counts[sc.REASONING_TOKENS] = usage.reasoning_tokens
        return own_counts
    attrs: Attributes = {sc.USAGE_INPUT: usage.input_tokens, sc.USAGE_OUTPUT: usage.output_tokens}
    if usage.estimated:
        attrs[sc.USAGE_ESTIMATED] = True
    return attrs


def chat_attributes(chat: ChatCall, label: str, settings: SpanSettings) -> Attributes:
    """A ``chat`` span's attributes at its start (what was asked)."""
    request = chat.requested.request if chat.requested else {}
    model = model_of(label, request)
    attrs: Attributes = {
        sc.OPERATION: sc.CHAT,
        sc.PROVIDER: provider_of(label),
        sc.REQUEST_MODEL: model,
        sc.OI_KIND: "LLM",
        sc.OI_MODEL: model,
        sc.OI_PROVIDER: provider_of(label),
        sc.CALL: chat.requested.call if chat.requested else 0,
    }
    if settings.session_id:
        attrs[sc.CONVERSATION_ID] = attrs[sc.OI_SESSION] = settings.session_id
    if settings.server is not None:
        attrs[sc.SERVER_ADDRESS] = settings.server[0]
        if settings.server[1] is not None:
            attrs[sc.SERVER_PORT] = settings.server[1]
    options = scrub({k: v for k, v in request.items() if k in sc.REQUEST_OPTIONS and v is not None})
    for option, value in options.items():
        attrs[sc.REQUEST_OPTIONS[option]] = (
            list(map(str, value))
            if isinstance(value, (list, tuple))
            else value
            if isinstance(value, (bool, int, float, str))
            else str(value)
        )
    if options:
        attrs[sc.OI_INVOCATION] = to_json(options)
    if settings.content:
        request = scrub(request)
        messages = request_messages(request)
        attrs[sc.INPUT_MESSAGES] = to_json([genai_message(m) for m in messages if m.get("role") != "system"])
        system = [text_of(m.get("content")) for m in messages if m.get("role") == "system"]
        if system:
            attrs[sc.SYSTEM_INSTRUCTIONS] = to_json([{"type": "text", "content": text} for text in system])
        attrs.update(oi_messages(sc.OI_INPUT_MESSAGES, messages))
        attrs[sc.OI_INPUT] = to_json(messages)
        attrs[sc.OI_INPUT_MIME] = sc.JSON_MIME
        if request.get("tools"):
            attrs.update(tool_definitions(request["tools"]))
    return attrs


def tool_definitions(tools: Any) -> Attributes:
    """The request's tools as the conventions' flat definitions (``type``, ``name``,
    ``description``, ``parameters``) and as OpenInference's ``llm.tools.{i}.tool.json_schema``."""
    flat = []
    attrs: Attributes = {}
    for i, wire in enumerate(t for t in tools if isinstance(t, Mapping)):
        inner = wire.get("function")
        function: Mapping[str, Any] = inner if isinstance(inner, Mapping) else wire
        definition = {"type": wire.get("type", "function"), "name": function.get("name")}
        for key in ("description", "parameters"):
            if function.get(key) is not None:
                definition[key] = function[key]
        flat.append(definition)
        attrs[f"{sc.OI_TOOLS}.{i}.tool.json_schema"] = to_json(wire)
    attrs[sc.TOOL_DEFINITIONS] = to_json(flat)
    return attrs


def chat_end_attributes(responded: ModelResponded, content: bool) -> Attributes:
    """What a ``chat`` span learns from the answer."""
    attrs = usage_attributes(responded.usage, own=True)
    if responded.finish_reason:
        attrs[sc.FINISH_REASONS] = [finish_reason(responded.finish_reason)]
    raw = responded.response if isinstance(responded.response, Mapping) else {}
    if isinstance(raw.get("id"), str):
        attrs[sc.RESPONSE_ID] = raw["id"]
    if isinstance(raw.get("model"), str):
        attrs[sc.RESPONSE_MODEL] = raw["model"]
    if content:
        attrs[sc.OUTPUT_MESSAGES] = to_json(
            genai_output(responded.content, responded.tool_calls, responded.finish_reason)
        )
        attrs.update(oi_output(responded.content, responded.tool_calls))
        attrs[sc.OI_OUTPUT] = to_json(
            genai_output(responded.content, responded.tool_calls, responded.finish_reason)
        )
        attrs[sc.OI_OUTPUT_MIME] = sc.JSON_MIME
    return attrs


def tool_attributes(tool: ToolRun, settings: SpanSettings) -> Attributes:
    """An ``execute_tool`` span's attributes."""
    started = tool.started
    assert started is not None
    source = started.source
    attrs: Attributes = {
        sc.OPERATION: sc.EXECUTE_TOOL,
        sc.TOOL_NAME: started.name,
        sc.TOOL_CALL_ID: started.tool_call_id,
        sc.TOOL_TYPE: "extension" if source and source.startswith("mcp:") else "function",
        sc.OI_KIND: "TOOL",
        sc.OI_TOOL_NAME: started.name,
        sc.OI_TOOL_ID: started.tool_call_id,
        sc.CALL: started.call,
    }
    description = (settings.tool_descriptions or {}).get(started.name)
    if description:
        attrs[sc.TOOL_DESCRIPTION] = attrs[sc.OI_TOOL_DESCRIPTION] = description
    parameters = (settings.tool_parameters or {}).get(started.name)
    if parameters is not None:
        attrs[sc.OI_TOOL_PARAMETERS] = to_json(parameters)
    if source:
        attrs[sc.TOOL_SOURCE] = source
    if settings.content:
        attrs[sc.TOOL_ARGUMENTS] = scrub(started.arguments)
        attrs[sc.OI_INPUT] = scrub(started.arguments)
        attrs[sc.OI_INPUT_MIME] = sc.JSON_MIME
    finished = tool.finished
    if finished is None:
        return attrs
    if finished.answered_by:
        attrs[sc.TOOL_ANSWERED_BY] = finished.answered_by
    if finished.replayed:
        attrs[sc.TOOL_REPLAYED] = True
    if finished.changed_keys:
        attrs[sc.STATE_CHANGED_KEYS] = list(finished.changed_keys)
    if finished.error is not None:
        attrs[sc.ERROR_TYPE] = finished.error_kind or "tool_error"
    if settings.content:
        attrs[sc.TOOL_RESULT] = scrub(finished.result)
        attrs[sc.OI_OUTPUT] = scrub(finished.result)
        attrs[sc.OI_OUTPUT_MIME] = sc.TEXT_MIME
    return attrs


def tool_error(tool: ToolRun, content: bool) -> str | None:
    """A failed tool call's status description: its error, or without content only the error's
    kind and exception type (the message is content: it may quote arguments or secrets)."""
    finished = tool.finished
    if finished is None or finished.error is None:
        return None
    return finished.error if content else error_summary(finished.error, finished.error_kind)


def hook_error(hook: Hook, content: bool) -> str | None:
    """A raised hook's error, or without content only its exception type."""
    step = hook.step
    if step is None or step.outcome != "raised":
        return None
    error = step.error or "the hook raised"
    return error if content else error_summary(step.error, "hook_error")


def pause_event(event: RunPaused | RunResumed) -> tuple[str, dict[str, Any]]:
    """A pause (what it waits for) or a resume (the person's decisions) as a span event: ids,
    kinds, tools and verdicts only — never the arguments, answers or reasons (content)."""
    if isinstance(event, RunPaused):
        return sc.RUN_PAUSED, {
            sc.PENDING_IDS: [item.id for item in event.items],
            sc.PENDING_KINDS: [item.kind for item in event.items],
            sc.PENDING_TOOLS: [item.tool or "model" for item in event.items],
        }
    return sc.RUN_RESUMED, {
        sc.DECISION_IDS: [d.id for d in event.decisions],
        sc.DECISION_VERDICTS: [d.verdict for d in event.decisions],
        sc.DECISION_BY: [d.by for d in event.decisions],
    }


def run_error(outcome: RunFailed, content: bool) -> str:
    """A failed run's status description: its one-line error, or its exception type."""
    return outcome.error if content else outcome.error_type


def hook_attributes(hook: Hook, content: bool) -> Attributes:
    """A hook's span: its outcome (OpenInference GUARDRAIL when it answered or raised)."""
    step = hook.step
    assert step is not None
    attrs: Attributes = {
        sc.OI_KIND: "CHAIN" if step.outcome == "passed" else "GUARDRAIL",
        sc.HOOK_NAME: step.name,
        sc.HOOK_OUTCOME: step.outcome,
        sc.HOOK_DURATION: step.duration_ms,
    }
    if step.error is not None:
        attrs[sc.HOOK_ERROR] = scrub(step.error) if content else error_summary(step.error)
    if content:
        attrs[sc.OI_INPUT] = to_json(step.arguments)
        attrs[sc.OI_INPUT_MIME] = sc.JSON_MIME
        if step.result is not None:
            attrs[sc.HOOK_RESULT] = attrs[sc.OI_OUTPUT] = scrub(step.result)
    return attrs


def retrieval_attributes(event: ContextRetrieved, content: bool) -> Attributes:
    """A ``retrieval`` span: the provider, how many blocks, and (with content) query and text."""
    attrs: Attributes = {
        sc.OPERATION: sc.RETRIEVAL,
        sc.DATA_SOURCE_ID: event.label,
        sc.RETRIEVAL_TOP_K: event.top_k,
        sc.OI_KIND: "RETRIEVER",
        sc.CONTEXT_PROVIDER: event.provider,
        sc.CONTEXT_VIA: event.via,
        sc.CONTEXT_BLOCKS: len(event.blocks),
    }
    for i, block in enumerate(event.blocks):
        if block.source is not None:
            attrs[f"{sc.OI_DOCUMENTS}.{i}.document.id"] = str(block.source)
        if block.score is not None:
            attrs[f"{sc.OI_DOCUMENTS}.{i}.document.score"] = float(block.score)
        if content:
            attrs[f"{sc.OI_DOCUMENTS}.{i}.document.content"] = scrub(block.text)
    if content:
        attrs[sc.RETRIEVAL_QUERY] = attrs[sc.OI_INPUT] = scrub(event.query)
        documents = [{"id": b.source, "content": b.text, "score": b.score} for b in event.blocks]
        attrs[sc.RETRIEVAL_DOCUMENTS] = to_json(documents)
        attrs[sc.CONTEXT_RENDERED] = scrub(event.rendered)
    return attrs


def state_attributes(changes: Iterable[StateChanged], hidden: Iterable[str], content: bool) -> Attributes:
    """State changes as one RFC 6902 patch (every change's operations, in order) with its cause;
    operations on hidden keys (``hide_state_keys``) are left out, and the conversation's
    messages unless content is captured. Without content an operation keeps its kind and paths,
    and its value only as ``type`` and ``size``: the values are content."""
    hidden_paths = ["/" + key.replace("~", "~0").replace("/", "~1") for key in hidden] + (
        [] if content else ["/messages"]
    )
    kept: list[tuple[StateChanged, list[dict[str, Any]]]] = []
    for change in changes:
        ops = [
            op if content else _valueless(op)
            for op in change.patch
            if not any(
                _under(str(op.get("path", "")), p) or _under(str(op.get("from", "")), p) for p in hidden_paths
            )
        ]
        if ops:
            kept.append((change, ops))
    if not kept:
        return {}
    attrs: Attributes = {sc.STATE_PATCH: to_json([op for _, ops in kept for op in ops])}
    first = kept[0][0].cause
    attrs[f"{sc.STATE_CAUSE}.kind"] = first.kind
    if first.name:
        attrs[f"{sc.STATE_CAUSE}.name"] = first.name
    if first.handler:
        attrs[f"{sc.STATE_CAUSE}.handler"] = first.handler
    if len(kept) > 1:
        attrs[sc.STATE_CHANGES] = to_json([{"cause": c.cause.label(), "patch": ops} for c, ops in kept])
    return attrs


def _valueless(op: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in op.items() if k != "value"}
    if "value" in op:
        out.update(described(op["value"]))
    return out


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + "/")


__all__ = [
    "SpanSettings",
    "chat_attributes",
    "chat_end_attributes",
    "finish_reason",
    "hook_attributes",
    "hook_error",
    "model_of",
    "provider_of",
    "retrieval_attributes",
    "run_attributes",
    "run_end_attributes",
    "run_error",
    "state_attributes",
    "tool_attributes",
    "tool_definitions",
    "tool_error",
    "usage_attributes",
]
