"""The character model "char_mlp" (Bengio et al., JMLR 2003): its forward pass, seeded init, and local training."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from fedlib.learn import (
    LocalSGD,
    client_generator,
    get_flat,
    init_parameters,
    make_model,
    n_parameters,
    set_flat,
    train_clients,
)

V, CONTEXT, EMBED, HIDDEN = 11, 4, 3, 6


def _model(seed: int = 0) -> nn.Module:
    return make_model("char_mlp", V, random_state=seed, input_shape=(CONTEXT,), hidden=HIDDEN, embed=EMBED)


@pytest.fixture(scope="module")
def windows():
    rng = np.random.default_rng(0)
    X = rng.integers(0, V, size=(120, CONTEXT)).astype(np.float32)
    y = (X[:, -1].astype(np.int64) + 1) % V  # a learnable next code
    return X, y


def test_forward_is_embed_concatenate_tanh_linear(windows):
    X, _ = windows
    model = _model()
    params = {name: p.detach().numpy().astype(np.float64) for name, p in model.named_parameters()}
    codes = X.astype(np.int64)
    features = params["embedding.weight"][codes].reshape(len(codes), CONTEXT * EMBED)  # concatenated embeddings
    hidden = np.tanh(features @ params["fc1.weight"].T + params["fc1.bias"])
    expected = hidden @ params["fc2.weight"].T + params["fc2.bias"]
    with torch.no_grad():
        out = model(torch.from_numpy(X))
        out_int = model(torch.from_numpy(codes))  # integer codes work as well
    assert out.shape == (len(X), V) and out.dtype == torch.float32
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-5)
    assert torch.equal(out, out_int)


def test_the_embedding_is_shared_across_positions():
    model = _model()
    assert [name for name, _ in model.named_parameters()] == [
        "embedding.weight",
        "fc1.weight",
        "fc1.bias",
        "fc2.weight",
        "fc2.bias",
    ]
    assert n_parameters(model) == V * EMBED + CONTEXT * EMBED * HIDDEN + HIDDEN + HIDDEN * V + V
    # hidden and embed default to 64 and 16
    default = make_model("char_mlp", V, input_shape=(CONTEXT,))
    assert n_parameters(default) == V * 16 + CONTEXT * 16 * 64 + 64 + 64 * V + V


def test_initialisation_is_normal_embeddings_then_uniform_layers_from_one_numpy_stream():
    torch.manual_seed(7)  # torch's global state plays no part
    model = _model(seed=3)
    rng = np.random.default_rng(3)
    expected = [rng.standard_normal((V, EMBED)).astype(np.float32)]
    for shape, fan_in in (((HIDDEN, CONTEXT * EMBED), CONTEXT * EMBED), ((HIDDEN,), CONTEXT * EMBED)):
        expected.append(rng.uniform(-1 / math.sqrt(fan_in), 1 / math.sqrt(fan_in), size=shape).astype(np.float32))
    for shape in ((V, HIDDEN), (V,)):
        expected.append(rng.uniform(-1 / math.sqrt(HIDDEN), 1 / math.sqrt(HIDDEN), size=shape).astype(np.float32))
    flat = np.concatenate([e.ravel() for e in expected])
    assert get_flat(model).tobytes() == flat.tobytes()


def test_large_embedding_tables_have_the_standard_normal_moments():
    weight = make_model("char_mlp", 500, random_state=0, input_shape=(2,), embed=64).embedding.weight.detach().numpy()
    assert abs(weight.mean()) < 0.01 and abs(weight.std() - 1.0) < 0.01  # 32,000 draws: 5 standard errors
    assert np.abs(weight).max() > 3.5  # not the uniform draw of the other layers


def test_padding_rows_of_an_embedding_are_zero():
    model = nn.Sequential(nn.Embedding(5, 3, padding_idx=2), nn.Flatten(), nn.Linear(3, 2))
    init_parameters(model, random_state=0)
    weight = model[0].weight.detach().numpy()
    assert np.all(weight[2] == 0.0) and np.all(weight[[0, 1, 3, 4]] != 0.0)


def test_out_of_vocabulary_codes_are_refused():
    with pytest.raises(IndexError):
        _model()(torch.full((1, CONTEXT), float(V)))


def _reference(start, X, y, rows, config: LocalSGD, client_id: int) -> np.ndarray:
    """torch.optim.SGD on one client, in the orders of its stream (as tests/learn/test_local.py)."""
    model = set_flat(_model(), start)
    opt = torch.optim.SGD(model.parameters(), lr=config.lr, momentum=config.momentum)
    stream = client_generator(0, 0, client_id)
    X_t, y_t = torch.from_numpy(X), torch.from_numpy(y)
    for _ in range(config.epochs):
        order = rows[stream.permutation(len(rows))]
        for b in range(0, len(order), config.batch_size):
            idx = torch.from_numpy(order[b : b + config.batch_size])
            opt.zero_grad()
            nn.functional.cross_entropy(model(X_t[idx]), y_t[idx]).backward()
            opt.step()
    return get_flat(model)


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_vmap_and_loop_train_it_like_torch_sgd(windows, momentum):
    X, y = windows
    model = _model()
    start = get_flat(model)
    clients = [np.arange(0, 30), np.arange(30, 37), np.arange(37, 120)]  # ragged: short clients sit out
    config = LocalSGD(lr=0.2, batch_size=8, epochs=2, momentum=momentum)
    loop = train_clients(model, start, X, y, clients, config=config, method="loop", random_state=0)
    vmap = train_clients(model, start, X, y, clients, config=config, method="vmap", random_state=0)
    for i, rows in enumerate(clients):
        expected = _reference(start, X, y, rows, config, client_id=i)
        assert not np.allclose(expected, start, atol=1e-3)
        np.testing.assert_allclose(loop.params[i], expected, rtol=0, atol=1e-6)
        np.testing.assert_allclose(vmap.params[i], expected, rtol=0, atol=1e-5)
    assert get_flat(model).tobytes() == start.tobytes()  # the architecture is untouched


@pytest.mark.parametrize("method", ["vmap", "loop"])
def test_training_is_reproducible_bit_for_bit(windows, method):
    X, y = windows
    model = _model()
    clients = [np.arange(k, 120, 4) for k in range(4)]
    config = LocalSGD(lr=0.1, batch_size=5, momentum=0.5)
    runs = [
        train_clients(model, get_flat(model), X, y, clients, config=config, method=method, random_state=9)
        for _ in range(2)
    ]
    assert runs[0].params.tobytes() == runs[1].params.tobytes()
    other = train_clients(model, get_flat(model), X, y, clients, config=config, method=method, random_state=10)
    assert not np.array_equal(other.params, runs[0].params)


def test_training_lowers_the_loss(windows):
    X, y = windows
    model = _model()
    out = train_clients(
        model, get_flat(model), X, y, [np.arange(120)], config=LocalSGD(lr=0.5, batch_size=8, epochs=5), random_state=0
    )

    def loss(flat):
        with torch.no_grad():
            logits = set_flat(_model(), flat)(torch.from_numpy(X))
        return float(nn.functional.cross_entropy(logits, torch.from_numpy(y)))

    assert loss(out.params[0]) < 0.5 * loss(get_flat(model))
