"""``%agentnb``: list, show, preview, save / load / reset / fork agents, compare turns, edit
state by hand; set defaults."""

from __future__ import annotations

import json
import sys
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments
from IPython.display import display

from ..errors import AgentnbError
from ..history.render import tokens_text
from ..models import Model
from ..models.tokens import TokenCounter, counter_for
from ..state.edits import edit_text
from ..team import Team
from ..util.extras import install_line
from ..util.text import one_line
from . import decide_magic, mcp_support
from .agent_magic import described, show_inspector
from .parsing import identifier, parse_options
from .workspace import WorkspaceMagics

COMMANDS = (
    "list",
    "show",
    "preview",
    "resume",
    "save",
    "load",
    "reset",
    "fork",
    "diff",
    "edit",
    "remove",
    "undo",
    "trace",
    "mcp",
    "defaults",
    "eval",
    "approve",
    "reject",
    "continue",
)


@magics_class
class AgentnbMagics(WorkspaceMagics):
    """``%agentnb``: list, show, preview, save / load / reset / fork agents; set defaults."""

    @magic_arguments()
    @argument("command", choices=COMMANDS, help="what to do (see below)")
    @argument("args", nargs="*", help="the command's arguments")
    @argument("--model", help="defaults: the model for agents defined without --model")
    @argument("--session-dir", help="defaults: the folder sessions are kept in")
    @argument(
        "--turn", type=int, metavar="N", help="fork: the turn to fork from (1 = the first; default: the last)"
    )
    @argument("--checks", metavar="VAR", help="eval: the variable holding the checks")
    @argument("--name", metavar="N", help="eval: the evaluation's name (its folder beside the notebook)")
    @argument("--concurrency", type=int, metavar="K", help="eval: cases in flight (default 8)")
    @argument("--repeat", type=int, metavar="R", help="eval: runs of each case (default 1)")
    @argument(
        "--content",
        action="store_true",
        help="trace: put prompts, messages, tool arguments and results on the spans",
    )
    @argument("--all", action="store_true", help="approve: every undecided pending item")
    @argument("--reason", nargs="+", metavar="WHY", help="reject: what the model reads as the call's result")
    @line_magic
    def agentnb(self, line: str) -> Any:
        """Manage the notebook's agents.

        Commands::

            %agentnb list                    agents with their model, tools, turns and state keys
            %agentnb show NAME               the agent's inspector
            %agentnb preview NAME MESSAGE    what the model would receive, without calling it
                                             (TEAM/MEMBER: what a member would receive as a task)
            %agentnb resume NAME             take over the agent's recording (state, conversation, turns)
                                             without re-running its cells; new turns continue it
            %agentnb save NAME [PATH]        save the agent whole (default: beside the notebook)
            %agentnb load NAME [PATH]        load what was saved (default: beside the notebook)
            %agentnb reset NAME              back to the state it was defined with, no turns
            %agentnb fork NAME NEW [--turn N]  a new agent NEW: same definition, a copy of the state,
                                             conversation and turns (as at the end of turn N),
                                             recorded under its own name
            %agentnb diff A B                two turns side by side, and why they differ: A and B
                                             are agents (their last turn) or NAME:N (turn N)
            %agentnb edit NAME PATH JSON     set a state key or path (/items/0, /items/- appends)
                                             to a JSON value; the next prompt shows it at once
            %agentnb remove NAME PATH        remove a state key or path
            %agentnb undo NAME               take back the last edit or removal
            %agentnb trace NAME [--content]  export the agent's recorded turns as OpenTelemetry
                                             traces, with their recorded times (agentnb.tracing)

        PATH is a folder (one JSON session per agent) or a .db file (SQLite).
            %agentnb mcp                     MCP servers of this kernel: state, transport, tools
            %agentnb defaults [--model M] [--session-dir D]
            %agentnb eval NAME CASES [--checks VAR] [--name N] [--concurrency K] [--repeat R]
                                             evaluate agent NAME over CASES (a variable holding
                                             cases or a DataFrame, or a .jsonl/.csv/.yaml file);
                                             finished cases replay from NOTEBOOK.agentnb/evals/N/
            %agentnb approve NAME [ID] [--all]  approve a paused turn's pending call (the only one,
                                             the one named, or every one)
            %agentnb reject NAME [ID] --reason WHY  do not run it; the model reads WHY as its result
            %agentnb continue NAME           carry the paused turn on with the decisions (not
                                             resume, which takes over the recording)
        """
        args = parse_options(self.agentnb, line, "%agentnb")
        expected = {
            "list": (0, 0, ""),
            "show": (1, 1, " NAME"),
            "preview": (2, None, " NAME MESSAGE"),
            "resume": (1, 1, " NAME"),
            "save": (1, 2, " NAME [PATH]"),
            "load": (1, 2, " NAME [PATH]"),
            "reset": (1, 1, " NAME"),
            "fork": (2, 2, " NAME NEW [--turn N]"),
            "diff": (2, 2, " A B (agents, or NAME:N for turn N)"),
            "edit": (3, None, " NAME PATH JSON"),
            "remove": (2, 2, " NAME PATH"),
            "undo": (1, 1, " NAME"),
            "trace": (1, 1, " NAME [--content]"),
            "mcp": (0, 0, ""),
            "defaults": (0, 0, " [--model M] [--session-dir D]"),
            "eval": (2, 2, " NAME CASES [--checks VAR] [--name N] [--concurrency K] [--repeat R]"),
            "approve": (1, 2, " NAME [ID] [--all]"),
            "reject": (1, 2, " NAME [ID] --reason WHY"),
            "continue": (1, 1, " NAME"),
        }
        low, high, usage = expected[args.command]
        if len(args.args) < low or (high is not None and len(args.args) > high):
            raise UsageError(f"%agentnb {args.command}: expected %agentnb {args.command}{usage}")
        if args.command != "defaults" and (args.model or args.session_dir):
            raise UsageError("%agentnb: --model and --session-dir belong to %agentnb defaults")
        if args.command != "trace" and args.content:
            raise UsageError("%agentnb: --content belongs to %agentnb trace")
        if args.command != "fork" and args.turn is not None:
            raise UsageError("%agentnb: --turn belongs to %agentnb fork; for diff write NAME:N")
        if args.command != "eval" and (
            args.checks or args.name or args.concurrency is not None or args.repeat is not None
        ):
            raise UsageError("%agentnb: --checks, --name, --concurrency and --repeat belong to %agentnb eval")
        if (args.command != "approve" and args.all) or (args.command != "reject" and args.reason):
            raise UsageError("%agentnb: --all belongs to %agentnb approve, --reason to %agentnb reject")
        if args.command == "edit":
            args.value = line.split(None, 3)[3] if len(line.split(None, 3)) == 4 else ""
        return getattr(self, f"_{args.command}")(args)

    # -- deciding a paused turn (ipython/decide_magic.py) ---------------------------------------

    def _approve(self, args: Any) -> None:
        decide_magic.approve(self.workspace, args)

    def _reject(self, args: Any) -> None:
        decide_magic.reject(self.workspace, args)

    def _continue(self, args: Any) -> Any:
        return decide_magic.continue_run(self.workspace, args)

    def _eval(self, args: Any) -> Any:
        from .eval_magic import run_eval

        return run_eval(self.workspace, args)

    def _list(self, args: Any) -> None:
        names = self.workspace.agent_names()
        if not names:
            print("no agents yet; define one with %%agent NAME")
            return
        for name in names:
            agent = self.workspace.agent(name, "%agentnb list")
            tools = ", ".join(t.name for t in agent.all_tools()) or "-"
            keys = ", ".join(agent.session_state) or "-"
            print(
                f"{name}: model {agent.model.label}; tools: {tools}; turns: {len(agent.history)}; state keys: {keys}"
            )

    def _show(self, args: Any) -> None:
        show_inspector(self.workspace.agent(args.args[0], "%agentnb show"), required=True)

    def _preview(self, args: Any) -> None:
        name, message = args.args[0], " ".join(args.args[1:])
        root, _, member = name.partition("/")
        agent = self.workspace.agent(root, "%agentnb preview")
        if member and not isinstance(agent, Team):
            raise UsageError(
                f"%agentnb preview {name}: {root!r} is an agent, not a team; TEAM/MEMBER previews a member of a team"
            )
        try:
            if member and isinstance(agent, Team):  # (an agent that is not a team was refused above)
                observation = agent.observe_member(member, message)
            else:
                observation = agent.observe(message)
        except AgentnbError as exc:
            raise UsageError(f"%agentnb preview {name}: {one_line(exc)}") from None
        if member:
            print(f"{name} would receive, from {root}'s state now (no model is called):")
        tools = ", ".join(t["function"]["name"] for t in observation.tools) or "-"
        print(f"system prompt:\n{observation.system_prompt or '(none)'}\n")
        print(f"user prompt:\n{observation.user_prompt}\n")
        print(f"messages: {len(observation.messages)}; tools: {tools}")
        tokens = tokens_text(observation)
        if tokens:
            print(f"prompt tokens: {tokens}")
        lines = observation.template_map.lines()
        if lines:
            print("template map:\n" + "\n".join(f"  {line}" for line in lines))
        for note in observation.notes:
            print(f"note: {note}")

    def _resume(self, args: Any) -> None:
        name = args.args[0]
        agent = self.workspace.agent(name, "%agentnb resume")
        if agent.recording is None:
            raise UsageError(
                f"%agentnb resume {name}: {name} has no recording (it was defined with --no-session or in Python)"
            )
        try:
            turns = agent.resume()
        except (AgentnbError, OSError) as exc:
            raise UsageError(f"%agentnb resume {name}: {one_line(exc)}") from None
        print(
            f"resumed {name} from {described(agent.recording.session, agent.recording.session_id)}: "
            f"state keys {list(agent.session_state)}, {turns} turn(s); new turns continue the recording"
        )

    def _trace(self, args: Any) -> None:
        name = args.args[0]
        agent = self.workspace.agent(name, "%agentnb trace")
        if not agent.history.finished_count():
            raise UsageError(
                f"%agentnb trace {name}: {name} has no finished turn to export yet; run it first"
            )
        try:
            from .. import tracing

            traces = tracing.export(agent, capture_content=True if args.content else None)
        except ImportError:
            raise UsageError(
                f"%agentnb trace: OpenTelemetry is not installed; {install_line('tracing')}"
            ) from None
        except AgentnbError as exc:
            raise UsageError(f"%agentnb trace {name}: {one_line(exc)}") from None
        print(f"exported {len(traces)} turn(s) of {name} as traces: {', '.join(traces)}")

    def _session(self, args: Any, magic: str) -> Any:
        """The session of ``save``/``load``: PATH, else the notebook's folder."""
        if len(args.args) == 2:
            return _session_at(args.args[1], magic)
        folder, notice = self.workspace.session_folder()
        if notice:
            print(notice, file=sys.stderr)
        from ..sessions import JSONSession

        return JSONSession(folder)

    def _save(self, args: Any) -> None:
        name = args.args[0]
        agent = self.workspace.agent(name, "%agentnb save")
        session = self._session(args, "%agentnb save")
        try:
            session.save_session_state_sync(name, agent=agent)
        except (AgentnbError, OSError) as exc:
            raise UsageError(f"%agentnb save {name}: {one_line(exc)}") from None
        print(
            f"saved {name} to {described(session, name)}: state keys {list(agent.session_state)}, "
            f"{len(agent.history)} turn(s)"
        )

    def _load(self, args: Any) -> None:
        name = args.args[0]
        agent = self.workspace.agent(name, "%agentnb load")
        session = self._session(args, "%agentnb load")
        try:
            session.load_session_state_sync(name, allow_not_exist=False, agent=agent)
        except (AgentnbError, OSError, ValueError) as exc:
            raise UsageError(f"%agentnb load {name}: {one_line(exc)}") from None
        print(
            f"loaded {name} from {described(session, name)}: state keys {list(agent.session_state)}, "
            f"{len(agent.history)} turn(s)"
        )

    def _reset(self, args: Any) -> None:
        name = args.args[0]
        agent = self.workspace.agent(name, "%agentnb reset")
        try:
            agent.reset()
        except AgentnbError as exc:
            raise UsageError(f"%agentnb reset {name}: {one_line(exc)}") from None
        print(f"reset {name}: state {agent.session_state}, no turns")

    def _fork(self, args: Any) -> None:
        name, new_name = args.args
        identifier(new_name, "%agentnb fork")
        agent = self.workspace.agent(name, "%agentnb fork")
        if new_name in self.workspace.ns or new_name in self.workspace.agents:
            raise UsageError(f"%agentnb fork: the name {new_name!r} is taken; pick another")
        try:
            forked = agent.fork(new_name, turn=args.turn)  # recorded beside its parent
        except (AgentnbError, OSError) as exc:
            raise UsageError(f"%agentnb fork: {one_line(exc)}") from None
        self.workspace.agents[new_name] = forked
        self.workspace.ns[new_name] = forked
        at = f" at turn {args.turn} of {len(agent.history)}" if args.turn is not None else ""
        print(
            f"forked {name} into {new_name}{at}: copied state keys {list(forked.session_state)}, "
            f"{len(forked.history)} turn(s)"
        )

    def _diff(self, args: Any) -> None:
        (left, left_turn), (right, right_turn) = (self._turn_spec(spec) for spec in args.args)
        try:
            comparison = left.compare(right, turn=left_turn, other_turn=right_turn)
        except AgentnbError as exc:
            raise UsageError(f"%agentnb diff: {one_line(exc)}") from None
        display(comparison)

    def _turn_spec(self, spec: str) -> tuple[Any, int | None]:
        """``NAME`` (the agent's last turn) or ``NAME:N`` (its turn N) for ``%agentnb diff``."""
        name, sep, number = spec.partition(":")
        agent = self.workspace.agent(name, "%agentnb diff")
        if not sep:
            return agent, None
        if not number.isdigit():
            raise UsageError(
                f"%agentnb diff: {spec!r}: write NAME:N with N a turn number (1 = the first), e.g. {name}:2"
            )
        return agent, int(number)

    def _edit(self, args: Any) -> None:
        name, path = args.args[0], args.args[1]
        agent = self.workspace.agent(name, "%agentnb edit")
        value = json_value(args.value, f"%agentnb edit {name} {path}")
        self._edited(agent, "%agentnb edit", lambda: agent.edit_state(path, value))

    def _remove(self, args: Any) -> None:
        name, path = args.args
        agent = self.workspace.agent(name, "%agentnb remove")
        self._edited(agent, "%agentnb remove", lambda: agent.remove_state(path))

    def _undo(self, args: Any) -> None:
        agent = self.workspace.agent(args.args[0], "%agentnb undo")
        self._edited(agent, "%agentnb undo", agent.undo_edit, undo=True)

    def _edited(self, agent: Any, magic: str, change: Any, *, undo: bool = False) -> None:
        """Make ``change`` (an edit, a removal or an undo) and say what it does to the next prompt."""
        try:
            before = agent.render_prompt()
            done = change()
            after = agent.render_prompt()
        except AgentnbError as exc:
            raise UsageError(f"{magic} {agent.name}: {one_line(exc)}") from None
        verb = "undid" if undo else "edited"
        tail = "" if undo else f" (%agentnb undo {agent.name} takes it back)"
        print(f"{agent.name}: {verb} {edit_text(done)}{tail}")
        print(prompt_change(before, after, done.key, counter_for(agent.model)))

    def _mcp(self, args: Any) -> None:
        print(mcp_support.servers_text())

    def _defaults(self, args: Any) -> None:
        if args.model is not None:
            found = args.model.isidentifier() and args.model in self.workspace.ns
            value = self.workspace.ns[args.model] if found else args.model
            if not isinstance(value, (Model, str)):
                raise UsageError(
                    f"%agentnb defaults: --model {args.model} is a {type(value).__name__}, not a model"
                )
            if isinstance(value, str):
                from ..model_spec import resolve_model

                try:
                    resolve_model(value)
                except AgentnbError as exc:
                    raise UsageError(f"%agentnb defaults: --model {value}: {one_line(exc)}") from None
            self.workspace.default_model = value
        if args.session_dir is not None:
            self.workspace.session_dir = args.session_dir
        model = self.workspace.default_model
        model_text = "offline" if model is None else model if isinstance(model, str) else model.label
        print(
            f"defaults: model {model_text}; session dir {self.workspace.session_dir or 'next to the notebook'}"
        )


