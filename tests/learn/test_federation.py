"""A trainer fitted on a Federation (clients that keep their examples) trains the model it trains on the arrays."""

from __future__ import annotations

import numpy as np
import pytest

from fedlib.learn import FederatedTrainer, Federation, LocalSGD, PlainSum, RoundRequest, train_clients
from fedlib.unlearn import ClusteredUnlearning


class ArrayFederation:
    """Clients in this process, each trained on its own as a remote node would train (one call per client)."""

    def __init__(self, X, y, parts, n_classes):
        self.X, self.y, self.parts = X, y, parts
        self.client_ids = np.arange(len(parts), dtype=np.int64)
        self.n_samples = np.array([len(p) for p in parts], dtype=np.int64)
        self.input_shape = X.shape[1:]
        self.n_classes = n_classes
        self.requests: list[RoundRequest] = []

    def train(self, request: RoundRequest) -> float:
        self.requests.append(request)
        self.rows = {}
        for p in request.stays:
            cid = int(request.participants[p])
            updates = train_clients(
                request.model, request.start, self.X, self.y, [self.parts[cid]], config=request.local,
                round_index=request.round_index, client_ids=[cid], base_version=request.base_version,
                random_state=request.random_state, method=request.method,
            )  # fmt: skip
            delta = updates.deltas[0]
            self.rows[int(p)] = delta * np.float32(request.weights[p]) if request.weighted else delta
        return 0.0

    def aggregate(self, *, random_state):
        request = self.requests[-1]
        inputs = np.zeros((request.participants.size, request.start.size), dtype=np.float32)
        for p, row in self.rows.items():
            inputs[p] = row
        aggregator = request.aggregator or PlainSum()
        return aggregator.aggregate(inputs, dropped=request.dropped, random_state=random_state)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(240, 6)).astype(np.float32)
    y = (X[:, 0] > 0).astype(np.int64) + (X[:, 1] > 0)
    sizes = rng.integers(10, 40, size=9)
    parts = np.split(rng.permutation(240)[: sizes.sum()], np.cumsum(sizes)[:-1])
    return X, y, parts


def test_an_array_federation_is_a_federation(data):
    assert isinstance(ArrayFederation(*data, 3), Federation)


@pytest.mark.parametrize("options", [{}, {"dropout": 0.3, "participation": 0.7}, {"weighting": "uniform"}])
def test_fedavg_on_a_federation_is_fedavg_on_the_arrays_bit_for_bit(data, options):
    X, y, parts = data
    make = lambda: FederatedTrainer(  # noqa: E731
        "softmax", rounds=4, n_classes=3, method="loop", local=LocalSGD(batch_size=8), random_state=3, **options
    )
    arrays = make().fit(X, y, parts=parts)
    federation = ArrayFederation(X, y, parts, 3)
    remote = make().fit(federation)
    assert np.array_equal(arrays.params_, remote.params_)
    assert [r.summed.tolist() for r in arrays.history_] == [r.summed.tolist() for r in remote.history_]
    assert remote.clients_ is None and remote.n_clients == len(parts) and remote.n_features_in_ == 6
    # the request carries FedAvg's weights and the round's seed; the dropped never train
    for record, request in zip(remote.history_, federation.requests, strict=True):
        assert request.participants.tolist() == record.participants.tolist()
        assert set(request.participants[request.stays].tolist()).isdisjoint(record.dropped.tolist())


def test_clustered_unlearning_on_a_federation_fits_and_forgets_as_on_the_arrays(data):
    X, y, parts = data
    make = lambda: ClusteredUnlearning(  # noqa: E731
        "softmax", cluster_size=4, rounds=3, threshold_rate=0.6, method="loop", local=LocalSGD(batch_size=8),
        random_state=1,
    )  # fmt: skip
    arrays, remote = make().fit(X, y, parts=parts), make().fit(ArrayFederation(X, y, parts, 3))
    for a, b in zip(arrays.trainers_, remote.trainers_, strict=True):
        assert np.array_equal(a.params_, b.params_)
    a_report, b_report = arrays.unlearn(clients=[4]), remote.unlearn(clients=[4])
    assert a_report.details["clusters"] == b_report.details["clusters"]
    assert a_report.clients_retrained == b_report.clients_retrained
    for a, b in zip(arrays.trainers_, remote.trainers_, strict=True):
        assert np.array_equal(a.params_, b.params_)
    assert remote.parts_ is None and remote.n_clients == len(parts)
    assert np.array_equal(remote.predict(X[:20]), arrays.predict(X[:20]))


def test_a_federation_refuses_arrays_it_does_not_use_and_local_updates(data):
    X, y, parts = data
    federation = ArrayFederation(X, y, parts, 3)
    with pytest.raises(ValueError, match="takes no y or parts"):
        FederatedTrainer("softmax", rounds=1).fit(federation, y)
    with pytest.raises(ValueError, match="takes no y or parts"):
        ClusteredUnlearning("softmax", cluster_size=4, rounds=1).fit(federation, parts=parts)
    trainer = FederatedTrainer("softmax", rounds=1, method="loop").fit(federation)
    with pytest.raises(TypeError, match="local_updates needs the clients' examples"):
        trainer.local_updates([0])
    with pytest.raises(ValueError, match="requires y to be passed"):
        FederatedTrainer("softmax").fit(X)
    federation.client_ids = federation.client_ids + 5
    with pytest.raises(ValueError, match="numbers its clients 0"):
        ClusteredUnlearning("softmax", cluster_size=4, rounds=1).fit(federation)
    with pytest.raises(ValueError, match="not"):
        FederatedTrainer("softmax", rounds=1).fit(federation, client_ids=[0, 1])
    federation.n_samples = np.zeros(len(parts), dtype=np.int64)
    with pytest.raises(ValueError, match="needs an example"):
        FederatedTrainer("softmax", rounds=1).fit(federation)
