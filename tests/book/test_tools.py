"""The chapter runner: parameters reach the chapter, and a failing cell names the chapter and the cell."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from .conftest import ROOT, SCALE, make

pytestmark = [pytest.mark.book, pytest.mark.xdist_group("book")]

CHAPTER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# A tiny chapter

```{code-cell} ipython3
:tags: [parameters]

scale = "default"
seed = 0
```

```{code-cell} ipython3
value = {"ci": 1, "default": 2}[scale] + seed
```

```{code-cell} ipython3
assert value != 4, "seed 3 at scale ci is refused"
```
"""


def run(tmp_path: Path, *params: str) -> subprocess.CompletedProcess:
    source = tmp_path / "tiny.md"
    source.write_text(CHAPTER)
    args = [sys.executable, str(ROOT / "tools" / "run_chapter.py"), str(source), str(tmp_path / "out.ipynb")]
    for i in range(0, len(params), 2):
        args += ["-p", params[i], params[i + 1]]
    return subprocess.run(args, capture_output=True, text=True, timeout=300)


def test_parameters_are_injected(tmp_path):
    result = run(tmp_path, "scale", "ci", "seed", "1")
    assert result.returncode == 0, result.stderr
    nb = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    assert any("injected-parameters" in c.metadata.get("tags", []) for c in nb.cells)


def test_failing_cell_is_named_and_no_output_is_left(tmp_path):
    result = run(tmp_path, "scale", "ci", "seed", "3")
    assert result.returncode != 0
    assert "chapter" in result.stderr and "tiny.md failed in cell" in result.stderr
    assert "AssertionError: seed 3 at scale ci is refused" in result.stderr
    assert not (tmp_path / "out.ipynb").exists()
    assert (tmp_path / "out.failed.ipynb").exists()


def test_second_build_has_nothing_to_do(html_dir):
    """After a build, make considers the book up to date: no chapter would run again."""
    result = subprocess.run(
        ["make", "-q", f"SCALE={SCALE}", f"_build/{SCALE}/_build/html/index.html"], cwd=ROOT, capture_output=True
    )
    assert result.returncode == 0, "make would rebuild the book although nothing changed"
    assert make(f"_build/{SCALE}/_build/html/index.html").returncode == 0
