"""Rapid retraining (Liu et al., INFOCOM 2022): the diagonal FIM, the step, exactness, speed against full retraining."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from torch import nn

from fedlib.base import UnlearningReport
from fedlib.exceptions import UnlearningRequestError
from fedlib.learn import LocalSGD, ParameterLayout, get_flat, init_parameters, predict_proba
from fedlib.unlearn import ClusteredUnlearning, FineTuning, RapidRetraining
from fedlib.unlearn._rapid import _mean_gradient_and_fisher, _rapid_update, _RapidStep

LOCAL = LocalSGD(lr=0.1, batch_size=5)


def separable(seed: int = 0):
    """Two separable classes in 6 dimensions, 24 clients of 10 examples, a held-out test set of 100."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 1.5, (2, 6)).astype(np.float32)
    y = rng.integers(0, 2, 340)
    X = (centres[y] + rng.normal(0, 1, (340, 6))).astype(np.float32)
    return X[:240], y[:240], np.array_split(np.arange(240), 24), (X[240:], y[240:])


@pytest.fixture(scope="module")
def task():
    return separable(0)


def build(**options) -> RapidRetraining:
    defaults = dict(rounds=3, unlearning_rounds=2, local=LOCAL, lr=0.3, random_state=3)
    return RapidRetraining("softmax", **{**defaults, **options})


def make(task, **options) -> RapidRetraining:
    X, y, clients, test = task
    return build(**options).fit(X, y, parts=clients, test_data=test)


def test_constructor_only_stores_hyper_parameters(task):
    X, y, clients, _ = task
    model = build(lr=-1.0, betas=(0.9,))  # invalid, but not checked before fit
    assert model.get_params()["lr"] == -1.0 and not hasattr(model, "params_")
    assert model.unlearns == frozenset({"clients"})
    with pytest.raises(NotFittedError):
        model.unlearn(clients=[0])
    with pytest.raises(NotFittedError):
        model.predict(X)
    for bad, match in [
        (dict(lr=0.0), "lr"),
        (dict(damping=0.0), "damping"),
        (dict(betas=(0.9,)), "pair"),
        (dict(betas=(1.0, 0.9)), "beta1"),
        (dict(betas=(0.9, -0.1)), "beta2"),
        (dict(unlearning_rounds=0), "unlearning_rounds"),
        (dict(method="gpu"), "method"),
    ]:
        with pytest.raises(ValueError, match=match):
            build(**bad).fit(X, y, parts=clients)
    with pytest.raises(TypeError, match="LocalSGD"):
        build(local="sgd").fit(X, y, parts=clients)
    fitted = make(task)
    assert repr(clone(fitted)) == repr(fitted)
    assert fitted.n_features_in_ == 6 and fitted.params_.dtype == np.float32
    state = fitted._model_state()
    assert set(state) == {"params"} and not np.shares_memory(state["params"], fitted.params_)
    np.testing.assert_array_equal(state["params"], fitted.params_)
    assert build(unlearning_rounds=None, rounds=5).fit(X, y, parts=clients).unlearn(clients=[0]).rounds == 3


def test_fit_is_fedavg_and_reports_its_cost(task):
    model = make(task)
    report = model.fit_report_
    assert isinstance(report, UnlearningReport) and report.rounds == 3 and report.exact
    assert report.clients_retrained == tuple(range(24)) and report.forgotten == "nothing (training)"
    d = model.params_.size
    assert report.bytes_sent == 3 * 24 * 4 * d and report.client_seconds > 0
    assert [h["round"] for h in model.history_] == [1, 2, 3] and model.history_[-1]["accuracy"] > 0.8
    assert model.evaluate() == model.history_[-1]["accuracy"] == model.evaluate(*task[3])
    proba = predict_proba(model.model_, task[3][0], parameters=model.params_)
    np.testing.assert_array_equal(model.predict(task[3][0]), proba.argmax(axis=1))
    with pytest.raises(ValueError, match="both"):
        model.evaluate(task[3][0])


