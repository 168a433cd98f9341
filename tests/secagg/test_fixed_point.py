"""Fixed-point encoding into Z_2^32 (fedlib/secagg/_fixed_point.py): exact sums within the bound, loud beyond it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fedlib.exceptions import RingOverflowError
from fedlib.secagg import FixedPoint


@given(
    arrays(np.float64, st.tuples(st.integers(1, 20), st.integers(1, 8)), elements=st.floats(-50, 50)),
    st.sampled_from([0.5, 1.0, 8.0]),
)
def test_sum_of_encodings_decodes_to_the_sum_of_rounded_clipped_values(x, clip):
    fp = FixedPoint.for_summands(x.shape[0], clip)
    rounded = np.rint(np.clip(x, -clip, clip) * fp.scale)  # integers, computed independently in float64
    total = fp.encode(x).sum(axis=0, dtype=np.uint32)  # wraps mod 2^32
    assert np.array_equal(fp.decode_sum(total) * fp.scale, rounded.sum(axis=0))
    assert np.all(np.abs(fp.decode_sum(total) - np.clip(x, -clip, clip).sum(axis=0)) <= x.shape[0] / fp.scale)


def test_for_summands_picks_the_finest_safe_resolution():
    fp = FixedPoint.for_summands(256, 8.0)
    assert fp.frac_bits == 19  # 256 * 8 * 2^19 = 2^30 < 2^31, and 2^20 would reach 2^31
    with pytest.raises(RingOverflowError, match="2\\^31"):
        FixedPoint(clip=8.0, frac_bits=20, max_summands=256)


def test_negative_values_use_twos_complement():
    fp = FixedPoint(clip=1.0, frac_bits=4, max_summands=2)
    assert fp.encode([-1 / 16]).tolist() == [2**32 - 1]
    assert fp.decode_sum(np.array([2**32 - 1], dtype=np.uint32)).tolist() == [-1 / 16]


def test_bad_inputs_raise():
    fp = FixedPoint(clip=1.0, frac_bits=4, max_summands=2)
    with pytest.raises(ValueError, match="NaN"):
        fp.encode([np.nan])
    with pytest.raises(ValueError):
        FixedPoint(clip=0.0, frac_bits=4, max_summands=2)
    with pytest.raises(TypeError):
        FixedPoint(clip=1.0, frac_bits=4.0, max_summands=2)


@given(arrays(np.float32, st.integers(1, 50), elements=st.floats(-2, 2, width=32)))
def test_float32_inputs_encode_like_their_float64_values(x):
    fp = FixedPoint.for_summands(100, 1.0)  # B = 1 is exact in float32
    assert np.array_equal(fp.encode(x), fp.encode(x.astype(np.float64)))


def test_for_summands_caps_the_fractional_bits_at_what_the_ring_allows():
    # issue: 10·0.01·2^f < 2^31 gave f = 34 > 31 and FixedPoint refused its own choice
    fp = FixedPoint.for_summands(10, 0.01)
    assert fp.frac_bits == 31
    x = np.full((10, 2), 0.01)
    x[:, 1] = -0.01
    total = fp.decode_sum(fp.encode(x).sum(axis=0, dtype=np.uint32))
    np.testing.assert_allclose(total, [0.1, -0.1], atol=10 / fp.scale)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_for_summands_checks_the_bound_after_rounding(dtype):
    # 3·715827882.6 < 2^31, but 3·rint(715827882.6) = 2^31 + 1 wrapped to -2,147,483,647
    clip = 715827882.6
    try:
        fp = FixedPoint.for_summands(3, clip)
    except RingOverflowError as error:
        assert "2^31" in str(error) and "f >= 0" in str(error)
    else:
        words = fp.encode(np.full((3, 1), clip, dtype=dtype))
        assert fp.decode_sum(words.sum(axis=0, dtype=np.uint32))[0] > 0
    with pytest.raises(RingOverflowError, match="rint"):
        FixedPoint(clip=clip, frac_bits=0, max_summands=3)


def test_for_summands_keeps_the_resolution_of_ordinary_clips():
    for n, clip, f in [(6, 2.0, 27), (20, 1.0, 26), (256, 8.0, 19), (10, 0.1, 30), (3, 1.0, 29)]:
        assert FixedPoint.for_summands(n, clip).frac_bits == f
