"""``%%tool``: the functions (or Toolkit) a cell defines become tools."""

from __future__ import annotations

import inspect
import json
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments

from ..errors import AgentnbError
from ..tools import Tool, Toolkit
from ..util.text import one_line
from .parsing import identifier, pairs, parse_options
from .workspace import WorkspaceMagics


@magics_class
class ToolMagics(WorkspaceMagics):
    """``%%tool``: turn the functions (or Toolkit) a cell defines into tools."""

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
        args = parse_options(self.tool, line, "%%tool")
        inputs = pairs(args.inputs_from_state, "--inputs-from-state", "%%tool", "documents=docs", False)
        outputs = pairs(
            args.outputs_to_state, "--outputs-to-state", "%%tool", "total=value (or total=)", True
        )
        if args.name is not None:
            identifier(args.name, "%%tool")
        ns = self.workspace.ns
        before = {k: id(v) for k, v in ns.items()}
        error = self._run_body(cell)
        if isinstance(error, SyntaxError):
            raise UsageError(
                f"%%tool: line {error.lineno} of the cell is not valid Python ({error.msg}); no tools were registered"
            )
        if error is not None:
            raise UsageError(
                f"%%tool: the cell raised {type(error).__name__}: {error}; no tools were registered"
            )
        functions, kit_instances, kit_classes = _defined(ns, before)
        if not (functions or kit_instances or kit_classes):
            raise UsageError(
                "%%tool: the cell defined no function or Toolkit; define one, e.g. "
                "def add(a: int, b: int) -> int: ..."
            )
        if (inputs or outputs or args.name) and not functions:
            raise UsageError(
                "%%tool: --inputs-from-state/--outputs-to-state/--name apply to functions; "
                "the cell only defines a Toolkit"
            )
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
            raise UsageError(
                f"%%tool: cannot create the Toolkit ({exc}); create an instance in the cell instead"
            ) from None
        unused = {p for _, p in inputs} - {
            p for _, t in made if isinstance(t, Tool) for p in (t.inputs_from_state or {}).values()
        }
        if unused:
            raise UsageError(
                f"%%tool: --inputs-from-state names {sorted(unused)}, which no function of the cell takes as "
                "a parameter"
            )
        print("\n".join(self._register(made, kit_instances)))

    def _run_body(self, cell: str) -> BaseException | None:
        """Run the cell's body as code of this very cell: a traceback (and the functions' own,
        later) names it ``Cell In[n]`` with the cell's line numbers, the ``%%tool`` line being
        line 1. Shows the traceback and returns the error, if any."""
        shell = self.shell
        assert shell is not None  # a magic runs in a shell
        # The shell counts the running cell before it runs, so it is the count less one.
        number = max(shell.execution_count - 1, 0)
        source = "\n" + shell.transform_cell(cell)
        name = shell.compile.cache(source, number, raw_code=source)
        try:
            code = shell.compile(source, name, "exec")
        except (SyntaxError, ValueError, OverflowError) as exc:
            shell.showsyntaxerror(name)
            return exc
        try:
            exec(code, shell.user_global_ns, shell.user_ns)  # noqa: S102 - the user's own cell
        except Exception as exc:
            # From the cell's own frame on, not this one.
            shell.showtraceback((type(exc), exc, exc.__traceback__.tb_next if exc.__traceback__ else None))
            return exc
        return None

    def _register(
        self, made: list[tuple[str, Tool | Toolkit]], kit_instances: dict[str, Toolkit]
    ) -> list[str]:
        """Bind and register what the cell made; the lines that describe it."""
        ns, lines = self.workspace.ns, []
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
        return lines

    @staticmethod
    def _make_tool(
        fn: Any, inputs: list[tuple[str, str]], outputs: list[tuple[str, str]], name: str | None
    ) -> Tool:
        if isinstance(fn, Tool):
            if inputs or outputs or name:
                raise UsageError(
                    f"%%tool: {fn.name!r} is already a Tool (@tool); give the options to @tool(...) instead"
                )
            return fn
        params = set(inspect.signature(fn).parameters)
        return Tool.from_function(
            fn,
            name=name,
            inputs_from_state={k: p for k, p in inputs if p in params} or None,
            outputs_to_state={k: ({"source": s} if s else {}) for k, s in outputs} or None,
        )


def _defined(
    ns: dict[str, Any], before: dict[str, int]
) -> tuple[dict[str, Any], dict[str, Toolkit], dict[str, type]]:
    """The functions (and Tools), Toolkit instances and Toolkit classes a cell bound anew."""
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
    return functions, kit_instances, kit_classes


def _describe_tool(t: Tool, indent: str = "") -> str:
    extras = []
    if t.inputs_from_state:
        extras.append(f"inputs_from_state={t.inputs_from_state}")
    if t.outputs_to_state:
        shown = {
            k: {s: (getattr(v, "__name__", v) if s == "handler" else v) for s, v in spec.items()}
            for k, spec in t.outputs_to_state.items()
        }
        extras.append(f"outputs_to_state={shown}")
    head = f"{indent}tool {t.name}" + (f" ({'; '.join(extras)})" if extras else "")
    schema = json.dumps(t.schema(), indent=2, ensure_ascii=False)
    return head + "\n" + "\n".join(indent + "  " + line for line in schema.splitlines())


__all__ = ["ToolMagics"]
