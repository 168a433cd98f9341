"""fedlib.learn models and flat vectors: seeded initialisation, documented sizes, flat and layout round trips."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from fedlib.learn import MODELS, ParameterLayout, get_flat, init_parameters, make_model, n_parameters, set_flat


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _input_shape(name: str) -> tuple[int, ...]:
    """An input every model of that name takes: 28×28 images, or windows of 8 character codes."""
    return (8,) if name == "char_mlp" else (1, 28, 28)


@pytest.mark.parametrize("name", MODELS)
def test_every_model_is_fixed_by_its_seed_alone(name):
    shape = _input_shape(name)
    torch.manual_seed(123)  # torch's global state must play no part
    a = get_flat(make_model(name, random_state=1, input_shape=shape))
    torch.manual_seed(456)
    b = get_flat(make_model(name, random_state=1, input_shape=shape))
    c = get_flat(make_model(name, random_state=2, input_shape=shape))
    assert a.dtype == np.float32 and a.ndim == 1
    assert _same_bits(a, b)
    assert not np.array_equal(a, c)
    assert np.mean(a == c) < 0.01  # a different seed changes (nearly) every entry, not a few


@pytest.mark.parametrize("name", MODELS)
def test_every_model_maps_a_batch_to_logits(name):
    shape = _input_shape(name)
    model = make_model(name, 7, random_state=0, input_shape=shape)
    assert model.training
    assert not list(model.buffers())
    assert all(p.dtype == torch.float32 for p in model.parameters())
    with torch.no_grad():
        out = model(torch.zeros(3, *shape))
    assert out.shape == (3, 7)


@pytest.mark.parametrize(
    ("name", "n_classes", "input_shape", "expected"),
    [
        ("cnn_paper", 10, (1, 28, 28), 1_663_370),
        ("lenet5", 10, (1, 28, 28), 61_706),
        ("cnn_small", 10, (1, 28, 28), 11_274),
        ("cnn_small", 62, (1, 28, 28), 52_094),
        ("mlp", 10, (1, 28, 28), 50_890),
        ("softmax", 10, (1, 28, 28), 7_850),
        ("softmax", 5, (600,), 3_005),
        ("char_mlp", 65, (8,), 65 * 16 + 8 * 16 * 128 + 128 + 128 * 65 + 65),  # hidden=128: 25,937
    ],
)
def test_documented_parameter_counts(name, n_classes, input_shape, expected):
    model = make_model(name, n_classes, input_shape=input_shape, hidden=128 if name == "char_mlp" else 64)
    assert n_parameters(model) == expected
    assert get_flat(model).shape == (expected,)


def test_mlp_hidden_units():
    model = make_model("mlp", 3, input_shape=(12,), hidden=5)
    assert n_parameters(model) == 12 * 5 + 5 + 5 * 3 + 3


@pytest.mark.parametrize("name", ["cnn_paper", "lenet5", "cnn_small"])
@pytest.mark.parametrize("shape", [(3, 32, 32), (1, 29, 31), (2, 12, 12)])
def test_cnns_take_other_image_sizes(name, shape):
    model = make_model(name, 4, input_shape=shape)
    with torch.no_grad():
        assert model(torch.zeros(2, *shape)).shape == (2, 4)


def test_initialisation_bounds_are_pytorch_defaults():
    model = make_model("mlp", 3, random_state=0, input_shape=(2, 5, 5), hidden=16)
    bounds = {"fc1.weight": 50, "fc1.bias": 50, "fc2.weight": 16, "fc2.bias": 16}
    for name, param in model.named_parameters():
        bound = 1 / math.sqrt(bounds[name])
        values = param.detach().numpy()
        assert np.abs(values).max() <= bound
        if name.endswith("weight"):
            assert np.abs(values).max() > 0.9 * bound  # the whole range is used, not a narrower one
    conv = make_model("cnn_small", random_state=0)
    weight = dict(conv.named_parameters())["conv2.weight"]
    assert np.abs(weight.detach().numpy()).max() <= 1 / math.sqrt(8 * 25)


def test_init_parameters_reinitialises_in_place_and_accepts_a_generator():
    model = make_model("softmax", random_state=5)
    assert init_parameters(model, random_state=1) is model
    assert _same_bits(get_flat(model), get_flat(make_model("softmax", random_state=1)))
    a = get_flat(init_parameters(make_model("softmax"), random_state=np.random.default_rng(9)))
    b = get_flat(init_parameters(make_model("softmax"), random_state=np.random.default_rng(9)))
    assert _same_bits(a, b)


def test_init_parameters_needs_a_weight_for_every_bias():
    model = nn.Module()
    model.bias = nn.Parameter(torch.zeros(3))
    with pytest.raises(ValueError, match="fan-in"):
        init_parameters(model, random_state=0)


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"name": "resnet"}, ValueError),
        ({"name": "softmax", "n_classes": 1}, ValueError),
        ({"name": "mlp", "hidden": 0}, ValueError),
        ({"name": "cnn_small", "input_shape": (784,)}, ValueError),
        ({"name": "cnn_paper", "input_shape": (1, 7, 28)}, ValueError),
        ({"name": "lenet5", "input_shape": (1, 8, 8)}, ValueError),  # too small after the unpadded convolution
        ({"name": "lenet5", "input_shape": (1, 11, 20)}, ValueError),
        ({"name": "softmax", "input_shape": ()}, ValueError),
        ({"name": "softmax", "input_shape": (0, 4)}, ValueError),
        ({"name": "char_mlp", "input_shape": (1, 28, 28)}, ValueError),  # windows of codes only
        ({"name": "char_mlp", "input_shape": (8,), "embed": 0}, ValueError),
        ({"name": "char_mlp", "input_shape": (8,), "embed": 2.0}, TypeError),
    ],
)
def test_make_model_rejects_bad_arguments(kwargs, error):
    with pytest.raises(error):
        make_model(**kwargs)


def test_get_flat_is_parameters_to_vector_and_a_copy():
    model = make_model("mlp", 3, random_state=0, input_shape=(6,), hidden=4)
    flat = get_flat(model)
    expected = torch.nn.utils.parameters_to_vector(model.parameters()).detach().numpy()
    assert _same_bits(flat, expected)
    flat[:] = 0.0
    assert not np.array_equal(get_flat(model), flat)


@pytest.mark.parametrize("name", ["mlp", "softmax", "cnn_small", "lenet5"])
def test_set_flat_get_flat_round_trip_without_aliasing(name):
    model = make_model(name, random_state=0)
    v = np.random.default_rng(0).normal(size=n_parameters(model)).astype(np.float32)
    kept = v.copy()
    assert set_flat(model, v) is model
    assert _same_bits(get_flat(model), kept)
    v[:] = 1.0  # the model does not alias the vector ...
    assert _same_bits(get_flat(model), kept)
    with torch.no_grad():
        next(model.parameters()).add_(1.0)  # ... nor the vector the model
    assert np.all(v == 1.0)


def test_set_flat_accepts_float64_and_rejects_wrong_shapes():
    model = make_model("softmax", 3, input_shape=(4,))
    assert np.array_equal(get_flat(set_flat(model, np.arange(15.0))), np.arange(15, dtype=np.float32))
    for bad in (np.zeros(14), np.zeros(16), np.zeros((1, 15)), np.zeros((3, 5))):
        with pytest.raises(ValueError, match="length 15"):
            set_flat(model, bad)


def test_parameter_layout_describes_the_vector():
    model = make_model("mlp", 3, random_state=0, input_shape=(6,), hidden=4)
    layout = ParameterLayout(model)
    assert layout.names == ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias")
    assert layout.shapes == ((4, 6), (4,), (3, 4), (3,))
    assert layout.sizes == (24, 4, 12, 3)
    assert layout.n_parameters == 43 == n_parameters(model)
    views = layout.unflatten(torch.from_numpy(get_flat(model)))
    for name, param in model.named_parameters():
        assert torch.equal(views[name], param.detach())


@pytest.mark.parametrize("lead", [(), (5,), (2, 3)])
def test_parameter_layout_round_trip_with_views(lead):
    layout = ParameterLayout(make_model("cnn_small", 4, input_shape=(1, 8, 8)))
    vector = torch.randn(*lead, layout.n_parameters, generator=torch.Generator().manual_seed(0))
    views = layout.unflatten(vector)
    for name, shape in zip(layout.names, layout.shapes, strict=True):
        assert views[name].shape == (*lead, *shape)
    back = layout.flatten(views)
    assert back.shape == vector.shape and torch.equal(back, vector)
    assert back.data_ptr() != vector.data_ptr()  # flatten makes a new tensor
    views[layout.names[1]].fill_(7.0)  # unflatten copies nothing: writing a view writes the vector
    offset = layout.sizes[0]
    assert torch.all(vector[..., offset : offset + layout.sizes[1]] == 7.0)


def test_parameter_layout_with_a_scalar_parameter():
    class Scaled(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.weight = nn.Parameter(torch.ones(2, 3))
            self.scale = nn.Parameter(torch.tensor(2.0))

        def forward(self, x):
            return self.scale * x @ self.weight

    layout = ParameterLayout(Scaled())
    assert layout.shapes == ((2, 3), ())
    one = torch.arange(7.0)
    views = layout.unflatten(one)
    assert views["scale"].shape == () and float(views["scale"]) == 6.0
    assert torch.equal(layout.flatten(views), one)
    stack = torch.stack([one, one + 10])
    views = layout.unflatten(stack)
    assert views["scale"].tolist() == [6.0, 16.0]
    assert torch.equal(layout.flatten(views), stack)


def test_parameter_layout_rejects_buffers_no_parameters_and_wrong_lengths():
    with pytest.raises(ValueError, match="buffers"):
        ParameterLayout(nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3)))
    with pytest.raises(ValueError, match="no parameters"):
        ParameterLayout(nn.ReLU())
    layout = ParameterLayout(make_model("softmax", 3, input_shape=(4,)))
    with pytest.raises(ValueError, match="length 15"):
        layout.unflatten(torch.zeros(2, 14))
