"""MUFC Alg. 1 and 4: SCMA equals plaintext, exact client unlearning, lazy vs strict server, errors."""

from __future__ import annotations

import numpy as np
import pytest

from fedlib.cluster import kmeans_plusplus
from fedlib.data import make_blobs, non_iid_partition
from fedlib.unlearn import MUFC


@pytest.fixture(scope="module")
def problem():
    X, y = make_blobs((300, 120, 60, 20), 3, cluster_std=0.08, random_state=0)
    parts = non_iid_partition(y, 8, max_clusters_per_client=2, random_state=0)
    return X, parts


def test_scma_and_plaintext_aggregation_give_the_same_model(problem):
    X, parts = problem
    secure = MUFC(4, aggregation="scma", random_state=3).fit(X, parts)
    plain = MUFC(4, aggregation="plaintext", random_state=3).fit(X, parts)
    assert secure.counts_ == plain.counts_
    np.testing.assert_array_equal(secure.server_centers_, plain.server_centers_)
    assert sum(secure.counts_.values()) == len(X)
    assert secure.scma_params_.message_bits == 2 * 4 * 8 * (secure.scma_params_.prime - 1).bit_length()


def test_federated_loss_is_reasonable_and_reproducible(problem):
    X, parts = problem
    a = MUFC(4, aggregation="plaintext", random_state=5).fit(X, parts)
    b = MUFC(4, aggregation="plaintext", random_state=5).fit(X, parts)
    assert a.federated_loss() == b.federated_loss()
    ids, labels = a.induced_labels()
    assert np.array_equal(np.sort(ids), np.arange(len(X))) and labels.max() < 4


def test_client_seeds_after_removals_equal_reseeding_the_remaining_data(problem, global_random_seed):
    """Exact unlearning at every client, bit for bit (exponential-race coupling)."""
    X, parts = problem
    model = MUFC(4, aggregation="plaintext", random_state=global_random_seed).fit(X, parts)
    rng = np.random.default_rng(global_random_seed)
    reseeded = 0
    for step in range(40):
        client = int(rng.integers(len(parts)))
        state = model._clients[client]
        if len(state.ids) <= 5:
            continue
        # every fifth request removes a seed, so that re-seeding is exercised too
        row = state.seeds[int(rng.integers(len(state.seeds)))] if step % 5 == 0 else int(rng.integers(len(state.ids)))
        report = model.remove(client, [int(state.ids[row])])
        reseeded += bool(report.clients_reseeded)
    for client in range(len(parts)):
        state = model._clients[client]
        _, fresh = kmeans_plusplus(state.X, len(state.seeds), race_keys=state.keys)
        np.testing.assert_array_equal(state.seeds, fresh)
    assert reseeded >= 1  # 40 removals from clients of ~60 points with K=4 seeds each hit a seed


def test_lazy_keeps_server_centres_when_no_seed_is_removed_and_strict_refits(problem):
    X, parts = problem
    for mode, expect_refit in (("lazy", False), ("strict", True)):
        model = MUFC(4, aggregation="plaintext", server_update=mode, random_state=1).fit(X, parts)
        state = model._clients[0]
        victim = next(g for i, g in enumerate(state.ids) if i not in set(state.seeds.tolist()))
        before = model.server_centers_.copy()
        report = model.remove(0, [int(victim)])
        assert not report.clients_reseeded
        assert report.server_refit is expect_refit
        assert np.array_equal(before, model.server_centers_) is (not expect_refit)
        if mode == "strict":
            assert sum(model.counts_.values()) == len(X) - 1


def test_removing_a_seed_reseeds_the_client_and_refits(problem):
    X, parts = problem
    model = MUFC(4, aggregation="plaintext", random_state=2).fit(X, parts)
    state = model._clients[1]
    report = model.remove(1, [int(state.ids[state.seeds[0]])])
    assert report.clients_reseeded == (1,) and report.server_refit


def test_remove_clients_drops_their_counts(problem):
    X, parts = problem
    model = MUFC(4, aggregation="scma", random_state=2).fit(X, parts)
    model.remove_clients([0, 3])
    assert sum(model.counts_.values()) == len(X) - len(parts[0]) - len(parts[3])
    with pytest.raises(ValueError, match="already removed"):
        model.remove(0, [int(parts[0][0])])


def test_removal_errors_are_clear(problem):
    X, parts = problem
    model = MUFC(4, aggregation="plaintext", random_state=0).fit(X, parts)
    other = int(parts[1][0])
    with pytest.raises(ValueError, match=rf"client 0 does not hold rows \[{other}\]"):
        model.remove(0, [other])
    mine = int(parts[0][0])
    model.remove(0, [mine])
    with pytest.raises(ValueError, match="already removed"):
        model.remove(0, [mine])
    with pytest.raises(ValueError, match="outside"):
        model.remove(99, [mine])
    with pytest.raises(ValueError, match="server_update"):
        MUFC(4, server_update="eager").fit(X, parts)


def test_full_client_training_and_weighted_centres_run(problem):
    X, parts = problem
    model = MUFC(4, client_lloyd=True, server_data="weighted_centers", aggregation="plaintext", random_state=0)
    model.fit(X, parts)
    report = model.remove(2, [int(parts[2][0])])
    assert report.clients_reseeded == (2,)
    assert np.isfinite(model.federated_loss())
