"""Next-character prediction from a stream of character codes: fixed-size context windows.

A character-level language model of the n-gram kind (Bengio et al., JMLR
2003) predicts the next symbol from the ``context`` symbols before it, so a
stream of ``L`` codes gives ``L - context`` examples: window ``t`` holds codes
``t .. t + context - 1`` and its label is code ``t + context``.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from fedlib._typing import SeedLike
from fedlib._validation import check_scalar
from fedlib.data._partition import subsample_indices

#: Largest code float32 holds exactly (2**24): windows are float32 features.
_MAX_EXACT_FLOAT32 = 1 << 24


def text_windows(
    codes,
    context: int,
    *,
    max_samples: int | None = None,
    random_state: SeedLike = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Every window of ``context`` codes of a stream, with the code that follows it.

    Row ``t`` of ``X`` is ``codes[t : t + context]`` and ``y[t]`` is
    ``codes[t + context]``, for ``t = 0 .. len(codes) - context - 1`` (a view
    of the stream by :func:`numpy.lib.stride_tricks.sliding_window_view`;
    no Python loop). With ``max_samples``, a uniform subsample of the windows
    without repetition (:func:`subsample_indices`) is kept, in stream order.
    The codes are returned as float32 features, exact below ``2**24``, which
    :func:`fedlib.learn.train_clients` passes to the model as they are (the
    ``"char_mlp"`` model casts them back to integers).

    Parameters
    ----------
    codes : array-like of int, shape (L,)
        The stream of character codes (e.g. ``load("tinyshakespeare").extras["codes"]``), each in ``[0, 2**24)``.
    context : int
        Codes per window, at least 1.
    max_samples : int or None, default=None
        Most windows to keep; ``None`` keeps all ``L - context``.
    random_state : int, numpy.random.Generator or None, default=None
        Seed of the subsample (unused without ``max_samples``).

    Returns
    -------
    X : ndarray of float32, shape (n, context)
        The windows, in stream order.
    y : ndarray of int64, shape (n,)
        The code following each window.

    Raises
    ------
    TypeError
        If ``codes`` are not integers or ``context`` is not an int.
    ValueError
        If ``codes`` is not 1-D, has a code outside ``[0, 2**24)``, or no more
        than ``context`` codes; if ``context < 1`` or ``max_samples < 1``.

    Examples
    --------
    >>> from fedlib.data import text_windows
    >>> X, y = text_windows([3, 1, 4, 1, 5], 3)
    >>> X.tolist(), y.tolist()
    ([[3.0, 1.0, 4.0], [1.0, 4.0, 1.0]], [1, 5])
    """
    codes = np.asarray(codes)
    if codes.dtype.kind not in "iu":
        raise TypeError(f"codes must be integers, got dtype {codes.dtype}.")
    if codes.ndim != 1:
        raise ValueError(f"codes must be a 1-D stream, got shape {codes.shape}.")
    context = check_scalar(context, "context", "int", min_val=1)
    if max_samples is not None:
        max_samples = check_scalar(max_samples, "max_samples", "int", min_val=1)
    if codes.size <= context:
        raise ValueError(f"the stream has {codes.size} codes; a window needs at least context + 1 = {context + 1}.")
    low, high = int(codes.min()), int(codes.max())
    if low < 0 or high >= _MAX_EXACT_FLOAT32:
        raise ValueError(f"codes must lie in [0, 2**24) to be exact in float32, got values in [{low}, {high}].")
    windows = sliding_window_view(codes, context + 1)
    rows = subsample_indices(windows.shape[0], max_samples, random_state=random_state)
    chosen = windows if rows.size == windows.shape[0] else windows[rows]  # a copy of the kept windows only
    return chosen[:, :context].astype(np.float32), chosen[:, context].astype(np.int64)
