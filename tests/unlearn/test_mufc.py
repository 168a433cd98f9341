"""MUFC (fedlib/unlearn/_mufc.py; Alg. 1 and 4): SCMA equals plaintext, exact client unlearning, lazy vs strict."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from fedlib.base import UnlearningReport
from fedlib.cluster import UniformGrid, draw_race_keys, kmeans_objective, kmeans_plusplus
from fedlib.data import make_blobs, non_iid_partition
from fedlib.exceptions import UnlearningRequestError
from fedlib.unlearn import MUFC

K = 4


#: A grid step fixed in advance: forgetting is then exact (with ``gamma=None`` the step depends on the rows).
GAMMA = 0.05


@pytest.fixture(scope="module")
def problem():
    X, y = make_blobs((300, 120, 60, 20), 3, cluster_std=0.08, random_state=0)
    parts = non_iid_partition(y, 8, max_clusters_per_client=2, random_state=0)
    return X, parts


def seed_ids(model: MUFC, X, client: int) -> list[int]:
    """Ids of the client's seeds: its remaining points that sit exactly on its local centres (MUFC Alg. 1 line 1)."""
    ids = model.client_ids(client)
    centres = model.client_centers_[client]
    return [int(i) for i in ids if any(np.array_equal(X[i], c) for c in centres)]


def test_scma_and_plaintext_aggregation_give_the_same_model(problem):
    X, parts = problem
    secure = MUFC(K, aggregation="scma", random_state=3).fit(X, parts=parts)
    plain = MUFC(K, aggregation="plaintext", random_state=3).fit(X, parts=parts)
    assert secure.counts_ == plain.counts_
    np.testing.assert_array_equal(secure.server_centers_, plain.server_centers_)
    assert sum(secure.counts_.values()) == len(X)
    assert secure.scma_params_.message_bits == 2 * K * 8 * (secure.scma_params_.prime - 1).bit_length()


def test_hashed_scma_gives_the_same_model_and_survives_a_removal(problem):
    X, parts = problem
    hashed = MUFC(K, aggregation="scma-hashed", random_state=3).fit(X, parts=parts)
    plain = MUFC(K, aggregation="plaintext", random_state=3).fit(X, parts=parts)
    assert hashed.counts_ == plain.counts_ and hashed.scma_attempts_ == 1 and plain.scma_attempts_ == 0
    np.testing.assert_array_equal(hashed.server_centers_, plain.server_centers_)
    assert sum((Counter(v) for v in hashed.client_counts_), Counter()) == Counter(hashed.counts_)
    assert hashed.scma_params_.element_bits == 62
    ids = seed_ids(hashed, X, 0)[:1]
    hashed.unlearn(ids)
    plain.unlearn(ids)
    assert hashed.counts_ == plain.counts_


def test_federated_loss_is_the_induced_objective(problem):
    X, parts = problem
    a = MUFC(K, aggregation="plaintext", random_state=5).fit(X, parts=parts)
    b = MUFC(K, aggregation="plaintext", random_state=5).fit(X, parts=parts)
    assert a.federated_loss_ == b.federated_loss_
    ids, labels = a.induced_labels()
    assert np.array_equal(np.sort(ids), np.arange(len(X)))
    assert a.federated_loss_ == pytest.approx(kmeans_objective(X[ids], a.server_centers_, labels=labels))
    assert a.federated_loss_ >= kmeans_objective(X, a.server_centers_) - 1e-9
    np.testing.assert_array_equal(a.predict(X), np.argmin(((X[:, None] - a.server_centers_) ** 2).sum(-1), axis=1))


def test_client_seeds_after_removals_equal_reseeding_the_remaining_data(problem, global_random_seed):
    """Exact unlearning at every client, bit for bit (exponential-race coupling, MUFC Lemma 5.1).

    The keys of client l are the first draw of its stream, ``SeedSequence(seed).spawn(L + 2)[l]``,
    so K-means++ rerun on the remaining rows with the remaining keys must give the client's centres.
    """
    X, parts = problem
    model = MUFC(K, aggregation="plaintext", random_state=global_random_seed).fit(X, parts=parts)
    rng = np.random.default_rng(global_random_seed)
    reseeded = 0
    for step in range(40):
        client = int(rng.integers(len(parts)))
        if model.client_size(client) <= 5:
            continue
        # every fifth request removes a seed, so that re-seeding is exercised too
        pool = seed_ids(model, X, client) if step % 5 == 0 else model.client_ids(client)
        report = model.unlearn([int(rng.choice(pool))])
        assert report.clients_retrained in ((), (client,))
        reseeded += bool(report.clients_retrained)
    streams = np.random.SeedSequence(global_random_seed).spawn(len(parts) + 2)
    for client, idx in enumerate(parts):
        keys = draw_race_keys(idx.size, min(K, idx.size), random_state=np.random.default_rng(streams[client]))
        held = np.isin(idx, model.client_ids(client))
        centres, _ = kmeans_plusplus(X[idx[held]], min(K, int(held.sum())), race_keys=keys[held])
        np.testing.assert_array_equal(model.client_centers_[client], centres)
    assert reseeded >= 1  # 40 removals from clients of ~60 points with K=4 seeds each hit a seed


