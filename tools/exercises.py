"""The exercises of a chapter, read from its source, and the same chapter without solutions.

A chapter marks exercises and solutions with sphinx-exercise's gated directives::

    ```{exercise-start} A title
    :label: ex-kmeans-lloyd-step
    ```
    The statement.
    ```{exercise-end}
    ```

    ```{code-cell} ipython3
    :tags: [starter]
    def lloyd_step(X, centers, weights):
        raise NotImplementedError
    ```

    ```{solution-start} ex-kmeans-lloyd-step
    :class: dropdown
    ```
    Prose and code cells of the solution.
    ```{solution-end}
    ```

    ```{code-cell} ipython3
    :tags: [check]
    course.check("ex-kmeans-lloyd-step", lloyd_step)
    ```

A *coding exercise* has a starter cell (tagged ``starter``, after the statement) and a check cell (tagged
``check``, after the solution). Its starter and solution cells are self-contained (they import what they
use), so the tests and the labs can run them outside the chapter.

Used by ``tools/make_lab.py`` (a part's lab), ``tools/build_book.py --edition student`` (every solution
removed) and the tests of ``tests/course`` and ``tests/book``.
"""

from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass, field
from pathlib import Path

MARKER = re.compile(
    r"(?P<es>```\{exercise-start\}(?P<es_title>[^\n]*)\n(?P<es_options>(?::[^\n]*\n)*)```[ \t]*\n?)"
    r"|(?P<ee>```\{exercise-end\}\n```[ \t]*\n?)"
    r"|(?P<ss>```\{solution-start\}[ \t]+(?P<ss_label>\S+)[^\n]*\n(?::[^\n]*\n)*```[ \t]*\n?)"
    r"|(?P<se>```\{solution-end\}\n```[ \t]*\n?)"
)


@dataclass
class Exercise:
    """One exercise of a chapter, as its source gives it."""

    chapter: str
    label: str
    title: str
    statement: str
    starter: str | None = None
    solution: list[dict] = field(default_factory=list)  # cells: {"cell_type", "source"} (markdown and code)
    check: str | None = None
    answer: str | None = None  # the expression handed to course.check

    @property
    def is_coding(self) -> bool:
        """A coding exercise with automatic feedback: a starter cell and a check cell."""
        return self.starter is not None and self.check is not None

    @property
    def solution_code(self) -> list[str]:
        return [c["source"] for c in self.solution if c["cell_type"] == "code"]

    @property
    def solution_text(self) -> str:
        """The solution's prose and code, as one string."""
        return "\n".join(c["source"] for c in self.solution)


