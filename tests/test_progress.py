"""Progress bars (fedlib/_progress.py): a tqdm bar interactively, the bare iterable in the rendered book."""

from __future__ import annotations

import io

from tqdm.auto import tqdm

from fedlib.utils import progress


def test_progress_is_the_plain_iterable_in_book_builds(monkeypatch):
    monkeypatch.setenv("FEDLIB_PROGRESS", "0")
    items = [1, 2, 3]
    assert progress(items, desc="ignored") is items


def test_progress_draws_a_tqdm_bar_interactively(monkeypatch):
    monkeypatch.setenv("FEDLIB_PROGRESS", "1")
    out = io.StringIO()
    bar = progress(range(3), desc="counting", file=out)
    assert isinstance(bar, tqdm)
    assert list(bar) == [0, 1, 2]
    assert "counting" in out.getvalue() and "3/3" in out.getvalue()  # the keyword arguments reached tqdm


def test_progress_shows_a_bar_unless_told_not_to(monkeypatch):
    monkeypatch.delenv("FEDLIB_PROGRESS", raising=False)
    bar = progress(iter("ab"), total=2, disable=True)
    assert isinstance(bar, tqdm) and bar.total == 2
    assert list(bar) == ["a", "b"]
