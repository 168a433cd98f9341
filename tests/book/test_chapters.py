"""Every chapter executes at scale="ci" (a failure names the chapter and the cell)."""

from __future__ import annotations

import json

import pytest

from .conftest import ROOT, SCALE, chapters, make

pytestmark = [pytest.mark.book, pytest.mark.xdist_group("book")]


def test_book_tests_form_one_xdist_group(request):
    """Under ``pytest -n N --dist loadgroup`` every book test is in the group "book", so one worker runs them all."""
    if not request.config.getoption("loadgroup", default=False):
        pytest.skip("not a pytest-xdist worker under --dist loadgroup")
    book = ROOT / "tests" / "book"
    loose = [item.nodeid for item in request.session.items if item.path.is_relative_to(book)]
    loose = [nodeid for nodeid in loose if not nodeid.endswith("@book")]
    assert not loose, f"book tests outside the xdist group 'book' (they could run on two workers at once): {loose}"


def test_every_chapter_source_is_in_the_toc():
    sources = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "notebooks").rglob("*.md") if p.name != "README.md")
    assert sources == sorted(chapters())


@pytest.mark.parametrize("chapter", chapters())
def test_chapter_executes_at_ci_scale(chapter):
    target = f"_build/{SCALE}/src/{chapter[:-3]}.ipynb"
    result = make(target)
    assert result.returncode == 0, (
        f"{chapter} failed at scale={SCALE!r}:\n{result.stdout[-4000:]}\n{result.stderr[-4000:]}"
    )
    notebook = json.loads((ROOT / target).read_text())
    injected = [c for c in notebook["cells"] if "injected-parameters" in c.get("metadata", {}).get("tags", [])]
    assert injected and f'scale = "{SCALE}"' in "".join(injected[0]["source"])
    errors = [o for c in notebook["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    # Every coding exercise's check ran on the chapter's reference solution and passed.
    for c in notebook["cells"]:
        if "check" in c.get("metadata", {}).get("tags", []):
            shown = "".join("".join(o.get("data", {}).get("text/plain", "")) for o in c.get("outputs", []))
            assert shown.startswith("[PASSED]"), f"{chapter}: {''.join(c['source'])} -> {shown!r}"


@pytest.mark.parametrize("chapter", chapters())
def test_chapter_has_parameters_cell_and_defines_no_functions(chapter):
    import jupytext

    notebook = jupytext.read(ROOT / chapter)
    tags = [c.metadata.get("tags", []) for c in notebook.cells if c.cell_type == "code"]
    assert any("parameters" in t for t in tags), "no Papermill parameters cell"
    params = next(c.source for c in notebook.cells if "parameters" in c.metadata.get("tags", []))
    assert "scale" in params and "seed" in params
    for cell in notebook.cells:
        # A coding exercise's starter and solution are the student's code: they may define functions.
        if cell.cell_type == "code" and not {"starter", "solution"} & set(cell.metadata.get("tags", [])):
            assert not any(line.startswith(("def ", "class ")) for line in cell.source.splitlines()), (
                "algorithms belong in fedlib, not in a chapter"
            )
