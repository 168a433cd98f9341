"""The exact-unlearning audit (fedlib/unlearn/_audit.py) separates MUFC Alg. 3 from plausible shortcuts."""

from __future__ import annotations

import ast

import numpy as np
import pytest
from scipy.stats import chi2_contingency

from fedlib.unlearn import audit_seeding_unlearning, shortcut_unlearn_kmeans_plusplus
from fedlib.unlearn._seeding import _unlearn_seeding

ALPHA = 1e-3
X_TWIN = np.array([[0.0], [0.05], [1.65], [2.05], [3.05], [4.9]])  # remove row 0, whose twin is row 1


def test_exact_unlearning_passes():
    assert audit_seeding_unlearning(X_TWIN, 3, [0], strategy="exact", n_runs=3000, random_state=0).pvalue > ALPHA


@pytest.mark.parametrize("strategy", ["keep_others_resample_one", "nearest_replacement"])
def test_shortcuts_fail(strategy):
    assert audit_seeding_unlearning(X_TWIN, 3, [0], strategy=strategy, n_runs=3000, random_state=0).pvalue < ALPHA


def test_audit_result_is_the_chi_square_test_of_its_frequency_tables():
    result = audit_seeding_unlearning(X_TWIN, 2, [0], strategy="nearest_replacement", n_runs=500, random_state=1)
    assert result.strategy == "nearest_replacement" and result.n_runs == 500
    unlearned, retrained = result.frequencies["unlearned"], result.frequencies["retrained"]
    assert set(unlearned) == set(retrained)
    assert sum(unlearned.values()) == pytest.approx(1.0) and sum(retrained.values()) == pytest.approx(1.0)
    table = np.array([[round(unlearned[k] * 500) for k in unlearned], [round(retrained[k] * 500) for k in unlearned]])
    statistic, pvalue, _, _ = chi2_contingency(table)
    assert result.statistic == pytest.approx(statistic) and result.pvalue == pytest.approx(pvalue)
    # seed sets are sorted rows of the remaining five points
    assert all(all(0 <= r < 5 for r in ast.literal_eval(k)) for k in unlearned)


def test_nearest_replacement_moves_each_removed_seed_to_its_nearest_free_point():
    seeds = np.array([0, 3, 5])
    out = shortcut_unlearn_kmeans_plusplus(X_TWIN, seeds, [0], strategy="nearest_replacement", random_state=0)
    # remaining rows 1..5 are positions 0..4; seeds 3 and 5 stay (positions 2 and 4); row 0 -> its twin, row 1
    assert out.tolist() == [2, 4, 0]
    out = shortcut_unlearn_kmeans_plusplus(X_TWIN, np.array([1, 0, 4]), [0], strategy="nearest_replacement")
    assert out.tolist() == [0, 3, 1]  # the twin is taken: row 2 (1.65) is the nearest free point to row 0


def test_shortcuts_keep_the_surviving_seeds_and_exact_is_alg_3():
    seeds = np.array([0, 3, 5])
    out = shortcut_unlearn_kmeans_plusplus(X_TWIN, seeds, [0], strategy="keep_others_resample_one", random_state=0)
    assert out[:2].tolist() == [2, 4] and len(set(out.tolist())) == 3 and out.max() < 5
    exact = shortcut_unlearn_kmeans_plusplus(X_TWIN, seeds, [0], strategy="exact", random_state=7)
    # the kernel of KMeansPlusPlus.unlearn (MUFC Alg. 3), with the same generator
    expected = _unlearn_seeding(X_TWIN, seeds, np.array([0]), np.ones(len(X_TWIN)), None, np.random.default_rng(7))
    np.testing.assert_array_equal(exact, expected.seed_indices)
    assert expected.reseeded and expected.n_kept_prefix == 0
    with pytest.raises(ValueError, match="strategy"):
        shortcut_unlearn_kmeans_plusplus(X_TWIN, seeds, [0], strategy="magic")
