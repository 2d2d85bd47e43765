"""``%%agent``: define an agent whose instructions are the cell body, and show its inspector."""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments

from ..agent import Agent
from ..errors import AgentnbError
from ..models import Model
from ..run.output import OUTPUT_MODES
from ..sessions.recording import replay_mode
from ..team import Team
from ..tools import Toolkit
from ..util.extras import install_line
from ..util.text import one_line
from . import mcp_support
from .output_option import output_options
from .parsing import identifier, names, parse_options
from .workspace import WorkspaceMagics


@magics_class
class AgentMagics(WorkspaceMagics):
    """``%%agent``: define an agent whose instructions are the cell body."""

    @magic_arguments()
    @argument("name", help="the Python name the agent is bound to")
    @argument(
        "--model",
        help="a model string (e.g. offline, openai:gpt-5-mini) or a variable holding a model (e.g. a ScriptedModel)",
    )
    @argument("--state", help="initial session state: JSON (quoted) or a variable holding a dict")
    @argument("--schema", help="a variable holding a state schema {key: {'type': T, 'handler': fn?}}")
    @argument("--agentic-state", action="store_true", help="give the model the update_session_state tool")
    @argument(
        "--ask-user",
        action="store_true",
        help="give the model the ask_user tool: its question pauses the turn for your answer",
    )
    @argument(
        "--break-before",
        metavar="POINTS",
        help="comma-separated points each turn stops at to be stepped through: model, tool, tool:NAME",
    )
    @argument(
        "--state-in-context",
        action="store_true",
        help="append the <session_state> block to the system prompt",
    )
    @argument(
        "--hide-keys",
        metavar="KEYS",
        help=(
            "comma-separated state keys or glob patterns (secret_*) kept out of the prompt: "
            "no <session_state> entry, no {placeholder}; tools and hooks still see them"
        ),
    )
    @argument(
        "--tools", help="comma-separated names of functions, Tools, Toolkits or lists (or tools from %%tool)"
    )
    @argument(
        "--hooks", help="comma-separated names of tool-hook functions (first = outermost) or lists of them"
    )
    @argument(
        "--mcp",
        action="append",
        metavar="SERVER",
        help="an MCP server's tools: a command (stdio) or an http(s) URL (streamable HTTP); repeatable",
    )
    @argument(
        "--context",
        help="comma-separated names of context providers (DocumentContext, ConversationMemory, ...) or lists of them",
    )
    @argument(
        "--session",
        help=(
            "where the agent's recording lives: a folder, or a variable holding a JSONSession/SQLiteSession; "
            "default: NOTEBOOK.agentnb/ beside the notebook"
        ),
    )
    @argument("--no-session", action="store_true", help="no recording: nothing replayed, nothing saved")
    @argument(
        "--history", type=int, metavar="N", help="earlier turns sent with each message (default: all of them)"
    )
    @argument("--no-history", action="store_true", help="each message goes alone, without the earlier turns")
    @argument("--max-iterations", type=int, help="most rounds of tool calls per turn (default 10)")
    @argument("--markdown", action="store_true", help="ask the model to answer in markdown")
    @argument("--description", help="the agent's description (first section of the system prompt)")
    @argument(
        "--fresh",
        action="store_true",
        help="ignore the recording: every turn calls the model and is recorded again",
    )
    @argument(
        "--members",
        help="comma-separated agents (or teams) defined above: NAME becomes a Team led by this cell's instructions",
    )
    @argument(
        "--mode",
        choices=("coordinate", "route", "broadcast"),
        help="with --members: how the leader works (default coordinate)",
    )
    @argument(
        "--member-state",
        choices=("copy", "live", "none"),
        help="with --members: how the team's state reaches members (default copy)",
    )
    @argument(
        "--share-interactions",
        action="store_true",
        help="with --members: members see this turn's earlier delegations",
    )
    @argument(
        "--team-history", type=int, metavar="N", help="with --members: members see the team's last N turns"
    )
    @argument(
        "--handoffs",
        help="comma-separated agents defined above this one may hand the conversation to (transfer_to_<name>)",
    )
    @argument(
        "--output", metavar="T", help="a type defined above (pydantic model, dataclass, ...): typed output"
    )
    @argument("--output-mode", choices=OUTPUT_MODES, help="with --output: how it is asked for (default auto)")
    @argument(
        "--output-retries", type=int, metavar="N", help="with --output: attempts after the first (default 1)"
    )
    @line_cell_magic
    def agent(self, line: str, cell: str | None = None) -> None:
        """Define an agent NAME; the cell body is its instructions (``{key}`` placeholders are
        filled from the session state). Binds NAME and shows its inspector. The line form
        ``%agent NAME ...`` defines an agent without instructions.

        The agent starts from this definition every time the cell runs. Its turns are recorded
        in NOTEBOOK.agentnb/ beside the notebook: when the notebook runs again, a turn whose
        request is unchanged is answered from the recording (no model call); an edited turn calls
        the model and is recorded again from there. ``%agentnb resume NAME`` takes over the whole
        recording without re-running the cells. Consecutive ``%%chat`` turns are one
        conversation (``--history N`` / ``--no-history`` to limit that).

        Example::

            %%agent shop --model model --state '{"shopping_list": []}' --agentic-state --state-in-context
            You keep the user's shopping list. It has {shopping_list}.
        """
        args = parse_options(self.agent, line, "%%agent")
        name = identifier(args.name, "%%agent")
        options = self._agent_options(args, name, cell)
        session, where, notice = self._session_for(
            args, f"%%agent {line}\n{cell or ''}" if cell is not None else f"%agent {line}"
        )
        listings_at = mcp_support.listing_file(session, name) if args.mcp and session is not None else None
        listings = mcp_support.read_listings(listings_at) if not args.fresh else {}
        kits = mcp_support.toolkits(args.mcp, listings) if args.mcp else []
        options["tools"] = [*(options["tools"] or []), *kits] or None
        team_options = self._team_options(args, name)
        try:
            agent = Team(name, **team_options, **options) if team_options else Agent(name, **options)
            if replay_mode() != "strict":  # strict replay writes nothing
                mcp_support.save_listings(listings_at, args.mcp or [], kits, listings)
        except (AgentnbError, OSError) as exc:
            raise UsageError(f"%%agent {name}: {one_line(exc)}") from None
        if session is not None:
            self._record(agent, session, args, where, notice)
        previous = self.workspace.agents.get(name)
        if previous is not None and previous is not agent:
            previous.detach_session()
        self.workspace.agents[name] = agent
        self.workspace.ns[name] = agent
        print(definition(agent))
        show_inspector(agent, required=False)

    def _agent_options(self, args: Any, name: str, cell: str | None) -> dict[str, Any]:
        """The keyword arguments of ``Agent`` that ``%%agent``'s options and body give, checked."""
        if args.max_iterations is not None and args.max_iterations < 0:
            raise UsageError(f"%%agent: --max-iterations must be 0 or more, got {args.max_iterations}")
        if args.history is not None and (args.history < 0 or args.no_history):
            raise UsageError(
                "%%agent: --history N takes a number of earlier turns >= 0, and contradicts --no-history; keep one"
            )
        if args.session and args.no_session:
            raise UsageError("%%agent: --session and --no-session contradict each other; keep one")
        options: dict[str, Any] = {
            "model": self._model(args.model),
            "instructions": (cell or "").strip() or None,
            "description": args.description,
            "session_state": self._state(args.state),
            "state_schema": self._schema(args.schema),
            "enable_agentic_state": args.agentic_state,
            "ask_user": args.ask_user,
            "break_before": names(args.break_before, "--break-before", "%%agent")
            if args.break_before
            else None,
            "add_session_state_to_context": args.state_in_context,
            "hide_state_keys": names(args.hide_keys, "--hide-keys", "%%agent") if args.hide_keys else None,
            "markdown": args.markdown,
            "tools": self._tools(args.tools) if args.tools else None,
            "tool_hooks": self._hooks(args.hooks) if args.hooks else None,
            "add_history_to_context": not args.no_history,
            "num_history_runs": args.history,
        }
        options.update(output_options(args, self.workspace.ns, name))
        if args.max_iterations is not None:
            options["max_tool_iterations"] = args.max_iterations
        if args.context:
            options.update(self._context(args.context))
        if args.handoffs:
            options["handoffs"] = self._agents(args.handoffs, "--handoffs", name)
        return options

    @staticmethod
    def _record(agent: Agent, session: Any, args: Any, where: str | None, notice: str | None) -> None:
        """Replay from and record to the notebook's session, and say where."""
        try:
            agent.attach_recording(session, fresh=args.fresh)
        except (AgentnbError, TypeError, ValueError, OSError) as exc:
            raise UsageError(
                f"%%agent {agent.name}: --session {args.session or where}: {one_line(exc)}"
            ) from None
        if notice:
            print(notice, file=sys.stderr)
        # The same line whether or not a recording exists yet, so a re-run shows the same output.
        print(
            f"{agent.name}: recorded in {where} (unchanged turns replay from it; "
            f"%agentnb resume {agent.name} takes it over without re-running)"
        )

    # each helper turns one option into the keyword argument Agent expects

    def _agents(self, spec: str, option: str, name: str) -> list[Agent]:
        """Agents named in ``--members`` / ``--handoffs``: defined above, each named once."""
        out: list[Agent] = []
        listed = names(spec, option, "%%agent")
        for item in listed:
            if listed.count(item) > 1:
                raise UsageError(f"%%agent {name}: {option} names {item!r} twice; name each agent once")
            found, value = self._lookup(item)
            if not found:
                value = self.workspace.agents.get(item)
            if not isinstance(value, Agent):
                known = ", ".join(sorted(self.workspace.agent_names())) or "none yet"
                what = f"is a {type(value).__name__}" if value is not None else "is not defined"
                raise UsageError(
                    f"%%agent {name}: {option} names {item!r}, which {what}; "
                    f"define it with %%agent {item} above (agents: {known})"
                )
            out.append(value)
        return out

    def _team_options(self, args: Any, name: str) -> dict[str, Any]:
        """The Team's keywords when ``--members`` makes NAME a team (else {})."""
        team_only = [
            o
            for o, v in (
                ("--mode", args.mode),
                ("--member-state", args.member_state),
                ("--share-interactions", args.share_interactions),
                ("--team-history", args.team_history),
            )
            if v
        ]
        if not args.members:
            if team_only:
                raise UsageError(
                    f"%%agent {name}: {', '.join(team_only)} belong to a team; add --members a,b"
                )
            return {}
        if args.team_history is not None and args.team_history < 1:
            raise UsageError(
                f"%%agent {name}: --team-history takes a number of turns >= 1, got {args.team_history}"
            )
        options: dict[str, Any] = {
            "members": self._agents(args.members, "--members", name),
            "mode": args.mode or "coordinate",
        }
        if args.member_state:
            options["member_state"] = args.member_state
        if args.share_interactions:
            options["share_member_interactions"] = True
        if args.team_history is not None:
            options.update(add_team_history_to_members=True, num_team_history_runs=args.team_history)
        return options

    def _lookup(self, value: str) -> tuple[bool, Any]:
        ns = self.workspace.ns
        if value.isidentifier() and value in ns:
            return True, ns[value]
        return False, None

    def _model(self, spec: str | None) -> Any:
        if spec is None:
            return self.workspace.default_model
        found, value = self._lookup(spec)
        if found:
            if isinstance(value, (Model, str)):
                return value
            raise UsageError(
                f"%%agent: --model {spec} is a {type(value).__name__}, not a model; "
                "pass a model string or a variable holding a Model"
            )
        from ..model_spec import resolve_model

        try:
            resolve_model(spec)
        except AgentnbError as exc:
            raise UsageError(
                f"%%agent: --model {spec}: {one_line(exc)} (no variable named {spec!r} either)"
            ) from None
        return spec

    def _state(self, spec: str | None) -> dict[str, Any] | None:
        if spec is None:
            return None
        found, value = self._lookup(spec)
        if not found:
            try:
                value = json.loads(spec)
            except json.JSONDecodeError as exc:
                hint = f"no variable named {spec!r} and " if spec.isidentifier() else ""
                raise UsageError(
                    f"%%agent: --state {spec}: {hint}not valid JSON ({exc.msg} at position {exc.pos}); "
                    """pass a JSON object in quotes, e.g. --state '{"items": []}', or a variable name"""
                ) from None
        if not isinstance(value, dict):
            raise UsageError(f"%%agent: --state must be a dict (JSON object), got {type(value).__name__}")
        return value

    def _schema(self, spec: str | None) -> dict[str, Any] | None:
        if spec is None:
            return None
        found, value = self._lookup(spec)
        if not found:
            raise UsageError(
                f"%%agent: --schema {spec}: no variable named {spec!r}; define the schema dict in a cell above"
            )
        if not isinstance(value, dict):
            raise UsageError(
                f"%%agent: --schema {spec} is a {type(value).__name__}; it must be a dict {{key: {{'type': T}}}}"
            )
        return value

    def _tools(self, spec: str) -> list[Any]:
        out: list[Any] = []
        for name in names(spec, "--tools", "%%agent"):
            found, value = self._lookup(name)
            if not found and name in self.workspace.tools:
                found, value = True, self.workspace.tools[name]
            if not found:
                raise UsageError(
                    f"%%agent: --tools names {name!r}, which is neither a variable nor a tool registered "
                    f"by %%tool; define it above (registered: {', '.join(self.workspace.tools) or 'none'})"
                )
            if isinstance(value, Agent):  # an agent among the tools: as a tool, with the defaults
                value = value.as_tool()
            elif not (callable(value) or isinstance(value, (Toolkit, list, tuple))):
                raise UsageError(
                    f"%%agent: --tools {name} is a {type(value).__name__}; "
                    "pass functions, Tools, Toolkits or lists of them"
                )
            out.append(value)
        return out

    def _hooks(self, spec: str) -> list[Any]:
        out: list[Any] = []
        for name in names(spec, "--hooks", "%%agent"):
            found, value = self._lookup(name)
            if not found:
                raise UsageError(
                    f"%%agent: --hooks names {name!r}, but there is no variable with that name; "
                    "define the hook function above"
                )
            items = list(value) if isinstance(value, (list, tuple)) else [value]
            for item in items:
                if not callable(item):
                    raise UsageError(
                        f"%%agent: --hooks {name} holds a {type(item).__name__}; a hook is a function"
                    )
            out.extend(items)
        return out

    def _context(self, spec: str) -> dict[str, Any]:
        providers: list[Any] = []
        for name in names(spec, "--context", "%%agent"):
            found, value = self._lookup(name)
            if not found:
                raise UsageError(
                    f"%%agent: --context names {name!r}, but there is no variable with that name; "
                    "create the provider above"
                )
            items = list(value) if isinstance(value, (list, tuple)) else [value]
            for item in items:
                if not callable(getattr(item, "get_blocks", None)):
                    what = (
                        f"is a {type(value).__name__}" if item is value else f"holds a {type(item).__name__}"
                    )
                    raise UsageError(
                        f"%%agent: --context {name} {what}, not a context provider (no get_blocks method); "
                        "pass a DocumentContext, DataFrameContext, ConversationMemory or an object with "
                        "get_blocks(query, top_k)"
                    )
            providers.extend(items)
        return {"context_providers": providers}

    def _session(self, spec: str) -> Any:
        """A SessionBase held by a variable, or a folder for a JSON session."""
        found, value = self._lookup(spec)
        if found:
            return value
        return spec

    def _session_for(self, args: Any, source: str) -> tuple[Any, str | None, str | None]:
        """The session an agent autosaves to, how to name it, and a notice when the notebook's
        location had to be guessed. Default: ``NOTEBOOK.agentnb/`` beside the notebook."""
        if args.no_session:
            return None, None, None
        if args.session:
            session = self._session(args.session)
            return session, where(session), None
        folder, notice = self.workspace.session_folder(source)
        return folder, where(folder), notice


