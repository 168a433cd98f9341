"""Rapid retraining (Liu, Xu, Yuan, Wang and Li, INFOCOM 2022): retrain from scratch with a diagonal-FIM Newton step.

"The Right to be Forgotten in Federated Learning: An Efficient Realization with Rapid Retraining"
(arXiv 2203.07320). After a forget request the server re-initialises the global model and the
remaining clients retrain it with FedAvg, the forgotten data never used again; what makes the
retraining rapid is the clients' local step, a quasi-Newton step instead of SGD:

1. Newton-type update. The first-order Taylor expansion of client ``k``'s gradient on its remaining
   data ``D_k^u`` around the optimum, ``∇F(ω*) + H(ω*)(ω^u − ω*) ≈ 0``, gives the local update
   ``ω_{t+1} = ω_t − η H_t^{-1} Δ_t`` with ``Δ_t`` the mini-batch gradient.
2. Diagonal empirical Fisher information. The Hessian is replaced by the empirical FIM of the
   mini-batch, ``Γ_t = (1/b) Σ_i ∇ℓ_i(ω_t) ∇ℓ_i(ω_t)ᵀ`` (the outer product of the per-example
   gradients of the cross-entropy, a negative log-likelihood, is an asymptotically unbiased
   estimate of the Hessian: the paper's Lemma 1), of which only the diagonal
   ``diag(Γ_t)_j = (1/b) Σ_i (∂ℓ_i/∂ω_j)²`` is kept: inverting it is a division.
3. Momentum. Exponential averages of the gradient and of the diagonal FIM,
   ``m_t = β₁ m_{t−1} + (1 − β₁) Δ_t`` and ``v_t = β₂ v_{t−1} + (1 − β₂) diag(Γ_t)``,
   corrected for their zero start (``m̂_t = m_t / (1 − β₁^t)``, ``v̂_t = v_t / (1 − β₂^t)``), damp the
   error of the approximation; the step is ``ω_{t+1} = ω_t − η m̂_t / (v̂_t + λ)``.
4. Aggregation. The server averages the clients' updates with FedAvg's weights (the paper's
   aggregation rule; Algorithm 1 is steps 1 to 4 per round).

The damping ``λ`` makes the division safe where the FIM vanishes and bounds the step: by the
Cauchy-Schwarz inequality ``|Δ_j| ≤ diag(Γ)_j^{1/2}``, so ``|Δ_j| / (diag(Γ)_j + λ) ≤ 1 / (2 √λ)``
(for one step; the averages of step 3 keep it approximately).

Plato (``TL-System/plato``, ``examples/unlearning/fedunlearning``, formerly
``examples/fedunlearning_baseline``) realises the paper as retraining from the checkpoint of the
round before the deleting clients were first selected (round 0 when they took part in round 1),
with the same client selection and random states restored (``exact_retrain``), and says the
paper's method is that retraining with the AdaHessian optimiser (``lr = 0.001``,
``betas = (0.9, 0.999)``, ``eps = 1e-8``, ``hessian_power = 1``, a fresh optimiser every round);
its ``fedun_trainer.py`` holds a docstring and no code. The choices made here:

- the diagonal empirical FIM of step 2, computed exactly from per-example gradients
  (``torch.func.vmap`` over the examples of a batch, and over clients), not AdaHessian's
  Hutchinson estimate of the Hessian's diagonal; the paper's block-diagonal FIM (blocks of
  ``b = 3``) is reduced to its diagonal (``b = 1``), which needs no matrix inverse at all;
- the FIM itself in the denominator (power 1, a Newton step): AdaHessian divides by the root of an
  average of squared curvatures, which for a curvature estimate is the same power;
- the form of step 3 is our reading: the paper names momentum on the FIM and its ``β₁ = 0.9``,
  ``β₂ = 0.999``; the zero-start correction and the additive ``λ`` are AdaHessian's (its ``eps``),
  as Plato runs it;
- as in Plato (and as :class:`fedlib.learn.LocalSGD` treats momentum) the averages start afresh
  in every round: clients keep no state between rounds;
- the restart is from the initial model of :meth:`RapidRetraining.fit` (drawn from the seed,
  independent of the data), as Plato reloads the checkpoint of round 0, and runs
  ``unlearning_rounds`` rounds with new example orders (a fresh seed per request), not the
  original training's;
- whole clients are forgotten (:attr:`~RapidRetraining.unlearns`), where the paper and Plato
  delete a share of some clients' samples; the ``B − ΔB`` of the paper (a mini-batch without its
  deleted samples) is then a full mini-batch of the remaining clients;
- the paper's ``η = 0.001`` goes with batches of 128 to 2048 images and 200 rounds; for a few dozen
  examples per client the defaults here are ``lr = 0.01`` and ``damping = 0.01`` (a coordinate
  moves at most 0.05 per step), which retrain softmax regression, ``"cnn_small"`` and ``"mlp"`` on
  2,000 MNIST images over 50 clients faster than local SGD; ``lr = 0.05`` already makes the CNN
  diverge, while softmax regression on a few features takes ``lr = 0.1`` and more.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, grad, vmap

from fedlib._typing import SeedLike
from fedlib._validation import check_is_fitted, check_scalar
from fedlib.learn import (
    ClientUpdates,
    FederatedTrainer,
    LocalSGD,
    ParameterLayout,
    check_training_data,
    choose_method,
    client_generator,
    cuda_determinism,
)
from fedlib.unlearn._finetuning import _FederatedForgetting

__all__ = ["RapidRetraining"]

#: Largest number of floats the per-example gradients of one chunk of clients may hold (clients chunked beyond it).
_MAX_FLOATS = 1 << 24


@dataclass(frozen=True)
class _RapidStep:
    """The hyper-parameters of the clients' rapid-retraining step: ``η``, ``λ``, ``β₁``, ``β₂``."""

    lr: float
    damping: float
    beta1: float
    beta2: float


