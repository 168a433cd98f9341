"""Real data into GF(q) and back (fedlib/field/_quantize.py): floor(λx), residues, the overflow detector."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedlib.exceptions import FieldOverflowError
from fedlib.field import check_decoded, collapsed_features, signed, to_field, to_fixed_point

Q = 2**50 - 27


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=20), st.floats(0.01, 100.0))
def test_to_fixed_point_is_floor_of_the_scaled_value(values, scale):
    X = np.array([values])
    X_int = to_fixed_point(X, scale)
    assert X_int.dtype == np.int64
    assert X_int.tolist() == [[math.floor(v * scale) for v in values]]
    frac = X * scale - X_int
    assert np.all(frac >= 0) and np.all(frac <= 1)  # = 1 only by rounding, e.g. for x = -1e-308


@given(st.lists(st.integers(-(Q // 2) + 1, Q // 2 - 1), min_size=1, max_size=30))
def test_to_field_and_signed_lift_round_trip_python_integers(values):
    residues = to_field(values, Q)
    assert residues.tolist() == [v % Q for v in values]
    assert signed(residues, Q).tolist() == values


def test_negative_numbers_land_in_the_upper_half():
    assert to_field(np.array([-1, -5, 3]), 101).tolist() == [100, 96, 3]
    assert to_fixed_point([[0.25, -0.25]], 10.0).tolist() == [[2, -3]]


def test_values_that_would_not_decode_raise():
    assert to_field([49, -49], 101).tolist() == [49, 52]
    with pytest.raises(FieldOverflowError, match=r"\|x̄\| reaches 50 >= q/2 = 50"):
        to_field([3, -50], 101)
    with pytest.raises(FieldOverflowError, match=r"λ·x reaches .* >= 2\*\*52"):
        to_fixed_point([[2.0**51]], 4.0)
    assert to_fixed_point([[2.0**50]], 2.0).tolist() == [[2**51]]
    with pytest.raises(ValueError, match="should be > 0"):
        to_fixed_point([[1.0]], 0.0)
    assert to_fixed_point(np.zeros((0, 3)), 5.0).shape == (0, 3)


def test_detector_flags_values_above_half():
    assert check_decoded(np.array([0, 5, Q // 2]), Q).tolist() == [0, 5, Q // 2]
    with pytest.raises(FieldOverflowError, match="1 decoded values lie above q/2"):
        check_decoded(np.array([0, Q - 3]), Q)
    with pytest.raises(FieldOverflowError, match="2 decoded values"):
        check_decoded(np.array([Q // 2 + 1, Q - 1, 7]), Q)


def test_detector_fires_on_about_half_of_overflowed_values():
    """A true value past q/2 decodes to a residue that looks random: about half of them sit above q/2."""
    rng = np.random.default_rng(0)
    true = rng.integers(Q, 2**62, size=4000, dtype=np.int64)  # all overflowed
    flagged = np.mod(true, Q) > Q // 2
    assert 0.45 < flagged.mean() < 0.55
    with pytest.raises(FieldOverflowError, match=f"{int(flagged.sum())} decoded values"):
        check_decoded(np.mod(true, Q), Q)


# --- issue 11, items 7 and 8 ------------------------------------------------------------------------------------


def test_to_fixed_point_refuses_complex_data():
    with pytest.raises(TypeError, match="X must be real, got complex dtype complex128"):
        to_fixed_point(np.array([[1.0 + 2.0j]]), 10.0)


def test_to_fixed_point_overflow_names_the_scale_and_the_largest_value():
    with pytest.raises(
        FieldOverflowError, match=r"λ·x reaches inf >= 2\*\*52 \(scale λ=1e\+300, largest \|x\| = 1e\+10\)"
    ):
        to_fixed_point([[1e10, 1.0]], 1e300)


def test_collapsed_features_are_those_whose_range_is_below_one_step():
    X = np.array([[0.0, 0.0, 5.0, -0.04], [0.05, 3.0, 5.0, 0.04]])
    # feature 0 spans 0.05 < 1/10, feature 3 spans 0.08 < 1/10 (two levels, -1 and 0), feature 2 is constant
    assert collapsed_features(X, 10.0).tolist() == [0, 3]
    assert to_fixed_point(X, 10.0)[:, 3].tolist() == [-1, 0]
    assert collapsed_features(X, 100.0).tolist() == []
    assert collapsed_features(np.zeros((0, 3)), 1.0).tolist() == []
