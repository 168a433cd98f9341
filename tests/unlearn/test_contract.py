"""The contract of every method that forgets (fedlib.base), in the spirit of scikit-learn's check_estimator.

Each method is fitted on small data, then asked to forget: samples, clients, before fit, an unknown id, the
same id twice, an empty request, and the same request twice. The same seed must give the same bits, and the
report must say what was forgotten, truthfully. The requests use samples, or clients for a method that cannot
forget single samples (``unlearns`` without "samples", e.g. ClusteredUnlearning, which forgets whole clients).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from fedlib.base import UnlearningMixin, UnlearningReport
from fedlib.cluster import KMeans
from fedlib.data import make_blobs
from fedlib.exceptions import UnlearningRequestError
from fedlib.learn import AsyncFederatedTrainer, LocalSGD
from fedlib.unlearn import (
    MUFC,
    ClusteredUnlearning,
    DCKMeans,
    FedEraser,
    FineTuning,
    KMeansPlusPlus,
    RapidRetraining,
    Retrain,
)

X_SMALL, _ = make_blobs((24, 24, 24), 2, cluster_std=0.05, random_state=0)
PARTS = [np.arange(0, 24), np.arange(24, 48), np.arange(48, 72)]


def _softmax_task():
    """A tiny two-class task of 24 clients with 5 examples each, for the methods that train models."""
    rng = np.random.default_rng(0)
    centres = rng.normal(0, 1.5, (2, 4))
    y = rng.integers(0, 2, 120)
    X = (centres[y] + rng.normal(0, 1, (120, 4))).astype(np.float32)
    return X, y, np.array_split(np.arange(120), 24)


X_TASK, Y_TASK, CLIENTS = _softmax_task()

#: The data of the methods that train models, one part per client.
TASK = dict(X=X_TASK, y=Y_TASK, parts=CLIENTS)

#: The asynchronous methods: local training, and fit's simulated times, four clusters and twelve aggregations.
ASYNC_LOCAL = LocalSGD(lr=0.1, batch_size=5)
ASYNC_FIT = dict(training_times=np.linspace(1.0, 4.0, 24), cluster_labels=np.arange(24) % 4, rounds=12)

#: The FedAvg baselines (rapid retraining, fine-tuning): local training of every round.
SYNC_LOCAL = LocalSGD(lr=0.1, batch_size=5)


@dataclass(frozen=True)
class Case:
    """One method: how to build it, what data to fit it on, and what identifies its fitted state."""

    name: str
    build: Callable[[int], UnlearningMixin]
    federated: bool = True
    X: np.ndarray = field(default_factory=lambda: X_SMALL)
    y: np.ndarray | None = None
    parts: list = field(default_factory=lambda: PARTS)
    fit_options: dict = field(default_factory=dict)

    def fit(self, model):
        if not self.federated:
            return model.fit(self.X)
        if self.y is None:
            return model.fit(self.X, parts=self.parts, **self.fit_options)
        return model.fit(self.X, self.y, parts=self.parts, **self.fit_options)


def state(model) -> list[np.ndarray]:
    """The arrays that identify a fitted model, for the same-seed-same-bits check."""
    inner = getattr(model, "estimator_", model)
    names = ("server_centers_", "cluster_centers_", "seed_indices_", "generation_", "params_")
    arrays = [np.asarray(getattr(inner, n)) for n in names if hasattr(inner, n)]
    if hasattr(inner, "trainers_"):
        arrays.append(np.stack([t.params_ for t in inner.trainers_]))
    return arrays


CASES = [
    Case("MUFC", lambda seed: MUFC(3, aggregation="plaintext", random_state=seed)),
    Case("MUFC-scma-strict", lambda seed: MUFC(3, aggregation="scma", server_update="strict", random_state=seed)),
    Case("DCKMeans", lambda seed: DCKMeans(3, random_state=seed)),
    Case("KMeansPlusPlus", lambda seed: KMeansPlusPlus(3, random_state=seed), federated=False),
    Case("Retrain(MUFC)", lambda seed: Retrain(MUFC(3, aggregation="plaintext", random_state=seed))),
    Case("Retrain(KMeans)", lambda seed: Retrain(KMeans(3, n_init=2, random_state=seed)), federated=False),
    Case(
        "ClusteredUnlearning",
        lambda seed: ClusteredUnlearning("softmax", cluster_size=8, rounds=1, secure=False, random_state=seed),
        **TASK,
    ),
    Case(
        "AsyncFederatedTrainer(KNOT)",
        lambda seed: AsyncFederatedTrainer("softmax", concurrency=8, buffer=4, local=ASYNC_LOCAL, random_state=seed),
        **TASK,
        fit_options=ASYNC_FIT,
    ),
    Case(
        "FedEraser",
        lambda seed: FedEraser("softmax", concurrency=8, buffer=4, local=ASYNC_LOCAL, random_state=seed),
        **TASK,
        fit_options=ASYNC_FIT,
    ),
    Case(
        "RapidRetraining",
        lambda seed: RapidRetraining(
            "softmax", rounds=2, unlearning_rounds=1, local=SYNC_LOCAL, lr=0.1, random_state=seed
        ),
        **TASK,
    ),
    Case(
        "FineTuning",
        lambda seed: FineTuning("softmax", rounds=2, unlearning_rounds=1, local=SYNC_LOCAL, random_state=seed),
        **TASK,
    ),
]


@pytest.fixture(params=CASES, ids=lambda case: case.name)
def case(request) -> Case:
    return request.param


def kind(model) -> str:
    """What the requests of these tests forget: samples, or clients for a method that cannot forget samples."""
    return "samples" if "samples" in model.unlearns else "clients"


def held(model) -> np.ndarray:
    """The ids of :func:`kind` the fitted model holds."""
    return model._held_samples() if kind(model) == "samples" else model._held_clients()


def some_ids(model) -> list[int]:
    """Three ids of :func:`kind` the fitted model holds (rows: one of them a seed where the model has seeds)."""
    ids = held(model)
    return [int(ids[0]), int(ids[len(ids) // 2]), int(ids[-1])]


def check_report(case: Case, report) -> None:
    """A report of the common type, every field present and in range."""
    assert isinstance(report, UnlearningReport)
    assert set(report.clients_retrained) <= set(range(len(case.parts)))
    for f in dataclasses.fields(UnlearningReport):
        assert hasattr(report, f.name)
    assert min(report.client_seconds, report.aggregation_seconds, report.server_seconds) >= 0.0
    assert report.rounds >= 0 and report.bytes_sent >= 0 and isinstance(report.exact, bool)


def test_fit_returns_self_and_is_a_scikit_learn_estimator(case):
    model = case.build(0)
    assert case.fit(model) is model
    assert model.n_features_in_ == case.X.shape[1]
    assert clone(model).get_params(deep=False).keys() == model.get_params(deep=False).keys()
    assert repr(clone(model)) == repr(model)
    assert isinstance(model.fit_report_, UnlearningReport)


def test_unlearn_before_fit_is_a_not_fitted_error(case):
    model = case.build(0)
    with pytest.raises(NotFittedError):
        model.unlearn(**{kind(model): [0]})


def test_unlearning_samples_reports_what_was_forgotten(case):
    model = case.fit(case.build(0))
    if "samples" not in model.unlearns:
        with pytest.raises(UnlearningRequestError, match="cannot unlearn samples"):
            model.unlearn([0])
        return
    request = some_ids(model)
    report = model.unlearn(request)
    check_report(case, report)
    assert report.forgotten_samples == tuple(sorted(request)) and report.forgotten_clients == ()
    assert not np.isin(request, model._held_samples()).any(), "the forgotten rows are still held"


def test_unlearning_clients_or_refusing_to(case):
    model = case.fit(case.build(0))
    if "clients" not in model.unlearns:
        with pytest.raises(UnlearningRequestError, match="cannot unlearn clients"):
            model.unlearn(clients=[0])
        return
    report = model.unlearn(clients=[1])
    check_report(case, report)
    assert report.forgotten_clients == (1,) and report.forgotten_samples == () and 1 not in report.clients_retrained
    assert not np.isin(case.parts[1], model._held_samples()).any()
    assert 1 not in model._held_clients()
    with pytest.raises(UnlearningRequestError, match="already forgotten"):
        model.unlearn(clients=[1])


@pytest.mark.parametrize(
    ("ids", "match"),
    [
        ([10**6], "not held"),
        ([3, 3], "more than once"),
        ([], "empty"),
        (None, "nothing to unlearn"),
    ],
    ids=["unknown id", "same id twice", "empty list", "no request"],
)
def test_bad_requests_are_refused_before_anything_changes(case, ids, match):
    model = case.fit(case.build(0))
    before = [a.copy() for a in state(model)]
    held_before = model._held_samples().copy()
    with pytest.raises(UnlearningRequestError, match=match):
        model.unlearn(**({} if ids is None else {kind(model): ids}))
    np.testing.assert_array_equal(model._held_samples(), held_before)
    for a, b in zip(before, state(model), strict=True):
        np.testing.assert_array_equal(a, b)


def test_unknown_options_are_refused_before_anything_changes(case):
    model = case.fit(case.build(0))
    before = [a.copy() for a in state(model)]
    held_before = model._held_samples().copy()
    with pytest.raises(TypeError, match="no_such_option"):
        model.unlearn(**{kind(model): some_ids(model)[:1]}, no_such_option=True)
    np.testing.assert_array_equal(model._held_samples(), held_before)
    for a, b in zip(before, state(model), strict=True):
        np.testing.assert_array_equal(a, b)


def test_the_same_rows_cannot_be_forgotten_twice(case):
    model = case.fit(case.build(0))
    request = some_ids(model)
    model.unlearn(**{kind(model): request})
    with pytest.raises(UnlearningRequestError, match="already forgotten"):
        model.unlearn(**{kind(model): request[:1]})


def test_ids_that_are_not_whole_numbers_are_refused(case):
    model = case.fit(case.build(0))
    with pytest.raises(ValueError, match="whole numbers"):
        model.unlearn(**{kind(model): [3.7]})
    with pytest.raises(TypeError):
        model.unlearn(**{kind(model): [True]})


def test_same_seed_same_bits(case):
    runs = []
    for _ in range(2):
        model = case.fit(case.build(7))
        report = model.unlearn(**{kind(model): some_ids(model)})
        runs.append((state(model), report.forgotten_samples + report.forgotten_clients, report.clients_retrained))
    (a, fa, ra), (b, fb, rb) = runs
    assert fa == fb and ra == rb
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


def test_forgetting_everything_is_refused(case):
    model = case.fit(case.build(0))
    with pytest.raises(UnlearningRequestError):
        model.unlearn(**{kind(model): held(model)})


def _overlapping(parts: list) -> list:
    """The case's parts with client 1 also holding half of client 0's rows (parts ``[[0..9], [5..14], ...]``)."""
    first = np.asarray(parts[0])
    return [first, np.concatenate([first[len(first) // 2 :], np.asarray(parts[1])]), *parts[2:]]


def test_overlapping_parts_are_refused(case):
    """A row held by two clients would stay in training through the other after one is forgotten, and the report
    would still say exact: every method refuses such parts at fit."""
    if not case.federated:
        pytest.skip("one client holds every row")
    overlapping = dataclasses.replace(case, parts=_overlapping(case.parts))
    with pytest.raises(ValueError, match="parts overlap"):
        overlapping.fit(case.build(0))


def test_the_federated_trainer_refuses_overlapping_parts():
    from fedlib.learn import FederatedTrainer

    trainer = FederatedTrainer("softmax", rounds=1, local=SYNC_LOCAL, random_state=0)
    with pytest.raises(ValueError, match=r"parts overlap: 3 row\(s\) \(e.g. row 2\).*clients \[0, 1\]"):
        trainer.fit(X_TASK, Y_TASK, parts=[np.arange(0, 5), np.arange(2, 10), np.arange(10, 20)])
    with pytest.raises(ValueError, match="parts overlap"):
        Retrain(FederatedTrainer("softmax", rounds=1, random_state=0)).fit(X_TASK, Y_TASK, parts=_overlapping(CLIENTS))