def test_lazy_keeps_server_centres_when_no_seed_is_removed_and_strict_refits(problem):
    X, parts = problem
    for mode, expect_refit in (("lazy", False), ("strict", True)):
        model = MUFC(K, gamma=GAMMA, aggregation="plaintext", server_update=mode, random_state=1).fit(X, parts=parts)
        seeds = set(seed_ids(model, X, 0))
        victim = next(int(i) for i in model.client_ids(0) if int(i) not in seeds)
        before = model.server_centers_.copy()
        report = model.unlearn([victim])
        assert not report.clients_retrained
        assert report.server_refit is expect_refit and report.exact is expect_refit
        assert np.array_equal(before, model.server_centers_) is (not expect_refit)
        assert victim not in set(model.client_ids(0).tolist())
        if mode == "strict":
            assert sum(model.counts_.values()) == len(X) - 1


def test_removing_a_seed_reseeds_the_client_and_refits(problem):
    X, parts = problem
    model = MUFC(K, gamma=GAMMA, aggregation="plaintext", random_state=2).fit(X, parts=parts)
    victim = seed_ids(model, X, 1)[0]
    report = model.unlearn([victim])
    assert isinstance(report, UnlearningReport)
    assert report.clients_retrained == (1,) and report.server_refit and report.exact and report.rounds == 1
    assert report.forgotten_samples == (victim,) and report.forgotten_clients == () and report.details["left"] == ()


def test_unlearning_clients_drops_their_counts(problem):
    X, parts = problem
    model = MUFC(K, gamma=GAMMA, aggregation="scma", random_state=2).fit(X, parts=parts)
    report = model.unlearn(clients=[3, 0])
    assert report.forgotten_clients == (0, 3) and report.forgotten_samples == () and report.details["left"] == ()
    assert report.clients_retrained == () and report.client_seconds == 0.0  # a client that leaves computes nothing
    assert report.server_refit and report.exact and report.rounds == 1 and report.bytes_sent > 0
    assert sum(model.counts_.values()) == len(X) - len(parts[0]) - len(parts[3])
    assert model.client_size(0) == 0 and model.client_centers_[0] is None
    with pytest.raises(UnlearningRequestError, match="not held"):
        model.unlearn([int(parts[0][0])])
    with pytest.raises(UnlearningRequestError, match="already forgotten"):
        model.unlearn(clients=[0])


def test_one_request_may_span_several_clients(problem):
    """Samples are global row ids: the model finds the clients holding them, each unlearns its own (Alg. 3), and
    one aggregation follows. The clients end as they would after one request per client (their keys fix them)."""
    X, parts = problem
    model = MUFC(K, aggregation="plaintext", server_update="strict", random_state=2).fit(X, parts=parts)
    one_by_one = MUFC(K, aggregation="plaintext", server_update="strict", random_state=2).fit(X, parts=parts)
    seeds_2 = set(seed_ids(model, X, 2))
    plain_2 = next(int(i) for i in model.client_ids(2) if int(i) not in seeds_2)
    request = [plain_2, seed_ids(model, X, 1)[0], seed_ids(model, X, 0)[0]]
    sizes = [model.client_size(c) for c in range(len(parts))]
    report = model.unlearn(request)
    assert report.forgotten_samples == tuple(sorted(request)) and report.details["left"] == ()
    assert report.clients_retrained == (0, 1)  # client 2 lost no seed: Alg. 3, line 2
    assert report.rounds == 1 and report.server_refit
    assert [model.client_size(c) for c in range(len(parts))] == [s - (c < 3) for c, s in enumerate(sizes)]
    assert sum(model.counts_.values()) == len(X) - 3
    for victim in request:
        one_by_one.unlearn([victim])
    assert model.counts_ == one_by_one.counts_
    for mine, theirs in zip(model.client_centers_, one_by_one.client_centers_, strict=True):
        np.testing.assert_array_equal(mine, theirs)