def _statistics(model: nn.Module):
    """``(Δ, diag Γ)`` of one client's batch: the weighted mean of the per-example gradients and of their squares.

    ``w`` (0 or 1 per example, 0 for padding) and ``count`` (the number of real examples) let a
    batch be padded to the width of the other clients' when the function is mapped over clients.
    """

    def example_loss(params, x, y):
        return F.cross_entropy(functional_call(model, params, (x.unsqueeze(0),)), y.unsqueeze(0))

    per_example = vmap(grad(example_loss), in_dims=(None, 0, 0))

    def statistics(params, x, y, w, count):
        gradients = per_example(params, x, y)
        mean, fisher = {}, {}
        for name, G in gradients.items():
            weights = w.reshape(-1, *([1] * (G.dim() - 1)))
            mean[name] = (G * weights).sum(0) / count
            fisher[name] = (G * G * weights).sum(0) / count
        return mean, fisher

    return statistics


def _flat(tensors: dict[str, torch.Tensor], layout: ParameterLayout, n: int) -> torch.Tensor:
    """Per-parameter tensors of ``n`` clients as one ``(n, d)`` matrix, in the layout's order."""
    return torch.cat([tensors[name].reshape(n, -1) for name in layout.names], dim=1)


def _mean_gradient_and_fisher(model: nn.Module, parameters, X, y) -> tuple[np.ndarray, np.ndarray]:
    """The mean gradient ``Δ`` and the diagonal empirical FIM ``diag Γ`` of the mean cross-entropy on ``(X, y)``.

    What a client computes on one mini-batch (steps 1 and 2 of the module docstring), for a flat
    parameter vector; both have shape ``(d,)``.
    """
    layout = ParameterLayout(model)
    X_t, y_t, _ = check_training_data(X, y)
    P = torch.tensor(np.asarray(parameters, dtype=np.float32))
    count = torch.tensor(float(X_t.shape[0]))
    mean, fisher = _statistics(model)(layout.unflatten(P), X_t, y_t, torch.ones(X_t.shape[0]), count)
    return _flat(mean, layout, 1)[0].numpy(), _flat(fisher, layout, 1)[0].numpy()