def definition(agent: Agent) -> str:
    """The line under ``%%agent``: the agent as defined, without a turn count, which the saved
    output would keep unchanged while turns run (the inspector below it counts them)."""
    return re.sub(r", turns=\d+", "", repr(agent), count=1)


def show_inspector(agent: Agent, *, required: bool) -> None:
    """Display the agent's inspector (one per agent).

    When it was asked for (``%agentnb show``) a failure is a UsageError; when it only comes
    with ``%%agent`` it is a one-line notice, so the agent is still defined."""
    try:
        from .inspector import Inspector

        widget = Inspector.for_agent(agent)
    except Exception as exc:
        message = f"the inspector is not available ({type(exc).__name__}: {one_line(exc)})"
        if required:
            raise UsageError(f"%agentnb show: {message}; {install_line('notebook')}") from None
        print(f"note: {message}", file=sys.stderr)
        return
    widget.show()


def where(session: Any) -> str:
    """A session's location for messages: relative to the working directory when inside it."""
    import os

    folder = getattr(session, "save_dir", None) or getattr(session, "path", None) or session
    if not isinstance(folder, (str, os.PathLike)):
        return type(session).__name__
    try:
        relative = os.path.relpath(folder)
    except ValueError:
        return str(folder)
    return str(folder) if relative.startswith("..") else relative


def described(session: Any, session_id: str) -> str:
    """Where one session is stored, as ``where`` shows its folder (the same text on every machine
    for a notebook's own folder)."""
    folder = getattr(session, "save_dir", None) or getattr(session, "path", None)
    text = session.describe(session_id)
    return text.replace(str(folder), where(session), 1) if folder is not None else text


__all__ = ["AgentMagics", "described", "show_inspector", "where"]
