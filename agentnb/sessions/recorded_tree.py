"""The agents one recording (or autosaved session) covers: an agent and every agent its runs
delegate to (a team's members, agents as tools, handoff targets), each a module of the same
session named by its path (``agent``, ``agent/researcher``, ``agent/desk/analyst``). Each
replays by its own turns and calls, so a replayed turn shows the times it was recorded with in
every run of its tree; each is restored with the others, so a handoff target keeps its
conversation."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

from ..errors import ConfigurationError, SessionModuleError


def recorded_tree(agent: Any, root: str) -> dict[str, Any]:
    """``{root: agent, "<root>/<delegate>": delegate, ...}`` at any depth, depth first in the
    order the agents delegate; an agent reached twice (a cycle of handoffs, a shared helper) is
    recorded once, where it was reached first."""
    tree: dict[str, Any] = {root: agent}
    seen = {id(agent)}

    def visit(parent: Any, path: str) -> None:
        for child in parent.delegates():
            if id(child) in seen:
                continue
            where = f"{path}/{child.name}"
            if where in tree:
                raise ConfigurationError(
                    f"agent {parent.name!r} delegates to two agents named {child.name!r} ({where}); "
                    f"give each its own name so that each is recorded as a module of its own"
                )
            seen.add(id(child))
            tree[where] = child
            visit(child, where)

    visit(agent, root)
    return tree


def takes_over(own: Any, where: str, tree: Mapping[str, Any]) -> bool:
    """Whether an agent of ``tree`` whose recording (or autosave) is ``own`` is to be recorded
    (saved) with the root of ``tree`` at ``where``: unless ``own`` is part of the recording
    (autosave) of an agent outside ``tree``, somewhere else (a fork shares its parent's
    delegates; they stay recorded with the parent)."""
    if own is None or own.covered_by is None or own.where() == where:
        return True
    return any(own.covered_by is other for other in tree.values())


def take_over(recording: Any, agents: Mapping[str, Any]) -> None:
    """Load ``agents`` (by module name) from ``recording``'s session, all or nothing and none of
    them running a turn meanwhile, and continue each one's recording from there."""
    with contextlib.ExitStack() as stack:
        for agent in agents.values():
            stack.enter_context(agent._running())
        recording.session.load_session_state_sync(recording.session_id, **agents)
    for agent in agents.values():
        agent.recording.resume()


@contextlib.contextmanager
def naming(agent: Any, root: str, fix: str) -> Iterator[None]:
    """A module of ``agent``'s tree (saved under ``root``) that cannot be loaded: the error
    names the agent it belongs to, says that nothing was loaded, and how to fix it (``fix``)."""
    try:
        yield
    except SessionModuleError as exc:
        raise tree_error(agent, root, exc, fix) from None


def tree_error(agent: Any, root: str, exc: SessionModuleError, fix: str) -> SessionModuleError:
    """``exc`` (module ``exc.module`` of the tree of ``agent`` saved under ``root``) told of the
    agent or the member (of a team) or delegate (of an agent) it belongs to."""
    kind, part = agent.tree_words
    module = exc.module
    if module == root:
        who = f"{kind} {agent.name!r} cannot be loaded"
    elif module.startswith(f"{root}/"):
        who = f"{kind} {agent.name!r}: {part} {module[len(root) + 1 :]!r} cannot be loaded"
    else:
        return exc
    kept = (
        f"the {kind} and every {part} keep their state"
        if agent.delegates()
        else f"the {kind} keeps its state"
    )
    return SessionModuleError(
        f"{who} from {exc.where} (module {module!r}): {exc.problem}; nothing was loaded: {kept}; restore "
        f"the session's files from version control or a backup, {fix} (they are left as they are)",
        where=exc.where,
        module=module,
        problem=exc.problem,
    )


__all__ = ["naming", "recorded_tree", "take_over", "takes_over", "tree_error"]
