"""K-means++ seeding (fedlib/cluster/_kmeanspp.py): D^2 distribution, weights, replayable stream, races, errors."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest
from scipy.stats import chisquare
from sklearn.cluster import kmeans_plusplus as sklearn_kmeans_plusplus

from fedlib.cluster import kmeans_objective, kmeans_plusplus
from fedlib.data import make_blobs

ALPHA = 1e-3  # significance level of every distribution test here

X_LINE = np.array([[0.0], [1.0], [3.0], [4.0], [10.0]])


def exact_ordered_pair_probabilities(X, weights):
    """P(first = i, second = j) of weighted D^2 sampling with K = 2, by enumeration."""
    w = np.asarray(weights, dtype=float)
    probs = {}
    for i, j in itertools.permutations(range(len(X)), 2):
        d2 = ((X - X[i]) ** 2).sum(axis=1)
        probs[(i, j)] = w[i] / w.sum() * w[j] * d2[j] / (w * d2).sum()
    return probs


def chi_square_pvalue(draws, probs):
    keys = [k for k, p in probs.items() if p > 0]
    counts = Counter(draws)
    assert set(counts) <= set(keys), "drew a pair of probability zero"
    observed = np.array([counts[k] for k in keys], dtype=float)
    expected = np.array([probs[k] for k in keys]) * len(draws)
    return chisquare(observed, expected).pvalue


def test_returns_points_of_x_in_draw_order(global_random_seed):
    X, _ = make_blobs((30, 20, 10), 3, random_state=global_random_seed)
    centers, indices = kmeans_plusplus(X, 3, random_state=global_random_seed)
    assert centers.shape == (3, 3) and indices.shape == (3,)
    assert len(set(indices.tolist())) == 3
    np.testing.assert_array_equal(centers, X[indices])


def test_same_seed_same_bits():
    X, _ = make_blobs((50, 50), 4, random_state=0)
    a = kmeans_plusplus(X, 5, random_state=11)
    b = kmeans_plusplus(X, 5, random_state=11)
    np.testing.assert_array_equal(a[1], b[1])


def test_unweighted_distribution_is_exact_d2_sampling():
    probs = exact_ordered_pair_probabilities(X_LINE, np.ones(5))
    draws = [tuple(kmeans_plusplus(X_LINE, 2, random_state=s)[1].tolist()) for s in range(6000)]
    assert chi_square_pvalue(draws, probs) > ALPHA


def test_weighted_distribution_is_exact_weighted_d2_sampling():
    w = np.array([1.0, 2.0, 1.0, 3.0, 0.5])
    probs = exact_ordered_pair_probabilities(X_LINE, w)
    draws = [tuple(kmeans_plusplus(X_LINE, 2, sample_weight=w, random_state=s)[1].tolist()) for s in range(6000)]
    assert chi_square_pvalue(draws, probs) > ALPHA


def test_matches_sklearn_single_trial_in_distribution():
    """Same algorithm as sklearn's kmeans_plusplus(n_local_trials=1): compare seed-set frequencies."""
    n = 4000
    ours = Counter(frozenset(kmeans_plusplus(X_LINE, 2, random_state=s)[1].tolist()) for s in range(n))
    theirs = Counter(
        frozenset(sklearn_kmeans_plusplus(X_LINE, 2, random_state=s, n_local_trials=1)[1].tolist()) for s in range(n)
    )
    keys = sorted(set(ours) | set(theirs), key=sorted)
    table = np.array([[ours[k] for k in keys], [theirs[k] for k in keys]], dtype=float)
    from scipy.stats import chi2_contingency

    assert chi2_contingency(table).pvalue > ALPHA


def test_consumes_exactly_one_uniform_per_centre(global_random_seed):
    """The t-th centre comes from the t-th uniform draw: the basis of MUFC Alg. 3's replay."""
    X, _ = make_blobs((40, 40, 40), 2, random_state=global_random_seed)
    g = np.random.default_rng(global_random_seed)
    kmeans_plusplus(X, 4, random_state=g)
    reference = np.random.default_rng(global_random_seed).random(5)
    assert g.random() == reference[4]


def test_prefix_is_determined_by_prefix_of_stream(global_random_seed):
    """Seeding K and K+2 centres from the same stream shares the first K centres."""
    X, _ = make_blobs((40, 40, 40), 2, random_state=global_random_seed)
    short = kmeans_plusplus(X, 3, random_state=global_random_seed)[1]
    long = kmeans_plusplus(X, 5, random_state=global_random_seed)[1]
    np.testing.assert_array_equal(short, long[:3])


def test_zero_weight_points_are_never_chosen(global_random_seed):
    X, _ = make_blobs((30, 30), 2, random_state=global_random_seed)
    w = np.ones(len(X))
    w[::2] = 0
    _, idx = kmeans_plusplus(X, 6, sample_weight=w, random_state=global_random_seed)
    assert np.all(idx % 2 == 1)


