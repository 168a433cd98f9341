"""Training on a device: the resolver, the CPU path bit for bit as before, pickles without device copies, and the
CUDA path (its placement checked on torch's meta device here; against the CPU only where a GPU is present)."""

from __future__ import annotations

import hashlib
import pickle
import platform

import numpy as np
import pytest
import torch
from sklearn.base import clone

from fedlib.exceptions import DeviceUnavailableError
from fedlib.learn import (
    AsyncFederatedTrainer,
    DeviceData,
    FederatedTrainer,
    LocalSGD,
    ParameterLayout,
    accuracy,
    cuda_determinism,
    get_flat,
    make_model,
    n_parameters,
    perplexity,
    predict_logits,
    predict_proba,
    profile_clients,
    resolve_device,
    train_clients,
)
from fedlib.learn._local import _train_loop, _train_vmap
from fedlib.secagg import SecureAggregator
from fedlib.unlearn import ClusteredUnlearning, FedEraser, FineTuning, RapidRetraining
from fedlib.unlearn._rapid import _rapid_loop, _rapid_vmap, _RapidStep

CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not CUDA, reason="no CUDA GPU: the CUDA path is tested only where one is present")
without_cuda = pytest.mark.skipif(CUDA, reason="a CUDA GPU is present")
CPU = torch.device("cpu")


# -- the resolver ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("device", ["cpu", "cpu:0", CPU, torch.device("cpu", 0)])
def test_cpu_resolves_to_the_cpu(device):
    assert resolve_device(device) == CPU and resolve_device(device).index is None


@without_cuda
def test_auto_is_the_cpu_without_a_gpu():
    assert resolve_device("auto") == CPU