def test_a_request_taking_a_clients_last_rows_removes_the_client(problem):
    """Forgetting every row a client holds forgets the client (q^(l) <- 0): ``details["left"]`` names it."""
    X, parts = problem
    model = MUFC(K, gamma=GAMMA, aggregation="plaintext", random_state=2).fit(X, parts=parts)
    whole = MUFC(K, gamma=GAMMA, aggregation="plaintext", random_state=2).fit(X, parts=parts)
    other = int(parts[1][0])
    request = np.append(parts[4], other)
    report = model.unlearn(request)
    assert report.details["left"] == (4,) and report.forgotten_clients == ()
    assert report.forgotten_samples == tuple(sorted(request.tolist())) and 4 not in report.clients_retrained
    assert report.server_refit and report.exact and report.rounds == 1
    assert model.client_size(4) == 0 and model.client_ids(4).size == 0 and model.client_centers_[4] is None
    assert sum(model.counts_.values()) == len(X) - len(parts[4]) - 1
    # the same clients as forgetting client 4 as a whole, then the other row
    whole.unlearn(clients=[4])
    whole.unlearn([other])
    assert model.client_counts_ == whole.client_counts_  # (lazy: counts_ is aggregated only after a re-seeding)
    for mine, theirs in zip(model.client_centers_, whole.client_centers_, strict=True):
        np.testing.assert_array_equal(mine, theirs)
    with pytest.raises(UnlearningRequestError, match="not held"):
        model.unlearn(clients=[4])


def test_removal_errors_are_clear(problem):
    X, parts = problem
    with pytest.raises(NotFittedError):
        MUFC(K).unlearn([0])
    model = MUFC(K, aggregation="plaintext", random_state=0).fit(X, parts=parts)
    mine = int(parts[0][0])
    model.unlearn([mine])
    with pytest.raises(UnlearningRequestError, match=rf"samples \[{mine}\] are not held .* already forgotten"):
        model.unlearn([mine])
    with pytest.raises(UnlearningRequestError, match=rf"samples \[{len(X)}\] are not held .* never fitted"):
        model.unlearn([len(X)])
    with pytest.raises(UnlearningRequestError, match="more than once"):
        model.unlearn([int(parts[1][0])] * 2)
    with pytest.raises(UnlearningRequestError, match="empty"):
        model.unlearn([])
    with pytest.raises(UnlearningRequestError, match="nothing to unlearn"):
        model.unlearn()
    with pytest.raises(UnlearningRequestError, match=r"clients \[99\] are not held"):
        model.unlearn(clients=[99])
    with pytest.raises(UnlearningRequestError, match="every client"):
        model.unlearn(model.remaining_data()[0])
    with pytest.raises(UnlearningRequestError, match="every client"):
        model.unlearn(parts[7], clients=range(7))
    with pytest.raises(ValueError, match="whole numbers"):
        model.unlearn([3.7])
    with pytest.raises(TypeError, match="integers"):
        model.unlearn([True])
    with pytest.raises(ValueError, match="outside"):
        model.client_size(99)
    # the refused requests changed nothing
    assert [model.client_size(c) for c in range(len(parts))] == [len(p) - (c == 0) for c, p in enumerate(parts)]
    with pytest.raises(ValueError, match="server_update"):
        MUFC(K, server_update="eager").fit(X, parts=parts)
    with pytest.raises(TypeError, match="server_n_init must be an int"):
        MUFC(K, server_n_init=2.5).fit(X, parts=parts)


def test_full_client_training_retrains_on_every_removal(problem):
    X, parts = problem
    model = MUFC(K, client_lloyd=True, server_data="weighted_centers", aggregation="plaintext", random_state=0)
    model.fit(X, parts=parts)
    report = model.unlearn([int(parts[2][0])])
    assert report.clients_retrained == (2,)
    # weighted bin centres: the server's data are the occupied bins, weighted by the remaining counts
    assert sum(model.counts_.values()) == len(X) - 1
    assert model.federated_loss_ >= kmeans_objective(X[model.remaining_data()[0]], model.server_centers_) - 1e-9


def induced_loss_and_counts(model: MUFC, X, n_clients: int):
    """MUFC Def. 3.1 from public attributes only: a point joins its nearest local centre, which sits in a grid bin;
    the bin centre joins its nearest server centre. Also q, the points per occupied bin."""
    S = model.server_centers_
    loss, counts = 0.0, Counter()
    for client in range(n_clients):
        C = model.client_centers_[client]
        if C is None:
            continue
        for i in model.client_ids(client):
            centre = C[np.argmin(((C - X[i]) ** 2).sum(axis=1))]
            bin_centre = model.grid_.snap_to_centers(centre[None])[0]
            loss += float(((X[i] - S[np.argmin(((S - bin_centre) ** 2).sum(axis=1))]) ** 2).sum())
            counts[model.grid_.flat_index(model.grid_.cells(centre[None]))[0]] += 1
    return loss, dict(sorted(counts.items()))