def _rapid_update(P, m, v, t, mean, fisher, step: _RapidStep, active=None) -> None:
    """One rapid-retraining step of every row of ``P`` (n, d) in place: averages, bias correction, Newton step.

    ``m``, ``v`` (n, d) are the averages and ``t`` (n,) the steps taken, updated in place. With
    ``active`` (bool per row) the inactive rows (clients without examples in this step) keep their
    parameters, averages and step count bit for bit.
    """
    b1, b2 = step.beta1, step.beta2
    if active is None:
        t += 1
    else:
        t += active.to(t.dtype)
    steps = t.clamp(min=1).to(torch.float64)
    c1 = (1.0 - torch.pow(b1, steps)).to(torch.float32)[:, None]
    c2 = (1.0 - torch.pow(b2, steps)).to(torch.float32)[:, None]
    m_new = m * b1 + mean * (1.0 - b1)
    v_new = v * b2 + fisher * (1.0 - b2)
    change = (m_new / c1) / (v_new / c2 + step.damping) * step.lr
    if active is None:
        m.copy_(m_new)
        v.copy_(v_new)
        P.sub_(change)
    else:
        mask = active[:, None]
        m.copy_(torch.where(mask, m_new, m))
        v.copy_(torch.where(mask, v_new, v))
        P.sub_(torch.where(mask, change, torch.zeros((), dtype=P.dtype, device=P.device)))


