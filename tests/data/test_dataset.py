"""The container every loader returns (fedlib/data/_dataset.py)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from fedlib.data import Dataset


def test_sizes_come_from_x_and_repr_says_real_or_stand_in():
    ds = Dataset("toy", np.zeros((5, 3)), np.zeros(5, dtype=int), 2, "hand-made")
    assert (ds.n_samples, ds.n_features) == (5, 3) and type(ds.n_samples) is int
    assert repr(ds) == "Dataset('toy', n_samples=5, n_features=3, n_clusters=2, real)"
    standin = dataclasses.replace(ds, name="toy (stand-in)", is_standin=True)
    assert repr(standin) == "Dataset('toy (stand-in)', n_samples=5, n_features=3, n_clusters=2, stand-in)"
    assert ds.extras == {} and ds.extras is not Dataset("b", ds.X, ds.y, 2, "").extras  # no shared default
    with pytest.raises(dataclasses.FrozenInstanceError):
        ds.name = "other"
