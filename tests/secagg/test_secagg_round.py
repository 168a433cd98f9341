"""SecAgg/SecAgg+ end to end (fedlib/secagg/_secagg_round.py): the secure sum equals the plain sum of the survivors
under any dropout pattern that leaves t clients where t are needed; otherwise the round aborts and outputs nothing.
Every client holds a share of its own secrets (Bonawitz et al. 2017, Fig. 4), so t survivors suffice."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedlib.exceptions import SecAggAbort
from fedlib.secagg import (
    PHASES,
    MaskingGraph,
    SecAggConfig,
    Stage,
    harary_graph,
    secure_aggregate,
)


def _expected_outcome(config: SecAggConfig, drops: dict[Stage, set[int]], late: set[int]):
    """Independent oracle: walk the stages with plain sets; None means the round must abort."""
    n, t = config.n_clients, config.threshold
    gone: set[int] = set()
    speaking = {}
    for stage in (Stage.ADVERTISE_KEYS, Stage.SHARE_KEYS, Stage.MASKED_INPUT, Stage.UNMASKING):
        gone |= drops.get(stage, set())
        speaking[stage] = set(range(n)) - gone
    u1 = speaking[Stage.ADVERTISE_KEYS]
    if len(u1) < t:
        return None
    # holders(i) includes i: a survivor answers with its own b share, a dropped client's own share is lost.
    u2 = speaking[Stage.SHARE_KEYS]
    if any(len(set(config.holders(i).tolist()) & u1) < t for i in u2) or len(u2) < t:
        return None
    u3 = speaking[Stage.MASKED_INPUT] - late
    if len(u3) < t:
        return None
    if not config.allow_partial_sums and not _one_piece(config, u3):
        return None  # the server could sum each piece: server and honest clients refuse to unmask
    responders = speaking[Stage.UNMASKING]
    for owner in u2:  # b of survivors, s^SK of the dropped: either way t holders must answer
        if len(set(config.holders(owner).tolist()) & u1 & u2 & responders) < t:
            return None
    return sorted(u3)


def _one_piece(config: SecAggConfig, clients: set[int]) -> bool:
    """Breadth-first search on plain sets: do ``clients`` form one connected piece of the masking graph?"""
    start = min(clients)
    seen, frontier = {start}, [start]
    while frontier:
        frontier = [int(j) for i in frontier for j in config.graph.neighbors[i] if j in clients and j not in seen]
        seen.update(frontier)
    return seen == clients


@st.composite
def rounds(draw):
    n = draw(st.integers(3, 14))
    if draw(st.booleans()):
        graph, holders = MaskingGraph.complete(n), n
    else:
        m = draw(st.integers(2, n - 1).filter(lambda m: m % 2 == 0 or n % 2 == 0))
        graph, holders = harary_graph(n, m, random_state=draw(st.integers(0, 99))), min(m, n - 1) + 1
    share_holders = draw(st.sampled_from(["neighbors", "all"]))
    if share_holders == "all":
        holders = n
    t = draw(st.integers(2, holders))  # n >= 3: every client has at least three holders, itself included
    d = draw(st.integers(1, 6))
    config = SecAggConfig(graph, threshold=t, vector_length=d, share_holders=share_holders)
    stages = [Stage.ADVERTISE_KEYS, Stage.SHARE_KEYS, Stage.MASKED_INPUT, Stage.UNMASKING]
    drops = {s: set(draw(st.lists(st.integers(0, n - 1), max_size=n // 2))) for s in stages}
    late = set(draw(st.lists(st.integers(0, n - 1), max_size=2)))
    x = np.array(draw(st.lists(st.integers(0, 2**32 - 1), min_size=n * d, max_size=n * d)), dtype=np.uint32)
    return config, drops, late, x.reshape(n, d), draw(st.integers(0, 2**16))


@given(rounds())
def test_secure_sum_is_the_plain_sum_of_the_survivors_or_the_round_aborts(case):
    config, drops, late, x, seed = case
    expected = _expected_outcome(config, drops, late)
    if expected is None:
        with pytest.raises(SecAggAbort, match=r"t=|components of the masking graph"):
            secure_aggregate(x, config, dropouts=drops, late=late, random_state=seed)
        return
    result = secure_aggregate(x, config, dropouts=drops, late=late, random_state=seed)
    assert result.summed_clients.tolist() == expected
    plain = x[expected].astype(np.uint64).sum(axis=0) % 2**32  # exact in uint64 for n < 2^32
    assert result.total.dtype == np.uint32 and np.array_equal(result.total, plain.astype(np.uint32))


@st.composite
def tolerable_rounds(draw):
    """A configuration and a dropout pattern of at most h - t clients, h the fewest holders of a client (itself
    included), each dropping at any stage: every secret keeps t live holders, so the round must complete. With
    shares among all clients, also fewer than the graph's connectivity (a Harary graph H(n, m) is m-connected):
    more could split the survivors, and such a round aborts rather than reveal partial sums."""
    n = draw(st.integers(3, 12))
    if draw(st.booleans()):
        graph = MaskingGraph.complete(n)
    else:
        m = draw(st.integers(2, n - 1).filter(lambda m: m % 2 == 0 or n % 2 == 0))
        graph = harary_graph(n, m, random_state=draw(st.integers(0, 99)))
    share_holders = draw(st.sampled_from(["neighbors", "all"]))
    h = n if share_holders == "all" else min(graph.degree, n - 1) + 1
    t = draw(st.integers(2, h))
    config = SecAggConfig(graph, threshold=t, vector_length=3, share_holders=share_holders)
    assert min(config.holders(i).size for i in range(n)) == h
    dropped = draw(st.lists(st.integers(0, n - 1), unique=True, max_size=min(h - t, graph.degree - 1)))
    stages = [Stage.ADVERTISE_KEYS, Stage.SHARE_KEYS, Stage.MASKED_INPUT, Stage.UNMASKING]
    drops: dict[Stage, set[int]] = {}
    for client in dropped:
        drops.setdefault(draw(st.sampled_from(stages)), set()).add(client)
    x = np.array(draw(st.lists(st.integers(0, 2**32 - 1), min_size=n * 3, max_size=n * 3)), dtype=np.uint32)
    return config, drops, x.reshape(n, 3), draw(st.integers(0, 2**16))


@given(tolerable_rounds())
def test_up_to_holders_minus_t_dropouts_at_any_stage_give_the_plain_sum(case):
    config, drops, x, seed = case
    result = secure_aggregate(x, config, dropouts=drops, random_state=seed)
    before_unmasking = set().union(*(drops.get(s, set()) for s in (Stage.ADVERTISE_KEYS, Stage.SHARE_KEYS,
                                                                   Stage.MASKED_INPUT)))  # fmt: skip
    kept = sorted(set(range(config.n_clients)) - before_unmasking)
    assert result.summed_clients.tolist() == kept
    assert np.array_equal(result.total, x[kept].sum(axis=0, dtype=np.uint32))


@given(st.integers(4, 10), st.data())
def test_all_shares_complete_with_exactly_t_survivors_and_abort_with_t_minus_one(n, data):
    """SecAgg with shares among all n clients and t = n - 2: any 2 may drop (t survivors), not 3 (Liu et al.'s
    Requirement 2, "at least t users alive"), wherever the dropouts fall before the masked input."""
    t = n - 2
    config = SecAggConfig(MaskingGraph.complete(n), threshold=t, vector_length=4, share_holders="all")
    x = np.array(data.draw(st.lists(st.integers(0, 2**32 - 1), min_size=4 * n, max_size=4 * n)), dtype=np.uint32)
    x = x.reshape(n, 4)
    seed = data.draw(st.integers(0, 2**16))
    stage = data.draw(st.sampled_from([Stage.ADVERTISE_KEYS, Stage.SHARE_KEYS, Stage.MASKED_INPUT]))
    dropped = data.draw(st.lists(st.integers(0, n - 1), unique=True, min_size=3, max_size=3))
    two = dropped[:2]
    result = secure_aggregate(x, config, dropouts={stage: two}, random_state=seed)
    kept = np.setdiff1d(np.arange(n), two)
    assert len(kept) == t and result.summed_clients.tolist() == kept.tolist()
    assert np.array_equal(result.total, x[kept].sum(axis=0, dtype=np.uint32))
    assert config.completes_without(np.isin(np.arange(n), two))
    with pytest.raises(SecAggAbort, match=f"fewer than the threshold t={t}"):
        secure_aggregate(x, config, dropouts={stage: dropped}, random_state=seed)
    assert not config.completes_without(np.isin(np.arange(n), dropped))


def test_t_may_equal_the_number_of_holders_and_then_every_share_is_needed():
    """t = n in SecAgg: the round completes with no dropout; a client silent at unmasking leaves every b at n - 1."""
    n = 5
    config = SecAggConfig(MaskingGraph.complete(n), threshold=n, vector_length=2, share_holders="all")
    x = np.ones((n, 2), dtype=np.uint32)
    assert np.array_equal(secure_aggregate(x, config, random_state=0).total, [n, n])
    with pytest.raises(SecAggAbort, match=f"self-mask seed b of client 0 has {n - 1} shares"):
        secure_aggregate(x, config, dropouts={Stage.UNMASKING: [2]}, random_state=0)


def test_the_benchmark_setting_survives_ten_percent_dropouts(rng):
    """N = 100, 9 neighbours, t = 5, 10 clients drop before masking: exact sum, every phase timed, bytes counted."""
    n, d = 100, 1000
    x = rng.integers(0, 2**32, size=(n, d), dtype=np.uint32)
    config = SecAggConfig(harary_graph(n, 9, random_state=rng), threshold=5, vector_length=d)
    # With t = 5 of 10 holders (9 neighbours and itself) a dropped client whose 5 neighbours also drop cannot be
    # unmasked (the hypothesis test above covers aborts): draw dropouts that every client survives.
    while True:
        dropped = rng.choice(n, 10, replace=False)
        if _expected_outcome(config, {Stage.MASKED_INPUT: set(dropped.tolist())}, set()) is not None:
            break
    result = secure_aggregate(x, config, dropouts={Stage.MASKED_INPUT: dropped}, random_state=rng)
    keep = np.setdiff1d(np.arange(n), dropped)
    assert np.array_equal(result.total, x[keep].sum(axis=0, dtype=np.uint32))
    assert set(result.seconds) == set(PHASES) and all(v > 0 for v in result.seconds.values())
    # A survivor uploads 2 keys, 9 sealed shares, its masked vector and its unmasking shares.
    assert np.all(result.bytes_sent[keep] > 4 * d) and np.all(result.bytes_sent[dropped] < 4 * d)


def test_same_seed_gives_the_same_bits_and_secrets_mode_still_sums(rng):
    x = rng.integers(0, 2**32, size=(6, 4), dtype=np.uint32)
    config = SecAggConfig(harary_graph(6, 4, random_state=0), threshold=3, vector_length=4)
    a = secure_aggregate(x, config, random_state=5)
    b = secure_aggregate(x, config, random_state=5)
    c = secure_aggregate(x, config, random_state=6)
    ys = [[m.vector.tolist() for m in r.server.view[Stage.MASKED_INPUT]] for r in (a, b, c)]
    assert ys[0] == ys[1] != ys[2]
    assert np.array_equal(secure_aggregate(x, config).total, x.sum(axis=0, dtype=np.uint32))


def test_masked_inputs_look_nothing_like_the_inputs():
    """The server's view of one client's y is uniform-looking even when x is all zeros."""
    x = np.zeros((8, 4096), dtype=np.uint32)
    config = SecAggConfig(harary_graph(8, 4, random_state=0), threshold=3, vector_length=4096)
    result = secure_aggregate(x, config, random_state=0)
    for message in result.server.view[Stage.MASKED_INPUT]:
        assert np.count_nonzero(message.vector) > 4000
        assert abs(float(np.mean(message.vector >> 31)) - 0.5) < 0.05
    assert not result.total.any()


def test_inputs_and_dropouts_are_validated():
    config = SecAggConfig(harary_graph(6, 4, random_state=0), threshold=3, vector_length=2)
    with pytest.raises(ValueError, match="shape"):
        secure_aggregate(np.zeros((5, 2), dtype=np.uint32), config)
    with pytest.raises(ValueError, match="ids in"):
        secure_aggregate(np.zeros((6, 2), dtype=np.uint32), config, dropouts={"masked_input": [6]})
    with pytest.raises(ValueError, match="uint32"):
        secure_aggregate(np.zeros((6, 2), dtype=np.int64), config)


@given(rounds())
def test_completes_without_predicts_the_round(case):
    config, _, _, x, seed = case
    rng = np.random.default_rng(seed)
    dropped = rng.random(config.n_clients) < 0.3
    completes = config.completes_without(dropped)
    assert completes == (
        _expected_outcome(config, {Stage.MASKED_INPUT: set(np.flatnonzero(dropped))}, set()) is not None
    )
    if completes:
        result = secure_aggregate(x, config, dropouts={Stage.MASKED_INPUT: np.flatnonzero(dropped)}, random_state=seed)
        assert np.array_equal(result.total, x[~dropped].sum(axis=0, dtype=np.uint32))
    else:
        with pytest.raises(SecAggAbort):
            secure_aggregate(x, config, dropouts={Stage.MASKED_INPUT: np.flatnonzero(dropped)}, random_state=seed)
    many = config.completes_without(np.stack([dropped, np.zeros_like(dropped)]))
    assert many.tolist() == [completes, True]


@given(st.integers(3, 30), st.data())
def test_with_all_shares_completion_is_exactly_t_survivors(n, data):
    """Liu et al.'s Requirement 2, "at least t users alive", is the whole condition when every client holds shares."""
    t = data.draw(st.integers(2, n))
    config = SecAggConfig(MaskingGraph.complete(n), threshold=t, vector_length=1, share_holders="all")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    patterns = rng.random((200, n)) < rng.random()
    assert np.array_equal(config.completes_without(patterns), (~patterns).sum(axis=1) >= t)


def test_dropout_stages_late_ids_and_random_state_are_validated():
    config = SecAggConfig(harary_graph(6, 4, random_state=0), threshold=3, vector_length=2)
    x = np.zeros((6, 2), dtype=np.uint32)
    for stage in ("foo", "done", Stage.DONE, 7):
        with pytest.raises(ValueError, match=r"advertise_keys.*unmasking"):
            secure_aggregate(x, config, dropouts={stage: [1]}, random_state=0)
    with pytest.raises(ValueError, match=r"late.*\[99\]"):
        secure_aggregate(x, config, late=[99], random_state=0)
    with pytest.raises(ValueError, match="whole numbers"):
        secure_aggregate(x, config, late=[1.5], random_state=0)
    with pytest.raises(ValueError, match="whole numbers"):
        secure_aggregate(x, config, dropouts={"masked_input": [1.7]}, random_state=0)
    with pytest.raises(ValueError, match="'secrets'"):
        secure_aggregate(x, config, random_state="Secrets")
    # the valid spellings still work
    result = secure_aggregate(x, config, dropouts={"MASKED_INPUT": [1], Stage.UNMASKING: []}, random_state=0)
    assert result.summed_clients.tolist() == [0, 2, 3, 4, 5]
