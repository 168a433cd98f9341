"""The federated clustering estimators' shared checks (fedlib/base.py, FederatedClusterer): one place, one behaviour.

Each of the five estimators must refuse the same bad argument of ``fit`` with the same error, set
``n_features_in_`` from the data, and check ``predict``'s data the same way.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from fedlib.base import FederatedClusterer
from fedlib.cluster import KFED, OneShotFederatedKMeans
from fedlib.data import make_blobs
from fedlib.secagg import SecFC
from fedlib.unlearn import MUFC, DCKMeans

X, _ = make_blobs((12, 12, 12), 2, cluster_std=0.1, random_state=0)
PARTS = [np.arange(i, 36, 5) for i in range(5)]  # five clients: SecFC's recovery threshold needs at least three

ESTIMATORS = {
    "OneShotFederatedKMeans": lambda **kw: OneShotFederatedKMeans(**kw, random_state=0),
    "KFED": lambda **kw: KFED(**kw, random_state=0),
    "DCKMeans": lambda **kw: DCKMeans(**kw, random_state=0),
    "MUFC": lambda **kw: MUFC(**kw, aggregation="plaintext", random_state=0),
    "SecFC": lambda **kw: SecFC(**kw, random_state=0),
}


@pytest.fixture(params=sorted(ESTIMATORS))
def build(request):
    return ESTIMATORS[request.param]


def test_the_five_estimators_are_federated_clusterers(build):
    assert isinstance(build(n_clusters=3), FederatedClusterer)


def test_fit_sets_the_features_and_the_fitted_attribute(build):
    model = build(n_clusters=3).fit(X, parts=PARTS)
    assert model.n_features_in_ == 2
    assert hasattr(model, model._fitted_attribute)
    assert model.predict(X[:5]).shape == (5,)


@pytest.mark.parametrize(
    ("n_clusters", "error", "match"),
    [
        (0, ValueError, "n_clusters=0 should be >= 1"),
        (37, ValueError, "n_samples=36 should be >= n_clusters=37"),
        (2.5, TypeError, "n_clusters must be an int"),
    ],
)
def test_every_estimator_refuses_a_bad_n_clusters_alike(build, n_clusters, error, match):
    with pytest.raises(error, match=match):
        build(n_clusters=n_clusters).fit(X, parts=PARTS)


@pytest.mark.parametrize(
    ("data", "parts", "error", "match"),
    [
        (X, PARTS[:-1], ValueError, r"parts must partition range\(n_samples=36\)"),
        (X, [*PARTS[:-1], []], ValueError, "client 4 holds no points"),
        (X, [], ValueError, "parts must hold at least one client"),
        (X[:, :, None], PARTS, ValueError, "Found array with dim 3"),
        (np.where(X > 0, np.nan, X), PARTS, ValueError, "Input X contains NaN"),
        (X + 1j, PARTS, ValueError, "Complex data not supported"),
    ],
)
def test_every_estimator_refuses_bad_data_or_partition_alike(build, data, parts, error, match):
    with pytest.raises(error, match=match):
        build(n_clusters=3).fit(data, parts=parts)


def test_every_estimator_refuses_a_partition_passed_as_y(build):
    with pytest.raises(TypeError, match="pass the client partition by keyword"):
        build(n_clusters=3).fit(X, PARTS)


def test_every_estimator_checks_predict_alike(build):
    model = build(n_clusters=3)
    with pytest.raises(NotFittedError):
        model.predict(X)
    model.fit(X, parts=PARTS)
    name = type(model).__name__
    with pytest.raises(ValueError, match=f"X has 1 features, but {name} is expecting 2 features as input"):
        model.predict(X[:, :1])


class Means(FederatedClusterer):
    """The smallest subclass: each client's mean."""

    _fitted_attribute = "client_means_"

    def __init__(self, n_clusters=1):
        self.n_clusters = n_clusters

    def fit(self, X, y=None, *, parts=None):
        X, parts, self.k_ = self._check_fit_data(X, y, parts)
        self.client_means_ = np.array([X[idx].mean(axis=0) for idx in parts])
        return self

    def predict(self, X):
        X = self._check_predict_data(X)
        return np.zeros(X.shape[0], dtype=np.int64)


def test_check_fit_data_returns_float_rows_int_parts_and_an_int_k():
    model = Means(np.int64(2))
    X_checked, parts, k = model._check_fit_data([[0, 1], [2, 3], [4, 5]], None, [[0, 2], (1,)])
    assert X_checked.dtype == np.float64 and X_checked.flags.c_contiguous
    assert [p.tolist() for p in parts] == [[0, 2], [1]] and all(p.dtype == np.int64 for p in parts)
    assert k == 2 and type(k) is int
    assert model.n_features_in_ == 2


def test_no_partition_means_one_client_holding_every_row():
    model = Means().fit(X)
    np.testing.assert_array_equal(model.client_means_, X.mean(axis=0, keepdims=True))


def test_check_predict_data_needs_the_named_fitted_attribute():
    model = Means()
    with pytest.raises(NotFittedError, match="Means instance is not fitted yet"):
        model.predict(X)
    model.fit(X, parts=PARTS)
    assert model.predict([[1, 2]]).tolist() == [0]
    with pytest.raises(ValueError, match="X has 3 features, but Means is expecting 2 features as input"):
        model.predict(np.zeros((1, 3)))
