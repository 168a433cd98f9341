"""Clustering accuracy (SecFC §5, Hungarian matching) and K-FED as SecFC's baseline (k' local clusters)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedlib._validation import spawn_generators
from fedlib.cluster import BaselineFit, clustering_accuracy, kfed
from fedlib.cluster._baselines import _kfed_local
from fedlib.data import k_prime_partition, make_blobs, make_gaussian_mixture, non_iid_partition

labels_strategy = st.lists(st.integers(0, 4), min_size=1, max_size=40)


def brute_force_accuracy(true, pred) -> float:
    """Best injective map from predicted to true labels by enumeration (tiny label sets only)."""
    t_vals, p_vals = np.unique(true), np.unique(pred)
    best = 0
    slots = list(t_vals) + [None] * len(p_vals)  # None: predicted label left unmatched
    for image in itertools.permutations(slots, len(p_vals)):
        mapping = dict(zip(p_vals.tolist(), image, strict=True))
        best = max(best, sum(mapping[p] == t for p, t in zip(pred.tolist(), true.tolist(), strict=True)))
    return best / len(true)


# --- clustering_accuracy --------------------------------------------------------------------------------------


@given(st.data())
def test_accuracy_matches_brute_force(draw):
    true = np.array(draw.draw(labels_strategy))
    pred = np.array(draw.draw(st.lists(st.integers(-1, 3), min_size=true.size, max_size=true.size)))
    assert clustering_accuracy(true, pred) == pytest.approx(brute_force_accuracy(true, pred))


@given(labels_strategy, st.permutations(range(5)), st.integers(-3, 100))
def test_accuracy_is_one_for_a_relabelling(true, perm, shift):
    true = np.array(true)
    relabelled = np.array(perm)[true] * 7 + shift  # any injective relabelling, not 0..k-1
    assert clustering_accuracy(true, relabelled) == 1.0


@given(st.data(), st.permutations(range(5)))
def test_accuracy_invariant_to_permuting_predicted_labels(draw, perm):
    true = np.array(draw.draw(labels_strategy))
    pred = np.array(draw.draw(st.lists(st.integers(0, 4), min_size=true.size, max_size=true.size)))
    a = clustering_accuracy(true, pred)
    assert clustering_accuracy(true, np.array(perm)[pred]) == a
    assert 0.0 <= a <= 1.0
    # at least as good as matching the single most frequent (pred, true) pair
    _, pair_counts = np.unique(np.stack([pred, true]), axis=1, return_counts=True)
    assert a * true.size >= pair_counts.max()


def test_accuracy_examples():
    assert clustering_accuracy([0, 0, 1, 1], [1, 1, 0, 0]) == 1.0
    assert clustering_accuracy([0, 0, 1, 1], [0, 0, 0, 0]) == 0.5
    # more predicted than true labels: the extra one counts as wrong
    assert clustering_accuracy([0, 0, 0, 1, 1, 1], [2, 2, 5, 1, 1, 1]) == pytest.approx(5 / 6)
    # string labels
    assert clustering_accuracy(["a", "b", "b"], [3, 4, 4]) == 1.0
    with pytest.raises(ValueError, match="same length, got 2 and 3"):
        clustering_accuracy([0, 1], [0, 1, 1])


# --- K-FED for SecFC ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("k_prime", [1, 2, 4])
def test_kfed_with_k_prime_and_server_lloyd_recovers_separated_clusters(k_prime, global_random_seed):
    ds = make_gaussian_mixture(2000, 10, 4, cluster_std=0.5, random_state=global_random_seed)
    parts = k_prime_partition(ds.y, 10, k_prime, random_state=global_random_seed)
    fit = kfed(ds.X, parts, 4, n_local_clusters=k_prime, server_max_iter=300, random_state=global_random_seed)
    assert isinstance(fit, BaselineFit)
    assert fit.labels is not None and fit.labels.shape == (2000,)
    assert clustering_accuracy(ds.y, fit.labels) == 1.0
    # labels are the nearest final server centre of each row
    d2 = ((ds.X[:, None, :] - fit.server_centers[None]) ** 2).sum(axis=2)
    np.testing.assert_array_equal(fit.labels, d2.argmin(axis=1))


def test_kfed_default_is_farthest_point_init_then_one_lloyd_step():
    """MUFC's adapted K-FED: the default server step is a single Lloyd step from cleanup-max's initialisation."""
    X, y = make_blobs((200, 150, 100, 50), 5, cluster_std=0.2, random_state=2)
    parts = non_iid_partition(y, 10, max_clusters_per_client=2, random_state=2)
    fit = kfed(X, parts, 4, n_local_clusters=2, random_state=2)
    assert fit == fit  # frozen dataclass, comparable
    np.testing.assert_array_equal(
        fit.server_centers, kfed(X, parts, 4, n_local_clusters=2, server_max_iter=1, random_state=2).server_centers
    )
    # independent recomputation of the server step
    streams = spawn_generators(2, len(parts))
    local = [_kfed_local(X[idx], 2, rng) for idx, rng in zip(parts, streams, strict=True)]
    pool = np.vstack(local)
    chosen = list(range(len(local[0])))
    while len(chosen) < 4:
        d2 = ((pool[:, None, :] - pool[chosen][None]) ** 2).sum(axis=2).min(axis=1)
        chosen.append(int(np.argmax(d2)))
    init = pool[chosen]
    assign = ((pool[:, None, :] - init[None]) ** 2).sum(axis=2).argmin(axis=1)
    expected = np.stack([pool[assign == c].mean(axis=0) if np.any(assign == c) else init[c] for c in range(4)])
    np.testing.assert_allclose(fit.server_centers, expected, rtol=1e-12, atol=1e-12)


def test_kfed_server_lloyd_to_convergence_never_worse_on_the_pool():
    """More server Lloyd iterations cannot raise the K-means objective of the pooled local centres."""
    X, y = make_blobs((200, 150, 100, 50), 5, cluster_std=0.3, random_state=4)
    parts = non_iid_partition(y, 10, max_clusters_per_client=2, random_state=4)
    streams = spawn_generators(4, len(parts))
    pool = np.vstack([_kfed_local(X[idx], 4, rng) for idx, rng in zip(parts, streams, strict=True)])

    def pool_objective(centers):
        return ((pool[:, None, :] - centers[None]) ** 2).sum(axis=2).min(axis=1).sum()

    one = kfed(X, parts, 4, random_state=4)
    many = kfed(X, parts, 4, server_max_iter=300, random_state=4)
    assert pool_objective(many.server_centers) <= pool_objective(one.server_centers) + 1e-9


def test_kfed_rejects_too_few_local_centres_and_bad_server_iterations():
    X, y = make_blobs((20, 20, 20, 20), 3, random_state=0)
    parts = k_prime_partition(y, 3, 2, random_state=0)
    with pytest.raises(
        ValueError, match=r"n_local_clusters \* n_clients >= n_clusters.*n_local_clusters=1, n_clients=3"
    ):
        kfed(X, parts, 4, n_local_clusters=1)
    with pytest.raises(ValueError, match="server_max_iter=0 should be >= 1"):
        kfed(X, parts, 4, n_local_clusters=2, server_max_iter=0)
    with pytest.raises(ValueError, match="n_local_clusters=0 should be >= 1"):
        kfed(X, parts, 4, n_local_clusters=0)
