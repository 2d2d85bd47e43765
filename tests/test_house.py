"""The house rules that keep the code's shape (STYLE.md): no import cycle among agentnb's modules,
no module over 500 lines, no function over 80.

Every import counts as a dependency: at module level, inside a function, or under
``TYPE_CHECKING`` (a data type that names its renderer only for the checker still leans on it).
A function's length is its body's, from its first statement (a docstring counts) to its end: a signature is
the API's size (``Agent``'s keyword-only options keep Agno's, Haystack's and MASFactory's names),
not logic, and splitting it into option objects would break the code those names port.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "agentnb"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80

# -- the module graph ---------------------------------------------------------------------------


def find_modules(root: Path, package: str) -> dict[str, tuple[Path, bool]]:
    """Every module of ``package`` under ``root``: dotted name -> (file, whether a package)."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


@functools.cache
def parsed(path: Path) -> tuple[str, ast.Module]:
    """The text of ``path`` and its syntax tree (read once per test run)."""
    text = path.read_text(encoding="utf-8")
    return text, ast.parse(text, str(path))


def imported(
    node: ast.Import | ast.ImportFrom, name: str, is_package: bool, known: set[str]
) -> Iterator[str]:
    """The modules of ``known`` an import statement in module ``name`` names. ``from pkg import x``
    imports ``pkg.x`` when that is a module, else ``pkg``."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    if node.level:
        here = (name if is_package else name.rpartition(".")[0]).split(".")
        base = ".".join([*here[: len(here) - node.level + 1], *([node.module] if node.module else [])])
    else:
        base = node.module or ""
    for alias in node.names:
        full = f"{base}.{alias.name}"
        yield full if full in known else base


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    """Module -> the modules of the package it imports, anywhere in its code. A package's
    ``__init__`` importing its own submodules is left out: that is how a package re-exports."""
    modules = find_modules(root, package)
    known = set(modules)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, (path, is_package) in modules.items():
        for node in ast.walk(parsed(path)[1]):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in imported(node, name, is_package, known):
                    own_submodule = is_package and target.startswith(name + ".")
                    if target in known and target != name and not own_submodule:
                        graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(component)
    return found


# -- sizes --------------------------------------------------------------------------------------


def sources(root: Path, package: str) -> Iterator[tuple[str, str, ast.Module]]:
    """(path relative to ``root``, text, tree) of every module of ``package``."""
    for path, _ in find_modules(root, package).values():
        yield path.relative_to(root).as_posix(), *parsed(path)


def long_modules(root: Path, package: str) -> dict[str, int]:
    return {
        where: lines
        for where, text, _ in sources(root, package)
        if (lines := len(text.splitlines())) > MAX_MODULE_LINES
    }


def long_functions(root: Path, package: str) -> dict[str, int]:
    """``path::Qualified.name`` -> lines of the body (from its first statement, the docstring
    included, to its end), for those over the limit (nested functions are counted in their own right too)."""
    found = {}

    def visit(node: ast.AST, where: str, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                assert child.end_lineno is not None
                lines = child.end_lineno - child.body[0].lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    found[f"{where}::{prefix}{child.name}"] = lines
                visit(child, where, f"{prefix}{child.name}.<locals>.")
            elif isinstance(child, ast.ClassDef):
                visit(child, where, f"{prefix}{child.name}.")
            else:
                visit(child, where, prefix)

    for where, _, tree in sources(root, package):
        visit(tree, where, "")
    return found


def _named(items: Iterable[set[str] | str]) -> str:
    return "; ".join(sorted(item if isinstance(item, str) else " <-> ".join(sorted(item)) for item in items))


# -- agentnb ------------------------------------------------------------------------------------


def test_no_import_cycle() -> None:
    found = cycles(import_graph(ROOT, PACKAGE))
    assert found == [], f"import cycle(s): {_named(found)}; make one side stop importing the other"


def test_no_module_over_the_limit() -> None:
    found = long_modules(ROOT, PACKAGE)
    assert found == {}, f"split these modules (over {MAX_MODULE_LINES} lines): {found}"


def test_no_function_over_the_limit() -> None:
    found = long_functions(ROOT, PACKAGE)
    assert found == {}, f"split these functions (over {MAX_FUNCTION_LINES} lines): {found}"


# -- the checks themselves, on a package made here ----------------------------------------------


def _package(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / "pkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_a_cycle_through_a_function_level_relative_import_is_found(tmp_path: Path) -> None:
    _package(
        tmp_path,
        {
            "__init__.py": "",
            "a.py": "def f():\n    from . import b\n",
            "sub/__init__.py": "",
            "sub/b.py": "",  # a module b elsewhere: not the one pkg.a imports
            "b.py": "from .c import name\n",
            "c.py": "import pkg.a\nname = 1\n",
        },
    )
    assert cycles(import_graph(tmp_path, "pkg")) == [{"pkg.a", "pkg.b", "pkg.c"}]


def test_type_checking_imports_count_and_a_name_counts_as_its_module(tmp_path: Path) -> None:
    _package(
        tmp_path,
        {
            "__init__.py": "",
            "data.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .view import View\n",
            "view.py": "from pkg import data\nfrom pkg.data import Thing\n",
        },
    )
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.view"] == {"pkg.data"} and graph["pkg.data"] == {"pkg.view"}
    assert cycles(graph) == [{"pkg.data", "pkg.view"}]


def test_a_package_importing_its_own_submodules_is_no_cycle(tmp_path: Path) -> None:
    _package(
        tmp_path,
        {
            "__init__.py": "from .a import A\nfrom .inner import helper\n",
            "a.py": "from . import helper\nfrom ..pkg import inner\nA = 1\n",
            "inner/__init__.py": "from .deep import helper\n",
            "inner/deep.py": "from .. import inner\nhelper = 1\n",
        },
    )
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg"] == set() and graph["pkg.a"] == {"pkg", "pkg.inner"}
    assert graph["pkg.inner.deep"] == {"pkg.inner"}
    assert cycles(graph) == []


def test_sizes_are_counted_per_module_and_per_function(tmp_path: Path) -> None:
    def body(lines: int, indent: int) -> str:
        return "".join(f"{' ' * indent}x{i} = {i}\n" for i in range(lines))

    _package(
        tmp_path,
        {
            "__init__.py": "",
            "big.py": "\n" * MAX_MODULE_LINES + "x = 1\n",
            "fits.py": "\n" * (MAX_MODULE_LINES - MAX_FUNCTION_LINES - 1)
            + "class C:\n    def m(self):\n"
            + body(MAX_FUNCTION_LINES - 1, 8),
            "long.py": "class C:\n    def m(self):\n        def inner():\n"
            + body(MAX_FUNCTION_LINES + 1, 12),
            # A long signature is not a long function: only the body counts.
            "wide.py": "def f(\n"
            + body(MAX_FUNCTION_LINES, 4).replace(" = ", ": int = ").replace("\n", ",\n")
            + "):\n    return 1\n",
        },
    )
    assert long_modules(tmp_path, "pkg") == {"pkg/big.py": MAX_MODULE_LINES + 1}
    assert long_functions(tmp_path, "pkg") == {
        "pkg/long.py::C.m": MAX_FUNCTION_LINES + 2,
        "pkg/long.py::C.m.<locals>.inner": MAX_FUNCTION_LINES + 1,
    }
