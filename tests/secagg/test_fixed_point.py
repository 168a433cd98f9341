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
