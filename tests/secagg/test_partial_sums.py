"""A round whose survivors fall apart in the masking graph is refused, by the server and by every honest client.

With shares among all clients (Liu et al.'s "t-out-of-k within each cluster") a round completes as soon as ``t`` clients
survive, even when the survivors no longer form one component of the sparse masking graph; the server can then
compute each component's sum from its own view, down to a single client's input (Liu et al. 2025, Fig. 3).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedlib.exceptions import PrivacyViolationError, SecAggAbort
from fedlib.secagg import (
    MaskingGraph,
    SecAggClient,
    SecAggConfig,
    SecAggServer,
    Stage,
    harary_graph,
    leaked_partial_sums,
    prg_words,
    secure_aggregate,
)

X = np.random.default_rng(0).integers(0, 2**32, size=(14, 8), dtype=np.uint32)
RING_DROPS = {Stage.SHARE_KEYS: [1, 11]}  # both neighbours of client 0 gone before sharing: it masks with nobody


def ring_config(**options) -> SecAggConfig:
    ring = harary_graph(12, 2, shuffle=False)
    return SecAggConfig(ring, threshold=4, vector_length=8, share_holders="all", **options)


def test_reproducer_client_0_is_unmasked_by_its_own_self_mask_seed_when_allowed():
    """The issue's reproducer, with the check switched off: y_0 − PRG(b_0) is x_0."""
    result = secure_aggregate(X[:12], ring_config(allow_partial_sums=True), dropouts=RING_DROPS, random_state=0)
    y0 = result.server.masked_inputs[0]
    np.testing.assert_array_equal(y0 - prg_words(result.server.rebuilt_seeds[0], 8), X[0])


def test_reproducer_the_default_round_aborts_before_anything_is_unmasked():
    with pytest.raises(SecAggAbort, match=r"fall into 2 components .* one of them a single client's input"):
        secure_aggregate(X[:12], ring_config(), dropouts=RING_DROPS, random_state=0)


def run_to_unmasking(config: SecAggConfig, dropped_before_sharing):
    """Clients and a server after stage 2, with the server's own check bypassed (a server that cheats)."""
    n = config.n_clients
    clients = {i: SecAggClient(i, X[i], config, random_state=i) for i in range(n)}
    server = SecAggServer(config)
    bundles = server.collect_keys([u.advertise_keys() for u in clients.values()])
    alive = [i for i in range(n) if i not in dropped_before_sharing]
    u2, deliveries = server.route_shares({i: clients[i].share_keys(bundles[i]) for i in alive})
    for i in alive:
        clients[i].masked_input(u2, deliveries[i])
    return clients, alive


def test_an_honest_client_refuses_a_survivor_list_that_falls_apart():
    clients, alive = run_to_unmasking(ring_config(), {1, 11})
    with pytest.raises(PrivacyViolationError, match=r"client 5 refuses to unmask: .*2 components"):
        clients[5].unmask(alive)
    clients, alive = run_to_unmasking(ring_config(allow_partial_sums=True), {1, 11})
    assert 0 in clients[5].unmask(alive).self_mask_shares  # the insecure setting answers, and reveals b_0's share


def test_connected_survivors_still_complete_and_sum_exactly():
    drops = {Stage.MASKED_INPUT: [3]}
    result = secure_aggregate(X[:12], ring_config(), dropouts=drops, random_state=0)  # a path of 11 clients
    np.testing.assert_array_equal(result.total, np.delete(X[:12], 3, axis=0).sum(axis=0, dtype=np.uint32))
    assert len(leaked_partial_sums(result.server)) == 1


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(6, 14),
    half_degree=st.integers(1, 3),
    share_holders=st.sampled_from(["all", "neighbors"]),
    dropped=st.sets(st.integers(0, 13), max_size=6),
    seed=st.integers(0, 2**16),
)
def test_a_completed_round_reveals_only_the_total(n, half_degree, share_holders, dropped, seed):
    """Every round that completes leaves the server one component: the whole survivors' sum, nothing smaller.

    And ``completes_without`` predicts completion exactly."""
    graph = harary_graph(n, 2 * half_degree, random_state=seed)
    holders = n if share_holders == "all" else graph.degree + 1
    config = SecAggConfig(graph, threshold=max(2, holders // 2 + 1), vector_length=8, share_holders=share_holders)
    dropped = sorted(u for u in dropped if u < n)
    mask = np.zeros(n, dtype=bool)
    mask[dropped] = True
    try:
        result = secure_aggregate(X[:n], config, dropouts={Stage.MASKED_INPUT: dropped}, random_state=seed)
    except SecAggAbort:
        assert not config.completes_without(mask)
        return
    assert config.completes_without(mask)
    ((members, total),) = leaked_partial_sums(result.server)
    np.testing.assert_array_equal(total, result.total)
    assert members.tolist() == np.flatnonzero(~mask).tolist()


def test_completes_without_counts_disconnected_survivors_as_aborts():
    config = ring_config()
    patterns = np.zeros((3, 12), dtype=bool)
    patterns[1, [1, 11]] = True  # client 0 isolated
    patterns[2, [3]] = True  # a path: connected
    assert config.completes_without(patterns).tolist() == [True, False, True]
    assert ring_config(allow_partial_sums=True).completes_without(patterns).tolist() == [True, True, True]


def test_leak_rates_at_the_chapters_setting():
    """k = 50, m = 4, ξ = 0.7, shares among all: before the check, rounds that completed with partial sums."""
    rng = np.random.default_rng(0)
    rates = {}
    for delta in (0.1, 0.2):
        leaky, done = 0, 0
        for _ in range(20):
            config = SecAggConfig.for_cluster(50, degree=4, threshold_rate=0.7, vector_length=1,
                                              share_holders="all", random_state=rng)  # fmt: skip
            loose = SecAggConfig(config.graph, config.threshold, 1, share_holders="all", allow_partial_sums=True)
            patterns = rng.random((500, 50)) < delta
            completes, strict = loose.completes_without(patterns), config.completes_without(patterns)
            done += int(completes.sum())
            leaky += int((completes & ~strict).sum())
        rates[delta] = leaky / done
    # 40,000 patterns over 40 seatings (three seeds) give 7.0-7.2% and 47.6-48.0%; 10,000 here are within about
    # ±0.6 and ±1.0 points of that. (The issue reported 6.0% and 51.5% from its own sample.)
    assert 0.055 < rates[0.1] < 0.09 and 0.45 < rates[0.2] < 0.51


def test_a_user_built_disconnected_graph_is_refused_unless_allowed():
    two_triangles = tuple(np.array(sorted({3 * (i // 3) + j for j in range(3)} - {i})) for i in range(6))
    with pytest.raises(ValueError, match="falls into 2 components"):
        MaskingGraph(two_triangles)
    graph = MaskingGraph(two_triangles, allow_disconnected=True)
    assert len(graph.components()) == 2
    with pytest.raises(TypeError, match="allow_disconnected must be a bool"):
        MaskingGraph(two_triangles, allow_disconnected="yes")


def test_connected_patterns_agrees_with_components():
    rng = np.random.default_rng(1)
    for m in (2, 3, 4, 6):
        graph = harary_graph(16, m, random_state=rng)
        patterns = rng.random((300, 16)) < 0.7
        expected = [graph.is_connected(p) for p in patterns]
        assert graph.connected_patterns(patterns).tolist() == expected
    assert MaskingGraph.complete(5).connected_patterns(np.zeros((2, 5), dtype=bool)).tolist() == [True, True]
