"""``%%tool``, ``%%agent``, ``%%chat`` and ``%agentnb``.

Each magic parses its options, checks them against the user namespace, then hands over to a core
object (Tool, Agent, agent.run / observe). Anything wrong with the input is a one-line
``UsageError`` that says what is wrong and how to fix it.
"""

from __future__ import annotations

import copy
import inspect
import json
import keyword
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from ..agent import Agent
from ..errors import AgentnbError, one_line
from ..history import History
from ..models import Model
from ..state import replace_values
from ..tools import Tool, Toolkit
from .record import LiveTurn


# --- the workspace: what the magics of one shell share ---------------------------------------


@dataclass
class AgentEntry:
    """An agent defined by ``%%agent``, with what is needed to rebuild it (reset / fork)."""

    agent: Agent
    """The live agent."""
    options: dict[str, Any]
    """The keyword arguments it was built with."""
    initial_state: dict[str, Any]
    """Its state as defined (what ``%agentnb reset`` returns to)."""


@dataclass
class Snapshot:
    """A copy of an agent's state, messages and turns (``%agentnb save`` without sessions)."""

    state: dict[str, Any]
    messages: list[Any]
    turns: list[Any]


@dataclass
class Workspace:
    """Agents, ``%%tool`` registrations and defaults of one IPython shell."""

    shell: Any
    agents: dict[str, AgentEntry] = field(default_factory=dict)
    """Agents defined by %%agent, by name."""
    tools: dict[str, Tool | Toolkit] = field(default_factory=dict)
    """Tools and toolkits registered by %%tool, by name."""
    default_model: Any = None
    """The model used when %%agent has no --model (set by %agentnb defaults)."""
    session_dir: str | None = None
    """Where sessions go (set by %agentnb defaults); None = next to the notebook."""
    snapshots: dict[str, Snapshot] = field(default_factory=dict)
    """In-memory saves, by agent name."""

    @property
    def ns(self) -> dict[str, Any]:
        return self.shell.user_ns

    def agent(self, name: str, what: str) -> Agent:
        """The agent bound to ``name``; a UsageError when there is none."""
        value = self.ns.get(name)
        if isinstance(value, Agent):
            return value
        if value is None and name in self.agents:
            return self.agents[name].agent
        known = ", ".join(sorted(self.agent_names())) or "none yet"
        if value is not None:
            raise UsageError(
                f"{what}: {name!r} is a {type(value).__name__}, not an agent; define one with "
                f"%%agent {name} (agents: {known})"
            )
        raise UsageError(f"{what}: there is no agent named {name!r}; define it with %%agent {name} (agents: {known})")

    def agent_names(self) -> list[str]:
        names = dict.fromkeys(self.agents)
        names.update(dict.fromkeys(k for k, v in self.ns.items() if isinstance(v, Agent) and not k.startswith("_")))
        return list(names)


def register_magics(shell: Any) -> Workspace:
    """Register the magics on ``shell`` with a fresh workspace; returns the workspace."""
    workspace = Workspace(shell)
    for cls in (ToolMagics, AgentMagics, ChatMagics, AgentnbMagics):
        shell.register_magics(cls(shell, workspace))
    return workspace


# --- parsing helpers ---------------------------------------------------------------------------


def _parse(func: Callable[..., Any], line: str, magic: str) -> Any:
    """parse_argstring with a one-line error that names the magic and where its help is."""
    try:
        args = parse_argstring(func, line)
    except UsageError as exc:
        raise UsageError(f"{magic}: {exc}. See {magic}? for the options.") from None
    except ValueError as exc:  # shlex: unbalanced quotes
        raise UsageError(f"{magic}: cannot read the options ({exc}); close every quote") from None
    # IPython splits magic lines in non-POSIX mode, which keeps the quotes around a value.
    for key, value in vars(args).items():
        if isinstance(value, str):
            setattr(args, key, _unquote(value))
        elif isinstance(value, list):
            setattr(args, key, [_unquote(v) if isinstance(v, str) else v for v in value])
    return args


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def _identifier(name: str, magic: str) -> str:
    if not name.isidentifier() or keyword.iskeyword(name):
        raise UsageError(f"{magic}: {name!r} is not a valid Python name; use letters, digits and underscores")
    return name


def _names(text: str, option: str, magic: str) -> list[str]:
    names = [n.strip() for n in text.split(",")]
    if not all(names):
        raise UsageError(f"{magic}: {option} {text!r} has an empty name; write comma-separated names like a,b")
    return names