def test_same_seed_same_bits_and_the_retraining_is_reproducible(task):
    a, b = make(task), make(task)
    np.testing.assert_array_equal(a.params_, b.params_)
    ra, rb = a.unlearn(clients=[4, 17]), b.unlearn(clients=[4, 17])
    np.testing.assert_array_equal(a.params_, b.params_)
    assert ra.clients_retrained == rb.clients_retrained == tuple(u for u in range(24) if u not in (4, 17))
    # the retraining is the fresh trainer's run: the initial model, the remaining clients, this request's seed
    fresh = a.fresh_trainer()
    np.testing.assert_array_equal(fresh.params_, a.initial_params_)
    np.testing.assert_array_equal(fresh.run(ra.rounds).params_, a.params_)
    assert not np.array_equal(make(task, random_state=4).params_, a.params_)


def test_the_forgotten_rows_are_never_read(task):
    model = make(task)
    report = model.unlearn(clients=[5])
    X_poisoned = task[0].copy()
    X_poisoned[model.parts_[5]] = np.nan
    reference = model.fresh_trainer(X=X_poisoned).run(report.rounds)
    np.testing.assert_array_equal(reference.params_, model.params_)
    assert np.isfinite(model.params_).all() and 5 not in reference.client_ids_


def test_report_of_a_request(task):
    model = make(task)
    report = model.unlearn(clients=[5])
    d = model.params_.size
    assert report.exact and report.server_refit and report.rounds == 2 and report.forgotten_clients == (5,)
    assert report.clients_retrained == tuple(u for u in range(24) if u != 5)
    assert report.bytes_sent == 2 * 23 * 4 * d and report.client_seconds > 0 and report.seconds >= report.client_seconds
    assert report.details["start"] == "initial model" and "not the model fit would give" in report.details["optimizer"]
    assert [p["round"] for p in report.details["curve"]] == [1, 2]
    assert report.details["accuracy"] == model.evaluate() == report.details["curve"][-1]["accuracy"]
    assert model.unlearned_ == [5] and model.generation_ == 1
    second = model.unlearn(clients=[0, 9])  # a second request retrains from scratch again, with a new seed
    assert second.clients_retrained == tuple(u for u in range(24) if u not in (0, 5, 9)) and model.generation_ == 2
    np.testing.assert_array_equal(model.fresh_trainer().run(2).params_, model.params_)
    with pytest.raises(UnlearningRequestError, match="every client"):
        model.unlearn(clients=[u for u in range(24) if u not in (0, 5, 9)])
    assert model.generation_ == 2


def test_rapid_retraining_matches_full_retraining_in_fewer_rounds(task):
    """On a separable task, 3 rapid rounds do as well as 9 rounds of FedAvg retrained from scratch with SGD.

    Measured (seed 0): full retraining 0.69, 0.79, 0.82, 0.87, 0.87, 0.87, 0.88, 0.90, 0.90 over its 9
    rounds; rapid retraining 0.91, 0.96, 0.97 over 3; with the step's sign flipped, 0.07-0.09.
    """
    X, y, clients, test = task
    full = ClusteredUnlearning("softmax", cluster_size=24, rounds=9, local=LOCAL, secure=False, random_state=0)
    full_curve = full.fit(X, y, parts=clients, test_data=test).unlearn(clients=[5]).details["curve"]
    full_curve = [p["vote accuracy"] for p in full_curve]
    rapid = make(task, rounds=9, unlearning_rounds=3, random_state=0)
    rapid_curve = [p["accuracy"] for p in rapid.unlearn(clients=[5]).details["curve"]]
    assert rapid_curve[-1] >= full_curve[-1] - 0.05 and rapid_curve[-1] >= 0.85
    first = [next((r for r, a in enumerate(curve, 1) if a >= 0.85), np.inf) for curve in (rapid_curve, full_curve)]
    assert first[0] < first[1], (rapid_curve, full_curve)
    broken = make(task, rounds=9, unlearning_rounds=3, random_state=0)
    step = broken._step
    broken._step = _RapidStep(lr=-step.lr, damping=step.damping, beta1=step.beta1, beta2=step.beta2)  # a sign error
    assert broken.unlearn(clients=[5]).details["accuracy"] < 0.6  # the bound above catches it


