"""Every docstring example works when pasted into a fresh interpreter, and every public name has one.

``pytest --doctest-modules`` runs an example with its module's globals, so an example that forgets
``import numpy as np``, or the import of the very name it documents, passes there and fails for the
reader who pastes it. Here each example runs in an empty namespace, as scikit-learn's examples are
written to: it starts from its own imports.
"""

from __future__ import annotations

import doctest
import importlib
import inspect

import pytest

from .test_docstrings import NAMES, PACKAGES

#: The flags of the library's doctests under pytest (its default ``doctest_optionflags``).
FLAGS = doctest.ELLIPSIS


def resolve(dotted: str):
    """The object a dotted public name (package, name, optional member) stands for; a property's getter."""
    package = next(p for p in sorted(PACKAGES, key=len, reverse=True) if dotted.startswith(p + "."))
    obj = importlib.import_module(package)
    for part in dotted[len(package) + 1 :].split("."):
        owner, obj = obj, getattr(obj, part)
        if inspect.isclass(owner) and isinstance(inspect.getattr_static(owner, part), property):
            obj = inspect.getattr_static(owner, part).fget
    return obj


def examples(dotted: str) -> list[doctest.Example]:
    return doctest.DocTestParser().get_examples(inspect.getdoc(resolve(dotted)) or "")


def is_top_level(dotted: str) -> bool:
    """A class or function of a package's ``__all__`` (not a method or property of a class)."""
    return dotted.rpartition(".")[0] in PACKAGES


WITH_EXAMPLES = [name for name in NAMES if examples(name)]


def test_the_check_sees_the_examples():
    assert len(WITH_EXAMPLES) > 300, len(WITH_EXAMPLES)


@pytest.mark.parametrize("name", [n for n in NAMES if is_top_level(n)])
def test_every_public_class_and_function_has_an_example(name):
    assert examples(name), f"{name}: no Examples section with a >>> line in its docstring"


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_example_runs_when_pasted_into_a_fresh_interpreter(name):
    """Run the docstring's examples with empty globals, as a reader who pastes them would."""
    test = doctest.DocTest(examples(name), {"__name__": "__main__"}, name, None, 0, None)
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    try:
        result = runner.run(test, out=report.append, clear_globs=True)
    finally:
        test.globs.clear()
    assert result.failed == 0, "".join(report)[-4000:]
