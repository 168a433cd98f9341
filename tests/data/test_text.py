"""Next-character windows (fedlib/data/_text.py): the stream rebuilt, subsamples, errors, the real text."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedlib import data

from ..conftest import load_real


@given(st.lists(st.integers(0, 200), min_size=2, max_size=80), st.data())
def test_windows_are_the_previous_codes_and_rebuild_the_stream(codes, data_):
    context = data_.draw(st.integers(1, len(codes) - 1))
    X, y = data.text_windows(codes, context)
    n = len(codes) - context
    assert X.shape == (n, context) and X.dtype == np.float32
    assert y.shape == (n,) and y.dtype == np.int64
    for t in (0, n // 2, n - 1):  # the definition, at a few rows
        assert X[t].tolist() == codes[t : t + context] and y[t] == codes[t + context]
    np.testing.assert_array_equal(X[1:, :-1], X[:-1, 1:])  # consecutive windows overlap by context - 1
    np.testing.assert_array_equal(X[1:, -1], y[:-1])  # the label of a window ends the next one
    rebuilt = np.concatenate([X[0].astype(np.int64), y])
    np.testing.assert_array_equal(rebuilt, codes)


@given(st.integers(5, 300), st.integers(1, 4), st.integers(1, 400), st.integers(0, 2**32 - 1))
def test_a_subsample_keeps_whole_windows_in_stream_order(length, context, max_samples, seed):
    codes = np.random.default_rng(seed).integers(0, 65, size=length)
    X_all, y_all = data.text_windows(codes, context)
    X, y = data.text_windows(codes, context, max_samples=max_samples, random_state=seed)
    rows = data.subsample_indices(length - context, max_samples, random_state=seed)  # the documented draw
    assert len(y) == min(max_samples, length - context)
    np.testing.assert_array_equal(X, X_all[rows])
    np.testing.assert_array_equal(y, y_all[rows])


def test_subsamples_are_reproducible_and_differ_by_seed():
    codes = np.arange(1000) % 7
    a = data.text_windows(codes, 3, max_samples=50, random_state=1)
    b = data.text_windows(codes, 3, max_samples=50, random_state=1)
    c = data.text_windows(codes, 3, max_samples=50, random_state=2)
    assert a[0].tobytes() == b[0].tobytes() and a[1].tobytes() == b[1].tobytes()
    assert not np.array_equal(a[0], c[0])


def test_unsigned_and_large_codes_stay_exact():
    codes = np.array([0, 2**24 - 1, 5, 2**24 - 2], dtype=np.uint32)
    X, y = data.text_windows(codes, 2)
    assert X.astype(np.int64).tolist() == [[0, 2**24 - 1], [2**24 - 1, 5]]
    assert y.tolist() == [5, 2**24 - 2]


@pytest.mark.parametrize(
    ("codes", "context", "kwargs", "error", "match"),
    [
        ([1, 2, 3], 3, {}, ValueError, r"3 codes; a window needs at least context \+ 1 = 4"),
        ([1, 2, 3], 0, {}, ValueError, "context=0 should be >= 1"),
        ([1, 2, 3], 1.0, {}, TypeError, "context must be an int"),
        ([1, 2, 3], 1, {"max_samples": 0}, ValueError, "max_samples=0 should be >= 1"),
        ([1.0, 2.0, 3.0], 1, {}, TypeError, "integers"),
        ([[1, 2], [3, 4]], 1, {}, ValueError, "1-D"),
        ([1, -1, 3], 1, {}, ValueError, r"\[0, 2\*\*24\)"),
        ([1, 2**24, 3], 1, {}, ValueError, r"\[0, 2\*\*24\)"),
    ],
)
def test_bad_inputs_are_refused(codes, context, kwargs, error, match):
    with pytest.raises(error, match=match):
        data.text_windows(codes, context, **kwargs)


def test_tinyshakespeare_windows():
    ds = load_real("tinyshakespeare")
    codes = ds.extras["codes"]
    X, y = data.text_windows(codes, 8, max_samples=1000, random_state=0)
    assert X.shape == (1000, 8) and 0 <= X.min() and X.max() < len(ds.extras["vocab"])
    text = "".join(ds.extras["vocab"][c] for c in X[0].astype(np.int64)) + ds.extras["vocab"][y[0]]
    assert text in ds.extras["text"]