def json_value(text: str, magic: str) -> Any:
    """The JSON value of an edit, as written (single quotes around it are allowed)."""
    candidates = [text.strip()]
    if len(candidates[0]) >= 2 and candidates[0][0] == candidates[0][-1] == "'":
        candidates.append(candidates[0][1:-1])
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except json.JSONDecodeError:
            continue
    raise UsageError(
        f"{magic}: {text.strip() or '(nothing)'} is not a JSON value; "
        'write e.g. 20, "text" (double quotes), [1, 2] or {"a": 1}'
    )


def prompt_change(before: Any, after: Any, key: str, counter: TokenCounter) -> str:
    """One line on what an edit did to the next system prompt: the sections it changed, or why
    it changed none."""

    def texts(prompt: Any) -> dict[str, str]:
        out: dict[str, str] = {}
        for section in prompt.sections:
            out[section.source] = out.get(section.source, "") + section.text
        return out

    a, b = texts(before), texts(after)
    changed = [source for source in dict.fromkeys([*a, *b]) if a.get(source) != b.get(source)]
    if changed:
        mark = "" if counter.exact else "≈"
        cost = f"{mark}{counter.count(before.text)} → {mark}{counter.count(after.text)} tokens"
        return f"next system prompt changes in: {', '.join(changed)} ({cost})"
    if key in after.hidden_keys or key in before.hidden_keys:
        return f"next system prompt: unchanged ({key!r} is hidden from the model)"
    return f"next system prompt: unchanged (no placeholder or block uses {key!r})"


def _session_at(path: str, magic: str) -> Any:
    """A session for ``%agentnb save/load NAME PATH``: SQLite for .db/.sqlite, else a JSON folder."""
    from ..sessions import JSONSession, SQLiteSession

    if path.endswith((".db", ".sqlite", ".sqlite3")):
        return SQLiteSession(path)
    if path.endswith((".json", ".jsonl", ".ipynb")):
        raise UsageError(
            f"{magic}: PATH is a folder (JSON session files go inside it) or a .db file; got {path!r}"
        )
    return JSONSession(path)
