"""The modules of ``agentnb.evals`` import one another in one direction only: no import cycle among
them, counting imports inside functions and under ``TYPE_CHECKING`` (import-linter's layers
contracts in pyproject.toml say which way; this says there is no way back)."""

from __future__ import annotations

import grimp


def _cycles(graph: grimp.ImportGraph, modules: set[str]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module) & modules):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(modules):
        if module not in index:
            visit(module)
    return found


def test_no_import_cycle_among_the_evals_modules():
    graph = grimp.build_graph("agentnb", cache_dir=None)
    package = "agentnb.evals"
    # The package's own __init__ re-exports its parts: it imports them and nothing imports it back.
    modules = graph.find_descendants(package)
    assert {"agentnb.evals.report.eval_run", "agentnb.evals.checks.base"} <= modules
    assert _cycles(graph, modules) == []
    assert not any(package in graph.find_modules_directly_imported_by(m) for m in modules)


def test_the_cycle_finder_finds_a_cycle():
    graph = grimp.ImportGraph()
    for module in ("a", "b", "c"):
        graph.add_module(module)
    graph.add_import(importer="a", imported="b")
    graph.add_import(importer="b", imported="c")
    assert _cycles(graph, {"a", "b", "c"}) == []
    graph.add_import(importer="c", imported="a")
    assert _cycles(graph, {"a", "b", "c"}) == [["a", "b", "c"]]
