"""janito's imports run one way: the layers of docs/architecture.md, and no circle.

Every ``import`` of a janito_core module by another is read from the source (imports under
``if TYPE_CHECKING:`` are for annotations only and do not count; imports inside functions
do). A module may import from its own layer and the layers below; the whole graph must be
free of cycles; every module must be in exactly one layer of the document.

The toolset distributions under ``plugins/`` are read the same way: each package imports
janito_core and itself, never another distribution of the repository, and its modules
import one another without a circle.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import janito_core

PACKAGE = Path(janito_core.__file__).resolve().parent
ROOT = Path(__file__).resolve().parents[1]
ARCHITECTURE = ROOT / "docs" / "architecture.md"
#: Circles known and being removed: (package, modules). Each goes with the change that
#: breaks it; one that no longer exists fails here, so the list cannot go stale.
KNOWN_CIRCLES: set[tuple[str, frozenset[str]]] = set()


def layers() -> list[tuple[str, list[str]]]:
    """(layer, modules) from the document's diagram, lowest layer first."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    block = re.search(r"<!-- layers:.*?-->\s*```text\n(.*?)```", text, re.S)
    assert block, "docs/architecture.md has lost its layer diagram"
    rows = []
    for line in block.group(1).splitlines():
        words = line.split()
        if not words:
            continue
        # the layer's name may be two words ("entry points"): modules are the rest
        name_length = 2 if words[0] == "entry" else 1
        rows.append((" ".join(words[:name_length]), words[name_length:]))
    return list(reversed(rows))


def module_of(path: Path) -> str:
    relative = path.relative_to(PACKAGE).with_suffix("")
    return "testing" if relative.parts[0] == "testing" else relative.parts[0]


def imported(path: Path, package: Path = PACKAGE, name: str = "janito_core",
             others: set[str] | None = None) -> set[tuple[str, bool]]:
    """(module of the package imported, whether inside a function) for the file at
    ``path`` in ``package`` (the folder of the package ``name``). A module is the first
    component below the package: a subpackage counts as one module. Absolute imports of
    other top-level ``janito*`` packages are added to ``others`` when it is given."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package_parts = path.relative_to(package).parts[:-1]
    found: set[tuple[str, bool]] = set()

    def target(node: ast.ImportFrom) -> list[str]:
        if node.level == 0:
            top = (node.module or "").split(".")[0]
            if top != name:
                if others is not None and top.startswith("janito"):
                    others.add(top)
                return []
            rest = (node.module or "").split(".")[1:]
        else:
            base = list(package_parts[:len(package_parts) - (node.level - 1)])
            rest = base + ((node.module or "").split(".") if node.module else [])
        if rest:
            return [rest[0]]
        return [a.name for a in node.names]

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for item in child.orelse:
                    visit_one(item, in_function)
                continue
            visit_one(child, in_function)

    def visit_one(child: ast.AST, in_function: bool) -> None:
        if isinstance(child, ast.ImportFrom):
            for module in target(child):
                found.add((module, in_function))
        elif isinstance(child, ast.Import):
            for alias in child.names:
                parts = alias.name.split(".")
                if parts[0] == name and len(parts) > 1:
                    found.add((parts[1], in_function))
                elif parts[0] != name and parts[0].startswith("janito") and others is not None:
                    others.add(parts[0])
        visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))

    visit(tree, False)
    return found


def graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        source = module_of(path)
        if source == "__init__":
            continue
        for name, _lazy in imported(path):
            if name in ("__init__", "__version__", source):
                continue
            edges.setdefault(source, set()).add(name)
        edges.setdefault(source, set())
    return edges


def test_every_module_is_in_one_layer() -> None:
    listed = [m for _, modules in layers() for m in modules]
    assert len(listed) == len(set(listed)), "a module is in two layers"
    assert set(listed) == set(graph()), (
        f"not in the diagram: {sorted(set(graph()) - set(listed))}; "
        f"in the diagram but gone: {sorted(set(listed) - set(graph()))}")


def test_no_module_imports_a_higher_layer() -> None:
    rank = {m: i for i, (_, modules) in enumerate(layers()) for m in modules}
    name = {m: layer for layer, modules in layers() for m in modules}
    upward = [f"{source} ({name[source]}) imports {target} ({name[target]})"
              for source, targets in graph().items() for target in targets
              if target in rank and rank[target] > rank[source]]
    assert not upward, "imports against the layering:\n" + "\n".join(sorted(upward))


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The circles of ``edges``: each strongly connected group of two modules or more (or
    one importing itself), its modules sorted (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in edges:
                continue
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1 or node in edges.get(node, ()):
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_circle_of_imports() -> None:
    assert not circles(graph()), "circles of imports: " + "; ".join(
        " <-> ".join(group) for group in circles(graph()))


def test_the_package_docstring_points_at_the_diagram() -> None:
    assert "docs/architecture.md" in (janito_core.__doc__ or "")


# -- the toolset distributions --------------------------------------------------------


def plugin_packages() -> list[tuple[str, Path]]:
    """(package name, folder) of every distribution under plugins/."""
    found = []
    for project in sorted((ROOT / "plugins").glob("*/pyproject.toml")):
        for folder in sorted(project.parent.iterdir()):
            if folder.name.startswith("janito_") and (folder / "__init__.py").is_file():
                found.append((folder.name, folder))
    return found


def plugin_graph(name: str, folder: Path) -> tuple[dict[str, set[str]], set[str]]:
    """The import graph of one plugin package, and the other janito packages it imports."""
    edges: dict[str, set[str]] = {}
    others: set[str] = set()
    for path in sorted(folder.rglob("*.py")):
        source = path.relative_to(folder).parts[0].removesuffix(".py")
        if source == "__init__":
            continue
        edges.setdefault(source, set())
        for target, _lazy in imported(path, folder, name, others):
            is_module = (folder / target).is_dir() or (folder / f"{target}.py").is_file()
            if is_module and target not in ("__init__", source):
                edges[source].add(target)
    return edges, others


PLUGINS = plugin_packages()


@pytest.mark.skipif(not (ROOT / "plugins" / "janito-files" / "pyproject.toml").is_file(),
                    reason="a copy of the tests run against installed wheels has only the "
                           "plugins' READMEs")
def test_every_distribution_of_the_repository_is_read() -> None:
    names = {name for name, _ in PLUGINS}
    assert {"janito_files", "janito_system", "janito_mcp", "janito_skills"} <= names, names


@pytest.mark.parametrize(("name", "folder"), PLUGINS, ids=[name for name, _ in PLUGINS])
def test_a_plugin_imports_only_janito_core_and_itself(name: str, folder: Path) -> None:
    _, others = plugin_graph(name, folder)
    assert others <= {"janito_core"}, (
        f"{name} imports {sorted(others - {'janito_core'})}: a distribution depends on "
        "janito-core and on nothing else in this repository")


@pytest.mark.parametrize(("name", "folder"), PLUGINS, ids=[name for name, _ in PLUGINS])
def test_no_circle_of_imports_in_a_plugin(name: str, folder: Path) -> None:
    edges, _ = plugin_graph(name, folder)
    found = {frozenset(group) for group in circles(edges)}
    known = {group for package, group in KNOWN_CIRCLES if package == name}
    assert not found - known, f"circles of imports in {name}: " + "; ".join(
        " <-> ".join(sorted(group)) for group in found - known)
    assert not known - found, (
        f"{name} no longer has the circle(s) {[sorted(g) for g in known - found]}: take "
        "them off KNOWN_CIRCLES")