def test_unlike_fine_tuning_rapid_retraining_loses_the_forgotten_clients_influence():
    """Client 0 alone holds a third class: the model it helped train predicts that class on its data;
    retraining from scratch loses it, fine-tuning keeps it (measured: p = 0.86 before, 0.82 after
    fine-tuning, 0.51 for FedAvg retrained from the same initial model, 0.08 after rapid retraining)."""
    rng = np.random.default_rng(0)
    centres = rng.normal(0, 1.5, (3, 6)).astype(np.float32)
    y = rng.integers(0, 2, 240)
    y[:30] = 2
    X = (centres[y] + rng.normal(0, 1, (240, 6))).astype(np.float32)
    parts = [np.arange(0, 30), *np.array_split(np.arange(30, 240), 11)]
    rapid = build(rounds=10, unlearning_rounds=4, random_state=0).fit(X, y, parts=parts)
    tuned = FineTuning("softmax", rounds=10, unlearning_rounds=3, local=LOCAL, random_state=0).fit(X, y, parts=parts)
    np.testing.assert_array_equal(rapid.params_, tuned.params_)  # the same FedAvg training

    def p_own(model):
        return float(predict_proba(model.model_, X[parts[0]], parameters=model.params_)[:, 2].mean())

    before = p_own(rapid)
    rapid.unlearn(clients=[0])
    tuned.unlearn(clients=[0])
    assert before > 0.7 and p_own(tuned) > 0.7
    assert p_own(rapid) < 0.3


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 7), hidden=st.integers(1, 4), seed=st.integers(0, 2**31 - 1))
def test_diagonal_fisher_is_the_mean_squared_per_example_gradient(n, hidden, seed):
    """``diag Γ`` (vectorised per-example gradients) equals the mean of squared gradients of plain autograd,
    one example at a time, and ``Δ`` the gradient of the mean loss."""
    torch.manual_seed(0)
    model = init_parameters(nn.Sequential(nn.Linear(3, hidden), nn.Tanh(), nn.Linear(hidden, 3)), random_state=seed)
    rng = np.random.default_rng(seed)
    X = rng.normal(0, 2, (n, 3)).astype(np.float32)
    y = rng.integers(0, 3, n)
    mean, fisher = _mean_gradient_and_fisher(model, get_flat(model), X, y)
    X_t, y_t = torch.from_numpy(X), torch.from_numpy(y)
    per_example = []
    for i in range(n):
        loss = nn.functional.cross_entropy(model(X_t[i : i + 1]), y_t[i : i + 1])
        per_example.append(torch.cat([g.reshape(-1) for g in torch.autograd.grad(loss, list(model.parameters()))]))
    G = torch.stack(per_example).double().numpy()
    np.testing.assert_allclose(fisher, (G**2).mean(axis=0), rtol=1e-5, atol=1e-7)
    full = torch.autograd.grad(nn.functional.cross_entropy(model(X_t), y_t), list(model.parameters()))
    np.testing.assert_allclose(mean, torch.cat([g.reshape(-1) for g in full]).numpy(), rtol=1e-5, atol=1e-7)
    assert (fisher >= 0).all() and (mean**2 <= fisher * (1 + 1e-5) + 1e-7).all()  # Cauchy-Schwarz: Δ_j² ≤ Γ_jj


