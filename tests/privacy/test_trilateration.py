"""Trilateration from anchor distances: exact up to a rigid motion with d+1 anchors, refuses too few or degenerate."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import ortho_group

from fedlib.data import iid_partition
from fedlib.field import to_fixed_point
from fedlib.privacy import align, reconstruct_from_anchor_distances
from fedlib.secagg import SecFC


def sq_distances_to(X, anchors):
    """Squared distances by differences (no ||x||² − 2x·c + ||c||² cancellation): the independent truth."""
    diff = X[:, None, :] - X[None, anchors, :]
    return np.einsum("ijk,ijk->ij", diff, diff)


def pairwise_sq(X):
    return sq_distances_to(X, np.arange(len(X)))


def rigid_motion(X, rng):
    """A random rotation or reflection (Haar on O(d)) and a random shift."""
    d = X.shape[1]
    Q = ortho_group.rvs(d, random_state=rng) if d > 1 else np.array([[rng.choice([-1.0, 1.0])]])
    return X @ Q + rng.normal(0, 10, size=d)


@pytest.mark.parametrize("n_dims", [2, 3, 5])
@pytest.mark.parametrize("n_extra", [0, 2])
def test_exact_distances_reconstruct_up_to_rigid_motion(n_dims, n_extra, global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    X = rng.normal(0, 3, size=(80, n_dims))
    anchors = rng.choice(len(X), size=n_dims + 1 + n_extra, replace=False)
    X_hat = reconstruct_from_anchor_distances(sq_distances_to(X, anchors), anchors, n_dims)
    assert X_hat.shape == X.shape
    aligned, rms = align(X, X_hat)
    assert rms < 1e-6
    # Independent of align: every pairwise distance is recovered, not just those to the anchors.
    np.testing.assert_allclose(pairwise_sq(X_hat), pairwise_sq(X), atol=1e-6)
    np.testing.assert_allclose(aligned, X, atol=1e-6)


@given(
    n_dims=st.integers(1, 6),
    n_extra=st.integers(0, 4),
    n_samples=st.integers(12, 60),
    log_scale=st.floats(-3, 3),
    seed=st.integers(0, 2**32 - 1),
)
def test_reconstruction_is_exact_for_any_scale_and_frame(n_dims, n_extra, n_samples, log_scale, seed):
    rng = np.random.default_rng(seed)
    scale = 10.0**log_scale
    X = rigid_motion(rng.normal(0, scale, size=(n_samples, n_dims)), rng)
    anchors = rng.choice(n_samples, size=min(n_dims + 1 + n_extra, n_samples), replace=False)
    X_hat = reconstruct_from_anchor_distances(sq_distances_to(X, anchors), anchors, n_dims)
    _, rms = align(X, X_hat)
    assert rms < 1e-6 * scale


def test_anchors_are_placed_at_their_own_rows(global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    X = rng.normal(size=(30, 3))
    anchors = np.array([7, 2, 19, 11, 0])
    X_hat = reconstruct_from_anchor_distances(sq_distances_to(X, anchors), anchors, 3)
    np.testing.assert_allclose(sq_distances_to(X_hat, anchors), sq_distances_to(X, anchors), atol=1e-8)
    np.testing.assert_allclose(np.diag(sq_distances_to(X_hat, anchors)[anchors]), 0.0, atol=1e-8)


@pytest.mark.parametrize("n_dims", [2, 3, 5])
def test_too_few_anchors_raise(n_dims, global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    X = rng.normal(size=(40, n_dims))
    for n_anchors in range(1, n_dims + 1):
        anchors = rng.choice(len(X), size=n_anchors, replace=False)
        with pytest.raises(ValueError, match=r"n_anchors >= n_dims \+ 1") as info:
            reconstruct_from_anchor_distances(sq_distances_to(X, anchors), anchors, n_dims)
        assert f"need n_anchors >= {n_dims + 1}" in str(info.value)


def test_collinear_anchors_in_the_plane_raise():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 2))
    X[:4] = np.outer([0.0, 1.0, 2.5, -3.0], [1.0, 2.0]) + np.array([1.0, -1.0])  # four anchors on one line
    anchors = np.arange(4)
    with pytest.raises(ValueError, match=r"Degenerate anchors: .* rank 1 < n_dims=2"):
        reconstruct_from_anchor_distances(sq_distances_to(X, anchors), anchors, 2)


def test_coplanar_anchors_in_space_raise():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(20, 3))
    X[:5, 2] = 4.0  # five anchors in the plane z = 4
    anchors = np.arange(5)
    with pytest.raises(ValueError, match=r"rank 2 < n_dims=3"):
        reconstruct_from_anchor_distances(sq_distances_to(X, anchors), anchors, 3)
    # The same anchors are fine in the plane they span: the points' projections onto it are recovered.
    X_hat = reconstruct_from_anchor_distances(sq_distances_to(X[:5], anchors), anchors, 2)
    _, rms = align(X[:5, :2], X_hat)
    assert rms < 1e-9


def test_inconsistent_inputs_raise():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(10, 2))
    anchors = np.array([0, 1, 2])
    D = sq_distances_to(X, anchors)
    with pytest.raises(ValueError, match="n_anchors=3 columns but anchors names 2"):
        reconstruct_from_anchor_distances(D, anchors[:2], 1)
    with pytest.raises(ValueError, match="distinct"):
        reconstruct_from_anchor_distances(D, np.array([0, 1, 1]), 2)
    with pytest.raises(ValueError, match="0 <= anchors"):
        reconstruct_from_anchor_distances(D, np.array([0, 1, 10]), 2)
    with pytest.raises(ValueError, match=">= 0"):
        reconstruct_from_anchor_distances(-D, anchors, 2)
    with pytest.raises(ValueError, match=r"sq_distances\[anchors\[j\], j\] must be 0"):
        reconstruct_from_anchor_distances(D, np.array([1, 2, 0]), 2)  # columns do not belong to these rows
    with pytest.raises(ValueError, match="n_dims=0 should be >= 1"):
        reconstruct_from_anchor_distances(D, anchors, 0)
    with pytest.raises(TypeError, match="n_dims must be an int"):
        reconstruct_from_anchor_distances(D, anchors, 2.0)
    with pytest.raises(TypeError, match="row indices"):
        reconstruct_from_anchor_distances(D, anchors.astype(float), 2)


@pytest.mark.parametrize("n_dims", [2, 3])
@pytest.mark.parametrize("lam", [1.0, 10.0, 100.0, 1000.0])
def test_quantized_data_give_error_of_order_one_over_lambda(n_dims, lam, global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    X = rng.uniform(-10, 10, size=(200, n_dims))
    X_bar = np.floor(lam * X) / lam  # what SecFC computes with (App. A), back in data units
    anchors = rng.choice(len(X), size=n_dims + 2, replace=False)
    X_hat = reconstruct_from_anchor_distances(sq_distances_to(X_bar, anchors), anchors, n_dims)
    _, rms_bar = align(X_bar, X_hat)
    assert rms_bar < 1e-6  # the quantized points themselves are rebuilt exactly
    _, rms = align(X, X_hat)
    # Upper bound: the identity motion already leaves each point within √d/λ of the truth.
    assert rms <= np.sqrt(n_dims) / lam
    # And it is of that order: rounding errors are ~U[0, 1/λ) per coordinate, RMS ≈ √(d/12)/λ after centring.
    assert rms * lam > 0.5 * np.sqrt(n_dims / 12)


def test_align_undoes_any_rigid_motion(global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    for d in (1, 2, 3, 6):
        X = rng.normal(size=(25, d))
        aligned, rms = align(X, rigid_motion(X, rng))
        np.testing.assert_allclose(aligned, X, atol=1e-9)
        assert rms < 1e-9


def test_align_reports_the_rms_it_leaves(global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    X = rng.normal(size=(40, 3))
    noisy = X + rng.normal(0, 0.1, size=X.shape)
    aligned, rms = align(X, rigid_motion(noisy, rng))
    assert rms == pytest.approx(np.sqrt(np.mean(np.sum((aligned - X) ** 2, axis=1))))
    assert 0.05 < rms < 0.2  # about 0.1·√3 less what the fitted motion absorbs
    # No motion beats the optimum: the noisy points, unmoved, are no closer.
    assert rms <= np.sqrt(np.mean(np.sum((noisy - X) ** 2, axis=1))) + 1e-12
    with pytest.raises(ValueError, match="same shape"):
        align(X, X[:, :2])


def test_secfc_seed_distances_reveal_the_data_up_to_rigid_motion():
    """SecFC Theorem 1 (iii) holds only up to an isometry: k = 4 ≥ d + 1 seeds rebuild every point."""
    rng = np.random.default_rng(0)
    centers = np.array([[-6.0, -5.0], [5.0, -6.0], [-5.0, 6.0], [6.0, 5.0]])
    y = rng.integers(0, 4, size=200)
    X = centers[y] + rng.normal(0, 1.5, size=(200, 2))
    m, d = X.shape

    model = SecFC(4, random_state=0).fit(X, parts=iid_partition(m, 5, random_state=0))
    seeds = model.run_.seeds
    assert seeds is not None and len(set(seeds.tolist())) == 4

    # What the server decoded for the singleton clusters {seed_h}: exact integer ||x̄_i − x̄_seed||².
    X_bar = to_fixed_point(X, model.scale_)
    seed_distances = sq_distances_to(X_bar, seeds)
    assert seed_distances.dtype == np.int64

    X_hat = reconstruct_from_anchor_distances(seed_distances, seeds, n_dims=2)
    _, rms_bar = align(X_bar.astype(np.float64), X_hat)
    assert rms_bar < 1e-6  # the server's view of the quantized data, exact up to a rigid motion
    _, rms = align(X * model.scale_, X_hat)
    assert rms <= np.sqrt(d)  # within the floor() error in quantized units
    assert rms < 1e-3 * np.std(X * model.scale_)  # ... which is negligible next to the spread of the data