def test_auto_takes_the_gpu_torch_reports_without_computing(monkeypatch):
    """Only asks torch; no tensor is made (a CPU-only build could not make one)."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert resolve_device("auto") == torch.device("cuda")
    assert resolve_device("cuda") == torch.device("cuda")
    assert resolve_device("cuda:1") == torch.device("cuda", 1)
    assert resolve_device(torch.device("cuda", 0)) == torch.device("cuda", 0)
    with pytest.raises(DeviceUnavailableError, match=r"device='cuda:2' names GPU 2, but torch sees 2 GPU"):
        resolve_device("cuda:2")


@without_cuda
@pytest.mark.parametrize("device", ["cuda", "cuda:0", torch.device("cuda")])
def test_cuda_without_a_gpu_is_refused_naming_the_device(device):
    with pytest.raises(DeviceUnavailableError, match=r"device=.*cuda.* asks for a CUDA GPU, but torch sees none"):
        resolve_device(device)
    with pytest.raises(ValueError):  # DeviceUnavailableError is a ValueError
        resolve_device(device)


@pytest.mark.parametrize(
    ("device", "error", "match"),
    [
        ("tpu", ValueError, r"device='tpu' is not a device torch knows"),
        ("", ValueError, r"device='' is not a device torch knows"),
        ("CPU", ValueError, r"device='CPU' is not a device torch knows"),
        ("mps", ValueError, r"device='mps': fedlib trains on the CPU or on CUDA GPUs only"),
        (torch.device("meta"), ValueError, r"fedlib trains on the CPU or on CUDA GPUs only"),
        (3, TypeError, r"device must be a str or a torch.device .*got int 3"),
        (None, TypeError, r"device must be a str or a torch.device .*got NoneType"),
        (b"cpu", TypeError, r"device must be a str or a torch.device .*got bytes"),
    ],
)
def test_unknown_devices_and_other_types_are_refused(device, error, match):
    with pytest.raises(error, match=match):
        resolve_device(device)


# -- the data of the runs below (drawn in this order; the recorded expectations depend on it) ------------------------


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    images = rng.random((240, 1, 28, 28), dtype=np.float32), rng.integers(0, 10, 240)
    parts = np.array_split(rng.permutation(240), 12)
    ragged = np.split(rng.permutation(240), [10, 40, 55, 100, 150, 160, 200])
    features = rng.random((200, 20), dtype=np.float32), rng.integers(0, 3, 200)
    return {"images": images, "parts": parts, "ragged": ragged, "features": features}


MOMENTUM = LocalSGD(lr=0.05, batch_size=9, epochs=2, momentum=0.9, weight_decay=1e-3)


def _local(data, method: str, **dev) -> np.ndarray:
    model = make_model("cnn_small", random_state=1)
    X, y = data["images"]
    return train_clients(
        model,
        get_flat(model),
        X,
        y,
        data["ragged"],
        config=MOMENTUM,
        random_state=3,
        method=method,
        round_index=2,
        **dev,
    ).params


def _local_mlp(data, **dev) -> np.ndarray:
    model = make_model("mlp", random_state=1)
    X, y = data["images"]
    return train_clients(
        model,
        get_flat(model),
        X,
        y,
        data["parts"],
        config=LocalSGD(lr=0.1, batch_size=7),
        random_state=3,
        method="vmap",
        round_index=2,
        **dev,
    ).params


def _logits(data, **dev) -> np.ndarray:
    model = make_model("cnn_small", random_state=1)
    stack = np.stack([get_flat(model) + 0.01 * k for k in range(3)]).astype(np.float32)
    return predict_logits(model, data["images"][0][:50], parameters=stack, **dev)


def _rule_when_recorded(sizes, model, batch_size, **_) -> str:
    """The rule by which method="auto" chose the path when the fingerprints below were recorded.

    ``choose_method`` has since become a cost model fitted to measurements and picks the other path in some of
    these small runs; the fingerprints are about devices, so they are checked under the rule they were made with.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    if sizes.size < 4 or n_parameters(model) > 200_000 or sizes.max() > 1.5 * sizes.mean():
        return "loop"
    return "vmap" if -(-sizes.mean() // batch_size) <= 16 else "loop"


def _fedavg(data, secure: bool, **dev) -> dict[str, np.ndarray]:
    X, y = data["images"]
    if secure:
        aggregator = SecureAggregator(degree=None, threshold_rate=0.6, insecure_seeded_secrets=True, clip=0.5)
        options = dict(aggregator=aggregator, dropout=0.1)
    else:
        options = dict(participation=0.6, dropout=0.2, keep_checkpoints=True)
    trainer = FederatedTrainer(
        "cnn_small", rounds=3, local=LocalSGD(lr=0.1, batch_size=8), random_state=5, **options, **dev
    ).fit(X, y, parts=data["parts"], test_data=(X[:60], y[:60]))
    return {
        "params": trainer.params_,
        "acc": np.array([r.accuracy for r in trainer.history_], dtype=np.float64),
        "summed": np.concatenate([r.summed for r in trainer.history_]),
        "dropped": np.concatenate([r.dropped for r in trainer.history_]),
    }


def _async(data, schedule: str, **dev) -> dict[str, np.ndarray]:
    X, y = data["features"]
    trainer = AsyncFederatedTrainer(
        "mlp",
        concurrency=6,
        buffer=3,
        local=LocalSGD(lr=0.2, batch_size=6, momentum=0.5),
        schedule=schedule,
        store_updates=2,
        random_state=7,
        **dev,
    )
    trainer.fit(
        X,
        y,
        parts=np.array_split(np.arange(200), 10),
        training_times=np.linspace(1.0, 5.0, 10),
        test_data=(X[:50], y[:50]),
    )
    disparity = trainer.profile().disparity
    trainer.set_clusters(np.arange(10) % 2)
    trainer.run(rounds=6)
    trainer.unlearn(clients=[int(trainer.history_[0].clients[0])])
    trainer.run(rounds=4)
    return {
        "params10": trainer.params_.copy(),
        "disparity": disparity,
        "scores": np.stack([r.scores for r in trainer.history_]),
        "times": np.array([r.time for r in trainer.history_]),
        "clients": np.concatenate([r.clients for r in trainer.history_]),
        "stored": np.concatenate([s.updates.ravel() for s in trainer.stored_updates_]),
    }


def _char(**dev) -> dict[str, np.ndarray]:
    """The character model with the perplexity metric (its own data, drawn after the other runs' in the record)."""
    rng = np.random.default_rng(12)
    X, y = rng.integers(0, 30, (300, 8)).astype(np.float32), rng.integers(0, 30, 300)
    trainer = AsyncFederatedTrainer(
        "char_mlp",
        concurrency=4,
        buffer=2,
        n_classes=30,
        metric="perplexity",
        local=LocalSGD(lr=0.3, batch_size=10),
        random_state=8,
        **dev,
    )
    trainer.fit(X, y, parts=np.array_split(np.arange(300), 6), test_data=(X[:40], y[:40]), rounds=5)
    ppl = perplexity(trainer.model_, X, y, parameters=trainer.params_[0], **dev)
    return {"params": trainer.params_, "scores": np.stack([r.scores for r in trainer.history_]), "ppl": np.array([ppl])}


def _federaser(data, **dev) -> dict[str, np.ndarray]:
    X, y = data["features"]
    eraser = FedEraser("softmax", concurrency=4, buffer=2, local=LocalSGD(lr=0.2, batch_size=5), random_state=9, **dev)
    eraser.fit(
        X,
        y,
        parts=np.array_split(np.arange(200), 10),
        training_times=np.linspace(1.0, 5.0, 10),
        rounds=8,
        test_data=(X[:50], y[:50]),
    )
    before = eraser.params_.copy()
    eraser.unlearn(clients=[int(eraser.history_[0].clients[0])])
    return {"before": before, "after": eraser.params_.copy(), "times": np.array([r.time for r in eraser.history_])}


def _clustered(data, secure: bool, **dev) -> dict[str, np.ndarray]:
    X, y = data["features"]
    system = ClusteredUnlearning(
        "mlp",
        cluster_size=5,
        rounds=3,
        secure=secure,
        threshold_rate=0.5,
        insecure_seeded_secrets=True,
        local=LocalSGD(lr=0.2, batch_size=6),
        random_state=10,
        **dev,
    ).fit(X, y, parts=np.array_split(np.arange(200), 20), test_data=(X[:50], y[:50]))
    history = np.array([h["vote accuracy"] for h in system.history_])
    system.unlearn(clients=[3, 11])
    return {
        "after": np.stack([t.params_ for t in system.trainers_]),
        "history": history,
        "predict": system.predict(X[50:120]),
        "proba": system.cluster_probabilities(X[50:60]),
    }


def _rapid(data, method: str, **dev) -> dict[str, np.ndarray]:
    X, y = data["features"]
    model = RapidRetraining(
        "softmax",
        rounds=3,
        unlearning_rounds=2,
        local=LocalSGD(lr=0.1, batch_size=5),
        lr=0.2,
        method=method,
        random_state=11,
        **dev,
    ).fit(X, y, parts=np.array_split(np.arange(200), 10), test_data=(X[:50], y[:50]))
    before = model.params_.copy()
    model.unlearn(clients=[2])
    return {"before": before, "after": model.params_.copy(), "predict": model.predict(X[:80])}


def _finetuning(data, **dev) -> dict[str, np.ndarray]:
    X, y = data["features"]
    model = FineTuning(
        "softmax", rounds=2, unlearning_rounds=1, local=LocalSGD(lr=0.1, batch_size=5), random_state=13, **dev
    ).fit(X, y, parts=np.array_split(np.arange(200), 10))
    model.unlearn(clients=[4])
    return {"after": model.params_.copy(), "accuracy": np.array([model.evaluate(X[:50], y[:50])])}


RUNS = {
    "train_clients (loop)": lambda data, **dev: {"params": _local(data, "loop", **dev)},
    "train_clients (vmap)": lambda data, **dev: {"params": _local(data, "vmap", **dev)},
    "predict_logits": lambda data, **dev: {"logits": _logits(data, **dev)},
    "FederatedTrainer": lambda data, **dev: _fedavg(data, False, **dev),
    "FederatedTrainer (secure)": lambda data, **dev: _fedavg(data, True, **dev),
    "AsyncFederatedTrainer": lambda data, **dev: _async(data, "global", **dev),
    "AsyncFederatedTrainer (per cluster)": lambda data, **dev: _async(data, "per_cluster", **dev),
    "AsyncFederatedTrainer (perplexity)": lambda data, **dev: _char(**dev),
    "FedEraser": _federaser,
    "ClusteredUnlearning": lambda data, **dev: _clustered(data, False, **dev),
    "ClusteredUnlearning (secure)": lambda data, **dev: _clustered(data, True, **dev),
    "RapidRetraining (loop)": lambda data, **dev: _rapid(data, "loop", **dev),
    "RapidRetraining (vmap)": lambda data, **dev: _rapid(data, "vmap", **dev),
    "FineTuning": _finetuning,
}


def _same_bits(a: dict, b: dict) -> list[str]:
    """The keys whose arrays differ in dtype, shape or any bit."""
    return [k for k in a if a[k].dtype != b[k].dtype or a[k].shape != b[k].shape or a[k].tobytes() != b[k].tobytes()]


# -- the CPU: every bit as without the option -----------------------------------------------------------------------


@pytest.mark.parametrize("name", list(RUNS))
def test_cpu_and_auto_give_the_bits_of_the_default(data, name):
    """``device="cpu"``, a ``torch.device`` and (without a GPU) ``"auto"`` train exactly as the default argument."""
    run = RUNS[name]
    reference = run(data)
    devices = ["cpu", CPU] + ([] if CUDA else ["auto"])
    for device in devices:
        assert _same_bits(reference, run(data, device=device)) == [], (name, device)


#: Fingerprints of runs of the code before ``device`` existed (sha256 prefix of the float32/float64 bytes, sum, sum
#: of absolute values), recorded with torch 2.13.0+cpu, numpy 2.4.6, torch's AVX512 kernels, one thread, on an Intel
#: Xeon. The same torch on an AMD EPYC with AVX512 gives other bits (MKL dispatches by vendor): there only the sums
#: are checked.
RECORDED = {
    "platform": ("2.13.0+cpu", "2.4.6", "AVX512", "GenuineIntel"),
    "train_clients (vmap)": (
        _local,
        ("vmap",),
        ("9ed1e1592c82f42bca597767c714e3a4", 25.50479028273935, 2217.9461615394393),
    ),
    "train_clients (loop)": (
        _local,
        ("loop",),
        ("594dfda355b370e2681d1751c1e0570b", 25.50478859318622, 2217.9461622137956),
    ),
    "train_clients (mlp)": (
        _local_mlp,
        (),
        ("343aa2c835f92dc0b0e8f7a69c03c716", -155.7680904161186, 11262.145252179733),
    ),
    "predict_logits": (_logits, (), ("6125ac6f306b26a92592dbf91e7360da", 10344.723960168834, 10358.2224940437)),
    "FederatedTrainer": (
        lambda data, **dev: _fedavg(data, False, **dev)["params"],
        (),
        ("188fc2da77bf5ed79177ed70a211f4d3", -2.0566259092192922, 271.68709218768345),
    ),
    "FederatedTrainer (secure)": (
        lambda data, **dev: _fedavg(data, True, **dev)["params"],
        (),
        ("a2389d147e08c27a8344e7f8824aa004", -1.6209044659997858, 271.73222849678297),
    ),
    "AsyncFederatedTrainer": (
        lambda data, **dev: _async(data, "global", **dev)["params10"],
        (),
        ("85b6aaf96b0724c57c2ab33c93149324", -9.741409829235636, 327.29657777701505),
    ),
    "AsyncFederatedTrainer (per cluster)": (
        lambda data, **dev: _async(data, "per_cluster", **dev)["params10"],
        (),
        ("f3a4df8a743555f50a0fe9e0f2d1640c", -4.6530005884269485, 327.45600074158574),
    ),
    "FedEraser": (
        lambda data, **dev: _federaser(data, **dev)["after"],
        (),
        ("ad3f21be503016917836fc0861ddfaf1", -0.9792702750128228, 6.748752135114046),
    ),
    "ClusteredUnlearning": (
        lambda data, **dev: _clustered(data, False, **dev)["after"],
        (),
        ("8b62f035d15cf29de4da2e36b6f7acc0", -2.6469445221837304, 654.2328502939827),
    ),
    "ClusteredUnlearning (secure)": (
        lambda data, **dev: _clustered(data, True, **dev)["after"],
        (),
        ("23f95842986735d8fc472b00c738590d", -2.6469445133134286, 654.232850290804),
    ),
    "RapidRetraining (loop)": (
        lambda data, **dev: _rapid(data, "loop", **dev)["after"],
        (),
        ("ef2d8854e2f63ea1db24d3eb553b9423", -13.819305730983615, 15.381004648283124),
    ),
    "RapidRetraining (vmap)": (
        lambda data, **dev: _rapid(data, "vmap", **dev)["after"],
        (),
        ("251e16e1aa1b6a79f921c6d521bc5b47", -13.819305645301938, 15.381004570052028),
    ),
}


def _cpu_vendor() -> str:
    """``GenuineIntel``, ``AuthenticAMD``, ...: torch's MKL takes other code paths (other roundings) on each."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("vendor_id"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor()


def _platform() -> tuple[str, str, str, str]:
    return torch.__version__, np.__version__, torch.backends.cpu.get_cpu_capability(), _cpu_vendor()


@pytest.mark.parametrize("name", [k for k in RECORDED if k != "platform"])
@pytest.mark.parametrize("device", ["cpu", "auto"])
def test_the_cpu_path_matches_what_the_code_gave_before_devices(data, name, device, monkeypatch):
    """Bit for bit where the record was made (same torch, numpy and kernels); elsewhere (another CPU rounds
    differently) the sums agree to 1e-3 of the sum of absolute values."""
    monkeypatch.setattr("fedlib.learn._local.choose_method", _rule_when_recorded)
    monkeypatch.setattr("fedlib.unlearn._rapid.choose_method", _rule_when_recorded)
    if device == "auto" and CUDA:
        pytest.skip("'auto' is the GPU here")
    run, args, (digest, total, absolute) = RECORDED[name]
    got = np.ascontiguousarray(run(data, *args, device=device))
    values = got.astype(np.float64)
    if _platform() == RECORDED["platform"]:
        assert hashlib.sha256(got.tobytes()).hexdigest()[:32] == digest, name
    assert abs(values.sum() - total) <= 1e-3 * absolute, name
    assert abs(np.abs(values).sum() - absolute) <= 1e-3 * absolute, name


# -- the estimators' device: stored as given, resolved by fit, checked before training -------------------------------


def _estimators(device):
    return {
        "FederatedTrainer": FederatedTrainer("softmax", rounds=1, device=device),
        "AsyncFederatedTrainer": AsyncFederatedTrainer("softmax", concurrency=2, buffer=1, device=device),
        "FedEraser": FedEraser("softmax", concurrency=2, buffer=1, device=device),
        "ClusteredUnlearning": ClusteredUnlearning("softmax", cluster_size=3, rounds=1, secure=False, device=device),
        "RapidRetraining": RapidRetraining("softmax", rounds=1, device=device),
        "FineTuning": FineTuning("softmax", rounds=1, device=device),
    }


def _fit(name, estimator, data):
    X, y = data["features"]
    parts = np.array_split(np.arange(60), 6)
    if name in ("AsyncFederatedTrainer", "FedEraser"):
        return estimator.fit(X[:60], y[:60], parts=parts, rounds=2)
    return estimator.fit(X[:60], y[:60], parts=parts)


@pytest.mark.parametrize("name", list(_estimators("cpu")))
def test_device_is_a_hyper_parameter_resolved_by_fit(data, name):
    assert _estimators("cpu")[name].get_params()["device"] == "cpu"
    assert type(_estimators("cpu")[name])("softmax", **_required(name)).device == "cpu"  # the default
    estimator = _estimators("auto")[name]
    assert estimator.get_params()["device"] == "auto" and clone(estimator).device == "auto"
    assert not hasattr(estimator, "device_")
    fitted = _fit(name, estimator, data)
    assert fitted.device == "auto"  # stored as given
    assert fitted.device_ == resolve_device("auto")


def _required(name) -> dict:
    return {
        "FederatedTrainer": {},
        "AsyncFederatedTrainer": {"concurrency": 2, "buffer": 1},
        "FedEraser": {"concurrency": 2, "buffer": 1},
        "ClusteredUnlearning": {"cluster_size": 3, "rounds": 1},
        "RapidRetraining": {"rounds": 1},
        "FineTuning": {"rounds": 1},
    }[name]


BAD = [("tpu", ValueError, "device='tpu'"), (3, TypeError, "device must be")] + (
    [] if CUDA else [("cuda", DeviceUnavailableError, "device='cuda'")]
)


@pytest.mark.parametrize("name", list(_estimators("cpu")))
@pytest.mark.parametrize(("device", "error", "match"), BAD)
def test_fit_refuses_a_bad_device_before_training(data, name, device, error, match):
    estimator = _estimators(device)[name]
    with pytest.raises(error, match=match):
        _fit(name, estimator, data)
    assert not any(hasattr(estimator, a) for a in ("params_", "trainers_", "history_", "device_"))


@pytest.mark.parametrize(("device", "error", "match"), BAD)
def test_functions_refuse_a_bad_device(data, device, error, match):
    X, y = data["features"]
    model = make_model("softmax", 3, input_shape=(20,), random_state=0)
    parts = np.array_split(np.arange(60), 3)
    calls = [
        lambda: train_clients(model, get_flat(model), X, y, parts, device=device),
        lambda: predict_logits(model, X, device=device),
        lambda: predict_proba(model, X, device=device),
        lambda: accuracy(model, X, y, device=device),
        lambda: perplexity(model, X, y, device=device),
        lambda: profile_clients(model, get_flat(model), X, y, parts, training_times=[1, 2, 3], device=device),
    ]
    for call in calls:
        with pytest.raises(error, match=match):
            call()


def test_functions_default_to_where_the_examples_are(data):
    """``device=None``: a tensor's device, the CPU for an array; the results are host numpy either way."""
    X, y = data["features"]
    model = make_model("softmax", 3, input_shape=(20,), random_state=0)
    parts = np.array_split(np.arange(60), 3)
    from_array = train_clients(model, get_flat(model), X, y, parts, random_state=0)
    from_tensor = train_clients(model, get_flat(model), torch.from_numpy(X), torch.from_numpy(y), parts, random_state=0)
    assert isinstance(from_tensor.params, np.ndarray) and from_tensor.params.dtype == np.float32
    assert _same_bits({"p": from_array.params}, {"p": from_tensor.params}) == []
    logits = predict_logits(model, torch.from_numpy(X))
    assert isinstance(logits, np.ndarray) and logits.dtype == np.float32


# -- what a fitted estimator keeps: host tensors, one device copy, pickles without it --------------------------------


def test_clusters_share_one_device_copy_of_the_examples_and_pickle_it_once(data):
    X = np.random.default_rng(1).random((2000, 784), dtype=np.float32)
    y = np.random.default_rng(2).integers(0, 10, 2000)
    system = ClusteredUnlearning("softmax", cluster_size=5, rounds=1, secure=False, random_state=0)
    system.fit(X, y, parts=np.array_split(np.arange(2000), 20), test_data=(X[:300], y[:300]))
    assert all(t._X_device is system._X_device and t._y_device is system._y_device for t in system.trainers_)
    assert system._X_device.get() is system._X  # on the CPU the copy is the host tensor itself
    system.unlearn(clients=[0])
    assert all(t._X_device is system._X_device for t in system.trainers_)  # the retrained cluster's trainer too
    blob = pickle.dumps(system)
    assert len(blob) < X.nbytes + X[:300].nbytes + 2_000_000  # the examples once, not once per trainer
    loaded = pickle.loads(blob)
    assert all(t._X_device is loaded._X_device for t in loaded.trainers_)
    assert _same_bits({"p": loaded.predict(X[:100])}, {"p": system.predict(X[:100])}) == []


@pytest.mark.parametrize("name", list(_estimators("cpu")))
def test_a_fitted_estimator_pickles_and_trains_on_as_before(data, name):
    fitted = _fit(name, _estimators("cpu")[name], data)
    loaded = pickle.loads(pickle.dumps(fitted))
    assert loaded.device_ == CPU

    def go_on(estimator) -> np.ndarray:
        """More training (an unlearning request for the unlearning methods), then the model(s)."""
        if name == "FederatedTrainer":
            return estimator.run(2).params_
        if name in ("AsyncFederatedTrainer", "FedEraser"):
            return estimator.run(rounds=3).params_
        estimator.unlearn(clients=[1])
        return estimator.predict(data["features"][0])

    assert _same_bits({"p": go_on(fitted)}, {"p": go_on(loaded)}) == []


def test_a_device_copy_is_made_once_and_never_pickled():
    host = torch.arange(12.0).reshape(3, 4)
    on_cpu = DeviceData.reuse(host, CPU)
    assert on_cpu.get() is host and DeviceData.reuse(host, CPU, [on_cpu]) is on_cpu
    assert DeviceData.reuse(host.clone(), CPU, [on_cpu]) is not on_cpu  # another tensor: its own copy
    gpu = DeviceData(host, torch.device("cuda", 0))
    gpu._copy = torch.zeros(1)  # stands for a tensor on the GPU
    state = gpu.__getstate__()
    assert state == (host, "cuda:0")  # the host tensor and the device's name, no copy
    loaded = pickle.loads(pickle.dumps(gpu))
    assert loaded._copy is None and loaded.device == torch.device("cuda", 0)
    assert torch.equal(loaded.host, host) and loaded.host.device == CPU
    if not CUDA:  # unpickled where there is no GPU: the first use says so
        with pytest.raises(DeviceUnavailableError, match="device=device"):
            loaded.get()


def test_cudnn_is_deterministic_while_cuda_trains_and_restored_after():
    cudnn = torch.backends.cudnn
    saved = cudnn.deterministic, cudnn.benchmark
    try:
        cudnn.deterministic, cudnn.benchmark = False, True
        with cuda_determinism(CPU):
            assert (cudnn.deterministic, cudnn.benchmark) == (False, True)  # the CPU: nothing set
        with pytest.raises(KeyError), cuda_determinism(torch.device("cuda")):
            assert (cudnn.deterministic, cudnn.benchmark) == (True, False)
            raise KeyError
        assert (cudnn.deterministic, cudnn.benchmark) == (False, True)
    finally:
        cudnn.deterministic, cudnn.benchmark = saved


# -- the CUDA path's placement, checked without a GPU ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "shape", "n_classes"), [("cnn_small", (1, 28, 28), 10), ("mlp", (12,), 10), ("char_mlp", (8,), 30)]
)
def test_every_step_keeps_its_tensors_on_the_parameters_device(name, shape, n_classes):
    """On torch's meta device an operation that mixes in a host tensor raises, as on CUDA: the steps of local SGD
    and of rapid retraining (both paths, momentum, ragged clients with idle steps) build everything where ``P`` is."""
    meta = torch.device("meta")
    model = make_model(name, n_classes, input_shape=shape, random_state=0)
    layout = ParameterLayout(model)
    X = torch.empty((100, *shape), device=meta)
    y = torch.empty(100, dtype=torch.int64, device=meta)
    rng = np.random.default_rng(0)
    parts = [rng.permutation(100)[:k] for k in (5, 17, 30, 9)]
    for config in (LocalSGD(batch_size=4), LocalSGD(batch_size=6, epochs=2, momentum=0.9, weight_decay=0.01)):
        orders = [[p[rng.permutation(len(p))] for _ in range(config.epochs)] for p in parts]
        for train in (_train_loop, _train_vmap):
            P = torch.empty((4, layout.n_parameters), device=meta)
            train(model, layout, P, X, y, orders, config)
        for train in (_rapid_loop, _rapid_vmap):
            P = torch.empty((4, layout.n_parameters), device=meta)
            train(model, layout, P, X, y, orders, _RapidStep(0.1, 0.01, 0.9, 0.999), config.batch_size)
    assert all(p.device == CPU for p in model.parameters())  # the caller's model is not moved


