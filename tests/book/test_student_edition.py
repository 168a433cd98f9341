"""The student edition: built from the executed chapters, with no solution anywhere in what it ships.

Every solution's text is turned into fingerprints (its code lines and its runs of plain words that the student
edition's own sources do not contain elsewhere) and searched for in every file of the built site: pages,
downloadable notebooks and sources (``_sources/``), the search index. The same search on the instructor edition
must find them, so the test can fail. The search index stores stemmed words rather than text: a word that only a
solution uses must not be indexed for the student page.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys

import pytest
import yaml

from .conftest import ROOT, SCALE, chapters, make

sys.path.insert(0, str(ROOT / "tools"))

import exercises as book_exercises

pytestmark = [pytest.mark.book, pytest.mark.xdist_group("book")]

STUDENT = ROOT / "_build" / SCALE / "student" / "_build" / "html"


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _page_text(path) -> str:
    """What a file of the site says, as plain text: HTML without tags, notebooks' cells and outputs, text files."""
    raw = path.read_text(errors="replace")
    if path.suffix == ".html":
        raw = re.sub(r"<script.*?</script>|<style.*?</style>", " ", raw, flags=re.S)
        return _normalise(html.unescape(re.sub(r"<[^>]+>", "", raw)))
    if path.suffix == ".ipynb":
        nb = json.loads(raw)
        parts = []
        for cell in nb["cells"]:
            parts.append("".join(cell["source"]))
            for out in cell.get("outputs", []):
                parts.append("".join(out.get("text", "")))
                for value in out.get("data", {}).values():
                    parts.append(value if isinstance(value, str) else "".join(value) if isinstance(value, list) else "")
        return _normalise("\n".join(parts))
    return _normalise(raw)


def _student_sources() -> str:
    """Everything a student may see, as source text: each chapter with its solutions removed."""
    import jupytext

    texts = []
    for chapter in chapters():
        nb = book_exercises.strip_solutions(book_exercises.read_notebook(ROOT / chapter))
        texts.append(jupytext.writes(nb, fmt="md:myst"))
    # The book's pages and the library's source (shown by {literalinclude} and the API pages) are public too.
    texts += [p.read_text() for p in sorted((ROOT / "book").rglob("*.md"))]
    texts += [p.read_text() for p in sorted((ROOT / "fedlib").rglob("*.py"))]
    return _normalise("\n".join(texts))


def _fingerprints() -> dict[str, list[str]]:
    """For each exercise, pieces of its solution that appear nowhere a student may look."""
    visible = _student_sources()
    found: dict[str, list[str]] = {}
    for chapter in chapters():
        for ex in book_exercises.exercises(ROOT / chapter):
            pieces = []
            for code in ex.solution_code:
                pieces += [_normalise(line) for line in code.splitlines() if len(line.strip()) >= 20]
            for cell in ex.solution:
                if cell["cell_type"] == "markdown":
                    # Runs of plain words: markup (math, code, roles, emphasis) renders differently in HTML.
                    for run in re.split(r"[$`{}\[\]*_|<>\\#]|\n\s*\n|:::", cell["source"]):
                        run = _normalise(run)
                        if len(run.split()) >= 7:
                            pieces.append(run)
            pieces = [p for p in dict.fromkeys(pieces) if p not in visible]
            if pieces:
                found[ex.label] = pieces
    return found


@pytest.fixture(scope="module")
def student_dir():
    result = make(f"_build/{SCALE}/student/_build/html/index.html", "EDITION=student")
    if result.returncode != 0:
        pytest.fail(f"the student edition failed to build:\n{result.stdout[-6000:]}\n{result.stderr[-6000:]}")
    return STUDENT


def _leaks(site, fingerprints) -> dict[str, list[str]]:
    leaks: dict[str, list[str]] = {}
    for path in sorted(site.rglob("*")):
        if not path.is_file() or path.suffix not in (".html", ".ipynb", ".md", ".txt", ".js", ".json", ".py"):
            continue
        text = _page_text(path)
        for label, pieces in fingerprints.items():
            hits = [p for p in pieces if p in text]
            if hits:
                leaks.setdefault(str(path.relative_to(site)), []).append(f"{label}: {hits[0][:80]!r}")
    return leaks


