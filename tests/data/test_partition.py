"""Client partitions (fedlib/data/_partition.py): iid, MUFC's non-iid, SecFC's k', Dirichlet, groups, subsamples."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from fedlib import data
from fedlib.data._partition import split_by_group  # not yet exported by fedlib.data (issue 18)


def assert_partition(parts, n):
    flat = np.concatenate(parts)
    np.testing.assert_array_equal(np.sort(flat), np.arange(n))


# --- iid ------------------------------------------------------------------------------------------------------


@given(st.integers(1, 500), st.integers(1, 40), st.integers(0, 2**32 - 1))
def test_iid_partition_is_a_shuffled_near_equal_cut(n, n_clients, seed):
    assume(n_clients <= n)
    parts = data.iid_partition(n, n_clients, random_state=seed)
    assert len(parts) == n_clients
    assert_partition(parts, n)
    assert max(p.size for p in parts) - min(p.size for p in parts) <= 1
    expected = np.array_split(np.random.default_rng(seed).permutation(n), n_clients)  # the definition
    assert [p.tolist() for p in parts] == [sorted(e.tolist()) for e in expected]


@given(st.integers(1, 40), st.integers(1, 20))
def test_iid_partition_refuses_more_clients_than_points(n, extra):
    n_clients = n + extra
    with pytest.raises(ValueError, match=f"n_samples={n} should be >= n_clients={n_clients}"):
        data.iid_partition(n, n_clients, random_state=0)


def test_iid_partition_refuses_no_clients():
    with pytest.raises(ValueError, match="n_clients=0 should be >= 1"):
        data.iid_partition(5, 0)


# --- MUFC's non-iid split -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("sizes", "n_clients", "k_prime"), [((6506, 2328, 2201, 974), 100, 2), ((3000,) * 10, 100, 3)])
def test_non_iid_partition_holds_at_most_k_prime_clusters(sizes, n_clients, k_prime, global_random_seed):
    labels = np.repeat(np.arange(len(sizes)), sizes)
    parts = data.non_iid_partition(labels, n_clients, max_clusters_per_client=k_prime, random_state=global_random_seed)
    assert len(parts) == n_clients
    assert_partition(parts, labels.size)
    counts = data.client_cluster_counts(parts, labels)
    assert (counts > 0).sum(axis=1).max() <= k_prime
    assert max(p.size for p in parts[:-1]) <= labels.size // n_clients


def test_non_iid_partition_takes_chunks_in_data_order():
    """Each client's points of a cluster are a contiguous run of that cluster's members, taken in order."""
    labels = np.repeat(np.arange(4), [500, 300, 150, 50])
    rng = np.random.default_rng(0)
    labels = labels[rng.permutation(labels.size)]
    parts = data.non_iid_partition(labels, 10, max_clusters_per_client=2, random_state=4)
    members = {c: np.flatnonzero(labels == c).tolist() for c in range(4)}
    taken = {c: [] for c in range(4)}
    for part in parts:
        for c in range(4):
            mine = [int(i) for i in part if labels[i] == c]
            if mine:
                start = members[c].index(mine[0])
                assert mine == members[c][start : start + len(mine)]
                taken[c].append(start)
    for c in range(4):  # the runs of the first L-1 clients start where the previous one stopped
        assert taken[c] == sorted(taken[c])


def test_non_iid_partition_same_seed_same_split():
    labels = np.repeat(np.arange(4), [500, 300, 150, 50])
    a = data.non_iid_partition(labels, 10, max_clusters_per_client=2, random_state=4)
    b = data.non_iid_partition(labels, 10, max_clusters_per_client=2, random_state=4)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


def test_non_iid_partition_rejects_bad_arguments():
    with pytest.raises(ValueError, match=r"max_clusters_per_client=5 should lie in \[1, n_clusters=2\]"):
        data.non_iid_partition(np.array([0, 1] * 10), 2, max_clusters_per_client=5)
    with pytest.raises(ValueError, match="labels must be 1-D"):
        data.non_iid_partition(np.zeros((4, 2)), 2, max_clusters_per_client=1)
    with pytest.raises(ValueError, match="no non-iid split"):
        data.non_iid_partition(np.repeat(np.arange(6), 2), 2, max_clusters_per_client=1, max_tries=5)


# --- SecFC's k' split -----------------------------------------------------------------------------------------


def k_prime_labels(k, n_clients, seed):
    rng = np.random.default_rng(seed)
    return rng.permutation(np.repeat(np.arange(k), rng.integers(n_clients, 3 * n_clients + 2, size=k)))


@given(st.integers(1, 8), st.integers(1, 12), st.integers(1, 8), st.integers(0, 2**32 - 1))
def test_k_prime_partition_disjoint_cover_with_at_most_k_prime_clusters(k, n_clients, k_prime, seed):
    assume(k_prime <= k and n_clients * k_prime >= k)
    labels = k_prime_labels(k, n_clients, seed)
    parts = data.k_prime_partition(labels, n_clients, k_prime, random_state=seed)
    assert len(parts) == n_clients
    assert all(p.dtype == np.int64 and np.all(np.diff(p) > 0) for p in parts)
    assert_partition(parts, labels.size)
    counts = data.client_cluster_counts(parts, labels)
    assert (counts > 0).sum(axis=1).max() <= k_prime
    takes = [{(j * k_prime + s) % k for s in range(k_prime)} for j in range(n_clients)]
    # client j holds only clusters (j k' + s) mod k
    for j, row in enumerate(counts):
        assert set(np.flatnonzero(row).tolist()) <= takes[j]
    # each cluster is split as evenly as possible among the clients taking it
    for c in range(k):
        shares = counts[[c in t for t in takes], c]
        assert shares.max() - shares.min() <= 1 and shares.sum() == np.sum(labels == c)


@given(st.integers(1, 7), st.integers(1, 12), st.integers(0, 2**32 - 1), st.data())
def test_k_prime_partition_refuses_k_prime_above_k(k, n_clients, seed, data_):
    k_prime = data_.draw(st.integers(k + 1, 8))
    with pytest.raises(ValueError, match=rf"k_prime={k_prime} should lie in \[1, k={k}\]"):
        data.k_prime_partition(k_prime_labels(k, n_clients, seed), n_clients, k_prime, random_state=seed)


@given(st.integers(2, 8), st.integers(0, 2**32 - 1), st.data())
def test_k_prime_partition_refuses_clusters_without_a_client(k, seed, data_):
    k_prime = data_.draw(st.integers(1, k - 1))
    n_clients = data_.draw(st.integers(1, (k - 1) // k_prime))  # n_clients · k' < k
    with pytest.raises(ValueError, match=r"n_clients \* k_prime >= k"):
        data.k_prime_partition(k_prime_labels(k, n_clients, seed), n_clients, k_prime, random_state=seed)


def test_k_prime_partition_k4_n10_k1_gives_3_3_2_2_clients():
    labels = np.repeat(np.arange(4), 2500)
    parts = data.k_prime_partition(labels, 10, 1, random_state=0)
    counts = data.client_cluster_counts(parts, labels)
    assert (counts > 0).sum(axis=0).tolist() == [3, 3, 2, 2]
    assert sorted(p.size for p in parts) == [833] * 4 + [834] * 2 + [1250] * 4


def test_k_prime_equal_k_is_iid_like():
    labels = np.repeat(np.arange(4), 1000)
    parts = data.k_prime_partition(labels, 10, 4, random_state=1)
    counts = data.client_cluster_counts(parts, labels)
    assert counts.min() == 100 and counts.max() == 100


def test_k_prime_partition_general_labels_and_determinism():
    labels = np.array(["b", "a", "c", "a", "b", "c", "c", "a"])
    a = data.k_prime_partition(labels, 3, 1, random_state=5)
    b = data.k_prime_partition(labels, 3, 1, random_state=5)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert [sorted(set(labels[p].tolist())) for p in a] == [["a"], ["b"], ["c"]]


def test_k_prime_partition_rejects_empty_client():
    labels = np.array([0, 0, 0, 1])  # cluster 1 has one point but two clients take it
    with pytest.raises(ValueError, match="would hold no points"):
        data.k_prime_partition(labels, 4, 1, random_state=0)


# --- per-class Dirichlet split -------------------------------------------------------------------------------


def dirichlet_by_definition(labels, n_clients, alpha, min_size, seed, max_tries):
    """Class by class: its indices in the order of one shuffle, cut at floor(n_k * cumulative share + u_k)."""
    rng = np.random.default_rng(seed)
    classes, codes = np.unique(labels, return_inverse=True)
    for _ in range(max_tries):
        shuffled = rng.permutation(len(labels))
        shares = rng.dirichlet(np.full(n_clients, alpha), size=classes.size)
        shifts = rng.random(classes.size)
        parts = [[] for _ in range(n_clients)]
        for k in range(classes.size):
            members = shuffled[codes[shuffled] == k]
            total, cuts = 0.0, []
            for j in range(n_clients - 1):
                total += shares[k, j]
                cuts.append(min(int(np.floor(total * members.size + shifts[k])), members.size))
            for j, piece in enumerate(np.split(members, cuts)):
                parts[j].extend(piece.tolist())
        if min(len(p) for p in parts) >= min_size:
            return [sorted(p) for p in parts]
    return None


@given(
    st.lists(st.integers(0, 5), min_size=1, max_size=150),
    st.integers(1, 10),
    st.floats(0.05, 100.0),
    st.integers(1, 5),
    st.integers(0, 2**32 - 1),
)
def test_dirichlet_partition_is_a_disjoint_cover_with_min_size(labels, n_clients, alpha, min_size, seed):
    labels = np.array(labels)
    n = labels.size
    if n_clients * min_size > n:
        with pytest.raises(ValueError, match=f"exceeds n_samples={n}.*lower min_size|should be >= n_clients"):
            data.dirichlet_partition(labels, n_clients, alpha, min_size=min_size, random_state=seed)
        return
    try:
        parts = data.dirichlet_partition(labels, n_clients, alpha, min_size=min_size, max_tries=20, random_state=seed)
    except ValueError as exc:
        assert f"min_size={min_size}" in str(exc) and "max_tries=20" in str(exc)
        return
    assert len(parts) == n_clients
    assert_partition(parts, n)
    for part in parts:
        assert part.dtype == np.int64 and part.size >= min_size
        assert np.all(np.diff(part) > 0)


@given(
    st.lists(st.sampled_from(["b", "a", "c"]), min_size=1, max_size=60),
    st.integers(1, 4),
    st.floats(0.1, 10.0),
    st.integers(1, 3),
    st.integers(0, 2**32 - 1),
)
def test_dirichlet_partition_equals_its_definition(labels, n_clients, alpha, min_size, seed):
    labels = np.array(labels)
    assume(n_clients * min_size <= labels.size)
    expected = dirichlet_by_definition(labels, n_clients, alpha, min_size, seed, max_tries=30)
    if expected is None:
        with pytest.raises(ValueError, match="max_tries=30"):
            data.dirichlet_partition(labels, n_clients, alpha, min_size=min_size, max_tries=30, random_state=seed)
        return
    parts = data.dirichlet_partition(labels, n_clients, alpha, min_size=min_size, max_tries=30, random_state=seed)
    assert [p.tolist() for p in parts] == expected


def test_dirichlet_split_is_unbiased_across_clients_with_small_classes():
    # 100 classes of 8 samples over 20 clients: every client should hold 40 samples on average. Cutting each class at
    # floor(n_k * cumulative share) gave the first client about 1 and the last about 100.
    labels = np.repeat(np.arange(100), 8)
    sizes = np.array([[p.size for p in data.dirichlet_partition(labels, 20, 5.0, min_size=1, random_state=s)]
                      for s in range(30)])  # fmt: skip
    assert np.abs(sizes.mean(axis=0) - 40).max() < 6


def test_dirichlet_concentration_sets_the_heterogeneity():
    labels = np.repeat(np.arange(10), 1000)
    near_iid = data.client_cluster_counts(data.dirichlet_partition(labels, 10, 1e4, random_state=0), labels)
    assert np.abs(near_iid - 100).max() < 15  # every client holds about a tenth of every class
    skewed = data.client_cluster_counts(data.dirichlet_partition(labels, 10, 0.05, min_size=1, random_state=0), labels)
    top_share = skewed.max(axis=0) / 1000  # each class mostly with one client
    assert np.mean(top_share) > 0.7
    assert np.mean((skewed > 0).sum(axis=1)) < 5  # clients hold few classes


def test_dirichlet_partition_is_reproducible_and_takes_a_generator():
    labels = np.repeat(np.arange(5), 40)
    a = data.dirichlet_partition(labels, 6, 0.5, min_size=3, random_state=7)
    b = data.dirichlet_partition(labels, 6, 0.5, min_size=3, random_state=7)
    c = data.dirichlet_partition(labels, 6, 0.5, min_size=3, random_state=8)
    assert [p.tolist() for p in a] == [p.tolist() for p in b] != [p.tolist() for p in c]
    g = data.dirichlet_partition(labels, 6, 0.5, min_size=3, random_state=np.random.default_rng(7))
    assert [p.tolist() for p in g] == [p.tolist() for p in a]


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "match"),
    [
        ((np.zeros(20, int), 4, 0.5), {"min_size": 6}, ValueError, r"n_clients \* min_size = 4 \* 6 = 24 exceeds"),
        ((np.zeros(20, int), 4, 0.0), {}, ValueError, "alpha=0.0 should be > 0.0"),
        ((np.zeros(20, int), 4, float("inf")), {}, ValueError, "alpha=inf should be finite"),
        ((np.zeros(20, int), 4, "1"), {}, TypeError, "alpha must be a real number"),
        ((np.zeros(20, int), 0, 0.5), {}, ValueError, "n_clients=0 should be >= 1"),
        ((np.zeros(20, int), 2.0, 0.5), {}, TypeError, "n_clients must be an int"),
        ((np.zeros(20, int), 21, 0.5), {"min_size": 1}, ValueError, "n_samples=20 should be >= n_clients=21"),
        ((np.zeros(20, int), 4, 0.5), {"min_size": 0}, ValueError, "min_size=0 should be >= 1"),
        ((np.zeros(20, int), 4, 0.5), {"max_tries": 0}, ValueError, "max_tries=0 should be >= 1"),
        ((np.zeros((4, 5), int), 2, 0.5), {}, ValueError, "labels must be 1-D"),
    ],
)
def test_dirichlet_partition_refuses_bad_arguments(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        data.dirichlet_partition(*args, **kwargs)


def test_dirichlet_partition_gives_up_naming_min_size():
    # 20 points over 4 clients of at least 5: only an exact 5-5-5-5 cut passes, which alpha=0.01 all but never draws
    with pytest.raises(ValueError, match=r"at least min_size=5 samples in max_tries=3 draws.*raise alpha"):
        data.dirichlet_partition(np.arange(20) % 2, 4, 0.01, min_size=5, max_tries=3, random_state=0)


# --- natural groups, counts, subsamples -----------------------------------------------------------------------


@given(st.lists(st.sampled_from(["w3", "w1", "w7", "w2"]), min_size=1, max_size=40))
def test_partition_by_group_equals_a_dict_of_lists(groups):
    by_group = defaultdict(list)
    for i, g in enumerate(groups):
        by_group[g].append(i)
    parts = data.partition_by_group(groups)
    assert [p.tolist() for p in parts] == [by_group[g] for g in sorted(by_group)]


def test_partition_by_group():
    groups = np.array([3, 1, 3, 2, 1])
    assert [p.tolist() for p in data.partition_by_group(groups)] == [[1, 4], [3], [0, 2]]
    with pytest.raises(ValueError, match="groups must be 1-D"):
        data.partition_by_group(np.zeros((2, 2)))


@given(st.lists(st.integers(0, 4), min_size=1, max_size=40), st.integers(1, 5), st.data())
def test_client_cluster_counts_equal_a_loop(labels, n_clients, data_):
    n_clients = min(n_clients, len(labels))
    parts = data.iid_partition(len(labels), n_clients, random_state=data_.draw(st.integers(0, 100)))
    classes = sorted(set(labels))
    counts = data.client_cluster_counts(parts, np.array(labels) * 10)  # any sortable labels
    assert counts.tolist() == [[sum(1 for i in p if labels[i] == c) for c in classes] for p in parts]


@given(st.integers(1, 300), st.integers(1, 300), st.integers(0, 2**32 - 1))
def test_subsample_indices_equal_a_sorted_choice_without_replacement(n, max_samples, seed):
    got = data.subsample_indices(n, max_samples, random_state=seed)
    if n <= max_samples:
        np.testing.assert_array_equal(got, np.arange(n))
    else:
        expected = np.sort(np.random.default_rng(seed).choice(n, size=max_samples, replace=False))
        np.testing.assert_array_equal(got, expected)


def test_subsample_indices_edge_cases():
    np.testing.assert_array_equal(data.subsample_indices(5, None), np.arange(5))
    with pytest.raises(ValueError, match="max_samples=0 should be >= 1 or None"):
        data.subsample_indices(5, 0)


# --- a sample of natural groups as clients (FEMNIST's writers) -------------------------------------------------


def _writers(seed, n_writers=30, n_rows=600):
    rng = np.random.default_rng(seed)
    groups = rng.integers(0, n_writers, size=n_rows)
    return groups, rng.random(n_rows) < 0.2


def test_split_by_group_keeps_the_bits_of_the_chapters_writer_loops():
    """Golden values of the FEMNIST writer loops the KNOT (writers with two training rows) and SecAgg-FU
    (every writer) chapters ran before this function (issue 18): same draws in the same order."""
    groups = np.repeat(np.arange(8), [4, 1, 3, 5, 2, 4, 1, 4])
    is_test = np.isin(np.arange(24), [3, 6, 7, 11, 12, 15, 17, 20, 23])
    for min_train, rows, clients, test in (
        (2, [0, 1, 16, 18, 21, 22], [[0, 1], [2, 3], [4, 5]], [3, 15, 17, 20]),
        (0, [0, 1, 19, 21, 22], [[0, 1], [2], [3, 4]], [3, 20, 23]),
    ):
        got = split_by_group(
            groups,
            is_test,
            3,
            max_per_client=2,
            test_size=4,
            min_train_size=min_train,
            random_state=np.random.default_rng(11),
        )
        assert got[0].tolist() == rows and [c.tolist() for c in got[1]] == clients and got[2].tolist() == test
        assert got[0].dtype == got[2].dtype == np.int64 and all(c.dtype == np.int64 for c in got[1])


def test_split_by_group_gives_each_client_its_own_training_rows_and_tests_on_its_writers():
    groups, is_test = _writers(0)
    rows, clients, test = split_by_group(groups, is_test, 12, max_per_client=5, test_size=40, random_state=0)
    assert len(clients) == 12
    np.testing.assert_array_equal(np.concatenate(clients), np.arange(rows.size))  # consecutive blocks of rows
    writers = [np.unique(groups[rows[c]]) for c in clients]
    assert all(w.size == 1 for w in writers) and len({int(w[0]) for w in writers}) == 12
    assert all(1 <= c.size <= 5 for c in clients) and not is_test[rows].any()
    assert is_test[test].all() and np.isin(groups[test], np.concatenate(writers)).all()
    assert test.size == 40 and np.all(np.diff(test) > 0)
    again = split_by_group(groups, is_test, 12, max_per_client=5, test_size=40, random_state=0)
    assert all(
        np.array_equal(a, b) for a, b in zip([rows, test, *clients], [again[0], again[2], *again[1]], strict=True)
    )


def test_split_by_group_draws_only_groups_with_enough_training_rows():
    groups = np.array([0, 0, 0, 1, 1, 2])
    is_test = np.array([False, False, True, False, True, False])
    rows, clients, _ = split_by_group(
        groups, is_test, 1, max_per_client=9, test_size=0, min_train_size=2, random_state=3
    )
    assert rows.tolist() == [0, 1] and clients[0].tolist() == [0, 1]  # only writer 0 has two training rows
    with pytest.raises(ValueError, match=r"1 groups \(writers\) have at least 2 training rows; n_clients=2"):
        split_by_group(groups, is_test, 2, max_per_client=9, test_size=0, min_train_size=2)
    with pytest.raises(ValueError, match="1-D of one length"):
        split_by_group(groups, is_test[:-1], 1, max_per_client=9, test_size=0)
    with pytest.raises(ValueError, match="max_per_client"):
        split_by_group(groups, is_test, 1, max_per_client=0, test_size=0)
