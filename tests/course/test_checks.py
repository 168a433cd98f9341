"""Every coding exercise's check: passes on the chapter's solution, fails on the starter and on wrong answers.

The reference solution and the starter are read from the chapter's source (``tools/exercises.py``), so
what is tested is what the book prints. Plausible wrong answers (an off-by-one, the paper's misprinted
formula, a variant that is not exact) live in ``wrong_<part>.py`` beside this file, as self-contained
sources keyed by exercise label.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import exercises as book_exercises  # noqa: E402  (tools/exercises.py)
from fedbook import course  # noqa: E402

#: Chapters that teach (the papers, the primer, the synthesis); the "Using fedlib" recipes are how-to guides.
TEACHING = sorted(p for p in (ROOT / "notebooks").rglob("*.md") if p.parent.name != "using" and p.name != "README.md")


def _all_exercises():
    found = []
    for path in sorted((ROOT / "notebooks").rglob("*.md")):
        if path.name != "README.md":
            found.extend(book_exercises.exercises(path))
    return found


EXERCISES = _all_exercises()
CODING = [ex for ex in EXERCISES if ex.is_coding]


def _wrong_answers() -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    here = Path(__file__).parent
    for info in pkgutil.iter_modules([str(here)]):
        if info.name.startswith("wrong_"):
            module = importlib.import_module(f"tests.course.{info.name}")
            for label, answers in module.WRONG.items():
                assert label not in found, f"wrong answers for {label} given twice"
                found[label] = answers
    return found


WRONG = _wrong_answers()


def _answer(ex, *sources: str):
    namespace: dict = {"__name__": "__student__"}
    for source in sources:
        exec(compile(source, f"<{ex.label}>", "exec"), namespace)
    return eval(ex.answer, namespace)


def _id(ex):
    return ex.label


@pytest.mark.parametrize("ex", CODING, ids=_id)
def test_check_passes_on_the_reference_solution(ex):
    feedback = course.check(ex.label, _answer(ex, ex.starter, *ex.solution_code))
    assert feedback.passed, f"{ex.label}: the chapter's own solution fails its check: {feedback.message}"


@pytest.mark.parametrize("ex", CODING, ids=_id)
def test_check_fails_on_the_unfilled_starter(ex):
    feedback = course.check(ex.label, _answer(ex, ex.starter))
    assert not feedback.passed
    assert "not answered yet" in feedback.message


WRONG_CASES = [(label, name, source) for label, answers in sorted(WRONG.items()) for name, source in answers.items()]


@pytest.mark.parametrize(("label", "name", "source"), WRONG_CASES, ids=[f"{lab}-{n}" for lab, n, _ in WRONG_CASES])
def test_check_fails_on_a_plausible_wrong_answer(label, name, source):
    ex = next(ex for ex in CODING if ex.label == label)
    feedback = course.check(label, _answer(ex, source))
    assert not feedback.passed, f"{label}: the wrong answer '{name}' passes"
    assert "not answered yet" not in feedback.message, f"{label}: '{name}' should be judged, not taken as unanswered"


@pytest.mark.parametrize("ex", CODING, ids=_id)
def test_every_coding_exercise_has_a_plausible_wrong_answer(ex):
    assert WRONG.get(ex.label), f"{ex.label}: add a plausible wrong answer to tests/course/wrong_<part>.py"


def test_every_check_belongs_to_a_coding_exercise_and_back():
    assert sorted(course.registered()) == sorted(ex.label for ex in CODING)


def test_labels_are_unique_across_the_book():
    labels = [ex.label for ex in EXERCISES]
    assert len(labels) == len(set(labels))


@pytest.mark.parametrize("ex", CODING, ids=_id)
def test_coding_exercise_is_self_contained(ex):
    """The lab copies the statement, starter and solution out of the chapter: no glued value may be needed."""
    assert "{glue" not in ex.statement and not any("{glue" in c["source"] for c in ex.solution)
    assert "glue(" not in "\n".join(ex.solution_code)


@pytest.mark.parametrize("ex", CODING, ids=_id)
def test_feedback_never_prints_the_solution(ex):
    """The messages a student sees on the starter and on wrong answers quote none of the solution's code."""
    lines = [ln.strip() for code in ex.solution_code for ln in code.splitlines()]
    lines = [ln for ln in lines if len(ln) >= 25 and not ln.startswith(("import ", "from ", "def ", '"""', "#"))]
    messages = [course.check(ex.label, _answer(ex, ex.starter)).message]
    messages += [course.check(ex.label, _answer(ex, src)).message for src in WRONG.get(ex.label, {}).values()]
    for message in messages:
        for line in lines:
            assert line not in message


@pytest.mark.parametrize("path", TEACHING, ids=lambda p: str(p.relative_to(ROOT)))
def test_chapter_has_five_exercises_two_of_them_checked_coding(path):
    found = book_exercises.exercises(path)
    coding = [ex for ex in found if ex.is_coding]
    assert len(found) >= 5, f"{len(found)} exercises"
    assert len(coding) >= 2, f"{len(coding)} coding exercises with a check"


@pytest.mark.parametrize("path", TEACHING, ids=lambda p: str(p.relative_to(ROOT)))
def test_solutions_are_removed_for_the_student_edition(path):
    import jupytext

    stripped = jupytext.writes(book_exercises.strip_solutions(book_exercises.read_notebook(path)), fmt="md:myst")
    assert "solution-start" not in stripped and "solution-end" not in stripped
    assert len(re.findall(r"\{exercise-start\}", stripped)) == len(book_exercises.exercises(path))
    for ex in book_exercises.exercises(path):
        for code in ex.solution_code:
            if code.strip() and (ex.starter is None or code.strip() != ex.starter.strip()):
                assert code.strip() not in stripped, f"{ex.label}: solution code survives"
