"""fedlib's layers: imports run downwards only, no cycle, no private module of another package, no book code.

The order below is the one of ``fedlib/__init__.py``'s docstring: each entry may import only entries before
it (and itself). The book's side (``book/fedbook``), the benchmarks and the chapters import public names only.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: fedlib's modules and packages, lowest first.
LAYERS = (
    "exceptions",
    "_typing",
    "_random",
    "_progress",
    "_optional",
    "_validation",
    "utils",
    "base",
    "field",
    "data",
    "privacy",
    "learn",
    "plot",
    "cluster",
    "secagg",
    "unlearn",
    "audit",
    "flower",
)


def imported_modules(path: Path) -> list[str]:
    """Every absolute module a Python file imports, at any depth (``from a.b import c`` gives ``a.b`` and ``a.b.c``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append(node.module)
            found.extend(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def notebook_imports(path: Path) -> list[str]:
    """Modules (and names) imported by the import lines of a MyST chapter's code."""
    found = []
    text = path.read_text(encoding="utf-8")
    for module, names in re.findall(r"^\s*from\s+([\w.]+)\s+import\s+\(?([\w\s,]*)", text, flags=re.M):
        found.append(module)
        found.extend(f"{module}.{n.strip()}" for n in names.split(",") if n.strip())
    found.extend(re.findall(r"^\s*import\s+([\w.]+)", text, flags=re.M))
    return found


def layer_of(path: Path) -> str:
    """The entry of :data:`LAYERS` a file of fedlib belongs to."""
    parts = path.relative_to(ROOT / "fedlib").with_suffix("").parts
    return parts[0]


def fedlib_files() -> list[Path]:
    return sorted(p for p in (ROOT / "fedlib").rglob("*.py") if p.name != "__init__.py" or p.parent != ROOT / "fedlib")


def test_every_module_of_fedlib_has_a_layer():
    assert {layer_of(p) for p in fedlib_files()} <= set(LAYERS)


@pytest.mark.parametrize("path", fedlib_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_run_downwards_and_stay_public(path):
    own = layer_of(path)
    for module in imported_modules(path):
        parts = module.split(".")
        assert parts[0] != "fedbook", f"{module}: fedlib never imports the book's package"
        if parts[0] != "fedlib" or len(parts) < 2:
            continue
        target = parts[1]
        if target not in LAYERS:  # a name imported from the fedlib package itself, e.g. __version__
            continue
        assert LAYERS.index(target) <= LAYERS.index(own), f"{module}: {own} may not import {target}, a layer above"
        private = [p for p in parts[2:] if p.startswith("_")]
        assert target == own or not private, f"{module}: the private module of another package"


def test_fedlib_holds_no_experiments_published_numbers_or_benchmarks():
    names = {p.stem for p in (ROOT / "fedlib").rglob("*.py")} | {p.name for p in (ROOT / "fedlib").iterdir()}
    assert not names & {"experiments", "papers", "bench", "benchmarks"}, names & {"experiments", "papers", "bench"}


def book_side_files() -> list[Path]:
    return sorted([*(ROOT / "book" / "fedbook").rglob("*.py"), *(ROOT / "benchmarks").glob("*.py")])


@pytest.mark.parametrize("path", book_side_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_book_side_imports_only_public_names_of_fedlib(path):
    for module in imported_modules(path):
        parts = module.split(".")
        if parts[0] == "fedlib":
            assert not any(p.startswith("_") for p in parts[1:]), f"{module} is private to fedlib"


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").rglob("*.md")), ids=lambda p: p.stem)
def test_chapters_import_only_public_names_of_fedlib(path):
    for module in notebook_imports(path):
        parts = module.split(".")
        if parts[0] == "fedlib":
            assert not any(p.startswith("_") for p in parts[1:]), f"{module} is private to fedlib"