def test_loss_and_counts_equal_their_definitions_after_removals(problem, global_random_seed):
    X, parts = problem
    model = MUFC(K, aggregation="plaintext", server_update="strict", random_state=global_random_seed)
    model.fit(X, parts=parts)
    loss, counts = induced_loss_and_counts(model, X, len(parts))
    assert model.counts_ == counts and model.federated_loss_ == pytest.approx(loss, rel=1e-9)
    rng = np.random.default_rng(global_random_seed)
    for client in (0, 3, 5):
        model.unlearn([int(rng.choice(model.client_ids(client)))])
        assert model.unlearn([seed_ids(model, X, client)[0]]).clients_retrained == (client,)  # MUFC Alg. 3
    loss, counts = induced_loss_and_counts(model, X, len(parts))
    assert model.counts_ == counts and sum(counts.values()) == len(X) - 6
    assert model.federated_loss_ == pytest.approx(loss, rel=1e-9)


def test_grid_is_built_with_mufc_default_step(problem):
    X, parts = problem
    model = MUFC(K, aggregation="plaintext", random_state=0).fit(X, parts=parts)
    assert model.grid_.gamma == 1.0 / np.sqrt(len(X))
    expected = UniformGrid.from_data(X, 1.0 / np.sqrt(len(X)))
    assert model.grid_.shape == expected.shape and model.grid_.offset.tolist() == expected.offset.tolist()
    assert model.scma_params_ is None and model.n_clients_ == len(parts)
    report = model.fit_report_
    assert report.clients_retrained == () and report.server_refit and report.forgotten == "nothing (training)"
    assert report.seconds == report.client_seconds + report.server_seconds


def test_own_sample_induction_uses_each_points_server_sample(problem):
    """induced="own_sample": a point's cluster is the server cluster of its own uniform sample, in its centre's bin."""
    X, parts = problem
    a = MUFC(K, aggregation="plaintext", random_state=4).fit(X, parts=parts)
    b = MUFC(K, aggregation="plaintext", induced="own_sample", random_state=4).fit(X, parts=parts)
    np.testing.assert_array_equal(a.server_centers_, b.server_centers_)  # same training
    ids_a, labels_a = a.induced_labels()
    ids_b, labels_b = b.induced_labels()
    np.testing.assert_array_equal(ids_a, ids_b)
    # a uniform sample in a bin goes where the bin centre goes unless a server boundary crosses the bin
    assert np.mean(labels_a == labels_b) > 0.95
    with pytest.raises(ValueError, match="own_sample"):
        MUFC(K, induced="own_sample", server_data="weighted_centers").fit(X, parts=parts)


def test_fit_warns_once_about_clients_with_fewer_points_than_k():
    X, _ = make_blobs((30, 30), 2, random_state=2)
    parts = [np.arange(2), np.arange(2, 60)]
    with pytest.warns(UserWarning, match="MUFC: 1 of 2 clients hold fewer points than n_clusters=3") as record:
        model = MUFC(3, aggregation="plaintext", random_state=0).fit(X, parts=parts)
    assert len(record) == 1
    assert len(model.client_centers_[0]) == 2


def test_a_step_computed_from_the_rows_makes_forgetting_inexact_and_says_why(problem):
    """With ``gamma=None`` the grid step is 1/sqrt(n) of the rows given to fit; retraining on fewer rows takes a
    larger step, so the report must not claim exactness; a fixed step gives the same model and an exact report."""
    X, parts = problem
    default = MUFC(K, aggregation="plaintext", random_state=2).fit(X, parts=parts)
    fixed = MUFC(K, gamma=1 / np.sqrt(len(X)), aggregation="plaintext", random_state=2).fit(X, parts=parts)
    np.testing.assert_array_equal(default.server_centers_, fixed.server_centers_)
    report, exact = default.unlearn(clients=[2]), fixed.unlearn(clients=[2])
    assert not report.exact and "pass gamma" in report.details["note"]
    assert exact.exact and "note" not in exact.details


def test_plaintext_rounds_count_the_bins_the_clients_send(problem):
    """In the clear each client sends its nonzero bins: an index of the grid and a 64-bit count each."""
    X, parts = problem
    model = MUFC(K, gamma=GAMMA, aggregation="plaintext", random_state=2).fit(X, parts=parts)
    per_bin = -(-(int(model.grid_.n_bins) - 1).bit_length() // 8) + 8
    sent = [len(q) * per_bin for q in model.client_counts_]
    assert model.fit_report_.bytes_sent == sum(sent) > 0
    assert model.unlearn(clients=[1]).bytes_sent == sum(sent) - sent[1]