def _pairs(items: list[str] | None, option: str, magic: str, example: str, allow_empty: bool) -> list[tuple[str, str]]:
    out = []
    for item in items or ():
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not key or (not value and not allow_empty) or (not sep and not allow_empty):
            raise UsageError(f"{magic}: {option} {item!r} must look like {example}")
        out.append((key, value))
    return out


# --- %%tool ----------------------------------------------------------------------------------


@magics_class
class ToolMagics(Magics):
    """``%%tool``: turn the functions (or Toolkit) a cell defines into tools."""

    def __init__(self, shell: Any, workspace: Workspace) -> None:
        super().__init__(shell)
        self.workspace = workspace

    @magic_arguments()
    @argument(
        "--inputs-from-state",
        nargs="+",
        metavar="KEY=PARAM",
        help="fill parameter PARAM from state key KEY at call time (hidden from the model)",
    )
    @argument(
        "--outputs-to-state",
        nargs="+",
        metavar="KEY=SOURCE",
        help="write the result (or its SOURCE entry; KEY= for the whole result) to state key KEY",
    )
    @argument("--name", help="the tool's name (a cell defining one function)")
    @cell_magic
    def tool(self, line: str, cell: str) -> None:
        """Run the cell; every function it defines (or Toolkit it defines) becomes a tool.

        The tools are registered for ``%%agent --tools`` and bound in the namespace as Tool
        objects (still callable like the functions). Prints each tool with its JSON schema.

        Example::

            %%tool --outputs-to-state total=
            def add(a: int, b: int) -> int:
                "Add two numbers."
                return a + b
        """
        args = _parse(self.tool, line, "%%tool")
        inputs = _pairs(args.inputs_from_state, "--inputs-from-state", "%%tool", "documents=docs", False)
        outputs = _pairs(args.outputs_to_state, "--outputs-to-state", "%%tool", "total=value (or total=)", True)
        if args.name is not None:
            _identifier(args.name, "%%tool")
        ns = self.workspace.ns
        before = {k: id(v) for k, v in ns.items()}
        result = self.shell.run_cell(cell, store_history=False)
        if not result.success:
            error = result.error_in_exec or result.error_before_exec
            raise UsageError(f"%%tool: the cell raised {type(error).__name__}: {error}; no tools were registered")
        module = ns.get("__name__", "__main__")
        new = {k: v for k, v in ns.items() if not k.startswith("_") and before.get(k) != id(v)}
        functions = {
            k: v
            for k, v in new.items()
            if isinstance(v, Tool) or (inspect.isfunction(v) and getattr(v, "__module__", None) == module)
        }
        kit_instances = {k: v for k, v in new.items() if isinstance(v, Toolkit)}
        kit_classes = {
            k: v
            for k, v in new.items()
            if inspect.isclass(v)
            and issubclass(v, Toolkit)
            and v is not Toolkit
            and not any(type(i) is v for i in kit_instances.values())
        }
        if not (functions or kit_instances or kit_classes):
            raise UsageError(
                "%%tool: the cell defined no function or Toolkit; define one, e.g. "
                "def add(a: int, b: int) -> int: ..."
            )
        if (inputs or outputs or args.name) and not functions:
            raise UsageError("%%tool: --inputs-from-state/--outputs-to-state/--name apply to functions; the cell only defines a Toolkit")
        if (outputs or args.name) and len(functions) > 1:
            raise UsageError(
                f"%%tool: --outputs-to-state/--name need a cell that defines one function, this one "
                f"defines {len(functions)} ({', '.join(functions)}); split the cell"
            )
        made: list[tuple[str, Tool | Toolkit]] = []
        try:
            for var, fn in functions.items():
                made.append((var, self._make_tool(fn, inputs, outputs, args.name)))
            for var, kit in kit_instances.items():
                made.append((var, kit))
            for var, cls in kit_classes.items():
                made.append((var, cls()))
        except AgentnbError as exc:
            raise UsageError(f"%%tool: {one_line(exc)}") from None
        except TypeError as exc:
            raise UsageError(f"%%tool: cannot create the Toolkit ({exc}); create an instance in the cell instead") from None
        unused = {p for _, p in inputs} - {
            p for _, t in made if isinstance(t, Tool) for p in t.inputs_from_state.values()
        }
        if unused:
            raise UsageError(f"%%tool: --inputs-from-state names {sorted(unused)}, which no function of the cell takes as a parameter")
        lines = []
        for var, item in made:
            if isinstance(item, Toolkit):
                if var in kit_instances:
                    ns[var] = item
                self.workspace.tools[item.name] = item
                for t in item.tools:
                    self.workspace.tools[t.name] = t
                lines.append(f"toolkit {item.name}: {len(item.tools)} tool(s)")
                lines.extend(_describe_tool(t, indent="  ") for t in item.tools)
            else:
                ns[var] = item
                self.workspace.tools[item.name] = item
                lines.append(_describe_tool(item))
        print("\n".join(lines))

    @staticmethod
    def _make_tool(fn: Any, inputs: list[tuple[str, str]], outputs: list[tuple[str, str]], name: str | None) -> Tool:
        if isinstance(fn, Tool):
            if inputs or outputs or name:
                raise UsageError(f"%%tool: {fn.name!r} is already a Tool (@tool); give the options to @tool(...) instead")
            return fn
        params = set(inspect.signature(fn).parameters)
        return Tool.from_function(
            fn,
            name=name,
            inputs_from_state={k: p for k, p in inputs if p in params} or None,
            outputs_to_state={k: ({"source": s} if s else {}) for k, s in outputs} or None,
        )


