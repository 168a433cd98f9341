"""The K-means objective, nearest-centre or induced, and the loss ratio (fedlib/cluster/_objective.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fedlib.cluster import kmeans_objective, loss_ratio

coords = st.floats(-100, 100, allow_nan=False, width=32)


@st.composite
def problems(draw):
    n, k, d = draw(st.integers(1, 20)), draw(st.integers(1, 5)), draw(st.integers(1, 4))
    X = draw(arrays(np.float64, (n, d), elements=coords))
    C = draw(arrays(np.float64, (k, d), elements=coords))
    labels = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)), dtype=np.int64)
    w = draw(arrays(np.float64, n, elements=st.floats(0, 10)).filter(lambda v: v.sum() > 0))
    return X, C, labels, w


def cost(x, c) -> float:
    return sum((a - b) ** 2 for a, b in zip(x.tolist(), c.tolist(), strict=True))


@given(problems())
def test_nearest_objective_equals_brute_force(problem):
    """phi_c of MUFC Eq. (1): every point charged to its nearest centre."""
    X, C, _, w = problem
    expected = sum(min(cost(x, c) for c in C) for x in X)
    weighted = sum(wi * min(cost(x, c) for c in C) for x, wi in zip(X, w, strict=True))
    scale = 1.0 + float(np.sum(X**2) + len(X) * np.sum(C**2))
    assert kmeans_objective(X, C) == pytest.approx(expected, rel=1e-9, abs=1e-12 * scale)
    assert kmeans_objective(X, C, sample_weight=w) == pytest.approx(weighted, rel=1e-9, abs=1e-11 * scale)


@given(problems())
def test_induced_objective_charges_each_point_to_its_given_centre(problem):
    """phi_f of MUFC Eq. (2): the centre of each point is given, not searched."""
    X, C, labels, w = problem
    expected = sum(cost(x, C[h]) for x, h in zip(X, labels, strict=True))
    weighted = sum(wi * cost(x, C[h]) for x, h, wi in zip(X, labels, w, strict=True))
    assert kmeans_objective(X, C, labels=labels) == pytest.approx(expected, rel=1e-12, abs=1e-9)
    assert kmeans_objective(X, C, labels=labels, sample_weight=w) == pytest.approx(weighted, rel=1e-12, abs=1e-9)
    assert kmeans_objective(X, C, labels=labels) >= kmeans_objective(X, C) * (1 - 1e-9) - 1e-9


def test_objective_with_labels_charges_given_centres():
    X = np.array([[0.0], [1.0], [10.0]])
    C = np.array([[0.0], [10.0]])
    assert kmeans_objective(X, C) == 1.0
    assert kmeans_objective(X, C, labels=np.array([0, 1, 1])) == 81.0
    assert kmeans_objective(X.tolist(), C.tolist(), labels=[0, 0, 1], sample_weight=[1, 3, 5]) == 3.0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(labels=np.array([0, 2, 1])), r"labels must lie in \[0, 2\), got \[0, 2\]"),
        (dict(labels=np.array([0, -1, 1])), r"labels must lie in \[0, 2\)"),
        (dict(labels=np.array([0.0, 1.0, 1.0])), "labels must be integers of shape"),
        (dict(labels=np.array([0, 1])), r"labels must be integers of shape \(3,\)"),
        (dict(centers=np.zeros((2, 2))), "centers have n_features=2, X has n_features=1"),
        (dict(sample_weight=[1.0, -1.0, 1.0]), ">= 0"),
    ],
)
def test_objective_refuses_inconsistent_inputs(kwargs, match):
    X = np.array([[0.0], [1.0], [10.0]])
    centers = kwargs.pop("centers", np.array([[0.0], [10.0]]))
    with pytest.raises(ValueError, match=match):
        kmeans_objective(X, centers, **kwargs)


@given(st.floats(0, 1e12), st.floats(1e-9, 1e12))
def test_loss_ratio_is_the_quotient(loss, reference):
    assert loss_ratio(loss, reference) == loss / reference


def test_loss_ratio_refuses_bad_inputs():
    assert loss_ratio(3.0, 2.0) == 1.5
    with pytest.raises(ValueError, match="reference loss must be > 0"):
        loss_ratio(1.0, 0.0)
    with pytest.raises(ValueError, match="reference loss must be > 0"):
        loss_ratio(1.0, float("nan"))
    with pytest.raises(ValueError, match="loss must be >= 0"):
        loss_ratio(-1.0, 1.0)