def _rapid_vmap(model, layout, P, X, y, orders, step: _RapidStep, batch_size: int) -> None:
    """All clients of ``P`` (n, d) at once; short batches padded with zero-weight examples, idle clients masked.

    A client's padding repeats one of its own rows: weighted by 0 it adds nothing, and it is finite
    (``0 · NaN`` would not be 0), whatever the rows of other, forgotten clients hold. Everything runs
    on ``P``'s device (``X`` and ``y`` must be there); each step's indices and weights are built on the host.
    """
    device = P.device
    statistics = vmap(_statistics(model))
    n, B = P.shape[0], batch_size
    views = layout.unflatten(P)
    m, v = torch.zeros_like(P), torch.zeros_like(P)
    t = torch.zeros(n, dtype=torch.int64, device=device)
    sizes = np.array([len(epochs[0]) for epochs in orders])
    width = int(-(-sizes.max() // B)) * B
    for e in range(len(orders[0])):
        rows = np.full((n, width), -1, dtype=np.int64)
        for c in range(n):
            rows[c, : sizes[c]] = orders[c][e]
        for b in range(0, width, B):
            valid = rows[:, b : b + B] >= 0
            counts = valid.sum(axis=1)
            k = int(counts.max())
            idx = torch.from_numpy(np.where(valid[:, :k], rows[:, b : b + k], rows[:, :1])).to(device)
            w = torch.from_numpy(valid[:, :k].astype(np.float32)).to(device)
            count = torch.from_numpy(np.maximum(counts, 1).astype(np.float32)).to(device)
            mean, fisher = statistics(views, X[idx], y[idx], w, count)
            active = torch.from_numpy(counts > 0).to(device) if (counts == 0).any() else None
            _rapid_update(P, m, v, t, _flat(mean, layout, n), _flat(fisher, layout, n), step, active)


def _rapid_loop(model, layout, P, X, y, orders, step: _RapidStep, batch_size: int) -> None:
    """One client after another (batches still vectorised over their examples), in one working row on ``P``'s device."""
    device = P.device
    statistics = _statistics(model)
    row = torch.empty((1, layout.n_parameters), dtype=torch.float32, device=device)
    views = layout.unflatten(row[0])
    for c, epochs in enumerate(orders):
        row.copy_(P[c : c + 1])
        m, v = torch.zeros_like(row), torch.zeros_like(row)
        t = torch.zeros(1, dtype=torch.int64, device=device)
        for order in epochs:
            for b in range(0, len(order), batch_size):
                idx = torch.from_numpy(order[b : b + batch_size]).to(device)
                w = torch.ones(len(idx), dtype=torch.float32, device=device)
                count = torch.tensor(float(len(idx)), device=device)
                mean, fisher = statistics(views, X[idx], y[idx], w, count)
                _rapid_update(row, m, v, t, _flat(mean, layout, 1), _flat(fisher, layout, 1), step)
        P[c].copy_(row[0])


def _rapid_clients(
    model: nn.Module,
    start,
    X: torch.Tensor,
    y: torch.Tensor,
    clients: Sequence[np.ndarray],
    *,
    step: _RapidStep,
    local: LocalSGD,
    round_index: int,
    client_ids: np.ndarray,
    base_version,
    random_state: SeedLike,
    method: str,
    n_threads: int | None,
    device: torch.device,
) -> ClientUpdates:
    """Every client's rapid-retraining round from ``start``: :func:`fedlib.learn.train_clients` with the FIM step.

    The example orders are those :func:`fedlib.learn.train_clients` would draw
    (:func:`fedlib.learn.client_generator`), ``local.epochs`` passes in batches of ``local.batch_size``.
    ``X`` and ``y`` are on ``device`` (a resolved :class:`torch.device`), where the parameter matrix
    is allocated; the result comes back to the host.
    """
    began = time.perf_counter()
    if n_threads is not None:
        torch.set_num_threads(n_threads)
    layout = ParameterLayout(model)
    n, d = len(clients), layout.n_parameters
    start = np.asarray(start, dtype=np.float32)
    orders = []
    for rows, cid in zip(clients, client_ids, strict=True):
        rng = client_generator(random_state, round_index, int(cid))
        orders.append([rows[rng.permutation(len(rows))] for _ in range(local.epochs)])
    sizes = np.array([len(rows) for rows in clients], dtype=np.int64)
    if method == "auto":
        method = choose_method(sizes, model, local.batch_size, device=device, input_shape=tuple(X.shape[1:]))
    P = torch.empty((n, d), dtype=torch.float32, device=device)
    P.copy_(torch.from_numpy(start).expand(n, d) if start.ndim == 1 else torch.from_numpy(start))
    with cuda_determinism(device):  # on the CPU: nothing
        if method == "loop":
            _rapid_loop(model, layout, P, X, y, orders, step, local.batch_size)
        else:  # the per-example gradients of a chunk hold (clients × batch × d) floats
            chunk = max(1, _MAX_FLOATS // (d * min(local.batch_size, int(sizes.max()))))
            for lo in range(0, n, chunk):
                _rapid_vmap(model, layout, P[lo : lo + chunk], X, y, orders[lo : lo + chunk], step, local.batch_size)
    return ClientUpdates(
        client_ids=np.asarray(client_ids, dtype=np.int64),
        start=start.copy(),
        params=P.cpu().numpy(),  # on the CPU, P itself
        n_samples=sizes,
        round_index=round_index,
        base_version=np.broadcast_to(np.asarray(base_version, dtype=np.int64), (n,)).copy(),
        seconds=time.perf_counter() - began,
        method=method,
    )


class _RapidTrainer(FederatedTrainer):
    """FedAvg whose clients take the rapid-retraining step (Liu et al. 2022, Algorithm 1) instead of local SGD.

    Everything else, participants, aggregation, server step, records and evaluation, is
    :class:`fedlib.learn.FederatedTrainer`'s; ``_rapid`` (a :class:`_RapidStep`) is set before ``fit``.
    """

    _rapid: _RapidStep

    def local_updates(
        self, positions, *, start=None, round_index: int | None = None, base_version=None
    ) -> ClientUpdates:
        """Rapid-retraining rounds of some clients (the client half of a round).

        Parameters
        ----------
        positions : array-like of int
            Positions of the clients in :attr:`client_ids_`; the result's rows follow this order.
        start : array-like of float32, shape (d,) or (n, d), optional
            Where they start; default :attr:`params_`.
        round_index : int, optional
            Selects the example orders; default :attr:`round_`.
        base_version : int or array-like of int, optional
            Version of ``start``; default :attr:`round_`.

        Returns
        -------
        ClientUpdates
            Their parameters after the round.
        """
        check_is_fitted(self, "params_")
        positions = np.asarray(positions, dtype=np.int64).ravel()
        return _rapid_clients(
            self.model_,
            self.params_ if start is None else start,
            self._X_device.get(),
            self._y_device.get(),
            [self.clients_[p] for p in positions],
            step=self._rapid,
            local=self._local,
            round_index=self.round_ if round_index is None else round_index,
            client_ids=self.client_ids_[positions],
            base_version=self.round_ if base_version is None else base_version,
            random_state=self._root,
            method=self._method,
            n_threads=self._n_threads,
            device=self.device_,
        )


class RapidRetraining(_FederatedForgetting):
    """Federated unlearning by rapid retraining from scratch (Liu, Xu, Yuan, Wang and Li, INFOCOM 2022).

    Training is FedAvg over every client (McMahan et al., AISTATS 2017) with
    :class:`fedlib.learn.FederatedTrainer` and :class:`fedlib.learn.LocalSGD`, as
    :class:`~fedlib.unlearn.ClusteredUnlearning` with ``cluster_size = N`` trains.
    ``unlearn(clients=[...])`` removes the clients and retrains the global model
    from the initial model on the remaining clients for ``unlearning_rounds``
    rounds of FedAvg whose local step is the paper's (Algorithm 1): a Newton-type
    step preconditioned by the diagonal empirical Fisher information of each
    mini-batch, with momentum on the gradient and on the FIM,
    ``ω ← ω − η m̂ / (v̂ + λ)`` (the module docstring derives it step by step and
    lists where it departs from the paper and from Plato). The forgotten clients'
    data is never read again, and the starting point depends on the seed only:
    the model after a request is one trained from scratch without them, so the
    report says ``exact=True``. It is not the model :meth:`fit` would give
    without them: the retraining uses another optimiser (and fewer rounds) than
    the first training's local SGD. Updates are summed in the clear (plain sums,
    :class:`fedlib.learn.PlainSum`): no secure aggregation.

    Parameters
    ----------
    model : str or torch.nn.Module, default="softmax"
        A :data:`fedlib.learn.MODELS` name or an architecture without buffers.
    rounds : int
        FedAvg rounds ``R`` of the first training.
    unlearning_rounds : int or None, default=None
        Rounds of every rapid retraining; default ``⌈R / 2⌉``.
    local : fedlib.learn.LocalSGD, optional
        Local training of the first training; its ``batch_size`` and ``epochs`` are also the
        rapid retraining's (the same local work per round). Default ``LocalSGD()``.
    lr : float, default=0.01
        ``η`` of the rapid step (the paper: 0.001, for batches of 128 images and more).
    damping : float, default=0.01
        ``λ`` added to the diagonal FIM; bounds a coordinate's step by ``η / (2 √λ)``.
    betas : (float, float), default=(0.9, 0.999)
        ``(β₁, β₂)``: momentum of the gradient and of the diagonal FIM (the paper's values).
    eval_every : int, default=1
        Rounds between evaluations on the ``test_data`` given to :meth:`fit`.
    method : {"auto", "vmap", "loop"}, default="auto"
        Local-training path, of the first training (:func:`fedlib.learn.train_clients`) and of
        the rapid retraining (vectorised over clients, or client by client; both vectorise the
        per-example gradients of a batch).
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None, default=None
        Root seed: the initial model and every example order, of the training (child 0) and of the
        retraining serving the ``g``-th request (child ``(1, g)``).
    device : str or torch.device, default="cpu"
        Where the first training and every rapid retraining run (``"cpu"``, ``"cuda"``,
        ``"cuda:N"``, ``"auto"``; :func:`fedlib.learn.resolve_device`); the global model stays on
        the host. On the CPU the bits are those of a run without the option.

    Attributes
    ----------
    params_ : ndarray of float32, shape (d,)
        The global model.
    device_ : torch.device
        The device training runs on (``device`` resolved).
    initial_params_ : ndarray of float32, shape (d,)
        The model before the first round (drawn from the seed); every retraining starts here.
    model_ : torch.nn.Module
        The architecture (its own parameters are not used).
    parts_ : list of ndarray of int64
        Client ``u``'s rows of the ``X`` given to :meth:`fit`.
    trainer_ : fedlib.learn.FederatedTrainer
        The trainer of the last run: the first training, or the last request's retraining.
    unlearned_ : list of int
        Forgotten clients, in request order.
    generation_ : int
        Requests served.
    history_ : list of dict
        Per evaluated round of the first training: ``round`` and ``accuracy``.
    n_features_in_ : int
        Features per example (the product of ``X.shape[1:]``).
    fit_report_ : UnlearningReport
        The first training: every client as retrained, ``rounds``, ``client_seconds`` (local
        training), ``aggregation_seconds`` and ``bytes_sent`` (the clients' uploads).

    See Also
    --------
    ClusteredUnlearning : With ``cluster_size = N``, FedAvg retrained from scratch with local SGD.
    FineTuning : The naive baseline, continuing from the current model.

    Notes
    -----
    A request's report: ``exact=True`` (retraining from scratch without the forgotten clients,
    with the rapid optimiser); ``rounds`` the retraining rounds; ``clients_retrained`` the
    remaining clients; ``client_seconds`` their local training (per-example gradients included;
    all clients of a round together, summed over rounds), ``aggregation_seconds`` the sums and
    ``bytes_sent`` their uploads (4 bytes per parameter per client and round: the FIM stays on the
    client). ``details`` holds ``start`` (``"initial model"``), ``optimizer`` (what differs from the
    first training), ``accuracy`` (test accuracy after the request, ``None`` without test data),
    ``curve`` (per retraining round, every ``eval_every``: ``round`` and ``accuracy``) and
    ``distance_to_before`` (the Euclidean distance between the models before and after).

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.unlearn import RapidRetraining
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(120, 4)).astype(np.float32), rng.integers(0, 2, 120)
    >>> model = RapidRetraining(rounds=4, random_state=0).fit(X, y, parts=np.array_split(np.arange(120), 6))
    >>> report = model.unlearn(clients=[2])
    >>> report.exact, report.rounds, report.clients_retrained
    (True, 2, (0, 1, 3, 4, 5))
    """

    def __init__(
        self,
        model="softmax",
        *,
        rounds: int,
        unlearning_rounds: int | None = None,
        local: LocalSGD | None = None,
        lr: float = 0.01,
        damping: float = 0.01,
        betas: tuple[float, float] = (0.9, 0.999),
        eval_every: int = 1,
        method: str = "auto",
        random_state: SeedLike = None,
        device: str | torch.device = "cpu",
    ) -> None:
        self.model = model
        self.rounds = rounds
        self.unlearning_rounds = unlearning_rounds
        self.local = local
        self.lr = lr
        self.damping = damping
        self.betas = betas
        self.eval_every = eval_every
        self.method = method
        self.random_state = random_state
        self.device = device

    def _check_method_params(self) -> None:
        self._unlearning_rounds = (
            math.ceil(self._rounds / 2)
            if self.unlearning_rounds is None
            else check_scalar(self.unlearning_rounds, "unlearning_rounds", "int", min_val=1)
        )
        betas = tuple(self.betas) if isinstance(self.betas, (tuple, list)) else ()
        if len(betas) != 2:
            raise ValueError(f"betas must be a pair (beta1, beta2), got {self.betas!r}.")
        beta1, beta2 = (
            check_scalar(b, name, "real", min_val=0.0, max_val=1.0, include_max=False)
            for b, name in zip(betas, ("betas[0] (beta1)", "betas[1] (beta2)"), strict=True)
        )
        self._step = _RapidStep(
            lr=check_scalar(self.lr, "lr (eta)", "real", min_val=0.0, include_min=False),
            damping=check_scalar(self.damping, "damping (lambda)", "real", min_val=0.0, include_min=False),
            beta1=beta1,
            beta2=beta2,
        )

    def _configure(self, trainer: FederatedTrainer) -> None:
        trainer._rapid = self._step

    def fresh_trainer(self, X=None) -> FederatedTrainer:
        """The trainer of the current rapid retraining, at round 0: the initial model, the remaining clients.

        This is what "retraining from scratch" means here: after :meth:`unlearn`,
        ``fresh_trainer().run(report.rounds)`` reproduces :attr:`params_` bit for bit. Passing an
        ``X`` whose forgotten clients' rows are replaced (e.g. by NaN) checks that retraining never
        reads them.

        Parameters
        ----------
        X : ndarray of float, optional
            Examples to train on instead of the ones given to :meth:`fit` (same shape).

        Returns
        -------
        fedlib.learn.FederatedTrainer
            A FedAvg trainer whose clients take the rapid step, with the seed of the last request
            (the training's seed stream before any request), at :attr:`initial_params_`.
        """
        check_is_fitted(self, "params_")
        return self._trainer(_RapidTrainer, self.initial_params_, X)

    def _forget(self, before: np.ndarray) -> tuple[FederatedTrainer, dict, bool]:
        trainer = self.fresh_trainer().run(self._unlearning_rounds)
        details = {
            "start": "initial model",
            "optimizer": (
                f"rapid retraining (diagonal empirical FIM, eta={self._step.lr}, lambda={self._step.damping}, "
                f"betas=({self._step.beta1}, {self._step.beta2})) for {self._unlearning_rounds} rounds, where fit "
                f"ran local SGD for {self._rounds}: exact as retraining from scratch, not the model fit would give"
            ),
        }
        return trainer, details, True
