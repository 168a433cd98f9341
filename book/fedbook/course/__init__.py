"""Automatic feedback for the book's coding exercises.

A coding exercise gives the student a starter cell (a function or a value to fill in) and a check cell::

    from fedbook import course
    course.check("ex-kmeans-lloyd-step", lloyd_step)

:func:`check` runs the exercise's checks on the answer and says either that it passed, with what was
checked, or what is wrong, on which input, without showing a solution. The checks live beside the parts
they belong to (:mod:`fedbook.course.foundations`, :mod:`fedbook.course.mufc`, ...), each registered
under its exercise's label with :func:`exercise`. They compare an answer with the library's own
implementation (``fedlib`` is public, the exercise is to write the step oneself) or with properties a
right answer must have.

The book's tests run every check on the chapter's reference solution (it must pass), on the unfilled
starter (it must fail) and on plausible wrong answers (each must fail); see ``tests/course``.
"""

from fedbook.course._feedback import (
    Feedback,
    Wrong,
    call,
    check,
    exercise,
    expect,
    expect_array,
    expect_raises,
    registered,
)

__all__ = ["Feedback", "Wrong", "call", "check", "exercise", "expect", "expect_array", "expect_raises", "registered"]
