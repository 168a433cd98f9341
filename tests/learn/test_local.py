"""fedlib.learn local training: both paths against torch.optim.SGD client by client, streams per client, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from fedlib.learn import (
    ClientUpdates,
    LocalSGD,
    _local,
    choose_method,
    client_generator,
    get_flat,
    make_model,
    set_flat,
    train_clients,
)
from fedlib.utils import root_sequence

N_FEATURES, N_CLASSES = 12, 3

CONFIGS = {
    "plain": LocalSGD(lr=0.1, batch_size=4, epochs=2),
    "momentum": LocalSGD(lr=0.05, batch_size=4, epochs=2, momentum=0.9),
    "weight decay": LocalSGD(lr=0.1, batch_size=5, epochs=2, weight_decay=0.05),
    "both": LocalSGD(lr=0.05, batch_size=3, epochs=3, momentum=0.5, weight_decay=0.01),
}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, N_FEATURES)).astype(np.float32)
    y = rng.integers(0, N_CLASSES, size=200)
    return X, y


@pytest.fixture(scope="module")
def ragged():
    """Clients of 1 to 37 examples (batch sizes 3..5 leave short last batches), not in row order."""
    rng = np.random.default_rng(1)
    rows = rng.permutation(200)
    sizes = [7, 1, 37, 12, 4, 20]
    return np.split(rows[: sum(sizes)], np.cumsum(sizes)[:-1])


def _model(seed: int = 0) -> nn.Module:
    return make_model("mlp", N_CLASSES, random_state=seed, input_shape=(N_FEATURES,), hidden=8)


def _reference(model, start, X, y, rows, config: LocalSGD, *, random_state, round_index, client_id) -> np.ndarray:
    """torch.optim.SGD on one client, each epoch in the order of one permutation of the client's stream."""
    model = set_flat(model, start)
    opt = torch.optim.SGD(model.parameters(), lr=config.lr, momentum=config.momentum, weight_decay=config.weight_decay)
    X, y = torch.as_tensor(X), torch.as_tensor(y)
    stream = client_generator(random_state, round_index, client_id)
    for _ in range(config.epochs):
        order = rows[stream.permutation(len(rows))]
        for b in range(0, len(order), config.batch_size):
            idx = torch.as_tensor(order[b : b + config.batch_size])
            opt.zero_grad()
            nn.functional.cross_entropy(model(X[idx]), y[idx]).backward()
            opt.step()
    return get_flat(model)


@pytest.mark.parametrize("config", CONFIGS.values(), ids=CONFIGS.keys())
def test_loop_and_vmap_match_torch_sgd_client_by_client(data, ragged, config):
    X, y = data
    model = _model()
    start = get_flat(model)
    ids = [10, 3, 7, 0, 42, 5]
    kwargs = dict(config=config, round_index=4, client_ids=ids, random_state=11)
    loop = train_clients(model, start, X, y, ragged, method="loop", **kwargs)
    vmap = train_clients(model, start, X, y, ragged, method="vmap", **kwargs)
    assert loop.method == "loop" and vmap.method == "vmap"
    for i, (rows, cid) in enumerate(zip(ragged, ids, strict=True)):
        expected = _reference(_model(), start, X, y, rows, config, random_state=11, round_index=4, client_id=cid)
        assert not np.allclose(expected, start, atol=1e-3)  # the client did train
        np.testing.assert_allclose(loop.params[i], expected, rtol=0, atol=1e-6)
        np.testing.assert_allclose(vmap.params[i], expected, rtol=0, atol=1e-5)
    np.testing.assert_allclose(vmap.params, loop.params, rtol=0, atol=1e-5)


def test_short_clients_sit_out_the_extra_vmap_steps_with_momentum(data):
    # One client of 2 examples next to one of 40: with momentum, a padded-out client must not keep moving.
    X, y = data
    model = _model()
    config = LocalSGD(lr=0.1, batch_size=2, epochs=1, momentum=0.9)
    clients = [np.arange(2), np.arange(2, 42)]
    alone = train_clients(model, get_flat(model), X, y, clients[:1], config=config, method="vmap", random_state=0)
    both = train_clients(model, get_flat(model), X, y, clients, config=config, method="vmap", random_state=0)
    np.testing.assert_allclose(both.params[0], alone.params[0], rtol=0, atol=1e-6)


