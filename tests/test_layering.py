"""janito-core's imports run one way: the layers of docs/architecture.md, and no circle.

Every ``import`` of a janito_core module by another is read from the source (imports under
``if TYPE_CHECKING:`` are for annotations only and do not count; imports inside functions
do). A module may import from its own layer and the layers below; the whole graph must be
free of cycles; every module must be in exactly one layer of the document.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import janito_core

PACKAGE = Path(janito_core.__file__).resolve().parent
ARCHITECTURE = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"


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


def imported(path: Path) -> set[tuple[str, bool]]:
    """(janito_core module imported, whether inside a function) for the file at ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package_parts = path.relative_to(PACKAGE).parts[:-1]
    found: set[tuple[str, bool]] = set()

    def target(node: ast.ImportFrom) -> list[str]:
        if node.level == 0:
            if not (node.module or "").startswith("janito_core"):
                return []
            rest = (node.module or "").split(".")[1:]
        else:
            base = list(package_parts[:len(package_parts) - (node.level - 1)])
            rest = base + ((node.module or "").split(".") if node.module else [])
        if rest:
            return ["testing" if rest[0] == "testing" else rest[0]]
        return ["testing" if a.name == "testing" else a.name for a in node.names]

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for item in child.orelse:
                    visit_one(item, in_function)
                continue
            visit_one(child, in_function)

    def visit_one(child: ast.AST, in_function: bool) -> None:
        if isinstance(child, ast.ImportFrom):
            for name in target(child):
                found.add((name, in_function))
        elif isinstance(child, ast.Import):
            for alias in child.names:
                parts = alias.name.split(".")
                if parts[0] == "janito_core" and len(parts) > 1:
                    found.add((parts[1], in_function))
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


def test_no_circle_of_imports() -> None:
    edges = graph()
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in edges:
                continue
            if state.get(nxt) == 1:
                cycle = [*path[path.index(nxt):], nxt]
                pytest.fail("a circle of imports: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node)


def test_the_package_docstring_points_at_the_diagram() -> None:
    assert "docs/architecture.md" in (janito_core.__doc__ or "")
