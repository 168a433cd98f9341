"""fedlib.learn.choose_method: the measured rows of benchmarks/bench_learn.py, monotonicity, the GPU rule, bad input."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from fedlib.learn import _local, choose_method, make_model

#: The models of the benchmark's rows: make_model arguments and one example's shape.
MODELS = {
    "cnn_small": (("cnn_small",), {}, (1, 28, 28)),
    "mlp": (("mlp",), {}, (1, 28, 28)),
    "softmax": (("softmax",), {}, (1, 28, 28)),
    "lenet5": (("lenet5",), {}, (1, 28, 28)),
    "cnn_paper": (("cnn_paper",), {}, (1, 28, 28)),
    "char_mlp": (("char_mlp", 65), {"input_shape": (8,), "hidden": 128, "embed": 16}, (8,)),
    "mlp600h256": (("mlp", 100), {"input_shape": (600,), "hidden": 256}, (600,)),
    "softmax600": (("softmax", 100), {"input_shape": (600,)}, (600,)),
    "cnn_small62": (("cnn_small", 62), {}, (1, 28, 28)),
}


def _model(name: str) -> nn.Module:
    args, kwargs, _ = MODELS[name]
    return make_model(*args, random_state=0, **kwargs)


def _lognormal(seed, n: int, mean: float, sigma: float) -> list[int]:
    s = np.random.default_rng(seed).lognormal(0.0, sigma, n)
    return np.maximum(1, np.round(s / s.mean() * mean)).astype(int).tolist()


#: The regimes of bench_learn.py (its function ``regimes`` with seed 0): client sizes and batch size.
REGIMES = {
    "200 x 40, B=32": ([40] * 200, 32),
    "200 x 40, B=10": ([40] * 200, 10),
    "50 x 160, B=32": ([160] * 50, 32),
    "10 x 800, B=32": ([800] * 10, 32),
    "200 ragged, B=32": (np.random.default_rng([0, 1]).integers(10, 71, size=200).tolist(), 32),
    "20 x 40, B=32": ([40] * 20, 32),
    "500 x 20, B=16": ([20] * 500, 16),
    "1000 x 10, B=10": ([10] * 1000, 10),
    "100 x 40, B=4": ([40] * 100, 4),
    "100 x 100, B=64": ([100] * 100, 64),
    "20 x 300, B=16": ([300] * 20, 16),
    "30 x 64, B=64": ([64] * 30, 64),
    "5 x 2000, B=32": ([2000] * 5, 32),
    "50 lognormal, B=10": (_lognormal([0, 2], 50, 100, 0.7), 10),
    "200 lognormal, B=32": (_lognormal([0, 3], 200, 40, 1.0), 32),
}

#: Measured speed-up of vmap over the loop (> 1: vmap faster): the geometric mean of two full runs of
#: ``python benchmarks/bench_learn.py`` (each run's value in the comment), on the 2-core machine the
#: constants were fitted on, 2026-11-27. The rows of cnn_small, mlp, softmax and lenet5 in the first five
#: regimes, and cnn_paper's, are the benchmark's 21 "fit" rows; the others are held out.
MEASURED = {
    ("cnn_small", "200 x 40, B=32"): 1.24,  # 1.20, 1.29
    ("cnn_small", "200 x 40, B=10"): 2.68,  # 2.71, 2.65
    ("cnn_small", "50 x 160, B=32"): 1.54,  # 1.49, 1.59
    ("cnn_small", "10 x 800, B=32"): 1.40,  # 1.42, 1.38
    ("cnn_small", "200 ragged, B=32"): 0.65,  # 0.67, 0.63
    ("cnn_small", "100 x 40, B=4"): 4.67,  # 4.85, 4.49
    ("cnn_small", "100 x 100, B=64"): 0.84,  # 0.90, 0.79
    ("cnn_small", "20 x 300, B=16"): 1.99,  # 2.05, 1.93
    ("cnn_small", "5 x 2000, B=32"): 1.30,  # 1.29, 1.31
    ("cnn_small", "50 lognormal, B=10"): 1.02,  # 1.02, 1.02
    ("mlp", "200 x 40, B=32"): 1.52,  # 1.44, 1.60
    ("mlp", "200 x 40, B=10"): 1.57,  # 1.60, 1.55
    ("mlp", "50 x 160, B=32"): 1.88,  # 1.85, 1.92
    ("mlp", "10 x 800, B=32"): 1.23,  # 1.18, 1.29
    ("mlp", "200 ragged, B=32"): 0.76,  # 0.72, 0.81
    ("mlp", "1000 x 10, B=10"): 1.25,  # 1.25, 1.26
    ("mlp", "100 x 40, B=4"): 2.08,  # 2.42, 1.79
    ("mlp", "30 x 64, B=64"): 1.70,  # 1.70, 1.70
    ("mlp", "5 x 2000, B=32"): 0.82,  # 0.87, 0.78
    ("mlp", "50 lognormal, B=10"): 0.74,  # 0.82, 0.66
    ("softmax", "200 x 40, B=32"): 2.39,  # 2.45, 2.34
    ("softmax", "200 x 40, B=10"): 3.46,  # 3.50, 3.43
    ("softmax", "50 x 160, B=32"): 1.92,  # 1.91, 1.94
    ("softmax", "10 x 800, B=32"): 0.93,  # 0.96, 0.90
    ("softmax", "200 ragged, B=32"): 1.48,  # 1.62, 1.35
    ("softmax", "500 x 20, B=16"): 3.08,  # 3.55, 2.67
    ("softmax", "100 x 40, B=4"): 3.58,  # 4.17, 3.07
    ("softmax", "5 x 2000, B=32"): 0.59,  # 0.61, 0.58
    ("softmax", "50 lognormal, B=10"): 0.90,  # 0.92, 0.89
    ("softmax", "200 lognormal, B=32"): 0.46,  # 0.55, 0.38
    ("lenet5", "200 x 40, B=32"): 0.63,  # 0.60, 0.66
    ("lenet5", "200 x 40, B=10"): 0.89,  # 0.93, 0.86
    ("lenet5", "50 x 160, B=32"): 0.65,  # 0.65, 0.66
    ("lenet5", "10 x 800, B=32"): 0.65,  # 0.64, 0.67
    ("lenet5", "200 ragged, B=32"): 0.36,  # 0.38, 0.35
    ("lenet5", "100 x 40, B=4"): 1.80,  # 1.81, 1.80
    ("lenet5", "30 x 64, B=64"): 0.55,  # 0.62, 0.48
    ("cnn_paper", "20 x 40, B=32"): 0.76,  # 0.79, 0.73
    ("char_mlp", "200 x 40, B=32"): 2.96,  # 2.87, 3.06
    ("char_mlp", "10 x 800, B=32"): 1.32,  # 1.33, 1.31
    ("char_mlp", "200 ragged, B=32"): 1.73,  # 1.71, 1.76
    ("char_mlp", "100 x 40, B=4"): 3.91,  # 3.98, 3.85
    ("char_mlp", "5 x 2000, B=32"): 0.81,  # 0.82, 0.80
    ("mlp600h256", "200 x 40, B=32"): 1.19,  # 1.24, 1.14
    ("mlp600h256", "50 x 160, B=32"): 1.42,  # 1.32, 1.52
    ("mlp600h256", "1000 x 10, B=10"): 1.33,  # 1.45, 1.22
    ("mlp600h256", "100 x 40, B=4"): 0.88,  # 0.87, 0.89
    ("mlp600h256", "20 x 300, B=16"): 1.40,  # 1.38, 1.43
    ("softmax600", "200 x 40, B=32"): 1.28,  # 1.30, 1.27
    ("softmax600", "10 x 800, B=32"): 1.15,  # 1.14, 1.16
    ("softmax600", "100 x 100, B=64"): 1.49,  # 1.47, 1.51
    ("softmax600", "1000 x 10, B=10"): 1.53,  # 1.74, 1.34
    ("cnn_small62", "200 x 40, B=32"): 1.37,  # 1.49, 1.26
    ("cnn_small62", "100 x 100, B=64"): 1.00,  # 1.09, 0.91
    ("cnn_small62", "20 x 300, B=16"): 1.69,  # 1.78, 1.60
}

#: Rows where the rule misses a path faster by more than 5%: in each it predicted a near tie (within 12%),
#: and the measured ratio moved between runs (earlier runs under heavier load in the comments).
KNOWN_MISSES: dict[tuple[str, str], str] = {
    ("cnn_small", "100 x 100, B=64"): "predicted 1.05x; 0.91x earlier; 6,400 batched examples a step",
    ("mlp", "10 x 800, B=32"): "predicted 0.97x; 1.01x and 1.06x earlier (a fit row)",
    ("mlp600h256", "200 x 40, B=32"): "predicted 0.90x; 0.93x earlier",
    ("mlp600h256", "1000 x 10, B=10"): "predicted 0.90x; 1.07x earlier",
    ("softmax600", "10 x 800, B=32"): "predicted 0.92x; 0.89x earlier",
}


def test_the_benchmark_regimes_are_the_ones_measured():
    assert set(REGIMES) >= {regime for _, regime in MEASURED}
    assert set(MODELS) >= {model for model, _ in MEASURED}


@pytest.mark.parametrize(("name", "regime"), sorted(MEASURED))
def test_picks_the_path_measured_faster(name, regime):
    """Every row of the benchmark where one path was more than 5% faster: the rule picks that path."""
    ratio = MEASURED[name, regime]
    if max(ratio, 1 / ratio) < 1.05:
        pytest.skip(f"a tie ({ratio:.2f}x): either path is fine")
    sizes, batch = REGIMES[regime]
    shape = MODELS[name][2]
    model = _model(name)
    picked = choose_method(sizes, model, batch, input_shape=shape)
    faster = "vmap" if ratio > 1 else "loop"
    if (name, regime) in KNOWN_MISSES:
        assert picked != faster, f"fixed: remove {(name, regime)} from KNOWN_MISSES"
        work = _local._model_work(model, shape)
        loop, vmap = (_local._path_seconds(work, cost, m, sizes, batch) for m, cost in _local.PATH_COSTS.items())
        assert max(loop / vmap, vmap / loop) < 1.12, "a miss where the rule predicted a clear winner"
        return
    assert picked == faster, f"{name} {regime}: vmap measured {ratio:.2f}x the loop's speed, the rule says {picked}"


SMALL = {name: _model(name) for name in ("softmax", "mlp", "cnn_small", "lenet5", "char_mlp")}


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(sorted(SMALL)),
    sizes=st.lists(st.integers(1, 400), min_size=1, max_size=60),
    batch=st.integers(1, 128),
    data=st.data(),
)
def test_more_padding_never_turns_loop_into_vmap(name, sizes, batch, data):
    """Fewer examples for clients other than the longest (same steps for vmap, fewer for the loop) keep a "loop"."""
    model = SMALL[name]
    shape = MODELS[name][2]
    assert len(sizes) <= _local._VMAP_MAX_FLOATS // sum(p.numel() for p in model.parameters())  # one chunk
    before = choose_method(sizes, model, batch, input_shape=shape)
    longest = int(np.argmax(sizes))
    shrunk = [s if i == longest else data.draw(st.integers(1, s), label=f"client {i}") for i, s in enumerate(sizes)]
    after = choose_method(shrunk, model, batch, input_shape=shape)
    if before == "loop":
        assert after == "loop", (sizes, shrunk)


@settings(max_examples=40, deadline=None)
@given(
    name=st.sampled_from(sorted(SMALL)),
    sizes=st.lists(st.integers(1, 2000), min_size=2, max_size=300),
    batch=st.integers(1, 256),
    device=st.sampled_from(["cuda", "cuda:0", "cuda:3", torch.device("cuda", 1)]),
)
def test_on_a_gpu_vmap_whenever_two_clients_fit_a_chunk(name, sizes, batch, device):
    assert choose_method(sizes, SMALL[name], batch, device=device) == "vmap"


def test_on_a_gpu_one_client_or_a_huge_model_trains_in_the_loop():
    assert choose_method([40], SMALL["mlp"], 32, device="cuda") == "loop"
    huge = nn.Linear(4096, 2100)  # 8.6 million parameters: a chunk of vmap holds one client
    assert choose_method([40] * 10, huge, 32, device="cuda") == "loop"
    assert choose_method([40] * 10, nn.Linear(4096, 2000), 32, device="cuda") == "vmap"


def test_cpu_choices_follow_the_cost_model():
    model = SMALL["cnn_small"]
    for sizes, batch in [([40] * 200, 32), ([800] * 10, 32), ([10] * 199 + [400], 32), ([40], 32)]:
        work = _local._model_work(model, (1, 28, 28))
        loop, vmap = (_local._path_seconds(work, cost, m, sizes, batch) for m, cost in _local.PATH_COSTS.items())
        assert choose_method(sizes, model, batch) == ("vmap" if vmap < loop else "loop")
    assert choose_method([40], model, 32) == "loop"  # one client: nothing to batch, vmap's steps cost more
    assert choose_method(np.array([40] * 200, dtype=np.int32), model, 32) == choose_method([40] * 200, model, 32)


def test_device_strings_and_auto():
    model = SMALL["cnn_small"]
    assert choose_method([40] * 200, model, 32, device=torch.device("cpu")) == choose_method([40] * 200, model, 32)
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    auto = choose_method([40] * 200, model, 32, device="auto")
    assert auto == choose_method([40] * 200, model, 32, device=expected)


def test_input_shape_defaults_to_the_first_layer():
    """(in_features,) for a linear first layer, 28x28 images for a convolution; the work follows the shape."""
    cnn = SMALL["cnn_small"]
    assert _local._model_work(cnn, None) == _local._model_work(cnn, (1, 28, 28))
    assert _local._model_work(SMALL["mlp"], None).mac_linear == _local._model_work(SMALL["mlp"], (784,)).mac_linear
    conv = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU())
    assert _local._model_work(conv, (1, 56, 56)).mac_conv == 4 * 54 * 54 * 9
    assert _local._model_work(conv, None).mac_conv == 4 * 26 * 26 * 9
    wrong = _local._model_work(cnn, (1, 56, 56))  # its linear layer takes 784 values: the trace fails
    assert (wrong.mac_linear, wrong.mac_conv, wrong.activations) == (11274.0, 0.0, ())
    work = _local._model_work(SMALL["lenet5"], (1, 28, 28))
    assert (work.layers, work.convs, work.pool) == (5, 2, 6 * 28 * 28 + 16 * 10 * 10)
    assert work.mac_conv == 6 * 28 * 28 * 25 + 16 * 10 * 10 * 6 * 25


def test_a_model_that_cannot_be_traced_counts_its_parameters():
    class ReadsValues(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(20, 3)

        def forward(self, x):
            return self.fc(x) * float(x.sum().item() > 0)  # .item() has no value on the meta device

    model = ReadsValues()
    work = _local._model_work(model, (20,))
    assert (work.mac_linear, work.activations, work.layers) == (63.0, (), 1)
    assert choose_method([40] * 200, model, 32, input_shape=(20,)) in ("loop", "vmap")
    assert not model.fc._forward_hooks  # the counting hooks are removed


def test_the_docstring_table_shows_the_constants():
    """The Notes of choose_method list the constants the code uses (two significant digits)."""
    doc = choose_method.__doc__
    for field in _local.PathCost.__dataclass_fields__:
        row = re.search(rf"^\s*{field}\s+([-+.e0-9]+)\s+([-+.e0-9]+)\s", doc, flags=re.MULTILINE)
        assert row is not None, field
        values = (getattr(_local._LOOP_COST, field), getattr(_local._VMAP_COST, field))
        for shown, value in zip(row.groups(), values, strict=True):
            assert float(shown) == float(f"{value:.1e}"), (field, shown, value)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"sizes": []}, ValueError, "sizes"),
        ({"sizes": [[40, 40]]}, ValueError, "1-D"),
        ({"sizes": [40, 0]}, ValueError, ">= 1"),
        ({"sizes": [40, -3]}, ValueError, ">= 1"),
        ({"sizes": [40.0, 40.0]}, TypeError, "integers"),
        ({"sizes": ["40"]}, TypeError, "integers"),
        ({"model": "cnn_small"}, TypeError, "torch.nn.Module"),
        ({"model": nn.ReLU()}, ValueError, "no parameters"),
        ({"batch_size": 0}, ValueError, "batch_size"),
        ({"batch_size": 32.0}, TypeError, "batch_size"),
        ({"device": 0}, TypeError, "device"),
        ({"device": "gpu7"}, ValueError, "device"),
        ({"device": "meta"}, ValueError, "CPU and CUDA"),
        ({"input_shape": ()}, ValueError, "input_shape"),
        ({"input_shape": (1, 0, 28)}, ValueError, "input_shape"),
    ],
)
def test_bad_arguments_are_refused(kwargs, error, match):
    arguments = {"sizes": [40] * 10, "model": SMALL["softmax"], "batch_size": 32} | kwargs
    with pytest.raises(error, match=match):
        choose_method(arguments.pop("sizes"), arguments.pop("model"), arguments.pop("batch_size"), **arguments)
