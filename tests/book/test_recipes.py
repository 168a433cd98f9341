"""The recipes of the part "Using fedlib" (notebooks/using/) keep to their form: fedlib only, linked, glued, short."""

from __future__ import annotations

import re

import pytest
import yaml

from .conftest import ROOT

pytestmark = [pytest.mark.book, pytest.mark.xdist_group("book")]

PART = "Using fedlib"
RECIPES = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "notebooks" / "using").glob("*.md"))

#: Numbers that name a place in a paper, not a result: "Alg. 3", "Requirement 4", "Table II".
_CITED = re.compile(r"\b(Alg\.|Algorithm|Eq\.|Sec\.|Fig\.|Figs\.|Lemma|Theorem|Remark|Requirement|Table) [0-9IVX]+")


def _cells(recipe: str):
    import jupytext

    return jupytext.read(ROOT / recipe).cells


def _prose(recipe: str) -> str:
    """The recipe's Markdown without code, roles, math and directive fences: what a reader reads as text."""
    text = "\n".join(c.source for c in _cells(recipe) if c.cell_type == "markdown")
    text = re.sub(r"```.*?```", " ", text, flags=re.S)  # directives (exercise, solution) and their options
    text = re.sub(r"^\(.*?\)=$", " ", text, flags=re.M)  # labels
    text = re.sub(r"\$\$.*?\$\$|\$[^$]*\$", " ", text, flags=re.S)  # math
    text = re.sub(r"\{[a-z:-]+\}`[^`]*`", " ", text)  # roles: glue, py, ref, cite
    text = re.sub(r"`[^`]*`", " ", text)  # inline code
    return _CITED.sub(" ", text)


def test_recipes_form_a_numbered_part_before_the_library():
    parts = yaml.safe_load((ROOT / "_toc.yml").read_text())["parts"]
    captions = [p["caption"] for p in parts]
    assert PART in captions, f"_toc.yml has no part {PART!r}"
    part = parts[captions.index(PART)]
    assert part.get("numbered") is True
    assert captions.index(PART) < captions.index("The fedlib library")
    listed = sorted(c["file"] + ".md" for c in part["chapters"])
    assert listed == RECIPES, "every notebooks/using/*.md is a chapter of the part, and nothing else is"


@pytest.mark.parametrize("recipe", RECIPES)
def test_recipe_calls_fedlib_not_the_book_package(recipe):
    code = "\n".join(c.source for c in _cells(recipe) if c.cell_type == "code")
    assert "fedbook" not in code, "a recipe shows library calls a reader can copy: fedlib only"


@pytest.mark.parametrize("recipe", RECIPES)
def test_recipe_links_the_api_and_ends_with_where_to_go_next(recipe):
    text = (ROOT / recipe).read_text()
    assert re.search(r"\{py:(class|func|meth)\}`~?fedlib\.", text), "no link to the API reference"
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    assert headings and headings[-1] == "Where to go next"
    last = text.split("## Where to go next", 1)[1]
    refs = set(re.findall(r"\{ref\}`([^`]+)`", last))
    assert "threat-model" in refs and len(refs) >= 2, f"links to the paper chapters and the threat model: {refs}"


@pytest.mark.parametrize("recipe", RECIPES)
def test_recipe_prose_is_short_and_types_no_numbers(recipe):
    prose = _prose(recipe)
    digits = re.findall(r"[^\s]*\d[^\s]*", prose)
    assert not digits, f"numbers in the prose must be glued from the run: {digits}"
    words = len(re.findall(r"[A-Za-z][A-Za-z'’+-]*", prose))
    assert 200 <= words <= 800, f"{words} words of prose: a recipe is short"
