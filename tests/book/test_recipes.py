"""The recipes of the part "Using fedlib" (notebooks/using/) keep to their form: fedlib only, linked, glued, short.

Each recipe's shown code is a script a user downloads and runs on the install its page names
(``tools/recipes.py``): it imports only fedlib, numpy, the standard library and what that install's extras
bring, runs as a plain script, and the built page links it.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
import yaml

from .conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))

import build_book  # tools/build_book.py: the staging
import exercises as book_exercises  # tools/exercises.py
import recipes as book_recipes  # tools/recipes.py: the recipes as the scripts their pages offer

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


#: The top-level modules that each extra of pyproject.toml brings, besides the core's.
EXTRA_MODULES = {
    "learn": {"torch"},
    "data": {"pandas", "pooch", "tqdm"},
    "plot": {"matplotlib", "seaborn", "pandas"},
    "assignment": {"ortools", "networkx"},
}

#: What a user who copies a recipe does not have unless an extra brings it: the extras' modules and the book's own.
NOT_INSTALLED = set().union(*EXTRA_MODULES.values()) | {"myst_nb", "fedbook", "papermill", "IPython"}

#: A ``sitecustomize`` that makes the modules named in FEDLIB_ABSENT_MODULES absent, as in a fresh install.
ABSENT = """
import importlib.abc, os, sys

_ABSENT = frozenset(os.environ.get("FEDLIB_ABSENT_MODULES", "").split(","))


class _Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in _ABSENT:
            raise ModuleNotFoundError(f"No module named {name!r} (not in the recipe's install)", name=name)
        return None


sys.meta_path.insert(0, _Absent())
"""


def _allowed_modules(recipe: str) -> set[str]:
    allowed = {"fedlib", "numpy"} | set(sys.stdlib_module_names)
    for extra in book_recipes.extras(ROOT / recipe):
        allowed |= EXTRA_MODULES[extra]
    return allowed


def _imported(code: str) -> set[str]:
    """The top-level modules that Python code imports (absolute imports)."""
    found = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            found |= {alias.name.partition(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            found.add(node.module.partition(".")[0])
    return found


def test_the_tools_list_the_recipes_of_the_part():
    assert [p.relative_to(ROOT).as_posix() for p in book_recipes.RECIPES] == RECIPES


@pytest.mark.parametrize("recipe", RECIPES)
def test_recipe_shows_one_install_line_and_links_its_script_near_the_top(recipe):
    name = Path(recipe).stem
    line = book_recipes.install(ROOT / recipe)  # raises unless exactly one
    assert re.fullmatch(r"pip install 'fedlib-unlearning(\[[a-z,]+\])?'", line), line
    assert set(book_recipes.extras(ROOT / recipe)) <= set(EXTRA_MODULES), "an extra the recipes do not use"
    text = (ROOT / recipe).read_text()
    top = text.split("\n## ", 1)[0]  # before the first section
    assert f"```bash\n{line}\n```" in top, "the install line stands in a bash block before the first section"
    links = re.findall(r"\{download\}`[^`<]*<([^>`]+)>`", text)
    assert links == [f"{name}.py"], f"one {{download}} link to {name}.py, not {links}"
    assert re.search(r"\{download\}`[^`]*`", top), "the download link stands near the install line"


@pytest.mark.parametrize("recipe", RECIPES)
def test_recipe_shows_code_a_user_copies(recipe):
    """The shown code imports fedlib, numpy, the standard library and its install's extras, and prints its results."""
    code = book_recipes.script(ROOT / recipe)
    imported = _imported(code)
    assert imported >= {"fedlib"}
    extra = imported - _allowed_modules(recipe)
    assert not extra, f"the shown code imports {sorted(extra)}, which {book_recipes.install(ROOT / recipe)!r} lacks"
    assert "glue(" not in code and "use_style" not in code, "the book's bookkeeping belongs in hidden cells"
    for cell in book_recipes.shown_cells(ROOT / recipe):
        last = ast.parse(cell).body[-1]
        if isinstance(last, ast.Expr):
            shown = isinstance(last.value, ast.Call) and getattr(last.value.func, "id", None) == "print"
            assert shown, f"a script does not show a cell's last value; print it: {ast.unparse(last)!r}"


@pytest.mark.parametrize("recipe", RECIPES)
def test_recipe_keeps_its_bookkeeping_in_hidden_cells(recipe):
    import jupytext

    for cell in jupytext.read(ROOT / recipe).cells:
        if cell.cell_type == "code" and ("glue(" in cell.source or "myst_nb" in cell.source):
            tags = set(cell.metadata.get("tags", []))
            assert tags & {"remove-cell", "remove-input"}, f"bookkeeping in a shown cell: {cell.source[:80]!r}"