def test_cnn_paths_agree(data):
    rng = np.random.default_rng(2)
    X = rng.random((60, 1, 8, 8), dtype=np.float32)
    y = rng.integers(0, 4, size=60)
    model = make_model("cnn_small", 4, random_state=0, input_shape=(1, 8, 8))
    clients = [np.arange(0, 9), np.arange(9, 30), np.arange(30, 60)]
    config = LocalSGD(lr=0.1, batch_size=8, momentum=0.5)
    loop = train_clients(model, get_flat(model), X, y, clients, config=config, method="loop", random_state=0)
    vmap = train_clients(model, get_flat(model), X, y, clients, config=config, method="vmap", random_state=0)
    np.testing.assert_allclose(vmap.params, loop.params, rtol=0, atol=1e-5)
    expected = _reference(
        make_model("cnn_small", 4, input_shape=(1, 8, 8)),
        get_flat(model),
        X,
        y,
        clients[2],
        config,
        random_state=0,
        round_index=0,
        client_id=2,
    )
    np.testing.assert_allclose(loop.params[2], expected, rtol=0, atol=1e-6)


def test_a_client_does_not_depend_on_the_other_clients(data, ragged):
    X, y = data
    model = _model()
    start = get_flat(model)
    config = CONFIGS["both"]
    ids = np.arange(100, 106)
    everyone = train_clients(model, start, X, y, ragged, config=config, client_ids=ids, method="loop", random_state=3)
    some = [4, 0, 2]  # another subset, in another order
    chosen = [ragged[i] for i in some]
    subset = train_clients(
        model, start, X, y, chosen, config=config, client_ids=ids[some], method="loop", random_state=3
    )
    assert subset.params.tobytes() == everyone.params[some].tobytes()
    vmap = train_clients(model, start, X, y, chosen, config=config, client_ids=ids[some], method="vmap", random_state=3)
    np.testing.assert_allclose(vmap.params, everyone.params[some], rtol=0, atol=1e-5)


def test_the_stream_is_the_client_id_not_the_position(data):
    X, y = data
    model = _model()
    rows = [np.arange(20), np.arange(20)]
    out = train_clients(model, get_flat(model), X, y, rows, client_ids=[8, 9], method="loop", random_state=0)
    assert not np.array_equal(out.params[0], out.params[1])  # same data, other streams
    again = train_clients(model, get_flat(model), X, y, rows[:1], client_ids=[9], method="loop", random_state=0)
    assert again.params[0].tobytes() == out.params[1].tobytes()
    default = train_clients(model, get_flat(model), X, y, rows, method="loop", random_state=0)
    explicit = train_clients(model, get_flat(model), X, y, rows, client_ids=[0, 1], method="loop", random_state=0)
    assert default.client_ids.tolist() == [0, 1]
    assert default.params.tobytes() == explicit.params.tobytes()


@pytest.mark.parametrize("method", ["loop", "vmap"])
def test_same_seed_same_bits_other_seed_or_round_other_result(data, ragged, method):
    X, y = data
    model = _model()
    start = get_flat(model)

    def run(**kwargs):
        return train_clients(model, start, X, y, ragged, config=CONFIGS["momentum"], method=method, **kwargs).params

    a = run(random_state=5, round_index=1)
    assert a.tobytes() == run(random_state=5, round_index=1).tobytes()
    assert a.tobytes() == run(random_state=np.random.SeedSequence(5), round_index=1).tobytes()
    several_batches = [len(rows) > CONFIGS["momentum"].batch_size for rows in ragged]  # order matters to these
    for other in (run(random_state=6, round_index=1), run(random_state=5, round_index=2)):
        differs = [not np.array_equal(p, q) for p, q in zip(a, other, strict=True)]
        assert [d for d, s in zip(differs, several_batches, strict=True) if s] == [True] * sum(several_batches)


@pytest.mark.parametrize("method", ["loop", "vmap"])
def test_one_start_per_client(data, method):
    X, y = data
    model = _model()
    starts = np.stack([get_flat(_model(seed)) for seed in range(3)])
    clients = [np.arange(0, 10), np.arange(10, 25), np.arange(25, 40)]
    out = train_clients(model, starts, X, y, clients, method=method, base_version=[3, 1, 2], random_state=0)
    assert np.array_equal(out.start, starts)
    assert out.base_version.tolist() == [3, 1, 2]
    for i in range(3):
        alone = train_clients(model, starts[i], X, y, [clients[i]], client_ids=[i], method=method, random_state=0)
        np.testing.assert_allclose(out.params[i], alone.params[0], rtol=0, atol=1e-6)


