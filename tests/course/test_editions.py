"""The machinery of the two editions: solutions removed exactly, labs generated from the chapters, and the
Makefile, the table of contents and the publishing workflow naming the same labs and outputs."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import exercises as book_exercises  # noqa: E402
import make_lab  # noqa: E402

SOURCE = '''---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# A chapter

```{exercise-start} Double it
:label: ex-demo-double
```

Write `double(x)`.

```{exercise-end}
```

```{code-cell} ipython3
:tags: [starter]

def double(x):
    raise NotImplementedError
```

```{solution-start} ex-demo-double
:class: dropdown
```

SECRET PROSE of the solution.

```{code-cell} ipython3
:tags: [solution]

def double(x):
    return 2 * x  # SECRET CODE
```

More SECRET PROSE after the code.

```{solution-end}
```

```{code-cell} ipython3
:tags: [check]

course.check("ex-demo-double", double)
```

```{exercise-start}
:label: ex-demo-prove
```

Prove it.

```{exercise-end}
```

```{solution-start} ex-demo-prove
:class: dropdown
```

SECRET PROOF.

```{solution-end}
```

Text after the exercises stays.
'''


def _notebook(tmp_path):
    path = tmp_path / "chapter.md"
    path.write_text(SOURCE)
    return path, book_exercises.read_notebook(path)


def test_exercises_are_read_with_their_parts(tmp_path):
    path, _ = _notebook(tmp_path)
    double, prove = book_exercises.exercises(path)
    assert (double.label, double.title, double.is_coding) == ("ex-demo-double", "Double it", True)
    assert double.answer == "double"
    assert "raise NotImplementedError" in double.starter
    assert double.solution_code == ["def double(x):\n    return 2 * x  # SECRET CODE"]
    assert "SECRET PROSE" in double.solution_text and "More SECRET PROSE" in double.solution_text
    assert (prove.label, prove.is_coding, prove.statement) == ("ex-demo-prove", False, "Prove it.")


def test_strip_solutions_removes_every_solution_and_check_output(tmp_path):
    import jupytext

    _, nb = _notebook(tmp_path)
    check = next(c for c in nb.cells if "check" in c.metadata.get("tags", []))
    check.outputs = [nbformat.v4.new_output("stream", text="[PASSED] ...")]
    stripped = book_exercises.strip_solutions(nb)
    text = jupytext.writes(stripped, fmt="md:myst")
    assert "SECRET" not in text and "solution-" not in text
    assert "Write `double(x)`." in text and "Prove it." in text and "Text after the exercises stays." in text
    assert "raise NotImplementedError" in text
    kept_check = next(c for c in stripped.cells if "check" in c.metadata.get("tags", []))
    assert kept_check.outputs == []
    assert "SECRET" in jupytext.writes(nb, fmt="md:myst"), "the original is not modified"


def test_strip_solutions_refuses_an_unclosed_solution(tmp_path):
    import pytest

    _, nb = _notebook(tmp_path)
    for cell in nb.cells:
        cell.source = cell.source.replace("```{solution-end}\n```", "")
    with pytest.raises(ValueError, match="solution-end"):
        book_exercises.strip_solutions(nb)


def test_every_part_has_a_lab_in_the_makefile_and_the_toc():
    makefile = (ROOT / "Makefile").read_text()
    parts = re.search(r"^LAB_PARTS\s*:=\s*(.+)$", makefile, re.M).group(1).split()
    toc_labs = re.findall(r"file: labs/(\w+)", (ROOT / "_toc.yml").read_text())
    teaching = sorted(p.name for p in (ROOT / "notebooks").iterdir() if p.is_dir() and p.name != "using")
    assert parts == toc_labs
    assert sorted(parts) == teaching


def test_a_lab_holds_each_coding_exercise_of_its_part_once():
    for part in ("foundations",):
        source = make_lab.lab_source(Path("notebooks") / part)
        caption, chapters = make_lab.part_chapters(Path("notebooks") / part)
        coding = [ex for c in chapters for ex in book_exercises.exercises(c) if ex.is_coding]
        assert f"# Lab: {caption}" in source
        for ex in coding:
            assert source.count(f":label: lab-{ex.label}\n") == 1
            assert source.count(f'course.check("{ex.label}"') == 1
            assert f"## {ex.title}" in source


def test_publishing_workflow_builds_both_editions_where_the_makefile_puts_them():
    flow = yaml.safe_load((ROOT / ".github" / "workflows" / "book.yml").read_text())
    steps = [s.get("run", "") for s in flow["jobs"]["build"]["steps"]]
    script = "\n".join(steps)
    assert "make book SCALE=$SCALE" in script and "EDITION=student" in script
    assert "_build/$SCALE/_build/html/." in script and "_build/$SCALE/student/_build/html/." in script
    makefile = (ROOT / "Makefile").read_text()
    assert "_build/$(SCALE)/student/_build/html/index.html" in makefile
    assert "_build/$(SCALE)/_build/html/index.html" in makefile
    assert any(s.get("uses", "").startswith("actions/deploy-pages") for s in flow["jobs"]["deploy"]["steps"])


def test_the_syllabus_plans_every_exercise_once():
    syllabus = (ROOT / "book" / "course" / "syllabus.md").read_text()
    planned = re.findall(r"\{numref\}`(ex-[\w-]+)`", syllabus)
    chapters = [p for p in (ROOT / "notebooks").rglob("*.md") if p.parent.name != "using" and p.name != "README.md"]
    labels = [ex.label for chapter in chapters for ex in book_exercises.exercises(chapter)]
    assert sorted(planned) == sorted(labels)