def _describe_tool(t: Tool, indent: str = "") -> str:
    extras = []
    if t.inputs_from_state:
        extras.append(f"inputs_from_state={t.inputs_from_state}")
    if t.outputs_to_state:
        shown = {k: {s: (getattr(v, "__name__", v) if s == "handler" else v) for s, v in spec.items()} for k, spec in t.outputs_to_state.items()}
        extras.append(f"outputs_to_state={shown}")
    head = f"{indent}tool {t.name}" + (f" ({'; '.join(extras)})" if extras else "")
    schema = json.dumps(t.schema(), indent=2, ensure_ascii=False)
    return head + "\n" + "\n".join(indent + "  " + line for line in schema.splitlines())


# --- %%agent ---------------------------------------------------------------------------------


@magics_class
class AgentMagics(Magics):
    """``%%agent``: define an agent whose instructions are the cell body."""

    def __init__(self, shell: Any, workspace: Workspace) -> None:
        super().__init__(shell)
        self.workspace = workspace

    @magic_arguments()
    @argument("name", help="the Python name the agent is bound to")
    @argument("--model", help="a model string (e.g. offline, openai:gpt-5-mini) or a variable holding a model (e.g. a ScriptedModel)")
    @argument("--state", help="initial session state: JSON (quoted) or a variable holding a dict")
    @argument("--schema", help="a variable holding a state schema {key: {'type': T, 'handler': fn?}}")
    @argument("--agentic-state", action="store_true", help="give the model the update_session_state tool")
    @argument("--state-in-context", action="store_true", help="append the <session_state> block to the system prompt")
    @argument("--tools", help="comma-separated names of functions, Tools, Toolkits or lists (or tools from %%tool)")
    @argument("--hooks", help="comma-separated names of tool-hook functions (first = outermost) or lists of them")
    @argument("--context", help="comma-separated names of context providers (DocumentContext, ConversationMemory, ...) or lists of them")
    @argument("--session", help="where to save after every turn (and restore from on re-run): a folder, or a variable holding a JSONSession/SQLiteSession; default: NOTEBOOK.agentnb/ beside the notebook")
    @argument("--no-session", action="store_true", help="do not save this agent's turns")
    @argument("--max-iterations", type=int, help="most rounds of tool calls per turn (default 10)")
    @argument("--markdown", action="store_true", help="ask the model to answer in markdown")
    @argument("--description", help="the agent's description (first section of the system prompt)")
    @argument("--fresh", action="store_true", help="on re-run, drop the previous state and history")
    @line_cell_magic
    def agent(self, line: str, cell: str | None = None) -> None:
        """Define an agent NAME; the cell body is its instructions (``{key}`` placeholders are
        filled from the session state). Binds NAME and shows its inspector. The line form
        ``%agent NAME ...`` defines an agent without instructions.

        Re-running the cell redefines the agent and keeps its state and history, unless
        ``--fresh``.

        Example::

            %%agent shop --model model --state '{"shopping_list": []}' --agentic-state --state-in-context
            You keep the user's shopping list. It has {shopping_list}.
        """
        args = _parse(self.agent, line, "%%agent")
        name = _identifier(args.name, "%%agent")
        if args.max_iterations is not None and args.max_iterations < 0:
            raise UsageError(f"%%agent: --max-iterations must be 0 or more, got {args.max_iterations}")
        options: dict[str, Any] = {
            "model": self._model(args.model),
            "instructions": (cell or "").strip() or None,
            "description": args.description,
            "session_state": self._state(args.state),
            "state_schema": self._schema(args.schema),
            "enable_agentic_state": args.agentic_state,
            "add_session_state_to_context": args.state_in_context,
            "markdown": args.markdown,
            "tools": self._tools(args.tools) if args.tools else None,
            "tool_hooks": self._hooks(args.hooks) if args.hooks else None,
        }
        if args.max_iterations is not None:
            options["max_tool_iterations"] = args.max_iterations
        if args.context:
            options.update(self._context(args.context))
        if args.session and args.no_session:
            raise UsageError("%%agent: --session and --no-session contradict each other; keep one")
        session, where, notice = self._session_for(args)
        try:
            agent = Agent(name, **options)
        except AgentnbError as exc:
            raise UsageError(f"%%agent {name}: {one_line(exc)}") from None
        previous = self.workspace.agents.get(name)
        restored = False
        if session is not None:
            try:
                restored = agent.attach_session(session, fresh=args.fresh)
            except (AgentnbError, TypeError, ValueError, OSError) as exc:
                raise UsageError(f"%%agent {name}: --session {args.session}: {one_line(exc)}") from None
            if notice:
                print(notice, file=sys.stderr)
            if restored:
                print(
                    f"{name}: restored its session from {where} (state keys: "
                    f"{', '.join(agent.session_state) or 'none'}; {len(agent.history)} turn(s)); "
                    f"add --fresh to start over"
                )
            else:
                print(f"{name}: saving every turn to {where}")
        if previous is not None and not args.fresh and not restored:
            print(self._carry_over(previous.agent, agent))
        initial = copy.deepcopy(agent.session_state) if previous is None or args.fresh else previous.initial_state
        self.workspace.agents[name] = AgentEntry(agent=agent, options=options, initial_state=initial)
        self.workspace.ns[name] = agent
        print(repr(agent))
        show_inspector(agent, required=False)

    # each helper turns one option into the keyword argument Agent expects

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
            raise UsageError(f"%%agent: --model {spec} is a {type(value).__name__}, not a model; pass a model string or a variable holding a Model")
        from ..models import resolve_model

        try:
            resolve_model(spec)
        except AgentnbError as exc:
            raise UsageError(f"%%agent: --model {spec}: {one_line(exc)} (no variable named {spec!r} either)") from None
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
            raise UsageError(f"%%agent: --schema {spec}: no variable named {spec!r}; define the schema dict in a cell above")
        if not isinstance(value, dict):
            raise UsageError(f"%%agent: --schema {spec} is a {type(value).__name__}; it must be a dict {{key: {{'type': T}}}}")
        return value

    def _tools(self, spec: str) -> list[Any]:
        out: list[Any] = []
        for name in _names(spec, "--tools", "%%agent"):
            found, value = self._lookup(name)
            if not found and name in self.workspace.tools:
                found, value = True, self.workspace.tools[name]
            if not found:
                raise UsageError(
                    f"%%agent: --tools names {name!r}, which is neither a variable nor a tool registered "
                    f"by %%tool; define it above (registered: {', '.join(self.workspace.tools) or 'none'})"
                )
            if not (callable(value) or isinstance(value, (Toolkit, list, tuple))):
                raise UsageError(f"%%agent: --tools {name} is a {type(value).__name__}; pass functions, Tools, Toolkits or lists of them")
            out.append(value)
        return out

    def _hooks(self, spec: str) -> list[Any]:
        out: list[Any] = []
        for name in _names(spec, "--hooks", "%%agent"):
            found, value = self._lookup(name)
            if not found:
                raise UsageError(f"%%agent: --hooks names {name!r}, but there is no variable with that name; define the hook function above")
            items = list(value) if isinstance(value, (list, tuple)) else [value]
            for item in items:
                if not callable(item):
                    raise UsageError(f"%%agent: --hooks {name} holds a {type(item).__name__}; a hook is a function")
            out.extend(items)
        return out

    def _context(self, spec: str) -> dict[str, Any]:
        providers: list[Any] = []
        for name in _names(spec, "--context", "%%agent"):
            found, value = self._lookup(name)
            if not found:
                raise UsageError(f"%%agent: --context names {name!r}, but there is no variable with that name; create the provider above")
            items = list(value) if isinstance(value, (list, tuple)) else [value]
            for item in items:
                if not callable(getattr(item, "get_blocks", None)):
                    what = f"is a {type(value).__name__}" if item is value else f"holds a {type(item).__name__}"
                    raise UsageError(
                        f"%%agent: --context {name} {what}, not a context provider (no get_blocks method); "
                        f"pass a DocumentContext, DataFrameContext, ConversationMemory or an object with get_blocks(query, top_k)"
                    )
            providers.extend(items)
        return {"context_providers": providers}

    def _session(self, spec: str) -> Any:
        """A SessionBase held by a variable, or a folder for a JSON session."""
        found, value = self._lookup(spec)
        if found:
            return value
        return spec

    def _session_for(self, args: Any) -> tuple[Any, str | None, str | None]:
        """The session an agent autosaves to, how to name it, and a notice when the notebook's
        location had to be guessed. Default: ``NOTEBOOK.agentnb/`` beside the notebook."""
        if args.no_session:
            return None, None, None
        if args.session:
            session = self._session(args.session)
            return session, _where(session), None
        if self.workspace.session_dir is not None:
            return self.workspace.session_dir, _where(self.workspace.session_dir), None
        from ..sessions import find_notebook_path

        location = find_notebook_path(self.workspace.ns)
        return str(location.session_dir), _where(location.session_dir), location.notice


    @staticmethod
    def _carry_over(old: Agent, new: Agent) -> str:
        try:
            new.state.replace_data(copy.deepcopy(old.session_state))
        except AgentnbError as exc:
            raise UsageError(
                f"%%agent {new.name}: the previous state does not fit the new definition "
                f"({one_line(exc)}); add --fresh to start from the new state"
            ) from None
        new.state.set("messages", list(old.state.messages), handler_override=replace_values)
        new.history = old.history
        new.session_id = old.session_id
        keys = ", ".join(new.session_state) or "none"
        return (
            f"{new.name} redefined: kept its state (keys: {keys}) and history ({len(new.history)} "
            f"turn(s)) from the previous definition; add --fresh to start over"
        )


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
            raise UsageError(f"%agentnb show: {message}; install agentnb[notebook]") from None
        print(f"note: {message}", file=sys.stderr)
        return
    display(widget)


