"""Glue many computed values into a chapter with one call."""

from __future__ import annotations

from collections.abc import Mapping


def glue_all(values: Mapping[str, object]) -> None:
    """``myst_nb.glue(name, value, display=False)`` for every item, in order.

    Chapters compute their numbers and sentences with the book's drivers and glue the
    result with one call, so a reader scrolls past no bookkeeping.

    Parameters
    ----------
    values : mapping of str to object
        Glue name to value.
    """
    from myst_nb import glue

    for name, value in values.items():
        glue(name, value, display=False)