# -- on a GPU, where one is present ----------------------------------------------------------------------------------

#: CPU against CUDA after a few rounds: float32 kernels with other summation orders (and, for the CNN, cuDNN's TF32
#: convolutions on Ampere and newer GPUs, which torch allows by default) move the last bits, and training compounds it.
TOLERANCE = {
    "softmax": dict(rtol=1e-3, atol=1e-4),
    "mlp": dict(rtol=1e-3, atol=1e-4),
    "cnn_small": dict(rtol=2e-2, atol=2e-3),
}


@needs_cuda
@pytest.mark.parametrize("name", ["softmax", "mlp", "cnn_small"])
@pytest.mark.parametrize("method", ["loop", "vmap"])
def test_cuda_local_training_agrees_with_the_cpu(data, name, method):
    model = make_model(name, random_state=1)
    X, y = data["images"]
    options = dict(config=LocalSGD(lr=0.1, batch_size=8, epochs=2, momentum=0.9), random_state=3, method=method)
    cpu = train_clients(model, get_flat(model), X, y, data["ragged"], **options)
    gpu = train_clients(model, get_flat(model), X, y, data["ragged"], device="cuda", **options)
    assert isinstance(gpu.params, np.ndarray) and gpu.params.dtype == np.float32
    np.testing.assert_allclose(gpu.params, cpu.params, **TOLERANCE[name])


