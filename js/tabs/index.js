// The inspector's tabs, in order. A tab is one module exporting {id, label, count, panel}, plus:
//   inputs(ctx)  the values its panel shows; the panel is rebuilt only when one of them changes
//   needsTurn    the panel needs a turn ("No turns yet" before the first)
//   idle(ctx)    a reason to grey the tab out (it stays in place), or null
//   onScrollTop(ctx)  the user scrolled up to the top of its panel
// ctx = {store, view, turn, team, update(fn), select(index), scope(runId)}; see ../view.js. ``turn``
// is the run the tabs show: the selected turn, or the run of its tree picked in Runs (``team`` is
// the selected turn itself).

import checks from "./checks.js";
import compare from "./compare.js";
import context from "./context.js";
import history from "./history.js";
import output from "./output.js";
import preview from "./preview.js";
import prompt from "./prompt.js";
import request from "./request.js";
import runs from "./runs.js";
import state from "./state.js";
import tools from "./tools.js";

export const TABS = [prompt, request, output, tools, state, context, runs, history, preview, compare, checks];
