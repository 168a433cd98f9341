"""Unlearning K-means++ seeding (fedlib/unlearn/_seeding.py; MUFC Alg. 3): replay, exact in distribution, errors."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.stats import chi2_contingency
from sklearn.exceptions import NotFittedError

from fedlib.base import UnlearningReport
from fedlib.cluster import draw_race_keys, kmeans_plusplus
from fedlib.data import make_blobs
from fedlib.exceptions import UnlearningRequestError
from fedlib.unlearn import KMeansPlusPlus

ALPHA = 1e-3


def retrained_seeds(X, k, keys, keep, sample_weight=None):
    """K-means++ on the remaining rows with their keys, as rows of the original ``X``."""
    weights = None if sample_weight is None else sample_weight[keep]
    _, fresh = kmeans_plusplus(X[keep], k, sample_weight=weights, race_keys=keys[keep])
    return np.flatnonzero(keep)[fresh]


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
    model = KMeansPlusPlus(k, random_state=seed).fit(X)
    keys = draw_race_keys(n, k, random_state=np.random.default_rng(seed))  # the keys fit drew
    _, seeds = kmeans_plusplus(X, k, race_keys=keys)
    np.testing.assert_array_equal(model.seed_indices_, seeds)
    np.testing.assert_array_equal(model.cluster_centers_, X[seeds])
    removed = data.draw(st.lists(st.integers(0, n - 1), unique=True, min_size=1, max_size=n - k - 1))
    report = model.unlearn(removed)
    assert isinstance(report, UnlearningReport) and report.forgotten_samples == tuple(sorted(removed))
    keep = ~np.isin(np.arange(n), removed)
    np.testing.assert_array_equal(model.seed_indices_, retrained_seeds(X, k, keys, keep))
    np.testing.assert_array_equal(model.cluster_centers_, X[model.seed_indices_])
    hits = [t for t, s in enumerate(seeds.tolist()) if s in set(removed)]
    assert report.details["reseeded"] == bool(hits) == report.server_refit
    assert report.details["n_kept_prefix"] == (hits[0] if hits else k)  # seeds drawn before the first removed one stay


@pytest.mark.filterwarnings("ignore:X has fewer distinct positive-weight points:RuntimeWarning")
@given(
    X=arrays(np.float64, st.tuples(st.integers(6, 30), st.integers(1, 3)), elements=st.floats(-5, 5, width=32)),
    k=st.integers(1, 3),
    data=st.data(),
)
def test_successive_requests_equal_reseeding_what_remains_with_same_keys(X, k, data):
    """Each row keeps its keys for the life of the model, so requests in sequence also replay retraining."""
    n = X.shape[0]
    assume(np.unique(X, axis=0).shape[0] >= k + 4)
    seed = data.draw(st.integers(0, 2**32 - 1))
    model = KMeansPlusPlus(k, random_state=seed).fit(X)
    keys = draw_race_keys(n, k, random_state=np.random.default_rng(seed))
    removed = data.draw(st.lists(st.integers(0, n - 1), unique=True, min_size=2, max_size=n - k - 1))
    cut = data.draw(st.integers(1, len(removed) - 1))
    keep = np.ones(n, dtype=bool)
    for request in (removed[:cut], removed[cut:]):
        model.unlearn(request)
        keep[request] = False
        np.testing.assert_array_equal(model.seed_indices_, retrained_seeds(X, k, keys, keep))


@pytest.mark.parametrize("race_keys", [True, False])
def test_removing_a_non_seed_leaves_the_seeds_bit_identical(global_random_seed, race_keys):
    X, _ = make_blobs((30, 30, 30), 3, random_state=global_random_seed)
    model = KMeansPlusPlus(4, race_keys=race_keys, random_state=global_random_seed).fit(X)
    centers, seeds = model.cluster_centers_.copy(), model.seed_indices_.copy()
    victim = next(i for i in range(len(X)) if i not in set(seeds.tolist()))
    report = model.unlearn([victim])
    assert not report.details["reseeded"] and report.details["n_kept_prefix"] == 4 and not report.server_refit
    np.testing.assert_array_equal(model.cluster_centers_, centers)
    np.testing.assert_array_equal(model.seed_indices_, seeds)


@pytest.mark.parametrize("race_keys", [True, False])
def test_prefix_before_the_first_removed_seed_is_kept(race_keys):
    X, _ = make_blobs((30, 30, 30), 3, random_state=0)
    model = KMeansPlusPlus(4, race_keys=race_keys, random_state=0).fit(X)
    seeds = model.seed_indices_.copy()
    report = model.unlearn([seeds[2]])
    assert report.details["reseeded"] and report.details["n_kept_prefix"] == 2 and report.server_refit
    np.testing.assert_array_equal(model.seed_indices_[:2], seeds[:2])
    np.testing.assert_array_equal(model.cluster_centers_[:2], X[seeds[:2]])
    assert seeds[2] not in set(model.seed_indices_.tolist()) and len(set(model.seed_indices_.tolist())) == 4


def test_exact_in_distribution_against_retraining():
    """Seed sets after unlearning vs K-means++ on the remaining data with independent randomness."""
    X = np.array([[0.0], [1.0], [2.5], [4.0], [7.0], [7.5]])
    removed = [3]
    keep = np.ones(len(X), dtype=bool)
    keep[removed] = False
    X_rest, rows = X[keep], np.flatnonzero(keep)
    n_draws = 4000
    unlearned, retrained = Counter(), Counter()
    for s in range(n_draws):
        model = KMeansPlusPlus(2, race_keys=False, random_state=s).fit(X)  # redraws continue this stream
        model.unlearn(removed)
        unlearned[frozenset(model.seed_indices_.tolist())] += 1
        fresh = kmeans_plusplus(X_rest, 2, random_state=2 * 10**6 + s)[1]
        retrained[frozenset(rows[fresh].tolist())] += 1
    keys = sorted(set(unlearned) | set(retrained), key=sorted)
    table = np.array([[unlearned[k] for k in keys], [retrained[k] for k in keys]])
    assert chi2_contingency(table).pvalue > ALPHA


def test_errors_name_the_problem():
    X = np.arange(10.0).reshape(5, 2)
    with pytest.raises(NotFittedError):
        KMeansPlusPlus(2).unlearn([0])
    with pytest.raises(ValueError, match="only 1 points have positive sample_weight; need >= n_clusters=2"):
        KMeansPlusPlus(2).fit(X, sample_weight=[0, 0, 1, 0, 0])
    model = KMeansPlusPlus(2, random_state=0).fit(X)
    seeds = model.seed_indices_.copy()
    with pytest.raises(UnlearningRequestError, match=r"samples \[7\] are not held"):
        model.unlearn([7])
    with pytest.raises(UnlearningRequestError, match="more than once"):
        model.unlearn([2, 2])
    with pytest.raises(UnlearningRequestError, match="need >= n_clusters=2"):
        model.unlearn([0, 1, 2, 3])
    with pytest.raises(UnlearningRequestError, match="need >= n_clusters=2"):
        model.unlearn(range(5))  # everything
    with pytest.raises(UnlearningRequestError, match="empty"):
        model.unlearn([])
    with pytest.raises(UnlearningRequestError, match="cannot unlearn clients"):
        model.unlearn(clients=[0])
    with pytest.raises(ValueError, match="whole numbers"):
        model.unlearn([3.7])
    with pytest.raises(TypeError, match="integers"):
        model.unlearn([True])
    np.testing.assert_array_equal(model.seed_indices_, seeds)  # refused requests change nothing
    model.unlearn([3])
    with pytest.raises(UnlearningRequestError, match=r"samples \[3\] are not held .* already forgotten"):
        model.unlearn([3])


def test_weighted_seeding_is_unlearned_with_its_weights():
    """With the seeding's weights and keys, unlearning equals weighted K-means++ on the remaining rows."""
    X, _ = make_blobs((20, 20, 20), 2, random_state=3)
    w = np.linspace(0.5, 3.0, 60)
    keys = draw_race_keys(60, 3, random_state=5)
    _, seeds = kmeans_plusplus(X, 3, sample_weight=w, race_keys=keys)
    model = KMeansPlusPlus(3, random_state=5).fit(X, sample_weight=w)
    np.testing.assert_array_equal(model.seed_indices_, seeds)
    removed = [int(seeds[1]), 7]
    assert 7 not in set(seeds.tolist())
    report = model.unlearn(removed)
    assert report.details["reseeded"] and report.details["n_kept_prefix"] == 1
    keep = ~np.isin(np.arange(60), removed)
    np.testing.assert_array_equal(model.seed_indices_, retrained_seeds(X, 3, keys, keep, sample_weight=w))
