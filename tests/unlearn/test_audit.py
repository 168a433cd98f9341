"""The exact-unlearning audit separates MUFC Alg. 3 from plausible shortcuts."""

from __future__ import annotations

import numpy as np
import pytest

from fedlib.unlearn import audit_seeding_unlearning, shortcut_unlearn_kmeans_plusplus

ALPHA = 1e-3
X_TWIN = np.array([[0.0], [0.05], [1.65], [2.05], [3.05], [4.9]])  # remove row 0, whose twin is row 1


def test_exact_unlearning_passes():
    assert audit_seeding_unlearning(X_TWIN, 3, [0], strategy="exact", n_runs=3000, random_state=0).pvalue > ALPHA


@pytest.mark.parametrize("strategy", ["keep_others_resample_one", "nearest_replacement"])
def test_shortcuts_fail(strategy):
    assert audit_seeding_unlearning(X_TWIN, 3, [0], strategy=strategy, n_runs=3000, random_state=0).pvalue < ALPHA


def test_shortcuts_return_k_distinct_remaining_rows():
    seeds = np.array([0, 3, 5])
    for strategy in ("keep_others_resample_one", "nearest_replacement"):
        out = shortcut_unlearn_kmeans_plusplus(X_TWIN, seeds, [0], strategy=strategy, random_state=0)
        assert len(set(out.tolist())) == 3 and out.max() < 5
    with pytest.raises(ValueError, match="strategy"):
        shortcut_unlearn_kmeans_plusplus(X_TWIN, seeds, [0], strategy="magic")
