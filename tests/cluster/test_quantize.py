"""MUFC's quantization grid (fedlib/cluster/_quantize.py): cells, 1-based mixed-radix bin indices, bin centres."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fedlib.cluster import UniformGrid

points = arrays(
    np.float64, st.tuples(st.integers(1, 20), st.integers(1, 3)), elements=st.floats(-3, 3, allow_nan=False)
)
gammas = st.sampled_from([0.05, 0.1, 0.25, 0.5, 1.0, 0.3])


@given(points, gammas)
def test_grid_is_the_smallest_box_of_bins_around_the_data(X, gamma):
    grid = UniformGrid.from_data(X, gamma)
    integer = np.rint(X / gamma).astype(np.int64)  # bin of y: gamma * round(y / gamma)
    np.testing.assert_array_equal(grid.offset, integer.min(axis=0))
    assert grid.shape == tuple(int(v) for v in integer.max(axis=0) - integer.min(axis=0) + 1)
    assert grid.n_bins == math.prod(grid.shape) and grid.n_features == X.shape[1]
    np.testing.assert_array_equal(grid.cells(X), integer - integer.min(axis=0))


@given(points, gammas)
def test_snap_to_centers_moves_each_coordinate_to_its_bin_centre(X, gamma):
    grid = UniformGrid.from_data(X, gamma)
    Q = grid.snap_to_centers(X)
    np.testing.assert_allclose(Q, np.rint(X / gamma) * gamma, rtol=1e-12, atol=1e-12)
    assert np.all(np.abs(Q - X) <= gamma / 2 * (1 + 1e-9))


@given(st.lists(st.integers(1, 5), min_size=1, max_size=4))
def test_flat_index_is_one_based_mixed_radix_with_the_first_dimension_fastest(shape):
    grid = UniformGrid(0.5, np.zeros(len(shape), dtype=np.int64), tuple(shape))
    cells = np.array(list(itertools.product(*[range(b) for b in shape])))
    expected = []
    for cell in cells.tolist():
        j, radix = 1, 1
        for a, b in zip(cell, shape, strict=True):
            j += a * radix
            radix *= b
        expected.append(j)
    assert grid.flat_index(cells) == expected
    assert sorted(expected) == list(range(1, grid.n_bins + 1))  # a bijection onto 1..B^d
    np.testing.assert_array_equal(grid.cells_of(expected), cells)  # and cells_of is its inverse


def test_bin_indices_beyond_int64_stay_exact_python_integers():
    grid = UniformGrid(1.0, np.zeros(40, dtype=np.int64), (3,) * 40)
    assert grid.n_bins == 3**40 > 2**63
    last = np.full((1, 40), 2)
    assert grid.flat_index(last) == [3**40]
    assert type(grid.flat_index(last)[0]) is int
    np.testing.assert_array_equal(grid.cells_of([3**40]), last)
    np.testing.assert_array_equal(grid.cells_of([1 + 3**39]), np.eye(1, 40, 39, dtype=np.int64))


def test_centres_and_uniform_samples_lie_in_their_bins(global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    X = rng.uniform(-1, 1, size=(200, 3))
    grid = UniformGrid.from_data(X, 0.2)
    cells = grid.cells(X)
    np.testing.assert_allclose(grid.centers(cells), (cells + grid.offset) * 0.2, rtol=0, atol=0)
    samples = grid.sample_uniform(cells, rng)
    assert np.all(np.abs(samples - grid.centers(cells)) <= 0.1)
    np.testing.assert_array_equal(grid.cells(samples), cells)  # every sample falls in the bin it was drawn for
    # uniform within the bin: offsets from the centre have mean 0 and variance gamma²/12
    offsets = (samples - grid.centers(cells)).ravel()
    assert abs(offsets.mean()) < 4 * 0.2 / np.sqrt(12 * offsets.size)
    assert offsets.var() == pytest.approx(0.2**2 / 12, rel=0.2)


def test_docstring_example_by_hand():
    grid = UniformGrid.from_data([[0.0, 0.0], [1.0, 0.5]], 0.5)
    assert grid.shape == (3, 2) and grid.offset.tolist() == [0, 0]
    # 0.9 -> round(1.8) = 2, 0.3 -> round(0.6) = 1; j = 1 + 2 + 1·3 = 6
    assert grid.cells([[0.9, 0.3]]).tolist() == [[2, 1]] and grid.flat_index([[2, 1]]) == [6]


@pytest.mark.parametrize("gamma", [0.0, -1.0, np.inf, np.nan])
def test_from_data_refuses_a_bad_step(gamma):
    with pytest.raises(ValueError, match="positive finite number"):
        UniformGrid.from_data(np.zeros((2, 2)), gamma)


def test_points_outside_the_grid_and_bad_indices_raise():
    grid = UniformGrid.from_data([[0.0], [1.0]], 0.5)
    with pytest.raises(ValueError, match="row 1 lies outside the quantization grid"):
        grid.cells([[0.5], [2.0]])
    with pytest.raises(ValueError, match="n_features=2, the grid has 1"):
        grid.cells([[0.5, 0.5]])
    with pytest.raises(ValueError, match=r"bin index 0 outside \[1, B\^d=3\]"):
        grid.cells_of([0])
    with pytest.raises(ValueError, match=r"bin index 4 outside"):
        grid.cells_of([4])


# --- issue 11, item 7: x/γ beyond int64 is named as such ------------------------------------------------------


@pytest.mark.parametrize(
    ("X", "gamma", "top"),
    [
        (np.array([[0.5, -1.0], [2.0, 0.25]]), 1e-300, r"2"),  # a tiny step
        (np.array([[1e200, 0.0], [0.0, 1.0]]), 0.1, r"1e\+200"),  # a huge coordinate
    ],
)
def test_bin_coordinates_beyond_int64_are_refused_naming_gamma_and_the_largest_value(X, gamma, top):
    # these gave "row 0 lies outside the quantization grid", or a grid of shape (1, 1) without an error
    with pytest.raises(ValueError, match=rf"x/γ overflows int64: the largest \|x\| = {top} with gamma={gamma:g}"):
        UniformGrid.from_data(X, gamma)


def test_a_query_point_beyond_int64_is_refused_as_overflow():
    grid = UniformGrid.from_data([[0.0], [1.0]], 0.5)
    with pytest.raises(ValueError, match=r"x/γ overflows int64: the largest \|x\| = 1e\+300 with gamma=0.5"):
        grid.cells([[0.5], [1e300]])


def test_grids_refuse_complex_points():
    with pytest.raises(ValueError, match="Complex data not supported"):
        UniformGrid.from_data(np.array([[1.0 + 1.0j]]), 0.5)