@pytest.mark.parametrize("recipe", RECIPES)
def test_script_is_the_shown_code_with_a_header(recipe):
    name = Path(recipe).stem
    text = book_recipes.script(ROOT / recipe, parameters={"scale": "ci", "seed": 1})
    header = text.split("\n\n", 1)[0]
    assert header.startswith(f"# {book_recipes.title(ROOT / recipe)}\n")
    assert book_recipes.install(ROOT / recipe) in header and f"generated from {recipe}" in header
    ast.parse(text)
    shown = book_recipes.shown_cells(ROOT / recipe)
    positions = [text.index(cell) for cell in shown]
    assert positions == sorted(positions), "the shown cells, in order"
    parameters = next(cell for cell in shown if "scale = " in cell)
    assert f"{parameters}\n\n# Parameters\nscale = 'ci'\nseed = 1\n" in text, "Papermill's block after the cell"
    assert "# Parameters" not in book_recipes.script(ROOT / recipe), "the recipe's defaults when none are given"
    for exercise in book_exercises.exercises(ROOT / recipe):
        for code in [*exercise.solution_code, exercise.starter or "", exercise.check or ""]:
            assert not code.strip() or code.strip() not in text, f"{name}.py holds exercise {exercise.label}"


@pytest.mark.parametrize("recipe", RECIPES)
def test_recipe_runs_as_a_plain_script_on_its_install(recipe, tmp_path):
    """The script at scale "ci", from a temporary directory; what its install lacks is made absent."""
    name = Path(recipe).stem
    script = tmp_path / f"{name}.py"
    script.write_text(book_recipes.script(ROOT / recipe, parameters={"scale": "ci"}))
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(ABSENT)
    absent = sorted(NOT_INSTALLED - _allowed_modules(recipe))
    env = {
        **os.environ,
        "FEDLIB_PROGRESS": "0",
        "PYTHONPATH": str(site),
        "FEDLIB_ABSENT_MODULES": ",".join(absent),
        "MPLBACKEND": "agg",
    }
    run = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900
    )
    assert run.returncode == 0, f"{name}.py on {book_recipes.install(ROOT / recipe)!r}:\n{run.stderr[-4000:]}"
    assert run.stdout.strip(), f"{name}.py printed nothing"


def test_staging_writes_each_script_beside_its_recipe_for_both_editions(tmp_path):
    src = tmp_path / "src"
    (src / "notebooks" / "using").mkdir(parents=True)
    stale = src / "notebooks" / "using" / "gone.py"
    stale.write_text("print('a recipe that was removed')\n")
    written = build_book.stage_recipes(src)
    assert sorted(p.relative_to(src).as_posix() for p in written) == [r[:-3] + ".py" for r in RECIPES]
    for recipe in RECIPES:
        assert (src / recipe).with_suffix(".py").read_text() == book_recipes.script(ROOT / recipe)
    assert not stale.exists()
    mtimes = [p.stat().st_mtime_ns for p in written]
    build_book.stage_recipes(src)
    assert [p.stat().st_mtime_ns for p in written] == mtimes, "an unchanged script is not rewritten"
    # The student edition copies the staged sources: the scripts hold no solution, and reach it unchanged.
    (src / "_config.yml").write_text(yaml.safe_dump({"title": "t", "sphinx": {"config": {}}}))
    student = build_book.stage_student(src)
    for recipe in RECIPES:
        assert (student / recipe).with_suffix(".py").read_text() == book_recipes.script(ROOT / recipe)


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.downloads: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "a" and a.get("href"):
            if "download" in (a.get("class") or "").split() or "download" in a:
                self.downloads.append(a["href"])


@pytest.mark.parametrize("recipe", RECIPES)
def test_html_page_offers_the_script_as_a_download(recipe, html_dir):
    name = Path(recipe).stem
    page = html_dir / Path(recipe).with_suffix(".html")
    links = _Links()
    links.feed(page.read_text(encoding="utf-8"))
    hrefs = [h for h in links.downloads if unquote(urlsplit(h).path).endswith(f"/{name}.py")]
    assert hrefs, f"{page.name}: no download link to {name}.py among {links.downloads}"
    target = (page.parent / unquote(urlsplit(hrefs[0]).path)).resolve()
    assert target.is_file() and target.is_relative_to(html_dir.resolve()), target
    assert target.read_text() == book_recipes.script(ROOT / recipe), "the download is the recipe's current script"
