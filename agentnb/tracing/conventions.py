"""The attribute names agentnb's spans carry, in one place.

GenAI names follow the OpenTelemetry GenAI semantic conventions as released in
``semantic-conventions-genai`` v0.1.0 (the same span names and attributes as semantic
conventions v1.41.0, the last release that held them). The number of blocks a retrieval asked
for is agentnb's own (``agentnb.retrieval.top_k``): no released registry has a name for it.
OpenInference names follow its ``spec/semantic_conventions.md``. Everything else is agentnb's own,
under ``agentnb.``.
"""

from __future__ import annotations

GENAI_CONVENTIONS = "semantic-conventions-genai v0.1.0"
"""The GenAI conventions' release these spans follow (named in docs/guides/traces.md)."""

SCHEMA_URL = "https://opentelemetry.io/schemas/1.41.0"
"""The instrumentation scope's schema: the last semantic-conventions release that held GenAI."""

# -- GenAI (all Development in the conventions) ----------------------------------------------
OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
AGENT_NAME = "gen_ai.agent.name"
CONVERSATION_ID = "gen_ai.conversation.id"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
RESPONSE_ID = "gen_ai.response.id"
FINISH_REASONS = "gen_ai.response.finish_reasons"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
REASONING_TOKENS = "gen_ai.usage.reasoning.output_tokens"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
TOOL_DEFINITIONS = "gen_ai.tool.definitions"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_DESCRIPTION = "gen_ai.tool.description"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_RESULT = "gen_ai.tool.call.result"
DATA_SOURCE_ID = "gen_ai.data_source.id"
RETRIEVAL_QUERY = "gen_ai.retrieval.query.text"
RETRIEVAL_DOCUMENTS = "gen_ai.retrieval.documents"
ERROR_TYPE = "error.type"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"
EVALUATION_RESULT = "gen_ai.evaluation.result"
"""The GenAI conventions' event for one evaluation verdict."""
EVALUATION_NAME = "gen_ai.evaluation.name"
EVALUATION_LABEL = "gen_ai.evaluation.score.label"
EVALUATION_SCORE = "gen_ai.evaluation.score.value"
EVALUATION_EXPLANATION = "gen_ai.evaluation.explanation"
FINISH_REASON_VALUES = {"tool_calls": "tool_call", "function_call": "tool_call"}
"""Finish reasons as the OpenAI API spells them -> the conventions' values (stop, length,
content_filter, tool_call, error pass as they are)."""
REQUEST_OPTIONS = {
    "temperature": "gen_ai.request.temperature",
    "top_p": "gen_ai.request.top_p",
    "max_tokens": "gen_ai.request.max_tokens",
    "max_completion_tokens": "gen_ai.request.max_tokens",
    "max_output_tokens": "gen_ai.request.max_tokens",
    "seed": "gen_ai.request.seed",
    "stop": "gen_ai.request.stop_sequences",
    "stream": "gen_ai.request.stream",
    "frequency_penalty": "gen_ai.request.frequency_penalty",
    "presence_penalty": "gen_ai.request.presence_penalty",
}
"""Request options (as the payload names them) and the GenAI attribute each goes to."""

INVOKE_AGENT, CHAT, EXECUTE_TOOL, RETRIEVAL = "invoke_agent", "chat", "execute_tool", "retrieval"

RUN_PAUSED = "agentnb.run.paused"
"""The event on a run's span where it paused for a person (its items' ids, kinds and tools)."""
RUN_RESUMED = "agentnb.run.resumed"
"""The event on a run's span where it went on (the person's decisions: verdicts, by whom)."""
PENDING_IDS, PENDING_KINDS, PENDING_TOOLS = (
    "agentnb.pending.ids",
    "agentnb.pending.kinds",
    "agentnb.pending.tools",
)
DECISION_IDS, DECISION_VERDICTS, DECISION_BY = (
    "agentnb.decision.ids",
    "agentnb.decision.verdicts",
    "agentnb.decision.by",
)