def test_client_updates_fields_deltas_and_select(data, ragged):
    X, y = data
    model = _model()
    before = get_flat(model)
    out = train_clients(model, before, X, y, ragged, round_index=2, base_version=7, method="loop", random_state=0)
    assert isinstance(out, ClientUpdates)
    assert np.array_equal(get_flat(model), before)  # the model's own parameters are not touched
    assert out.n_clients == 6 and out.round_index == 2
    assert out.params.shape == (6, before.size) and out.params.dtype == np.float32
    assert out.n_samples.tolist() == [len(r) for r in ragged]
    assert out.base_version.tolist() == [7] * 6
    assert out.seconds > 0
    assert np.array_equal(out.deltas, out.params - before)
    picked = out.select([4, 1])
    assert picked.client_ids.tolist() == [4, 1]
    assert np.array_equal(picked.params, out.params[[4, 1]])
    assert np.array_equal(picked.start, before)
    mask = out.select(np.array([True, False, False, False, False, True]))
    assert mask.client_ids.tolist() == [0, 5] and mask.n_samples.tolist() == [7, 20]


def test_inputs_as_tensors_and_float64_give_the_same_result(data, ragged):
    X, y = data
    model = _model()
    a = train_clients(model, get_flat(model), X, y, ragged, method="loop", random_state=0)
    b = train_clients(
        model, get_flat(model).astype(np.float64), torch.from_numpy(X), torch.from_numpy(y), ragged, random_state=0
    )
    c = train_clients(
        model, get_flat(model), X.astype(np.float64), y.astype(np.int32), ragged, method="loop", random_state=0
    )
    np.testing.assert_allclose(b.params, a.params, rtol=0, atol=1e-5)
    assert a.params.tobytes() == c.params.tobytes()


def test_vmap_in_chunks_of_clients(data, ragged, monkeypatch):
    X, y = data
    model = _model()
    whole = train_clients(model, get_flat(model), X, y, ragged, config=CONFIGS["both"], method="vmap", random_state=0)
    monkeypatch.setattr(_local, "_VMAP_MAX_FLOATS", 2 * whole.params.shape[1])  # two clients per chunk
    chunked = train_clients(model, get_flat(model), X, y, ragged, config=CONFIGS["both"], method="vmap", random_state=0)
    np.testing.assert_allclose(chunked.params, whole.params, rtol=0, atol=1e-6)


def test_batch_larger_than_every_client_is_one_full_batch_step(data):
    X, y = data
    model = _model()
    start = get_flat(model)
    out = train_clients(model, start, X, y, [np.arange(10)], config=LocalSGD(lr=0.5, batch_size=64), random_state=0)
    set_flat(model, start)
    loss = nn.functional.cross_entropy(model(torch.from_numpy(X[:10])), torch.from_numpy(y[:10]))
    grads = torch.autograd.grad(loss, list(model.parameters()))
    expected = start - 0.5 * torch.cat([g.reshape(-1) for g in grads]).numpy()
    np.testing.assert_allclose(out.params[0], expected, rtol=0, atol=1e-6)


def test_bad_inputs_raise(data):
    X, y = data
    model = _model()
    start = get_flat(model)
    d = start.size
    good = [np.arange(5), np.arange(5, 10)]
    with pytest.raises(ValueError, match="at least one client"):
        train_clients(model, start, X, y, [], random_state=0)
    with pytest.raises(ValueError, match="holds no examples"):
        train_clients(model, start, X, y, [np.arange(5), np.array([], dtype=np.int64)], random_state=0)
    for bad in (np.array([3, 200]), np.array([-1, 2])):
        with pytest.raises(ValueError, match=r"row indices must lie in \[0, 200\)"):
            train_clients(model, start, X, y, [np.arange(5), bad], random_state=0)
    with pytest.raises(ValueError, match="integer indices"):
        train_clients(model, start, X, y, [np.array([0.0, 1.0])], random_state=0)
    for shape in ((d - 1,), (3, d), (2, d + 1), (1, d)):
        with pytest.raises(ValueError, match="start must have shape"):
            train_clients(model, np.zeros(shape, dtype=np.float32), X, y, good, random_state=0)
    with pytest.raises(ValueError, match="rows but y has"):
        train_clients(model, start, X, y[:-1], good, random_state=0)
    with pytest.raises(TypeError, match="labels must be integers"):
        train_clients(model, start, X, y + 0.5, good, random_state=0)
    whole = train_clients(model, start, X, y.astype(float), good, random_state=0)  # whole-number floats are labels
    assert whole.params.tobytes() == train_clients(model, start, X, y, good, random_state=0).params.tobytes()
    with pytest.raises(ValueError, match="client_ids"):
        train_clients(model, start, X, y, good, client_ids=[1, 2, 3], random_state=0)
    with pytest.raises(ValueError):
        train_clients(model, start, X, y, good, method="fast", random_state=0)
    with pytest.raises(TypeError, match="LocalSGD"):
        train_clients(model, start, X, y, good, config={"lr": 0.1}, random_state=0)
    with pytest.raises(ValueError):
        train_clients(model, start, X, y, good, round_index=-1, random_state=0)


