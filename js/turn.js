// One turn as the browser knows it, and how each compact event (agentnb/ipython/inspector.py,
// compact_event) changes it. Each part of a turn has a version number, bumped when an event
// changes that part, so a view redraws only what shows a changed part.

import { applyPatch, copyJSON } from "./patch.js";

/** The parts of a turn a tab can depend on. */
export const PARTS = ["summary", "prompt", "calls", "tools", "context", "state", "text", "output"];

export const NO_CHANGES = Object.freeze({ keys: [], paths: [], more: 0 });

export function blankTurn(index) {
  return {
    index,
    loaded: false, // its events are known (not just its summary)
    status: "running",
    message: "",
    model: "",
    content: null,
    finishReason: null, // why the model stopped its last answer ("length": cut at the token limit)
    error: null,
    errorType: null,
    usage: { input: 0, output: 0, estimated: false },
    durationMs: null,
    replayed: false, // answered from the notebook's recording
    routed: null, // {agent, run_id, usage, duration_ms}: the agent in charge answered it (js/runs.js routedOf)
    at: null,
    receivedAt: null, // when a live run started, by the browser's clock (for the elapsed time)
    toolCount: 0,
    prompt: null,
    calls: [],
    userParts: [], // the user message's images and files, described (its first request names them)
    tools: [],
    patches: [], // the state_changed events: patch and cause, for the tool calls that made them
    changes: NO_CHANGES, // what the turn changed, as the kernel summarised it
    context: [], // context retrievals: passive injections, then the model's retrieve_context calls
    contextCount: 0, // retrievals and blocks, known from the summary before the turn is loaded
    contextBlocks: 0,
    state: undefined, // the state the turn ended with (the live state while it runs)
    promptTokens: null, // what the prompt cost and the <session_state> block's part (History)
    stateTokens: null,
    tokensExact: null,
    attempts: [], // answers checked against the output type, in order (js/outputs.js)
    pauses: 0, // times the turn paused for a person, and went on (js/pending.js)
    resumed: 0,
    text: "",
    v: Object.fromEntries(PARTS.map((p) => [p, 0])),
  };
}

/** A turn older than the rows held: only its number is known until its row or the turn
 * itself is fetched. */
export function stubTurn(index) {
  const turn = blankTurn(index);
  turn.status = "unknown";
  return turn;
}

/** A turn known only from its summary row (a History row). */
export function turnFromSummary(s) {
  const turn = blankTurn(s.turn);
  turn.status = s.status;
  turn.message = s.message;
  turn.content = s.content;
  turn.finishReason = s.finish_reason ?? null;
  turn.error = s.error;
  turn.model = s.model;
  turn.usage = s.usage;
  turn.durationMs = s.duration_ms;
  turn.toolCount = s.tool_calls;
  turn.failedTools = s.failed_tool_calls || 0;
  turn.replayed = Boolean(s.replayed);
  turn.routed = s.routed || null;
  turn.contextCount = s.context || 0;
  turn.contextBlocks = s.context_blocks || 0;
  turn.promptTokens = s.prompt_tokens ?? null;
  turn.stateTokens = s.state_tokens ?? null;
  turn.tokensExact = s.tokens_exact ?? null;
  turn.pauses = s.pauses || 0;
  turn.resumed = s.resumed || 0;
  return turn;
}

export function bump(turn, ...parts) {
  for (const part of parts) turn.v[part] += 1;
}

function addUsage(a, b) {
  const out = { input: a.input + b.input, output: a.output + b.output, estimated: a.estimated || b.estimated };
  const reasoning = (a.reasoning || 0) + (b.reasoning || 0);
  if (reasoning) out.reasoning = reasoning; // of the output, a reasoning model's thinking
  return out;
}

/** The prompt's token counts, and what the History columns show of them. */
function setTokens(turn, tokens) {
  if (turn.prompt) turn.prompt.tokens = tokens;
  turn.promptTokens = tokens ? tokens.total : null;
  turn.tokensExact = tokens ? tokens.exact : null;
  const sections = turn.prompt ? turn.prompt.sections : [];
  const state = tokens ? sections.map((s, i) => (s.source === "session_state" ? tokens.sections[i] || 0 : null)).filter((n) => n !== null) : [];
  turn.stateTokens = state.length ? state.reduce((a, b) => a + b, 0) : null;
}

function endRun(turn, e, status) {
  turn.status = status;
  turn.usage = e.usage;
  turn.durationMs = e.duration_ms;
  if (e.changes) turn.changes = e.changes;
  if (e.replayed !== undefined) turn.replayed = e.replayed;
  if (e.run_tree) turn.runTree = e.run_tree; // a turn that delegated (js/runs.js)
  // Counted again at the end when the model's tokenizer came up during the turn.
  if (e.prompt_tokens !== undefined) setTokens(turn, e.prompt_tokens);
  bump(turn, "summary", "state", "prompt");
}

