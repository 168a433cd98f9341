"""SecAgg/SecAgg+ end to end (fedlib/secagg/_secagg_round.py): the secure sum equals the plain sum of the survivors
under any dropout pattern that leaves t users where t are needed; otherwise the round aborts and outputs nothing."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedlib.secagg import (
    PHASES,
    MaskingGraph,
    SecAggAbort,
    SecAggConfig,
    Stage,
    harary_graph,
    secure_aggregate,
)


def _expected_outcome(config: SecAggConfig, drops: dict[Stage, set[int]], late: set[int]):
    """Independent oracle: walk the stages with plain sets; None means the round must abort."""
    n, t = config.n_users, config.threshold
    gone: set[int] = set()
    speaking = {}
    for stage in (Stage.ADVERTISE_KEYS, Stage.SHARE_KEYS, Stage.MASKED_INPUT, Stage.UNMASKING):
        gone |= drops.get(stage, set())
        speaking[stage] = set(range(n)) - gone
    u1 = speaking[Stage.ADVERTISE_KEYS]
    if len(u1) < t:
        return None
    u2 = speaking[Stage.SHARE_KEYS]
    if any(len(set(config.holders(i).tolist()) & u1) < t for i in u2) or len(u2) < t:
        return None
    u3 = speaking[Stage.MASKED_INPUT] - late
    if len(u3) < t:
        return None
    responders = speaking[Stage.UNMASKING]
    for owner in u2:  # b of survivors, s^SK of the dropped: either way t holders must answer
        if len(set(config.holders(owner).tolist()) & u1 & u2 & responders) < t:
            return None
    return sorted(u3)


@st.composite
def rounds(draw):
    n = draw(st.integers(3, 14))
    if draw(st.booleans()):
        graph, holders = MaskingGraph.complete(n), n - 1
    else:
        m = draw(st.integers(2, n - 1).filter(lambda m: m % 2 == 0 or n % 2 == 0))
        graph, holders = harary_graph(n, m, random_state=draw(st.integers(0, 99))), min(m, n - 1)
    share_holders = draw(st.sampled_from(["neighbors", "all"]))
    if share_holders == "all":
        holders = n - 1
    t = draw(st.integers(2, holders))  # n >= 3: every user has at least two holders
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
        with pytest.raises(SecAggAbort, match="t="):
            secure_aggregate(x, config, dropouts=drops, late=late, random_state=seed)
        return
    result = secure_aggregate(x, config, dropouts=drops, late=late, random_state=seed)
    assert result.summed_users.tolist() == expected
    plain = x[expected].astype(np.uint64).sum(axis=0) % 2**32  # exact in uint64 for n < 2^32
    assert result.total.dtype == np.uint32 and np.array_equal(result.total, plain.astype(np.uint32))


def test_the_benchmark_setting_survives_ten_percent_dropouts(rng):
    """N = 100, 9 neighbours, t = 5, 10 users drop before masking: exact sum, every phase timed, bytes counted."""
    n, d = 100, 1000
    x = rng.integers(0, 2**32, size=(n, d), dtype=np.uint32)
    config = SecAggConfig(harary_graph(n, 9, random_state=rng), threshold=5, vector_length=d)
    # With t = 5 of 9 a user whose 5 neighbours all drop cannot be unmasked (about one round in ten at 10%
    # dropouts; the hypothesis test above covers aborts): draw dropouts that every user survives.
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
    """The server's view of one user's y is uniform-looking even when x is all zeros."""
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
    dropped = rng.random(config.n_users) < 0.3
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
