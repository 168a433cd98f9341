"""Progress bars stay out of the rendered book; speed ratios are relative to the reference."""

from __future__ import annotations

import pytest

from fedlib._progress import progress
from fedlib.bench import speed_ratios


def test_progress_is_plain_iterable_in_book_builds(monkeypatch):
    monkeypatch.setenv("FEDLIB_PROGRESS", "0")
    items = [1, 2, 3]
    assert progress(items) is items


def test_progress_wraps_interactively(monkeypatch):
    monkeypatch.setenv("FEDLIB_PROGRESS", "1")
    assert list(progress(range(3), disable=True)) == [0, 1, 2]


def test_speed_ratios_reference_is_one():
    ratios = speed_ratios({"a": lambda: sum(range(1000)), "b": lambda: None}, reference="a", repeat=3)
    assert ratios["a"] == 1.0 and set(ratios) == {"a", "b"}
    with pytest.raises(KeyError, match="reference"):
        speed_ratios({"a": lambda: None}, reference="z")