def _tags(cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def _label_of(options: str) -> str | None:
    m = re.search(r"^:label:\s*(\S+)", options, re.M)
    return m.group(1) if m else None


def _check_call(source: str) -> tuple[str, str]:
    """The label and answer expression of ``course.check("label", answer)`` in a check cell."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "check":
            if len(node.args) == 2 and isinstance(node.args[0], ast.Constant):
                return node.args[0].value, ast.unparse(node.args[1])
    raise ValueError(f"a check cell must call course.check('label', answer): {source!r}")


def read_notebook(path: Path):
    """A chapter source (MyST ``.md``) or an executed notebook (``.ipynb``) as an nbformat notebook."""
    path = Path(path)
    if path.suffix == ".ipynb":
        import nbformat

        return nbformat.read(path, as_version=4)
    import jupytext

    return jupytext.read(path)


def exercises(path: Path, notebook=None) -> list[Exercise]:
    """Every exercise of a chapter, in order, with its statement, starter, solution and check."""
    nb = notebook if notebook is not None else read_notebook(path)
    found: list[Exercise] = []
    by_label: dict[str, Exercise] = {}
    state = None  # None, ("statement", ex), ("solution", ex)
    last_closed: Exercise | None = None  # the exercise whose statement ended last (a starter follows it)
    last_solved: Exercise | None = None  # the exercise whose solution ended last (a check follows it)
    for cell in nb.cells:
        source = cell.source
        if cell.cell_type == "code":
            tags = _tags(cell)
            if state and state[0] == "solution":
                state[1].solution.append({"cell_type": "code", "source": source})
            elif "starter" in tags:
                if last_closed is None or last_closed.starter is not None:
                    raise ValueError(f"{path}: a starter cell must follow an exercise's statement")
                last_closed.starter = source
            elif "check" in tags:
                label, answer = _check_call(source)
                if last_solved is None or last_solved.label != label:
                    raise ValueError(f"{path}: the check of {label!r} must follow that exercise's solution")
                last_solved.check, last_solved.answer = source, answer
            continue
        if cell.cell_type != "markdown":
            continue
        pos = 0
        for m in MARKER.finditer(source):
            text = source[pos : m.start()]
            if state:
                _append_text(state, text)
            pos = m.end()
            kind = _kind(m)
            if kind == "es":
                label = _label_of(m.group("es_options"))
                if not label:
                    raise ValueError(f"{path}: an exercise without a :label:")
                ex = Exercise(str(path), label, m.group("es_title").strip(), "")
                found.append(ex)
                by_label[label] = ex
                state = ("statement", ex)
            elif kind == "ee":
                last_closed = state[1]
                state = None
            elif kind == "ss":
                label = m.group("ss_label")
                if label not in by_label:
                    raise ValueError(f"{path}: a solution to unknown exercise {label!r}")
                state = ("solution", by_label[label])
            else:
                last_solved = state[1]
                state = None
        if state:
            _append_text(state, source[pos:])
    for ex in found:
        ex.statement = ex.statement.strip()
    return found


def _kind(m: re.Match) -> str:
    for name in ("es", "ee", "ss", "se"):
        if m.group(name) is not None:
            return name
    raise AssertionError


def _append_text(state, text: str) -> None:
    part, ex = state
    if part == "statement":
        ex.statement += text
    elif text.strip():
        ex.solution.append({"cell_type": "markdown", "source": text.strip()})


def strip_solutions(notebook):
    """A copy of the notebook with every solution gone, for the student edition.

    Removes the text and cells between each ``solution-start`` and ``solution-end`` (markers included),
    every cell tagged ``solution``, and the outputs of cells tagged ``check`` (they were computed on the
    reference solution).
    """
    nb = copy.deepcopy(notebook)
    cells = []
    inside = False
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            kept, pos = [], 0
            for m in MARKER.finditer(cell.source):
                kind = _kind(m)
                if not inside:
                    kept.append(cell.source[pos : m.start()])
                if kind == "ss":
                    inside = True
                elif kind == "se":
                    inside = False
                else:
                    if not inside:
                        kept.append(m.group(0))
                pos = m.end()
            if not inside:
                kept.append(cell.source[pos:])
            text = "".join(kept)
            if text.strip():
                cell.source = text
                cells.append(cell)
            continue
        if inside or "solution" in _tags(cell):
            continue
        if cell.cell_type == "code" and "check" in _tags(cell):
            cell.outputs = []
            cell.execution_count = None
        cells.append(cell)
    if inside:
        raise ValueError("a solution-start without its solution-end")
    nb.cells = cells
    return nb


def main(argv: list[str] | None = None) -> None:
    """``python tools/exercises.py strip OUT_DIR NOTEBOOK...``: write student copies of executed notebooks."""
    import argparse

    import nbformat

    parser = argparse.ArgumentParser(description=main.__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    strip = sub.add_parser("strip", help="copy notebooks with every solution removed")
    strip.add_argument("out_dir", type=Path)
    strip.add_argument("notebooks", type=Path, nargs="+")
    args = parser.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for path in args.notebooks:
        nbformat.write(strip_solutions(nbformat.read(path, as_version=4)), args.out_dir / path.name)
        print(f"{path} -> {args.out_dir / path.name} (solutions removed)")


if __name__ == "__main__":
    main()