def test_greedy_option_is_no_worse_on_average():
    X, _ = make_blobs((200, 120, 60, 20), 5, cluster_std=0.1, random_state=1)
    plain = np.mean([kmeans_objective(X, kmeans_plusplus(X, 4, random_state=s)[0]) for s in range(40)])
    greedy = np.mean(
        [kmeans_objective(X, kmeans_plusplus(X, 4, random_state=s, n_local_trials=4)[0]) for s in range(40)]
    )
    assert greedy <= plain


def test_duplicate_points_warn():
    X = np.zeros((5, 2))
    X[0] = 1.0
    with pytest.warns(RuntimeWarning, match="fewer distinct"):
        kmeans_plusplus(X, 3, random_state=0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(n_clusters=6), "n_samples=5 should be >= n_clusters=6"),
        (dict(n_clusters=0), "n_clusters=0 should be >= 1"),
        (dict(n_clusters=2, sample_weight=[1, 0, 0, 0, 0]), "only 1 points have positive sample_weight"),
        (dict(n_clusters=2, n_local_trials=0), "n_local_trials=0"),
    ],
)
def test_bad_arguments_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        kmeans_plusplus(X_LINE, **kwargs)


def test_race_keys_draw_exact_weighted_d2_samples():
    """The exponential race is another exact D^2 sampler (MUFC's unlearning relies on it)."""
    from fedlib.cluster import draw_race_keys

    w = np.array([1.0, 2.0, 1.0, 3.0, 0.5])
    probs = exact_ordered_pair_probabilities(X_LINE, w)
    draws = [
        tuple(kmeans_plusplus(X_LINE, 2, sample_weight=w, race_keys=draw_race_keys(5, 2, random_state=s))[1].tolist())
        for s in range(6000)
    ]
    assert chi_square_pvalue(draws, probs) > ALPHA


def test_race_keys_are_validated():
    with pytest.raises(ValueError, match="race_keys must have shape"):
        kmeans_plusplus(X_LINE, 2, race_keys=np.ones((4, 2)))
    with pytest.raises(ValueError, match="positive and finite"):
        kmeans_plusplus(X_LINE, 2, race_keys=np.zeros((5, 2)))
    with pytest.raises(ValueError, match="cannot be combined"):
        kmeans_plusplus(X_LINE, 2, race_keys=np.ones((5, 2)), n_local_trials=3)


def exact_expected_cost(X, k):
    """E[phi(X; C)] of K-means++ by enumerating every ordered seed sequence with its D^2 probability."""
    n = len(X)
    d2 = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)

    def expand(chosen, prob):
        closest = d2[:, chosen].min(axis=1)
        if len(chosen) == k:
            return prob * closest.sum()
        total = closest.sum()
        return sum(expand([*chosen, j], prob * closest[j] / total) for j in range(n) if closest[j] > 0)

    return sum(expand([i], 1.0 / n) for i in range(n))


def test_mean_cost_equals_the_exact_expectation_and_meets_the_bound():
    """Monte Carlo mean of phi within 4 standard errors of its exact value, which obeys Arthur-Vassilvitskii."""
    k = 3
    costs = np.array([kmeans_objective(X_LINE, kmeans_plusplus(X_LINE, k, random_state=s)[0]) for s in range(3000)])
    expected = exact_expected_cost(X_LINE, k)
    assert abs(costs.mean() - expected) < 4 * costs.std() / np.sqrt(costs.size)
    phi_star = min(  # optimal K-means cost, by brute force over all labelings
        sum(float(((X_LINE[lab == h] - X_LINE[lab == h].mean(axis=0)) ** 2).sum()) for h in set(lab.tolist()))
        for lab in map(np.array, itertools.product(range(k), repeat=len(X_LINE)))
    )
    assert expected <= 8 * (math.log(k) + 2) * phi_star


def test_race_keys_pick_the_argmin_of_key_over_weighted_d2():
    """The exponential race by its definition: centre t minimises keys[i, t] / (w_i d^2(x_i, C_t))."""
    from fedlib.cluster import draw_race_keys

    rng = np.random.default_rng(3)
    X = rng.normal(size=(25, 2))
    w = rng.uniform(0.5, 2.0, size=25)
    keys = draw_race_keys(25, 4, random_state=4)
    np.testing.assert_array_equal(keys, np.random.default_rng(4).standard_exponential((25, 4)))
    chosen = [int(np.argmin(keys[:, 0] / w))]
    for t in range(1, 4):
        d2 = np.min([[float(np.sum((x - X[c]) ** 2)) for c in chosen] for x in X], axis=1)
        with np.errstate(divide="ignore"):
            chosen.append(int(np.argmin(keys[:, t] / (w * d2))))
    _, indices = kmeans_plusplus(X, 4, sample_weight=w, race_keys=keys)
    assert indices.tolist() == chosen