@pytest.mark.parametrize(
    "kwargs",
    [{"lr": 0.0}, {"lr": -1.0}, {"batch_size": 0}, {"epochs": 0}, {"momentum": 1.0}, {"weight_decay": -0.1}],
)
def test_local_sgd_rejects_bad_values(kwargs):
    with pytest.raises(ValueError):
        LocalSGD(**kwargs)


def test_choose_method(data):
    """Clear cases of bench_learn.py (measured > 1.3x apart), and train_clients asking it with the examples' shape."""
    cnn, lenet = make_model("cnn_small", random_state=0), make_model("lenet5", random_state=0)
    assert choose_method([40] * 200, cnn, 10) == "vmap"  # the book's clients, small batches: 2.4x faster batched
    assert choose_method([40] * 100, cnn, 4) == "vmap"
    assert choose_method([40] * 200, lenet, 32) == "loop"  # max pooling's backward is slow under vmap
    assert choose_method([40], cnn, 32) == "loop"  # one client: nothing to batch
    lognormal = np.random.default_rng(0).lognormal(0.0, 1.0, 200)
    ragged = np.maximum(1, np.round(lognormal / lognormal.mean() * 40)).astype(int)
    assert choose_method(ragged, cnn, 32) == "loop"  # vmap would pad every client to the longest
    assert choose_method([40] * 200, lenet, 32, device="cuda") == "vmap"  # the GPU rule (not measured)
    X, y = data
    model = make_model("softmax", N_CLASSES, random_state=0, input_shape=(N_FEATURES,))
    clients = [np.arange(i, i + 6) for i in range(0, 180, 6)]
    out = train_clients(model, get_flat(model), X, y, clients, random_state=0)
    assert out.method == choose_method([6] * 30, model, LocalSGD().batch_size, input_shape=(N_FEATURES,))


def test_client_generator_depends_on_seed_round_and_client_only():
    def draw(*args):
        return client_generator(*args).permutation(50).tolist()

    assert draw(0, 2, 7) == draw(0, 2, 7) == draw(np.random.SeedSequence(0), 2, 7)
    assert len({str(draw(*key)) for key in [(0, 2, 7), (1, 2, 7), (0, 3, 7), (0, 2, 8), (0, 7, 2)]}) == 5


def test_root_sequence():
    seq = np.random.SeedSequence(4)
    assert root_sequence(seq) is seq
    assert root_sequence(3).entropy == 3
    a = root_sequence(np.random.default_rng(1))
    assert a.entropy == root_sequence(np.random.default_rng(1)).entropy
    assert root_sequence(None).entropy != root_sequence(None).entropy
    with pytest.raises(TypeError):
        root_sequence("seed")


def test_read_only_features_are_copied_once_and_train_alike():
    """A read-only array (joblib hands workers memory maps) trains like a writable one, without torch's warning."""
    import warnings

    X = np.random.default_rng(0).random((8, N_FEATURES), dtype=np.float32)
    frozen = X.copy()
    frozen.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tensor = _local._as_features(frozen)
    assert torch.equal(tensor, torch.from_numpy(X))
    shared = _local._as_features(X)
    shared[0, 0] = 42.0
    assert X[0, 0] == 42.0  # a writable float32 array is shared, not copied


def test_vmap_padding_never_reads_another_clients_rows():
    """Short batches are padded with the client's own rows (weight 0): poisoning every row of another client, even
    row 0, changes nothing for the others."""
    rng = np.random.default_rng(0)
    X = rng.random((40, 5), dtype=np.float32)
    y = rng.integers(0, 3, 40)
    clients = [np.arange(0, 7), np.arange(7, 20), np.arange(20, 40)]  # ragged: short batches everywhere
    model = make_model("softmax", 3, random_state=0, input_shape=(5,))
    start = get_flat(model)
    config = LocalSGD(lr=0.1, batch_size=4, epochs=2)
    clean = train_clients(model, start, X, y, clients[1:], config=config, method="vmap", random_state=1)
    X_poisoned = X.copy()
    X_poisoned[clients[0]] = np.nan
    poisoned = train_clients(model, start, X_poisoned, y, clients[1:], config=config, method="vmap", random_state=1)
    np.testing.assert_array_equal(clean.params, poisoned.params)
