"""The package's import graph, read from its source: no import circle, and no module
importing from a layer above its own.

Every module of ``kbsim/`` is parsed with :mod:`ast`; its imports of kbsim modules are
the graph's edges, those at module level and those inside functions alike (an import
moved into a function to dodge a circle is still a circle), but not those under
``if TYPE_CHECKING:``, which never run. Importing ``kbsim.a.b`` also runs the package
``kbsim.a``, so that is an edge too, unless the importer is inside ``kbsim.a`` already
(the package is then being imported) or the package is ``kbsim`` itself (it runs first
for every import and only re-exports). Names computed at run time (the CLI's
``importlib.import_module(module_name)``) are not seen; an ``import_module`` call with a
literal name is.

The test asserts the circles found are exactly :data:`KNOWN_CYCLE_EDGES` (none), so a new
one fails at once, naming its modules and each import's file and line; the same holds for
:data:`KNOWN_LAYER_VIOLATIONS` (none).
"""

from __future__ import annotations

import ast
import itertools
import json
import os
import subprocess
import sys
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "kbsim"

#: Bottom to top. A name stands for that module and everything under it, except ``kbsim``,
#: which is the top-level ``__init__`` alone. Modules of one layer may import each other
#: (without a circle); a module imports nothing from a layer above its own.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("kbsim.version", "kbsim.errors", "kbsim.units", "kbsim.extras", "kbsim.files", "kbsim.params"),
    ("kbsim.spec",),
    ("kbsim.store",),
    ("kbsim.inputs",),
    ("kbsim.sim",),
    ("kbsim.stats",),
    ("kbsim.fit",),
    ("kbsim.model",),
    ("kbsim.drive",),
    ("kbsim.check",),
    ("kbsim.runner",),
    ("kbsim.report",),
    ("kbsim.serve",),
    ("kbsim.cli",),
    ("kbsim", "kbsim.__main__"),
)

#: Import edges inside a circle, (importer, imported): none. The list stays so that a circle
#: someone must accept for a while is written down here, never dodged with a function-level import.
KNOWN_CYCLE_EDGES: frozenset[tuple[str, str]] = frozenset()

#: Imports from a layer above the importer's, (importer, imported): none; as above.
KNOWN_LAYER_VIOLATIONS: frozenset[tuple[str, str]] = frozenset()


@dataclass(frozen=True)
class Import:
    """Where one kbsim-internal import is written, and whether inside a function."""

    where: str  # path:line, the path from the package's parent folder
    in_function: bool


#: importer -> {imported module: its first import there, module level before function level}
Graph = dict[str, dict[str, Import]]


def module_names(package: Path) -> dict[str, Path]:
    """Every module under ``package``, by its dotted name (a package's ``__init__.py`` is the package)."""
    names = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _literal_import_module(node: ast.AST) -> str | None:
    """The name in ``importlib.import_module("...")`` or ``import_module("...")``, if literal."""
    if not isinstance(node, ast.Call) or not node.args or not isinstance(node.args[0], ast.Constant):
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    value = node.args[0].value
    return value if name == "import_module" and isinstance(value, str) else None


def _targets(importer: str, dotted: str, known: dict[str, Path]) -> list[str]:
    """The kbsim modules that importing ``dotted`` from ``importer`` runs: the deepest
    existing module it names, and the packages above it that are not already running."""
    while dotted and dotted not in known:
        dotted = dotted.rpartition(".")[0]
    if not dotted:
        return []
    targets = [dotted]
    package = dotted.rpartition(".")[0]
    while package and package != "kbsim":
        if importer != package and not importer.startswith(package + "."):
            targets.append(package)
        package = package.rpartition(".")[0]
    return [t for t in targets if t != importer]