def test_no_solution_text_in_any_file_of_the_student_edition(student_dir, html_dir):
    fingerprints = _fingerprints()
    assert len(fingerprints) >= 40, "too few solutions fingerprinted for the test to mean anything"
    # The search works: the instructor edition shows almost every solution, in its pages and its sources.
    instructor = _leaks(html_dir, fingerprints)
    shown = {entry.split(":")[0] for entries in instructor.values() for entry in entries}
    assert len(shown) >= 0.9 * len(fingerprints), f"only {len(shown)} of {len(fingerprints)} solutions found"
    assert any(path.startswith("_sources/") for path in instructor)
    assert _leaks(student_dir, fingerprints) == {}


def test_student_search_index_has_no_word_only_a_solution_uses(student_dir, html_dir):
    from sphinx.search.en import SearchEnglish

    stem = SearchEnglish({}).stem

    def index(site):
        text = (site / "searchindex.js").read_text()
        data = json.loads(text[text.index("(") + 1 : text.rindex(")")])
        docs = data["docnames"]
        terms: dict[str, set[str]] = {}
        for word, where in data["terms"].items():
            where = where if isinstance(where, list) else [where]
            for i in where:
                terms.setdefault(docs[i], set()).add(word)
        return terms

    student, instructor = index(student_dir), index(html_dir)
    caught = 0
    for chapter in chapters():
        doc = chapter[:-3]
        page = _page_text(student_dir / f"{doc}.html").lower()
        solution_words = set()
        for ex in book_exercises.exercises(ROOT / chapter):
            solution_words |= set(re.findall(r"[a-z]{6,}", ex.solution_text.lower()))
        only_in_solutions = {stem(w) for w in solution_words if w not in page}
        only_in_solutions -= {stem(w) for w in re.findall(r"[a-z]+", page)}  # "take" and "taken" share a stem
        assert not (student.get(doc, set()) & only_in_solutions), f"{doc}: solution words in the search index"
        caught += len(instructor.get(doc, set()) & only_in_solutions)
    assert caught > 50, "the instructor edition's index should hold words only its solutions use"


def test_student_labs_keep_starters_and_checks_without_outputs(student_dir):
    for lab in sorted((student_dir / "_sources" / "labs").glob("*.ipynb")):
        nb = json.loads(lab.read_text())
        tags = [c.get("metadata", {}).get("tags", []) for c in nb["cells"]]
        assert any("starter" in t for t in tags) and any("check" in t for t in tags), lab.name
        assert not any("solution" in t for t in tags), lab.name
        for cell, t in zip(nb["cells"], tags, strict=True):
            if "check" in t:
                assert cell["outputs"] == [], f"{lab.name}: a check's output (computed on the solution) is shown"


def test_student_pages_in_chromium_show_exercises_and_no_solution(student_dir, html_dir):
    """A chapter and a lab of each edition, opened in headless Chromium: the instructor's have solution
    dropdowns, the student's the same exercises without any, and both fit the content column."""
    from .test_site import dump_probed, layout_report

    for page in ("notebooks/foundations/kmeans.html", "labs/foundations.html"):
        student_dom, _ = dump_probed(student_dir / page)
        instructor_dom, _ = dump_probed(html_dir / page)
        exercises_shown = student_dom.count('class="exercise')
        assert exercises_shown >= 2 and exercises_shown == instructor_dom.count('class="exercise'), page
        assert 'class="solution' not in student_dom, page
        assert instructor_dom.count('class="solution') >= 2, page
        assert layout_report(student_dom)["problems"] == [], page
        assert "(student edition)" in student_dom and "(student edition)" not in instructor_dom


def test_the_pages_workflow_assembles_one_site_from_what_ci_built(tmp_path, student_dir, html_dir):
    """The publishing workflow's own assembly step, run on CI's build: both editions where the README says."""
    steps = yaml.safe_load((ROOT / ".github" / "workflows" / "book.yml").read_text())["jobs"]["build"]["steps"]
    assembly = [s["run"] for s in steps if "site/student" in s.get("run", "")]
    assert len(assembly) == 1, "one step puts both editions into one site"
    (tmp_path / "_build").symlink_to(ROOT / "_build")
    run = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", assembly[0]],
        cwd=tmp_path, env={"PATH": "/usr/bin:/bin", "SCALE": SCALE}, capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    site = tmp_path / "site"
    assert (site / ".nojekyll").is_file()
    assert (site / "index.html").read_bytes() == (html_dir / "index.html").read_bytes()
    assert (site / "student" / "index.html").read_bytes() == (student_dir / "index.html").read_bytes()
