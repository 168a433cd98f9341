"""Unlearning K-means++ seeding (fedlib/unlearn/_seeding.py; MUFC Alg. 3): replay, exact in distribution, errors."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.stats import chi2_contingency

from fedlib.cluster import draw_race_keys, kmeans_plusplus
from fedlib.data import make_blobs
from fedlib.unlearn import unlearn_kmeans_plusplus

ALPHA = 1e-3


# the remaining rows may hold fewer distinct points than K: then both sides choose duplicates, and warn alike
@pytest.mark.filterwarnings("ignore:X has fewer distinct positive-weight points:RuntimeWarning")
@given(
    X=arrays(np.float64, st.tuples(st.integers(4, 30), st.integers(1, 3)), elements=st.floats(-5, 5, width=32)),
    k=st.integers(1, 4),
    data=st.data(),
)
def test_unlearning_equals_reseeding_remaining_data_with_same_keys(X, k, data):
    n = X.shape[0]
    assume(np.unique(X, axis=0).shape[0] >= k + 3)  # distinct points for a well-defined seeding
    seed = data.draw(st.integers(0, 2**32 - 1))
    keys = draw_race_keys(n, k, random_state=seed)
    _, seeds = kmeans_plusplus(X, k, race_keys=keys)
    removed = data.draw(st.lists(st.integers(0, n - 1), unique=True, max_size=n - k - 1))
    out = unlearn_kmeans_plusplus(X, seeds, removed, race_keys=keys)
    keep = out.keep
    np.testing.assert_array_equal(keep, ~np.isin(np.arange(n), removed))
    _, fresh = kmeans_plusplus(X[keep], k, race_keys=keys[keep])
    np.testing.assert_array_equal(out.seed_indices, fresh)
    hits = [t for t, s in enumerate(seeds.tolist()) if s in set(removed)]
    assert out.reseeded == bool(hits)
    assert out.n_kept_prefix == (hits[0] if hits else k)  # seeds drawn before the first removed one stay


def test_removing_a_non_seed_leaves_the_seeds_bit_identical(global_random_seed):
    X, _ = make_blobs((30, 30, 30), 3, random_state=global_random_seed)
    centers, seeds = kmeans_plusplus(X, 4, random_state=global_random_seed)
    victim = next(i for i in range(len(X)) if i not in set(seeds.tolist()))
    out = unlearn_kmeans_plusplus(X, seeds, [victim])
    assert not out.reseeded and out.n_kept_prefix == 4
    np.testing.assert_array_equal(X[out.keep][out.seed_indices], centers)


def test_prefix_before_the_first_removed_seed_is_kept():
    X, _ = make_blobs((30, 30, 30), 3, random_state=0)
    _, seeds = kmeans_plusplus(X, 4, random_state=0)
    out = unlearn_kmeans_plusplus(X, seeds, [seeds[2]], random_state=1)
    assert out.reseeded and out.n_kept_prefix == 2
    np.testing.assert_array_equal(X[out.keep][out.seed_indices[:2]], X[seeds[:2]])


def test_exact_in_distribution_against_retraining():
    """Seed sets after unlearning vs K-means++ on the remaining data with independent randomness."""
    X = np.array([[0.0], [1.0], [2.5], [4.0], [7.0], [7.5]])
    removed = [3]
    X_rest = np.delete(X, removed, axis=0)
    n_draws = 4000
    unlearned, retrained = Counter(), Counter()
    for s in range(n_draws):
        _, seeds = kmeans_plusplus(X, 2, random_state=s)
        out = unlearn_kmeans_plusplus(X, seeds, removed, random_state=10**6 + s)
        unlearned[frozenset(out.seed_indices.tolist())] += 1
        retrained[frozenset(kmeans_plusplus(X_rest, 2, random_state=2 * 10**6 + s)[1].tolist())] += 1
    keys = sorted(set(unlearned) | set(retrained), key=sorted)
    table = np.array([[unlearned[k] for k in keys], [retrained[k] for k in keys]])
    assert chi2_contingency(table).pvalue > ALPHA


def test_errors_name_the_problem():
    X = np.arange(10.0).reshape(5, 2)
    with pytest.raises(ValueError, match=r"cannot remove rows \[7\]"):
        unlearn_kmeans_plusplus(X, [0, 1], [7])
    with pytest.raises(ValueError, match="more than once"):
        unlearn_kmeans_plusplus(X, [0, 1], [2, 2])
    with pytest.raises(ValueError, match="need >= n_clusters=2"):
        unlearn_kmeans_plusplus(X, [0, 1], [0, 1, 2, 3])
    with pytest.raises(ValueError, match="race_keys must have shape"):
        unlearn_kmeans_plusplus(X, [0, 1], [3], race_keys=np.ones((4, 2)))
    with pytest.raises(ValueError, match="distinct rows of X"):
        unlearn_kmeans_plusplus(X, [0, 0], [3])
    with pytest.raises(ValueError, match="distinct rows of X"):
        unlearn_kmeans_plusplus(X, [0, 5], [3])


def test_weighted_seeding_is_unlearned_with_its_weights():
    """With the seeding's weights and keys, unlearning equals weighted K-means++ on the remaining rows."""
    X, _ = make_blobs((20, 20, 20), 2, random_state=3)
    w = np.linspace(0.5, 3.0, 60)
    keys = draw_race_keys(60, 3, random_state=5)
    _, seeds = kmeans_plusplus(X, 3, sample_weight=w, race_keys=keys)
    out = unlearn_kmeans_plusplus(X, seeds, [int(seeds[1]), 7], race_keys=keys, sample_weight=w)
    _, fresh = kmeans_plusplus(X[out.keep], 3, sample_weight=w[out.keep], race_keys=keys[out.keep])
    np.testing.assert_array_equal(out.seed_indices, fresh)