@settings(max_examples=40, deadline=None)
@given(steps=st.integers(1, 5), seed=st.integers(0, 2**31 - 1))
def test_the_step_is_the_bias_corrected_fim_newton_step(steps, seed):
    """``ω ← ω − η m̂ / (v̂ + λ)`` with Adam's bias correction, per row; an inactive row keeps every bit."""
    rng = np.random.default_rng(seed)
    step = _RapidStep(lr=0.1, damping=0.01, beta1=0.9, beta2=0.999)
    P = torch.from_numpy(rng.normal(size=(3, 4)).astype(np.float32))
    m, v, t = torch.zeros_like(P), torch.zeros_like(P), torch.zeros(3, dtype=torch.int64)
    w, m_ref, v_ref = P.double().numpy().copy(), np.zeros((3, 4)), np.zeros((3, 4))
    for s in range(1, steps + 1):
        g = rng.normal(size=(3, 4)).astype(np.float32)
        f = (g**2 + rng.random((3, 4))).astype(np.float32)
        active = torch.tensor([True, True, s % 2 == 1])
        kept = P[2].clone()
        _rapid_update(P, m, v, t, torch.from_numpy(g), torch.from_numpy(f), step, active)
        if not bool(active[2]):
            assert torch.equal(P[2], kept)
        for row in range(3):
            if not bool(active[row]):
                continue
            n = int(t[row])
            m_ref[row] = 0.9 * m_ref[row] + 0.1 * g[row]
            v_ref[row] = 0.999 * v_ref[row] + 0.001 * f[row]
            w[row] -= 0.1 * (m_ref[row] / (1 - 0.9**n)) / (v_ref[row] / (1 - 0.999**n) + 0.01)
    assert t.tolist() == [steps, steps, (steps + 1) // 2]
    np.testing.assert_allclose(P.numpy(), w, rtol=1e-4, atol=1e-5)


def test_vmap_and_loop_paths_agree_on_ragged_clients():
    """Clients of 3 to 17 examples, two epochs: the vectorised path pads and masks, the loop does not."""
    rng = np.random.default_rng(1)
    sizes = np.array([3, 17, 8, 12, 5, 10])
    X = rng.normal(size=(sizes.sum(), 5)).astype(np.float32)
    y = rng.integers(0, 3, sizes.sum())
    parts = np.split(np.arange(sizes.sum()), np.cumsum(sizes)[:-1])
    local = LocalSGD(lr=0.1, batch_size=4, epochs=2)
    models = {
        method: build(rounds=1, local=local, method=method, random_state=0).fit(X, y, parts=parts)
        for method in ("vmap", "loop")
    }
    np.testing.assert_allclose(models["vmap"].params_, models["loop"].params_, rtol=1e-5, atol=1e-6)
    for model in models.values():
        model.unlearn(clients=[0])
    assert models["vmap"].trainer_.local_updates([0]).method == "vmap"
    np.testing.assert_allclose(models["vmap"].params_, models["loop"].params_, rtol=1e-4, atol=1e-5)
    assert not np.allclose(models["vmap"].params_, models["vmap"].initial_params_)
    # padding never reads another client's rows: client 0 held row 0, the rows short batches used to be padded with
    X_poisoned = X.copy()
    X_poisoned[parts[0]] = np.nan
    for model in models.values():
        np.testing.assert_array_equal(model.fresh_trainer(X=X_poisoned).run(2).params_, model.params_)


def test_layout_of_the_fisher_follows_the_flat_vector():
    """``Δ`` and ``diag Γ`` come out in the order of the flat parameter vector (weights, then biases)."""
    model = init_parameters(nn.Linear(2, 2), random_state=0)
    layout = ParameterLayout(model)
    X, y = np.array([[1.0, 0.0]], dtype=np.float32), np.array([0])
    mean, fisher = _mean_gradient_and_fisher(model, get_flat(model), X, y)
    assert layout.names == ("weight", "bias")
    # one example: the bias gradient is p - onehot(y); the weight gradient is its outer product with x = (1, 0)
    np.testing.assert_allclose(mean[[1, 3]], 0.0, atol=1e-7)
    np.testing.assert_allclose(mean[[0, 2]], mean[4:], rtol=1e-6)
    np.testing.assert_allclose(fisher, mean**2, rtol=1e-6)