// One handler per event kind: (turn, event, options) -> nothing; each bumps the parts it changes.
const HANDLERS = {
  run_started(turn, e, { live, previousState, now }) {
    const { v, replayed, routed } = turn;
    Object.assign(turn, blankTurn(turn.index), { loaded: true, v, replayed, routed });
    turn.message = e.message;
    turn.model = e.model;
    turn.at = e.at;
    turn.receivedAt = live ? now() : null;
    if (live && previousState !== undefined) turn.state = copyJSON(previousState);
    bump(turn, ...PARTS);
  },
  prompt_rendered(turn, e) {
    turn.prompt = { sections: e.sections, userPrompt: e.user_prompt, notes: e.notes, hiddenKeys: e.hidden_keys || [], unusedKeys: e.unused_keys || [], tokens: null };
    setTokens(turn, e.tokens || null);
    bump(turn, "prompt", "summary");
  },
  model_requested(turn, e) {
    turn.calls[e.call] = { call: e.call, messages: e.messages, tools: e.tools, text: "", response: null };
    if (e.user_parts) turn.userParts = e.user_parts;
    bump(turn, "calls");
  },
  text_delta(turn, e) {
    const call = turn.calls[e.call];
    if (call) call.text += e.text;
    turn.text += e.text;
    bump(turn, "text"); // streamed text redraws the answer line only
  },
  model_responded(turn, e) {
    const call = turn.calls[e.call] || (turn.calls[e.call] = { call: e.call, text: "" });
    call.response = e;
    turn.finishReason = e.finish_reason ?? null;
    turn.usage = addUsage(turn.usage, e.usage);
    bump(turn, "calls", "summary");
  },
  tool_call_started(turn, e) {
    turn.tools.push({ id: e.id, name: e.name, arguments: e.arguments, call: e.call, done: false, hooks: [] });
    bump(turn, "tools", "summary");
  },
  tool_call_finished(turn, e) {
    const row = turn.tools.find((t) => t.id === e.id && !t.done);
    const done = Object.assign(row || {}, e, { done: true });
    if (!row) turn.tools.push(done);
    turn.toolCount = turn.tools.filter((t) => t.done).length;
    bump(turn, "tools", "summary");
  },
  context_retrieved(turn, e) {
    // A retrieve_context call reports its blocks while the call runs: tie them to that call.
    const running = e.via === "tool" ? turn.tools.filter((t) => !t.done) : [];
    turn.context.push(Object.assign({}, e, { toolId: running.length ? running[running.length - 1].id : null }));
    turn.contextCount = turn.context.length;
    turn.contextBlocks += e.blocks.length;
    bump(turn, "context", "summary");
  },
  state_changed(turn, e, { live }) {
    turn.patches.push({ patch: e.patch, cause: e.cause });
    if (e.changes) turn.changes = e.changes;
    if (live && turn.state !== undefined) {
      try {
        applyPatch(turn.state, e.patch);
      } catch (err) {
        turn.state = undefined; // fetched again when the turn ends (see the store)
      }
    }
    bump(turn, "state", "tools");
  },
  run_finished(turn, e) {
    turn.content = e.content;
    endRun(turn, e, "ok");
  },
  run_failed(turn, e) {
    turn.error = e.error;
    turn.errorType = e.error_type;
    endRun(turn, e, "failed");
  },
  run_paused(turn, e) {
    turn.pauses += 1;
    turn.waiting = e.items || []; // what it waits for (the cards come in a "pending" message)
    endRun(turn, e, "paused");
  },
  run_resumed(turn, e, { live, now }) {
    turn.status = "running";
    turn.resumed += 1;
    turn.waiting = [];
    if (live) turn.receivedAt = now() - (turn.durationMs || 0); // the clock goes on from the pause
    bump(turn, "summary");
  },
  output_checked(turn, e) {
    turn.attempts.push(e);
    bump(turn, "output", "summary");
  },
};

/**
 * Apply one compact event to ``turn``. ``live`` events arrive as the run happens: they keep the
 * live state (``previousState`` is the state the run starts from) and the run's clock (``now``).
 * Events of a loaded past turn only rebuild what the turn's record holds. Unknown kinds (from a
 * newer kernel) are skipped.
 */
export function applyEvent(turn, e, { live = false, previousState, now = Date.now } = {}) {
  const handler = Object.prototype.hasOwnProperty.call(HANDLERS, e.kind) ? HANDLERS[e.kind] : null;
  if (handler) handler(turn, e, { live, previousState, now });
}

/** Rebuild ``turn`` from its recorded events, change summary and state (a snapshot or a turn reply). */
export function loadTurn(turn, events, changes, state) {
  // The version counters run on; whether it was replayed or routed is known from its summary.
  const { v, replayed, routed } = turn;
  Object.assign(turn, blankTurn(turn.index), { v, replayed, routed });
  for (const e of events) applyEvent(turn, e);
  turn.loaded = true;
  turn.changes = changes || NO_CHANGES;
  turn.state = state;
  bump(turn, ...PARTS);
}