# --- %%chat ----------------------------------------------------------------------------------


@magics_class
class ChatMagics(Magics):
    """``%%chat``: run one turn of an agent with the cell body as the user's message."""

    def __init__(self, shell: Any, workspace: Workspace) -> None:
        super().__init__(shell)
        self.workspace = workspace

    @magic_arguments()
    @argument("name", help="the agent to talk to")
    @cell_magic
    def chat(self, line: str, cell: str) -> None:
        """Send the cell body to agent NAME. The answer streams into the cell; when the turn
        ends the cell keeps a static record (answer, tool calls, state changes).

        ``NAME.run("...")`` in plain Python runs the same turn and updates the same inspector.

        Example::

            %%chat shop
            Add milk and eggs.
        """
        args = _parse(self.chat, line, "%%chat")
        agent = self.workspace.agent(args.name, "%%chat")
        message = cell.strip()
        if not message:
            raise UsageError(f"%%chat {args.name}: the cell is empty; write the message to send below the %%chat line")
        live = LiveTurn()
        try:
            result = agent.run(message, on_event=live)
        except AgentnbError as exc:
            # A failed run carries its result (AgentRunError, or agentnb's own error with
            # .result attached): leave its record, then say in one line what went wrong.
            result = getattr(exc, "result", None)
            turn = getattr(result, "turn", None)
            if turn is None:
                raise UsageError(f"%%chat {args.name}: {one_line(exc)}") from None
            live.finish(turn)
            raise UsageError(f"%%chat {args.name}: turn {turn.index} failed: {one_line(exc)}") from None
        assert result.turn is not None
        live.finish(result.turn)


