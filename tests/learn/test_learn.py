"""fedlib.learn: models from a seed, flat round trips, vectorised local SGD against a plain loop, FedAvg."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from fedlib.learn import (
    MODELS,
    PlainSum,
    accuracy,
    fedavg,
    get_flat,
    make_model,
    n_parameters,
    predict_logits,
    server_update,
    set_flat,
    train_clients,
)
from fedlib.secagg import SecureAggregator
from fedlib.utils import spawn_generators


@pytest.fixture(scope="module")
def blobs():
    """Ten well-separated classes of 28x28 images: a bright 5x5 square at a class-specific place, plus noise."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, 10, size=600)
    X = rng.normal(0, 0.1, size=(600, 1, 28, 28)).astype(np.float32)
    for c in range(10):
        r, col = divmod(c, 5)
        X[y == c, 0, 4 + 12 * r : 9 + 12 * r, 2 + 5 * col : 7 + 5 * col] += 1.0
    return torch.as_tensor(X), torch.as_tensor(y)


@pytest.mark.parametrize("name", MODELS)
def test_models_are_fixed_by_their_seed_and_round_trip_as_vectors(name):
    a, b, c = make_model(name, seed=1), make_model(name, seed=1), make_model(name, seed=2)
    assert np.array_equal(get_flat(a), get_flat(b)) and not np.array_equal(get_flat(a), get_flat(c))
    v = np.random.default_rng(0).normal(size=n_parameters(a)).astype(np.float32)
    assert np.array_equal(get_flat(set_flat(a, v)), v)
    with torch.no_grad():
        next(a.parameters()).add_(1.0)
    assert np.array_equal(v, np.random.default_rng(0).normal(size=n_parameters(a)).astype(np.float32))  # no alias
    assert predict_logits(a, torch.zeros(3, 1, 28, 28)).shape == (3, 10)
    with pytest.raises(ValueError, match="length"):
        set_flat(a, v[:-1])


def _sgd_loop(model, start, x, y, order, batch_size, lr):
    """Independent oracle: torch.optim.SGD on one client, in a given example order."""
    set_flat(model, start)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for b in range(0, len(order), batch_size):
        idx = torch.as_tensor(order[b : b + batch_size])
        opt.zero_grad()
        nn.functional.cross_entropy(model(x[idx]), y[idx]).backward()
        opt.step()
    return get_flat(model) - start


def test_local_sgd_matches_torch_sgd_client_by_client(blobs):
    X, y = blobs
    model = make_model("cnn_small", seed=0)
    start = get_flat(model)
    images, labels = X[:120].reshape(4, 30, 1, 28, 28), y[:120].reshape(4, 30)
    vectorised = train_clients(model, start, images, labels, batch_size=8, lr=0.1, vectorise=True, random_state=5)
    orders = np.random.default_rng(5).permuted(np.broadcast_to(np.arange(30), (1, 4, 30)), axis=2)[0]
    for i in range(4):
        expected = _sgd_loop(make_model("cnn_small"), start, images[i], labels[i], orders[i], 8, 0.1)
        assert np.allclose(vectorised[i], expected, atol=1e-5)
    # The default client loop draws one order per client in turn; checked against the oracle the same way.
    looped = train_clients(model, start, images, labels, batch_size=8, lr=0.1, random_state=6)
    rng = np.random.default_rng(6)
    for i in range(4):
        order = rng.permuted(np.broadcast_to(np.arange(30), (1, 1, 30)), axis=2)[0, 0]
        expected = _sgd_loop(make_model("cnn_small"), start, images[i], labels[i], order, 8, 0.1)
        assert np.allclose(looped[i], expected, atol=1e-5)
    assert np.allclose(looped, train_clients(model, start, images, labels, batch_size=8, lr=0.1, random_state=6))
    # Unequal clients take the per-client path and agree with it too.
    uneven = train_clients(model, start, [images[0], images[1][:20]], [labels[0], labels[1][:20]], random_state=5)
    assert uneven.shape == (2, n_parameters(model))


def test_same_seed_same_bits(blobs):
    X, y = blobs
    clients = np.array_split(np.arange(300), 10)
    runs = [fedavg(make_model("mlp"), X, y, clients, rounds=2, random_state=3).parameters for _ in range(2)]
    assert np.array_equal(runs[0], runs[1])


def test_fedavg_with_one_client_is_its_local_training(blobs):
    X, y = blobs
    model = make_model("softmax")
    start = get_flat(model)
    result = fedavg(
        model, X, y, [np.arange(64)], rounds=1, batch_size=16, lr=0.1, random_state=np.random.default_rng(4)
    )
    (rng,) = spawn_generators(np.random.default_rng(4), 1)  # what fedavg's round 1 draws from
    local = train_clients(model, start, X[:64][None], y[:64][None], batch_size=16, lr=0.1, random_state=rng)[0]
    assert np.allclose(result.parameters, start + local, atol=1e-6)


def test_server_averages_over_the_summed_users_only():
    theta = np.zeros(3, dtype=np.float32)
    out = PlainSum(dropout_rate=0.5).aggregate(np.array([[1.0, 1, 1], [3, 3, 3], [5, 5, 5], [7, 7, 7]]), random_state=1)
    new = server_update(theta, out)
    assert np.allclose(new, np.mean([[1.0, 3, 5, 7][i] for i in out.summed]))
    assert np.array_equal(server_update(theta, PlainSum(0.0).aggregate(np.ones((0, 3)))), theta)


def test_fedavg_learns_in_the_clear_and_through_secagg(blobs):
    X, y = blobs
    clients = np.array_split(np.arange(500), 10)
    test = (X[500:], y[500:])
    plain = fedavg(make_model("cnn_small"), X, y, clients, rounds=8, lr=0.1, test=test, random_state=0)
    secure = fedavg(
        make_model("cnn_small"), X, y, clients, rounds=8, lr=0.1, test=test, random_state=0,
        aggregator=SecureAggregator(degree=4, threshold_rate=0.7, clip=1.0),
    )  # fmt: skip
    assert plain.history["accuracy"].iloc[-1] > 0.5  # chance is 0.1
    # Same seeds: secure aggregation differs from the plain sum by rounding only (resolution 2^-f).
    assert abs(secure.history["accuracy"].iloc[-1] - plain.history["accuracy"].iloc[-1]) < 0.05
    assert (secure.history["bytes sent"] > plain.history["bytes sent"]).all()
    assert accuracy(make_model("cnn_small"), *test, parameters=plain.parameters) == plain.history["accuracy"].iloc[-1]
