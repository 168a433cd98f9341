"""The contract of every method that forgets (fedlib.base), in the spirit of scikit-learn's check_estimator.

Each method is fitted on small data, then asked to forget: samples, clients, before fit, an unknown id, the
same id twice, an empty request, and the same request twice. The same seed must give the same bits, and the
report must say what was forgotten, truthfully.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from fedlib.base import UnlearningMixin, UnlearningReport
from fedlib.cluster import KMeans
from fedlib.data import make_blobs
from fedlib.exceptions import UnlearningRequestError
from fedlib.unlearn import MUFC, DCKMeans, KMeansPlusPlus, Retrain

X_SMALL, _ = make_blobs((24, 24, 24), 2, cluster_std=0.05, random_state=0)
PARTS = [np.arange(0, 24), np.arange(24, 48), np.arange(48, 72)]


@dataclass(frozen=True)
class Case:
    """One method: how to build it, how to fit it, and what identifies its fitted state."""

    name: str
    build: Callable[[int], UnlearningMixin]
    federated: bool = True

    def fit(self, model):
        return model.fit(X_SMALL, parts=PARTS) if self.federated else model.fit(X_SMALL)


def state(model) -> list[np.ndarray]:
    """The arrays that identify a fitted model, for the same-seed-same-bits check."""
    inner = getattr(model, "estimator_", model)
    names = ("server_centers_", "cluster_centers_", "seed_indices_")
    return [np.asarray(getattr(inner, n)) for n in names if hasattr(inner, n)]


CASES = [
    Case("MUFC", lambda seed: MUFC(3, aggregation="plaintext", random_state=seed)),
    Case("MUFC-scma-strict", lambda seed: MUFC(3, aggregation="scma", server_update="strict", random_state=seed)),
    Case("DCKMeans", lambda seed: DCKMeans(3, random_state=seed)),
    Case("KMeansPlusPlus", lambda seed: KMeansPlusPlus(3, random_state=seed), federated=False),
    Case("Retrain(MUFC)", lambda seed: Retrain(MUFC(3, aggregation="plaintext", random_state=seed))),
    Case("Retrain(KMeans)", lambda seed: Retrain(KMeans(3, n_init=2, random_state=seed)), federated=False),
]


@pytest.fixture(params=CASES, ids=lambda case: case.name)
def case(request) -> Case:
    return request.param


def some_samples(model) -> list[int]:
    """Three rows the fitted model holds, one of them a seed where the model has seeds."""
    held = model._held_samples()
    return [int(held[0]), int(held[len(held) // 2]), int(held[-1])]


def test_fit_returns_self_and_is_a_scikit_learn_estimator(case):
    model = case.build(0)
    assert case.fit(model) is model
    assert model.n_features_in_ == X_SMALL.shape[1]
    assert clone(model).get_params(deep=False).keys() == model.get_params(deep=False).keys()
    assert repr(clone(model)) == repr(model)
    assert isinstance(model.fit_report_, UnlearningReport)


def test_unlearn_before_fit_is_a_not_fitted_error(case):
    with pytest.raises(NotFittedError):
        case.build(0).unlearn([0])


def test_unlearning_samples_reports_what_was_forgotten(case):
    model = case.fit(case.build(0))
    request = some_samples(model)
    report = model.unlearn(request)
    assert isinstance(report, UnlearningReport)
    assert report.forgotten_samples == tuple(sorted(request)) and report.forgotten_clients == ()
    assert not np.isin(request, model._held_samples()).any(), "the forgotten rows are still held"
    assert set(report.clients_retrained) <= set(range(len(PARTS)))
    for f in dataclasses.fields(UnlearningReport):
        assert hasattr(report, f.name)
    assert min(report.client_seconds, report.aggregation_seconds, report.server_seconds) >= 0.0
    assert report.rounds >= 0 and report.bytes_sent >= 0 and isinstance(report.exact, bool)


def test_unlearning_clients_or_refusing_to(case):
    model = case.fit(case.build(0))
    if "clients" not in model.unlearns:
        with pytest.raises(UnlearningRequestError, match="cannot unlearn clients"):
            model.unlearn(clients=[0])
        return
    report = model.unlearn(clients=[1])
    assert report.forgotten_clients == (1,) and 1 not in report.clients_retrained
    assert not np.isin(PARTS[1], model._held_samples()).any()
    with pytest.raises(UnlearningRequestError, match="already forgotten"):
        model.unlearn(clients=[1])


@pytest.mark.parametrize(
    ("request_", "match"),
    [
        ({"samples": [10**6]}, "not held"),
        ({"samples": [3, 3]}, "more than once"),
        ({"samples": []}, "empty"),
        ({}, "nothing to unlearn"),
    ],
    ids=["unknown id", "same id twice", "empty list", "no request"],
)
def test_bad_requests_are_refused_before_anything_changes(case, request_, match):
    model = case.fit(case.build(0))
    before = [a.copy() for a in state(model)]
    held = model._held_samples().copy()
    with pytest.raises(UnlearningRequestError, match=match):
        model.unlearn(**request_)
    np.testing.assert_array_equal(model._held_samples(), held)
    for a, b in zip(before, state(model), strict=True):
        np.testing.assert_array_equal(a, b)


def test_the_same_rows_cannot_be_forgotten_twice(case):
    model = case.fit(case.build(0))
    request = some_samples(model)
    model.unlearn(request)
    with pytest.raises(UnlearningRequestError, match="already forgotten"):
        model.unlearn(request[:1])


def test_ids_that_are_not_whole_numbers_are_refused(case):
    model = case.fit(case.build(0))
    with pytest.raises(ValueError, match="whole numbers"):
        model.unlearn([3.7])
    with pytest.raises(TypeError):
        model.unlearn([True])


def test_same_seed_same_bits(case):
    runs = []
    for _ in range(2):
        model = case.fit(case.build(7))
        report = model.unlearn(some_samples(model))
        runs.append((state(model), report.forgotten_samples, report.clients_retrained))
    (a, fa, ra), (b, fb, rb) = runs
    assert fa == fb and ra == rb
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


def test_forgetting_everything_is_refused(case):
    model = case.fit(case.build(0))
    with pytest.raises(UnlearningRequestError):
        model.unlearn(model._held_samples())
