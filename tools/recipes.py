"""The recipes of the part "Using fedlib" (``notebooks/using/``) as the plain Python scripts their pages offer.

    python tools/recipes.py notebooks/using/mufc.md [-p scale ci] [-o mufc.py]

A recipe is a MyST Markdown notebook whose shown code cells are what a user copies: they import only fedlib,
numpy, the standard library and what the install its page names brings, and they print what the page shows.
The book's bookkeeping (``glue``, tables kept for the page) sits in cells tagged ``remove-cell`` or
``remove-input``. :func:`script` joins the shown code cells into a script, which ``tools/build_book.py`` stages
beside the recipe as ``<name>.py`` for the page's ``{download}`` link; :func:`install` and :func:`extras` read the
one ``pip install`` line the page shows, so the tests can run each script on exactly that install.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from exercises import strip_solutions

ROOT = Path(__file__).resolve().parents[1]

#: The recipe sources, ``notebooks/using/*.md``, sorted.
RECIPES: list[Path] = sorted((ROOT / "notebooks" / "using").glob("*.md"))

#: Tags of code cells whose code the page does not show: they are left out of the script.
HIDDEN_TAGS = frozenset({"remove-cell", "remove-input", "hide-cell", "hide-input"})

#: Tags of an exercise's cells (its starter, solution and check): they are not part of the script.
EXERCISE_TAGS = frozenset({"starter", "solution", "check"})

#: The name of fedlib's distribution, as the install line names it.
DISTRIBUTION = "fedlib-unlearning"

_FENCE = re.compile(r"^```bash[ \t]*\n(?P<body>.*?)^```[ \t]*$", re.M | re.S)
_INSTALL = re.compile(rf"pip install '{re.escape(DISTRIBUTION)}(?:\[(?P<extras>[a-z][a-z0-9,-]*)\])?'")


def _read(path: Path):
    import jupytext

    return jupytext.read(Path(path))


def _tags(cell) -> set[str]:
    return set(cell.get("metadata", {}).get("tags", []))


def _source_name(path: Path) -> str:
    path = Path(path).resolve()
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name


def _known_extras() -> set[str]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return set(tomllib.load(f)["project"]["optional-dependencies"])


def install(path: Path) -> str:
    """The ``pip install`` line that a recipe shows, in a ``bash`` block of one line near its top.

    Parameters
    ----------
    path : Path
        The recipe's source, a MyST Markdown notebook.

    Returns
    -------
    str
        The line, e.g. ``pip install 'fedlib-unlearning[learn]'``.

    Raises
    ------
    ValueError
        If the recipe shows no ``pip install`` line, or several, or the block holding it has other lines, or
        the line installs something other than fedlib-unlearning with extras of its ``pyproject.toml``.
    """
    text = "\n".join(c.source for c in _read(path).cells if c.cell_type == "markdown")
    found = []
    for fence in _FENCE.finditer(text):
        lines = [line.strip() for line in fence.group("body").splitlines() if line.strip()]
        if not any("pip install" in line for line in lines):
            continue
        if len(lines) != 1:
            raise ValueError(f"{path}: the block with the install line must hold that one line: {lines}")
        found.append(lines[0])
    if len(found) != 1:
        raise ValueError(f"{path}: a recipe shows exactly one `pip install` line in a bash block, not {found}")
    line = found[0]
    match = _INSTALL.fullmatch(line)
    if match is None:
        raise ValueError(f"{path}: {line!r} is not `pip install '{DISTRIBUTION}'` or `{DISTRIBUTION}[extra,...]`")
    unknown = set(_split(match.group("extras"))) - _known_extras()
    if unknown:
        raise ValueError(f"{path}: {line!r} names extras that pyproject.toml does not define: {sorted(unknown)}")
    return line


def _split(extras: str | None) -> tuple[str, ...]:
    return tuple(e.strip() for e in extras.split(",")) if extras else ()


def extras(path: Path) -> tuple[str, ...]:
    """The extras of the install a recipe shows: ``()`` for the core, ``("learn",)`` for ``[learn]``.

    Parameters
    ----------
    path : Path
        The recipe's source, a MyST Markdown notebook.

    Returns
    -------
    tuple of str
        The extras in the order the install line names them.

    Raises
    ------
    ValueError
        As :func:`install`, if the recipe shows no valid install line or several.
    """
    return _split(_INSTALL.fullmatch(install(path)).group("extras"))


def title(path: Path) -> str:
    """The recipe's title, its first level-one Markdown heading.

    Parameters
    ----------
    path : Path
        The recipe's source, a MyST Markdown notebook.

    Returns
    -------
    str
        The heading's text.

    Raises
    ------
    ValueError
        If the recipe has no level-one heading.
    """
    for cell in _read(path).cells:
        if cell.cell_type == "markdown":
            match = re.search(r"^# (.+)$", cell.source, flags=re.M)
            if match:
                return match.group(1).strip()
    raise ValueError(f"{path}: no title (a `# ` heading)")


def shown_cells(path: Path) -> list[str]:
    """The sources of the code cells that a recipe's page shows and its script runs, in order.

    Parameters
    ----------
    path : Path
        The recipe's source, a MyST Markdown notebook.

    Returns
    -------
    list of str
        Every code cell except those tagged as hidden (:data:`HIDDEN_TAGS`), the exercises' cells (tagged
        :data:`EXERCISE_TAGS`) and the cells between a ``solution-start`` and its ``solution-end``.
    """
    return [source for _, source, _ in _script_cells(_read(path))]


def _script_cells(notebook) -> list[tuple[str | None, str, bool]]:
    """``(heading, source, is_parameters)`` of each shown code cell; ``heading``: the section it opens, or None."""
    cells, heading = [], None
    for cell in strip_solutions(notebook).cells:
        if cell.cell_type == "markdown":
            for match in re.finditer(r"^## (.+)$", cell.source, flags=re.M):
                heading = match.group(1).strip()
            continue
        if cell.cell_type != "code" or _tags(cell) & (HIDDEN_TAGS | EXERCISE_TAGS):
            continue
        cells.append((heading, cell.source.strip("\n"), "parameters" in _tags(cell)))
        heading = None
    return cells


def script(path: Path, parameters: dict | None = None) -> str:
    """A recipe as a plain Python script: what its page shows, runnable on the install it names.

    Parameters
    ----------
    path : Path
        The recipe's source, a MyST Markdown notebook in ``notebooks/using``.
    parameters : dict, optional
        Values for the recipe's parameters cell (tagged ``parameters``), e.g. ``{"scale": "ci"}``: a block
        ``# Parameters`` of ``name = repr(value)`` lines follows that cell, as Papermill injects them.
        By default the script keeps the recipe's defaults.

    Returns
    -------
    str
        A header comment (the recipe's title, its install line, the source it was generated from), then the
        shown code cells in order (:func:`shown_cells`), each section's heading as a comment before its first
        cell.

    Raises
    ------
    ValueError
        If the recipe shows no valid install line or several (:func:`install`), ``parameters`` is given and
        the recipe has no parameters cell, or the script is not valid Python.
    """
    notebook = _read(path)
    name = _source_name(path)
    lines = [
        f"# {title(path)}",
        "#",
        f"# Needs: {install(path)}",
        f"# A recipe of the Federated Unlearning Book, generated from {name}: the code its page shows.",
    ]
    injected = False
    for heading, source, is_parameters in _script_cells(notebook):
        lines.append("")
        if heading:
            lines += [f"# ## {heading}", ""]
        lines.append(source)
        if is_parameters and parameters:
            lines += ["", "# Parameters", *(f"{key} = {value!r}" for key, value in parameters.items())]
            injected = True
    if parameters and not injected:
        raise ValueError(f"{path}: parameters {parameters} given, but the recipe has no parameters cell")
    text = "\n".join(lines).strip("\n") + "\n"
    try:
        ast.parse(text, filename=f"{Path(path).stem}.py")
    except SyntaxError as exc:
        raise ValueError(f"{path}: its shown code is not a valid Python script: {exc}") from exc
    return text


def _parse_value(text: str):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def main(argv: list[str] | None = None) -> None:
    """``python tools/recipes.py RECIPE [-p NAME VALUE ...] [-o OUT]``: write a recipe's script."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("recipe", type=Path, help="a recipe, notebooks/using/<name>.md")
    parser.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"))
    parser.add_argument("-o", "--output", type=Path, help="the script to write (default: standard output)")
    args = parser.parse_args(argv)
    parameters = {key: _parse_value(value) for key, value in args.parameter} or None
    text = script(args.recipe, parameters)
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text)


if __name__ == "__main__":
    main()
