"""``%agentnb eval NAME CASES --checks VAR --name N``: an evaluation from a line, with one-line errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from IPython.core.error import UsageError

from ..errors import AgentnbError
from ..util.text import one_line

CASE_FILES = (".jsonl", ".json", ".csv", ".yaml", ".yml")


def run_eval(workspace: Any, args: Any) -> Any:
    """Evaluate the agent named by ``args.args[0]`` over the cases named by ``args.args[1]``."""
    name, source = args.args
    agent = workspace.agent(name, "%agentnb eval")
    ns = workspace.ns
    if source in ns:
        cases = ns[source]
    elif Path(source).suffix.lower() in CASE_FILES:
        cases = source
    else:
        raise UsageError(
            f"%agentnb eval {name}: {source!r} is neither a variable holding cases nor a .jsonl/.csv/.yaml file path"
        )
    checks: Any = ()
    if args.checks:
        if args.checks not in ns:
            raise UsageError(
                f"%agentnb eval {name}: --checks {args.checks}: there is no variable {args.checks!r}; "
                "assign a list of checks to it first"
            )
        checks = ns[args.checks]
    options: dict[str, Any] = {"name": args.name or name, "folder": workspace.session_folder()[0]}
    if args.concurrency is not None:
        options["concurrency"] = args.concurrency
    if args.repeat is not None:
        options["repeat"] = args.repeat
    try:
        return agent.evaluate(cases, checks, **options)
    except AgentnbError as exc:
        raise UsageError(f"%agentnb eval {name}: {one_line(exc)}") from None


__all__ = ["run_eval"]