@needs_cuda
def test_cuda_trainers_agree_with_the_cpu_and_keep_the_bookkeeping_exact(data):
    """What is drawn on the host (participants, dropouts, the clock) is identical; the models agree to a tolerance."""
    for name, run in [
        ("FederatedTrainer", lambda **d: _fedavg(data, False, **d)),
        ("AsyncFederatedTrainer", lambda **d: _async(data, "per_cluster", **d)),
        ("ClusteredUnlearning", lambda **d: _clustered(data, False, **d)),
        ("RapidRetraining", lambda **d: _rapid(data, "vmap", **d)),
    ]:
        cpu, gpu = run(device="cpu"), run(device="cuda")
        for key in ("summed", "dropped", "times", "clients"):
            if key in cpu:
                np.testing.assert_array_equal(gpu[key], cpu[key], err_msg=f"{name} {key}")
        for key in ("params", "params10", "after"):
            if key in cpu:
                np.testing.assert_allclose(gpu[key], cpu[key], **TOLERANCE["cnn_small"], err_msg=f"{name} {key}")


@needs_cuda
def test_cuda_reruns_are_bit_identical_and_clustered_unlearning_stays_exact(data):
    """On one GPU with the same software (cuDNN made deterministic by fedlib), a rerun repeats every bit, and a
    retrained cluster equals its training from scratch bit for bit, as on the CPU."""
    assert _same_bits(_fedavg(data, False, device="cuda"), _fedavg(data, False, device="cuda")) == []
    X, y = data["features"]
    system = ClusteredUnlearning(
        "mlp",
        cluster_size=5,
        rounds=2,
        secure=False,
        local=LocalSGD(lr=0.2, batch_size=6),
        random_state=1,
        device="cuda",
    ).fit(X, y, parts=np.array_split(np.arange(200), 20))
    system.unlearn(clients=[3])
    for i, trainer in enumerate(system.trainers_):
        np.testing.assert_array_equal(system.fresh_trainer(i).run(trainer.round_).params_, trainer.params_)


@needs_cuda
def test_cuda_fitted_estimators_pickle_host_tensors_only(data):
    X, y = data["features"]
    trainer = FederatedTrainer("mlp", rounds=1, device="cuda", random_state=0).fit(
        X, y, parts=np.array_split(np.arange(200), 4), test_data=(X[:20], y[:20])
    )
    assert trainer._X_device.get().is_cuda and not trainer._X.is_cuda
    loaded = pickle.loads(pickle.dumps(trainer))
    assert loaded._X_device._copy is None and not loaded._X_device.host.is_cuda
    np.testing.assert_array_equal(loaded.run(1).params_, trainer.run(1).params_)
