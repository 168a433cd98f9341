"""Progress bars for long runs: shown interactively, never in the rendered book."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TypeVar

T = TypeVar("T")


def progress(iterable: Iterable[T], **kwargs) -> Iterable[T]:
    """Wrap ``iterable`` in a tqdm bar unless ``FEDLIB_PROGRESS=0`` (set by the book build) or tqdm is missing.

    Parameters
    ----------
    iterable : iterable
        What to iterate over.
    **kwargs
        Passed to :func:`tqdm.auto.tqdm` (``desc``, ``total``, ...).

    Returns
    -------
    iterable
        A tqdm bar over ``iterable``, or ``iterable`` itself.

    Examples
    --------
    >>> import os
    >>> from fedlib.utils import progress
    >>> os.environ["FEDLIB_PROGRESS"] = "0"  # no bar, as in the rendered book
    >>> sum(progress(range(10), desc="rounds"))
    45
    >>> del os.environ["FEDLIB_PROGRESS"]
    """
    if os.environ.get("FEDLIB_PROGRESS", "1") == "0":
        return iterable
    try:
        from tqdm.auto import tqdm
    except ImportError:  # tqdm comes with the "data" extra; without it, no bar
        return iterable
    return tqdm(iterable, **kwargs)
