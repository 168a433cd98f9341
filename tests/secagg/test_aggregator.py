"""SecureAggregator (fedlib/secagg/_aggregator.py): float updates in, the sum of the survivors' rounded updates out."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fedlib.exceptions import SecAggAbort
from fedlib.secagg import SecureAggregator


@given(
    arrays(np.float32, st.tuples(st.integers(5, 12), st.integers(1, 20)), elements=st.floats(-3, 3, width=32)),
    st.sampled_from([None, 4]),
    st.integers(0, 2**16),
)
def test_secure_sum_equals_the_plain_sum_of_clipped_rounded_updates(updates, degree, seed):
    agg = SecureAggregator(degree=degree, threshold_rate=0.6, clip=2.0)
    out = agg.aggregate(updates, random_state=seed)
    assert out.summed.tolist() == list(range(len(updates)))
    clipped = np.clip(updates.astype(np.float64), -2.0, 2.0)
    # Independent oracle: round each clipped value to the resolution, then sum in float64.
    expected = (np.rint(clipped / out.resolution) * out.resolution).sum(axis=0)
    assert np.allclose(out.total, expected, rtol=0, atol=1e-9)
    assert abs(out.total - clipped.sum(axis=0)).max() <= len(updates) * out.resolution / 2 + 1e-9


def test_dropped_rows_are_left_out_and_the_seed_fixes_every_bit(rng):
    updates = rng.normal(scale=0.1, size=(12, 50))
    agg = SecureAggregator(degree=None, threshold_rate=0.5, clip=1.0)
    out = agg.aggregate(updates, dropped=[3, 7], random_state=1)
    keep = np.setdiff1d(np.arange(12), [3, 7])
    assert out.summed.tolist() == keep.tolist()
    assert np.allclose(out.total, updates[keep].sum(axis=0), atol=12 * out.resolution)
    again = agg.aggregate(updates, dropped=[3, 7], random_state=1)
    assert np.array_equal(out.total, again.total) and out.bytes_sent == again.bytes_sent > 0


def test_random_dropouts_and_aborts():
    updates = np.ones((20, 4))
    flaky = SecureAggregator(degree=4, threshold_rate=0.7, dropout_rate=0.5)
    outcomes = []
    for seed in range(10):
        try:
            outcomes.append(len(flaky.aggregate(updates, random_state=seed).summed))
        except SecAggAbort:
            outcomes.append(None)
    assert None in outcomes  # with half the clients gone, some neighbourhood falls below t = 4 of 5 holders
    with pytest.raises(SecAggAbort, match="at least 3"):
        flaky.aggregate(np.ones((2, 4)))
    with pytest.raises(ValueError, match="2-D"):
        flaky.aggregate(np.ones(4))
    with pytest.raises(ValueError):
        SecureAggregator(degree=4, threshold_rate=0.7, dropout_rate=1.0)


def test_a_fixed_threshold_survives_a_smaller_cluster_and_fails_loudly_past_it():
    updates = np.linspace(-1, 1, 6 * 4).reshape(6, 4)
    # t = 4 fixed (a cluster formed with more clients): 6 clients, 6 holders each (itself included); a survivor's
    # self-mask seed counts its own share, so the round completes with t = 4 survivors: two may drop, not three
    agg = SecureAggregator(degree=None, threshold_rate=0.5, share_holders="all", threshold=4)
    out = agg.aggregate(updates, dropped=[0, 1], random_state=0)
    np.testing.assert_allclose(out.total, updates[2:].sum(axis=0), atol=6 * out.resolution)
    assert out.summed.tolist() == [2, 3, 4, 5]
    with pytest.raises(SecAggAbort, match="fewer than the threshold t=4"):
        agg.aggregate(updates, dropped=[0, 1, 2], random_state=0)
    # t may be as large as the number of holders: all six must stay
    everyone = SecureAggregator(degree=None, threshold_rate=0.5, share_holders="all", threshold=6)
    assert everyone.aggregate(updates, random_state=0).summed.tolist() == list(range(6))
    with pytest.raises(SecAggAbort, match="fewer than the threshold t=6"):
        everyone.aggregate(updates, dropped=[5], random_state=0)
    with pytest.raises(ValueError, match=r"fixed threshold t=7 exceeds the 6 share holders.*Requirement 2"):
        SecureAggregator(degree=None, threshold_rate=0.5, share_holders="all", threshold=7).aggregate(updates)


def test_small_clips_and_few_participants():
    # 10 clients with clip 0.01 asked FixedPoint for 34 fractional bits and failed
    updates = np.full((10, 3), 0.004)
    out = SecureAggregator(degree=4, threshold_rate=0.7, clip=0.01).aggregate(updates, random_state=0)
    np.testing.assert_allclose(out.total, updates.sum(axis=0), atol=10 * out.resolution)
    for n in (0, 1, 2):
        with pytest.raises(SecAggAbort, match="at least 3"):
            SecureAggregator(degree=None, threshold_rate=0.7).aggregate(np.ones((n, 4)))