def _absolute(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    """The absolute module an ``import from`` names, its relative levels resolved."""
    if not node.level:
        return node.module or ""
    here = importer.split(".") if is_package else importer.split(".")[:-1]
    base = here[: len(here) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(importer: str, known: dict[str, Path], root: Path) -> dict[str, Import]:
    """The kbsim modules that module ``importer`` (one of ``known``, under ``root``) imports."""
    path = known[importer]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    shown = path.relative_to(root)
    found: dict[str, Import] = {}

    def add(dotted: str, node: ast.stmt | ast.expr, in_function: bool) -> None:
        if dotted.split(".")[0] != "kbsim":
            return
        for target in _targets(importer, dotted, known):
            seen = found.get(target)
            if seen is None or (seen.in_function and not in_function):
                found[target] = Import(f"{shown}:{node.lineno}", in_function)

    def visit(nodes: Iterable[ast.AST], in_function: bool) -> None:
        for child in nodes:
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                visit(child.orelse, in_function)  # the body runs only under a type checker
                continue
            inner = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            if isinstance(child, ast.Import):
                for alias in child.names:
                    add(alias.name, child, inner)
            elif isinstance(child, ast.ImportFrom):
                base = _absolute(importer, path.name == "__init__.py", child)
                for alias in child.names:
                    full = f"{base}.{alias.name}"  # ``from kbsim.sim import day`` names a module
                    add(full if full in known else base, child, inner)
            elif (literal := _literal_import_module(child)) is not None:
                add(literal, child, inner)
            visit(ast.iter_child_nodes(child), inner)

    visit(tree.body, False)
    return found


def read_graph(package: Path) -> Graph:
    """The import graph of every module under ``package``."""
    known = module_names(package)
    return {name: imports_of(name, known, package.parent) for name in known}


@pytest.fixture(scope="module")
def edges() -> Graph:
    return read_graph(PACKAGE)


def strongly_connected(edges: Graph) -> list[list[str]]:
    """The graph's circles: its strongly connected components of two modules or more (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            connect(v)
    return sorted(components)


def cycle_edges(edges: Graph) -> set[tuple[str, str]]:
    """Every import that lies on a circle: both its ends in one component."""
    component_of = {m: i for i, component in enumerate(strongly_connected(edges)) for m in component}
    return {
        (a, b)
        for a, targets in edges.items()
        for b in targets
        if a in component_of and component_of.get(b) == component_of[a]
    }


def shortest_circle(edges: Graph, start: str, members: set[str]) -> list[str]:
    """A shortest circle of imports from ``start`` back to it, through ``members`` only."""
    previous: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for w in sorted(edges[v]):
            if w == start:
                path = [v]
                while (before := previous[path[-1]]) is not None:
                    path.append(before)
                return [*reversed(path), start]
            if w in members and w not in previous:
                previous[w] = v
                queue.append(w)
    raise ValueError(f"{start} is on no circle through {sorted(members)}")


def describe_edge(edges: Graph, a: str, b: str) -> str:
    where = edges[a][b]
    return f"{a} -> {b} ({where.where}{', inside a function' if where.in_function else ''})"


def describe_circles(edges: Graph, only: set[tuple[str, str]]) -> str:
    """Each circle holding one of the ``only`` edges: its modules, one shortest circle through
    them import by import, then the other ``only`` edges inside it."""
    lines = []
    for component in strongly_connected(edges):
        members = set(component)
        if not any(a in members and b in members for a, b in only):
            continue
        lines.append(f"circle of {len(component)} modules: {', '.join(component)}")
        circle = list(itertools.pairwise(shortest_circle(edges, component[0], members)))
        lines.extend(f"    {describe_edge(edges, a, b)}" for a, b in circle)
        others = sorted((a, b) for a, b in only if a in members and b in members and (a, b) not in circle)
        lines.extend(f"    and {describe_edge(edges, a, b)}" for a, b in others)
    return "\n".join(lines)


def layer_of(module: str) -> int | None:
    """The index in :data:`LAYERS` of the layer holding ``module``; None if it is in none."""
    best: tuple[int, int] | None = None  # (length of the matching name, layer)
    for rank, names in enumerate(LAYERS):
        for name in names:
            if (module == name or (name != "kbsim" and module.startswith(name + "."))) and (
                best is None or len(name) > best[0]
            ):
                best = (len(name), rank)
    return None if best is None else best[1]


def layer_violations(edges: Graph) -> set[tuple[str, str]]:
    """Every import of a module in a higher layer than the importer's (modules in no layer are
    another test's failure)."""
    rank = {m: layer_of(m) for m in edges}
    return {
        (a, b)
        for a, targets in edges.items()
        for b in targets
        if rank[a] is not None and rank.get(b) is not None and rank[b] > rank[a]
    }


def compare(found: set[tuple[str, str]], known: frozenset[tuple[str, str]], what: str, describe) -> str | None:
    """None if ``found`` is exactly ``known``; otherwise what changed, for the assertion's message."""
    new, gone = found - known, known - found
    message = []
    if new:
        message.append(f"{len(new)} new {what}:\n{describe(new)}")
    if gone:
        message.append(
            f"{len(gone)} known {what} gone; delete them from the test's list:\n"
            + "\n".join(f"    {pair!r}," for pair in sorted(gone))
        )
    return "\n".join(message) or None


# -- the graph reads what it should --------------------------------------------------------------


def test_the_graph_reads_imports_as_python_runs_them(tmp_path):
    files = {
        "__init__.py": "from kbsim.low.a import x\n",
        "low/__init__.py": "from . import a\n",
        "low/a.py": "x = 1\n",
        "low/b.py": (
            "from typing import TYPE_CHECKING\n"
            "from . import a\n"
            "if TYPE_CHECKING:\n    from kbsim.high import c\n"
            "else:\n    import kbsim.high.d\n"
            "def later():\n    from ..high.c import y\n    return y\n"
        ),
        "high/__init__.py": "",
        "high/c.py": "import importlib\nimport kbsim.low.b\nimportlib.import_module('kbsim.high.d')\ny = 2\n",
        "high/d.py": "import os, kbsim\n",
    }
    for name, text in files.items():
        (tmp_path / "kbsim" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "kbsim" / name).write_text(text)
    found = read_graph(tmp_path / "kbsim")
    i = Import
    assert found == {
        "kbsim": {"kbsim.low.a": i("kbsim/__init__.py:1", False), "kbsim.low": i("kbsim/__init__.py:1", False)},
        "kbsim.low": {"kbsim.low.a": i("kbsim/low/__init__.py:1", False)},  # its own package is running already
        "kbsim.low.a": {},
        "kbsim.low.b": {  # not the TYPE_CHECKING branch, which never runs, but its else; the package kbsim.high too
            "kbsim.low.a": i("kbsim/low/b.py:2", False),
            "kbsim.high.d": i("kbsim/low/b.py:6", False),
            "kbsim.high": i("kbsim/low/b.py:6", False),
            "kbsim.high.c": i("kbsim/low/b.py:8", True),
        },
        "kbsim.high": {},
        "kbsim.high.c": {
            "kbsim.low.b": i("kbsim/high/c.py:2", False),
            "kbsim.low": i("kbsim/high/c.py:2", False),
            "kbsim.high.d": i("kbsim/high/c.py:3", False),
        },
        "kbsim.high.d": {"kbsim": i("kbsim/high/d.py:1", False)},
    }
    assert strongly_connected(found) == [["kbsim.high.c", "kbsim.low.b"]]
    assert cycle_edges(found) == {("kbsim.low.b", "kbsim.high.c"), ("kbsim.high.c", "kbsim.low.b")}
    assert describe_circles(found, {("kbsim.high.c", "kbsim.low.b")}).splitlines() == [
        "circle of 2 modules: kbsim.high.c, kbsim.low.b",
        "    kbsim.high.c -> kbsim.low.b (kbsim/high/c.py:2)",
        "    kbsim.low.b -> kbsim.high.c (kbsim/low/b.py:8, inside a function)",
    ]


def test_layers_match_the_longest_name_and_the_top_level_package_alone():
    assert layer_of("kbsim.params") == layer_of("kbsim.version") == 0
    assert layer_of("kbsim.store.errors") == layer_of("kbsim.store") == 2  # not kbsim.errors's layer
    assert layer_of("kbsim.sim.day") == 4
    assert layer_of("kbsim") == layer_of("kbsim.__main__") == len(LAYERS) - 1
    assert layer_of("kbsim.newmodule") is None  # not placed by ``kbsim`` alone
    assert compare({("a", "b")}, frozenset({("a", "b")}), "x", str) is None
    assert compare({("a", "b"), ("c", "d")}, frozenset({("a", "b"), ("e", "f")}), "edges", sorted).splitlines() == [
        "1 new edges:",
        "[('c', 'd')]",
        "1 known edges gone; delete them from the test's list:",
        "    ('e', 'f'),",
    ]


def test_every_module_has_a_layer_and_every_name_is_placed_once(edges):
    unplaced = sorted(m for m in edges if layer_of(m) is None)
    assert not unplaced, f"modules in no layer of LAYERS (add each where it belongs): {unplaced}"
    names = [name for layer in LAYERS for name in layer]
    assert len(names) == len(set(names)) and all(n == "kbsim" or n.startswith("kbsim.") for n in names)


# -- the rules -----------------------------------------------------------------------------------


def test_no_import_circle_beyond_the_known_ones(edges):
    problem = compare(
        cycle_edges(edges), KNOWN_CYCLE_EDGES, "imports on a circle", lambda new: describe_circles(edges, new)
    )
    assert problem is None, problem


def test_no_module_imports_from_a_higher_layer_beyond_the_known_ones(edges):
    def describe(new: set[tuple[str, str]]) -> str:
        return "\n".join(
            f"    {describe_edge(edges, a, b)}: layer {layer_of(a)} imports layer {layer_of(b)}" for a, b in sorted(new)
        )

    problem = compare(layer_violations(edges), KNOWN_LAYER_VIOLATIONS, "imports from a higher layer", describe)
    assert problem is None, problem


def data_path(edges: Graph, start: str, goal: str) -> list[str] | None:
    """The shortest chain of imports from ``start`` to ``goal`` (breadth first), or None."""
    previous: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        here = queue.popleft()
        if here == goal:
            chain = [here]
            while previous[chain[-1]] is not None:
                chain.append(previous[chain[-1]])  # type: ignore[arg-type]
            return chain[::-1]
        for there in sorted(edges.get(here, {})):
            if there not in previous:
                previous[there] = here
                queue.append(there)
    return None


def test_the_experiment_reaches_the_day_by_import_not_by_a_string(edges):
    """The main data path, experiment (the runner) -> sim.day, is in the graph: the worker
    imports the day it runs, no ``"kbsim.sim:run_day"`` string that hides it from this test."""
    assert "kbsim.sim.day" in edges["kbsim.runner.worker"], edges["kbsim.runner.worker"]
    path = data_path(edges, "kbsim.runner.run", "kbsim.sim.day")
    assert path == ["kbsim.runner.run", "kbsim.runner.worker", "kbsim.sim.day"], path
    source = (PACKAGE / "runner" / "worker.py").read_text(encoding="utf-8")
    assert "kbsim.sim:run_day" not in source


#: Imports each module named on its command line first, as if in a fresh interpreter: every
#: ``kbsim`` module is dropped from ``sys.modules`` before each, so the module and every kbsim
#: module it needs run their top level again in the order this import reaches them (libraries
#: stay loaded: an import-order circle is kbsim's own). One interpreter for all of them: one
#: each cost about a second of CPU a module, some 150 of them. Prints a JSON map of failures.
IMPORT_EACH_FIRST = """\
import importlib, json, sys, traceback
failed = {}
for module in sys.argv[1:]:
    for name in [n for n in sys.modules if n == "kbsim" or n.startswith("kbsim.")]:
        del sys.modules[name]
    try:
        importlib.import_module(module)
    except BaseException:
        failed[module] = traceback.format_exc()
print(json.dumps(failed))
"""


def _run_python(argv: list[str]) -> subprocess.CompletedProcess:
    path = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": path}, cwd=ROOT, timeout=600)


@pytest.fixture(scope="module")
def imported_first() -> dict[str, str]:
    """Each module (but ``kbsim.__main__``) imported first: module -> the traceback it failed with."""
    modules = sorted(m for m in module_names(PACKAGE) if m != "kbsim.__main__")
    done = _run_python(["-c", IMPORT_EACH_FIRST, *modules])
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.xdist_group("import-first")  # one worker builds the fixture, not each
@pytest.mark.parametrize("module", sorted(module_names(PACKAGE)))
def test_each_module_imports_first(module, imported_first):
    """A module imported first, alone: a circle that breaks in one import order only fails here.

    ``kbsim.__main__`` runs the command line when imported, so it is run as ``python -m
    kbsim --version``, which imports it first all the same.
    """
    if module == "kbsim.__main__":
        done = _run_python(["-m", "kbsim", "--version"])
        assert done.returncode == 0, f"python -m kbsim failed in a fresh interpreter:\n{done.stderr}"
        return
    assert module not in imported_first, f"import {module} failed imported first:\n{imported_first[module]}"


def test_importing_first_finds_a_circle_that_one_order_hides(tmp_path):
    """The one-interpreter import above fails on a circle as a fresh interpreter does: b needs
    a name that a defines only after importing b, so importing a first breaks, b first does not."""
    package = tmp_path / "kbsim"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from kbsim import b\nVALUE = 1\n")
    (package / "b.py").write_text("import kbsim.a\nfrom kbsim.a import VALUE\n")
    done = subprocess.run([sys.executable, "-c", IMPORT_EACH_FIRST, "kbsim.a", "kbsim.b"], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(tmp_path)}, cwd=tmp_path, timeout=120)
    failed = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(failed) == {"kbsim.a"} and "ImportError" in failed["kbsim.a"], failed
