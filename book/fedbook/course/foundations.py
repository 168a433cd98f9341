"""Checks for the coding exercises of the Foundations part (K-means, Lloyd, K-means++)."""

from __future__ import annotations

import numpy as np

from fedbook.course._feedback import Wrong, call, exercise, expect, expect_array


def _lloyd_cases():
    """Small weighted data sets, one of them with a centre no point is nearest to."""
    rng = np.random.default_rng(20261127)
    X = rng.normal(size=(40, 3))
    yield "40 points in 3-D, unit weights", X, X[[0, 7, 19]].copy(), np.ones(40)
    yield "40 points in 3-D, integer weights", X, X[[3, 11, 25, 30]].copy(), rng.integers(1, 5, 40).astype(float)
    far = np.vstack([X[:2], [[100.0, 100.0, 100.0]]])
    yield "a centre far from every point (an empty cluster)", X, far, rng.uniform(0.5, 2.0, 40)
    line = np.array([[0.0], [1.0], [2.0], [3.0]])
    yield "a point half-way between two centres (a tie)", line, np.array([[0.5], [2.5]]), np.ones(4)


@exercise("ex-kmeans-lloyd-step")
def lloyd_step(answer) -> str:
    from fedlib.cluster import lloyd

    for name, X, C, w in _lloyd_cases():
        got = call(answer, X.copy(), C.copy(), w.copy(), what=f"lloyd_step on {name}")
        expect(
            isinstance(got, tuple) and len(got) == 2,
            f"lloyd_step should return a pair (new_centers, labels); on {name} it returned {type(got).__name__}",
        )
        new_centers, labels = got
        d2 = ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)
        want_labels = np.argmin(d2, axis=1)  # ties to the lowest index, as argmin
        expect_array(labels, want_labels, f"the labels on {name}", exact=True)
        want_centers = lloyd(X, C, sample_weight=w, max_iter=1, tol=0.0).centers
        expect_array(new_centers, want_centers, f"the new centres on {name}", rtol=1e-9, atol=1e-12)
    return "labels and weighted means agree with fedlib.cluster.lloyd on 4 data sets (weights, an empty cluster, a tie)"


@exercise("ex-kmeans-d2-probabilities")
def d2_probabilities(answer) -> str:
    rng = np.random.default_rng(7)
    X = rng.normal(size=(30, 2))
    w = rng.integers(1, 4, 30).astype(float)
    cases = [
        ("one centre, unit weights", X, X[[4]], np.ones(30)),
        ("two centres, integer weights", X, X[[4, 9]], w),
        ("a centre on a point (that point gets probability 0)", X, X[[0, 1, 2]], w),
    ]
    for name, pts, C, weights in cases:
        p = call(answer, pts.copy(), C.copy(), weights.copy(), what=f"d2_probabilities on {name}")
        p = np.asarray(p, dtype=float)
        expect(p.shape == (len(pts),), f"on {name} the probabilities have shape {p.shape}; expected ({len(pts)},)")
        expect(bool(np.all(p >= 0)), f"on {name} some probabilities are negative")
        expect(abs(p.sum() - 1.0) < 1e-9, f"on {name} the probabilities sum to {p.sum():.6g}, not 1")
        d2 = ((pts[:, None, :] - C[None, :, :]) ** 2).sum(axis=2).min(axis=1)
        want = weights * d2 / np.sum(weights * d2)
        if np.allclose(p, d2 / d2.sum()) and not np.allclose(weights, 1.0):
            raise Wrong(f"on {name} the probabilities ignore the weights: each point's D^2 must be multiplied by w")
        if np.allclose(p, weights * np.sqrt(d2) / np.sum(weights * np.sqrt(d2))):
            raise Wrong(f"on {name} the probabilities follow the distance D, not the squared distance D^2")
        expect_array(p, want, f"the probabilities on {name}", rtol=1e-9, atol=1e-15)
    return "weighted D^2 probabilities right on 3 cases (unit and integer weights, centres on data points)"