# -- OpenInference ---------------------------------------------------------------------------
OI_KIND = "openinference.span.kind"
OI_INPUT = "input.value"
OI_INPUT_MIME = "input.mime_type"
OI_OUTPUT = "output.value"
OI_OUTPUT_MIME = "output.mime_type"
OI_SESSION = "session.id"
OI_AGENT = "agent.name"
OI_METADATA = "metadata"
OI_MODEL = "llm.model_name"
OI_PROVIDER = "llm.provider"
OI_INVOCATION = "llm.invocation_parameters"
OI_INPUT_MESSAGES = "llm.input_messages"
OI_OUTPUT_MESSAGES = "llm.output_messages"
OI_PROMPT_TOKENS = "llm.token_count.prompt"
OI_COMPLETION_TOKENS = "llm.token_count.completion"
OI_TOTAL_TOKENS = "llm.token_count.total"
OI_TOOL_NAME = "tool.name"
OI_TOOL_ID = "tool.id"
OI_TOOL_DESCRIPTION = "tool.description"
OI_TOOL_PARAMETERS = "tool.parameters"
OI_TOOLS = "llm.tools"
OI_DOCUMENTS = "retrieval.documents"
OI_PROJECT = "openinference.project.name"
JSON_MIME, TEXT_MIME = "application/json", "text/plain"

# -- agentnb's own -----------------------------------------------------------------------------
RUN_ID = "agentnb.run_id"
TURN = "agentnb.turn"
MODEL_LABEL = "agentnb.model_label"
CALL = "agentnb.call"
PARENT_RUN_ID = "agentnb.parent_run_id"
AGENT_PATH = "agentnb.path"
USAGE_INPUT = "agentnb.usage.input_tokens"
USAGE_OUTPUT = "agentnb.usage.output_tokens"
USAGE_ESTIMATED = "agentnb.usage.estimated"
MODEL_CALLS = "agentnb.model_calls"
TOOL_CALLS = "agentnb.tool_calls"
ERROR = "agentnb.error"
PROMPT_SECTIONS = "agentnb.prompt.sections"
PROMPT_HIDDEN = "agentnb.prompt.hidden_keys"
PROMPT_UNUSED = "agentnb.prompt.unused_keys"
PROMPT_NOTES = "agentnb.prompt.notes"
PROMPT_TOKENS = "agentnb.prompt.tokens"
STATE_PATCH = "agentnb.state.patch"
STATE_CAUSE = "agentnb.state.cause"
STATE_CHANGES = "agentnb.state.changes"
STATE_CHANGED_KEYS = "agentnb.state.changed_keys"
TOOL_SOURCE = "agentnb.tool.source"
TOOL_ANSWERED_BY = "agentnb.tool.answered_by"
TOOL_REPLAYED = "agentnb.tool.replayed"
TOOL_ERROR = "agentnb.tool.error"
HOOK_NAME = "agentnb.hook.name"
HOOK_OUTCOME = "agentnb.hook.outcome"
HOOK_RESULT = "agentnb.hook.result"
HOOK_ERROR = "agentnb.hook.error"
HOOK_DURATION = "agentnb.hook.duration_ms"
CONTEXT_PROVIDER = "agentnb.context.provider"
CONTEXT_VIA = "agentnb.context.via"
CONTEXT_RENDERED = "agentnb.context.rendered"
CONTEXT_BLOCKS = "agentnb.context.blocks"
RETRIEVAL_TOP_K = "agentnb.retrieval.top_k"
PARTS_COUNT = "agentnb.parts.count"
"""How many images and files (given as bytes) the call carried."""
PARTS_BYTES = "agentnb.parts.bytes"
"""Their bytes together."""
PARTS_TYPES, PARTS_MEDIA_TYPES, PARTS_SIZES, PARTS_SHA256 = (
    "agentnb.parts.types",
    "agentnb.parts.media_types",
    "agentnb.parts.sizes",
    "agentnb.parts.sha256",
)
"""Each listed part's kind (image, file), media type, size in bytes and SHA-256, in order."""
PARTS_OMITTED = "agentnb.parts.omitted"
"""Parts counted but not listed (past ``tracing.parts.LISTED``)."""
TRUNCATED = "agentnb.truncated"
"""The attributes of a span that were cut to stay within the size bounds."""
EVAL_NAME = "agentnb.eval.name"
EVAL_ID = "agentnb.eval.id"
EVAL_CASE = "agentnb.eval.case_id"
EVAL_REPEAT = "agentnb.eval.repeat"
EVAL_STATUS = "agentnb.eval.status"
EVAL_PASSED = "agentnb.eval.passed"
EVAL_REPLAYED = "agentnb.eval.replayed"
EVAL_VERDICTS = "agentnb.eval.verdicts"
EVAL_RUN_IDS = "agentnb.eval.run_ids"
EVALUATE = "evaluate"

CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The conventions' switch for capturing prompts, messages, tool arguments and results."""