# --- %agentnb --------------------------------------------------------------------------------

COMMANDS = ("list", "show", "preview", "save", "load", "reset", "fork", "defaults")


@magics_class
class AgentnbMagics(Magics):
    """``%agentnb``: list, show, preview, save / load / reset / fork agents; set defaults."""

    def __init__(self, shell: Any, workspace: Workspace) -> None:
        super().__init__(shell)
        self.workspace = workspace

    @magic_arguments()
    @argument("command", choices=COMMANDS, help="what to do (see below)")
    @argument("args", nargs="*", help="the command's arguments")
    @argument("--model", help="defaults: the model for agents defined without --model")
    @argument("--session-dir", help="defaults: the folder sessions are kept in")
    @line_magic
    def agentnb(self, line: str) -> None:
        """Manage the notebook's agents.

        Commands::

            %agentnb list                    agents with their model, tools, turns and state keys
            %agentnb show NAME               the agent's inspector
            %agentnb preview NAME MESSAGE    what the model would receive, without calling it
            %agentnb save NAME               keep a copy of the state, messages and turns
            %agentnb load NAME               go back to the saved copy
            %agentnb reset NAME              back to the state it was defined with, no turns
            %agentnb fork NAME NEW           a new agent NEW with the same definition and a copy of the state
            %agentnb defaults [--model M] [--session-dir D]
        """
        args = _parse(self.agentnb, line, "%agentnb")
        expected = {
            "list": (0, 0, ""),
            "show": (1, 1, " NAME"),
            "preview": (2, None, " NAME MESSAGE"),
            "save": (1, 2, " NAME"),
            "load": (1, 2, " NAME"),
            "reset": (1, 1, " NAME"),
            "fork": (2, 2, " NAME NEW"),
            "defaults": (0, 0, " [--model M] [--session-dir D]"),
        }
        low, high, usage = expected[args.command]
        if len(args.args) < low or (high is not None and len(args.args) > high):
            raise UsageError(f"%agentnb {args.command}: expected %agentnb {args.command}{usage}")
        if args.command != "defaults" and (args.model or args.session_dir):
            raise UsageError("%agentnb: --model and --session-dir belong to %agentnb defaults")
        getattr(self, f"_{args.command}")(args)

    def _list(self, args: Any) -> None:
        names = self.workspace.agent_names()
        if not names:
            print("no agents yet; define one with %%agent NAME")
            return
        for name in names:
            agent = self.workspace.agent(name, "%agentnb list")
            tools = ", ".join(t.name for t in agent.all_tools()) or "-"
            keys = ", ".join(agent.session_state) or "-"
            print(f"{name}: model {agent.model.label}; tools: {tools}; turns: {len(agent.history)}; state keys: {keys}")

    def _show(self, args: Any) -> None:
        show_inspector(self.workspace.agent(args.args[0], "%agentnb show"), required=True)

    def _preview(self, args: Any) -> None:
        name, message = args.args[0], " ".join(args.args[1:])
        agent = self.workspace.agent(name, "%agentnb preview")
        try:
            observation = agent.observe(message)
        except AgentnbError as exc:
            raise UsageError(f"%agentnb preview {name}: {one_line(exc)}") from None
        tools = ", ".join(t["function"]["name"] for t in observation.tools) or "-"
        print(f"system prompt:\n{observation.system_prompt or '(none)'}\n")
        print(f"user prompt:\n{observation.user_prompt}\n")
        print(f"messages: {len(observation.messages)}; tools: {tools}")
        for note in observation.notes:
            print(f"note: {note}")

    def _save(self, args: Any) -> None:
        name = args.args[0]
        agent = self.workspace.agent(name, "%agentnb save")
        if len(args.args) == 2:
            session = _session_at(args.args[1], "%agentnb save")
            try:
                session.save_session_state_sync(name, agent=agent)
            except (AgentnbError, OSError) as exc:
                raise UsageError(f"%agentnb save {name}: {one_line(exc)}") from None
            print(f"saved {name} to {session.describe(name)}: state keys {list(agent.session_state)}, {len(agent.history)} turn(s)")
            return
        self.workspace.snapshots[name] = Snapshot(
            state=copy.deepcopy(agent.session_state),
            messages=list(agent.state.messages),
            turns=list(agent.history),
        )
        print(f"saved {name}: state keys {list(agent.session_state)}, {len(agent.history)} turn(s) (in memory)")

    def _load(self, args: Any) -> None:
        name = args.args[0]
        agent = self.workspace.agent(name, "%agentnb load")
        if len(args.args) == 2:
            session = _session_at(args.args[1], "%agentnb load")
            try:
                session.load_session_state_sync(name, allow_not_exist=False, agent=agent)
            except (AgentnbError, OSError, ValueError) as exc:
                raise UsageError(f"%agentnb load {name}: {one_line(exc)}") from None
            print(f"loaded {name} from {session.describe(name)}: state keys {list(agent.session_state)}, {len(agent.history)} turn(s)")
            return
        snapshot = self.workspace.snapshots.get(name)
        if snapshot is None:
            raise UsageError(f"%agentnb load {name}: nothing saved for {name!r}; run %agentnb save {name} first")
        _restore(agent, snapshot.state, snapshot.messages, snapshot.turns)
        print(f"loaded {name}: state keys {list(agent.session_state)}, {len(agent.history)} turn(s)")

    def _reset(self, args: Any) -> None:
        name = args.args[0]
        agent = self.workspace.agent(name, "%agentnb reset")
        entry = self.workspace.agents.get(name)
        initial = entry.initial_state if entry is not None and entry.agent is agent else {}
        _restore(agent, initial, [], [])
        print(f"reset {name}: state {initial}, no turns")

    def _fork(self, args: Any) -> None:
        name, new_name = args.args
        _identifier(new_name, "%agentnb fork")
        agent = self.workspace.agent(name, "%agentnb fork")
        entry = self.workspace.agents.get(name)
        if entry is None or entry.agent is not agent:
            raise UsageError(f"%agentnb fork: {name!r} was not defined with %%agent, so its definition is unknown; define it with %%agent to fork it")
        if new_name in self.workspace.ns or new_name in self.workspace.agents:
            raise UsageError(f"%agentnb fork: the name {new_name!r} is taken; pick another")
        try:
            forked = Agent(new_name, **entry.options)
        except AgentnbError as exc:
            raise UsageError(f"%agentnb fork: {one_line(exc)}") from None
        _restore(forked, agent.session_state, agent.state.messages, list(agent.history))
        self.workspace.agents[new_name] = AgentEntry(forked, dict(entry.options), copy.deepcopy(entry.initial_state))
        self.workspace.ns[new_name] = forked
        print(f"forked {name} into {new_name}: copied state keys {list(forked.session_state)}, {len(forked.history)} turn(s)")

    def _defaults(self, args: Any) -> None:
        if args.model is not None:
            found = args.model.isidentifier() and args.model in self.workspace.ns
            value = self.workspace.ns[args.model] if found else args.model
            if not isinstance(value, (Model, str)):
                raise UsageError(f"%agentnb defaults: --model {args.model} is a {type(value).__name__}, not a model")
            if isinstance(value, str):
                from ..models import resolve_model

                try:
                    resolve_model(value)
                except AgentnbError as exc:
                    raise UsageError(f"%agentnb defaults: --model {value}: {one_line(exc)}") from None
            self.workspace.default_model = value
        if args.session_dir is not None:
            self.workspace.session_dir = args.session_dir
        model = self.workspace.default_model
        model_text = "offline" if model is None else model if isinstance(model, str) else model.label
        print(f"defaults: model {model_text}; session dir {self.workspace.session_dir or 'next to the notebook'}")


def _where(session: Any) -> str:
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


def _session_at(path: str, magic: str) -> Any:
    """A session for ``%agentnb save/load NAME PATH``: SQLite for .db/.sqlite, else a JSON folder."""
    from ..sessions import JSONSession, SQLiteSession

    if path.endswith((".db", ".sqlite", ".sqlite3")):
        return SQLiteSession(path)
    if path.endswith((".json", ".jsonl", ".ipynb")):
        raise UsageError(f"{magic}: PATH is a folder (JSON session files go inside it) or a .db file; got {path!r}")
    return JSONSession(path)


def _restore(agent: Agent, state: dict[str, Any], messages: list[Any], turns: list[Any]) -> None:
    """Put copies of ``state``, ``messages`` and ``turns`` into ``agent``."""
    try:
        agent.state.replace_data(copy.deepcopy(state))
    except AgentnbError as exc:
        raise UsageError(f"cannot restore {agent.name}: {one_line(exc)}") from None
    agent.state.set("messages", list(messages), handler_override=replace_values)
    agent.history = History(list(turns))


__all__ = ["AgentMagics", "AgentnbMagics", "ChatMagics", "ToolMagics", "Workspace", "register_magics"]
