"""Local training: mini-batch SGD of many clients, each from its own start, in one call.

This is the ClientUpdate of FedAvg (McMahan et al., AISTATS 2017, Alg. 1):
``epochs`` passes over the client's data in a fresh random order, mini-batches
of ``batch_size`` (the last one of a pass may be smaller), an SGD step on the
mean cross-entropy of each. The step is that of :class:`torch.optim.SGD`
(optional momentum and weight decay, a fresh momentum buffer per call, as a
client builds a new optimiser every round in Plato, the framework KNOT (Su &
Li, INFOCOM 2023) runs on).

Two paths compute the same thing up to float rounding:

- ``"vmap"``: ``torch.func.vmap(grad(loss))`` over a stack of client
  parameter vectors steps every client at once; clients with fewer batches
  than the others sit out the extra steps (masked exactly), and short batches
  are padded with zero-weight copies of their own rows (never another client's).
- ``"loop"``: one client after another, with ``torch.func.grad`` on the same loss.

Many small clients (the book's 200 clients × 40 images) run several times faster
with ``"vmap"``; a few large clients or a large model run faster with
``"loop"``; ``"auto"`` picks (``benchmarks/bench_learn.py`` measures both).

Every bit is fixed by the seed: client ``c``'s example order in round ``r``
comes from its own generator (:func:`client_generator`), whatever the other
clients do, and torch runs on one thread (``n_threads=1``: thread pools only
slow small models down, and results may differ in the last bits across
thread counts).

Training runs on ``device`` (:func:`resolve_device`: the CPU, a CUDA GPU, or
``"auto"``): the parameter matrix and the steps' index tensors live there, the
examples are moved there unless they already are, and the trained parameters
come back to the host. The example orders are drawn on the host, from the same
streams, so a GPU sees the same batches as the CPU; its kernels round
differently, so its parameters agree with the CPU's to a tolerance, not bit for bit.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from scipy import sparse
from sklearn.utils import check_array as sklearn_check_array
from sklearn.utils.multiclass import type_of_target
from torch import nn
from torch.func import functional_call, grad, vmap

from fedlib._random import child_sequence as _child
from fedlib._random import root_sequence
from fedlib._typing import SeedLike
from fedlib._validation import check_option, check_scalar
from fedlib.learn._device import _cuda_determinism, _data_device, resolve_device
from fedlib.learn._params import ParameterLayout

#: Stream keys under a root seed: the training order of client c in round r is stream (TRAIN, r, c).
_INIT, _ROUND, _AGGREGATE, _TRAIN = 0, 1, 2, 3

#: Largest number of floats the vectorised path holds per parameter-sized buffer (client chunks beyond it).
_VMAP_MAX_FLOATS = 1 << 24


@dataclass(frozen=True)
class LocalSGD:
    """Hyper-parameters of local training.

    Parameters
    ----------
    lr : float, default=0.05
        Step size ``η``.
    batch_size : int, default=32
        ``B``; the last batch of a pass holds the remaining examples.
    epochs : int, default=1
        ``E``, passes over the client's data per call.
    momentum : float, default=0.0
        Heavy-ball momentum of :class:`torch.optim.SGD` (KNOT's Plato configurations use 0.9).
    weight_decay : float, default=0.0
        L2 penalty added to the gradient, as in :class:`torch.optim.SGD`.

    Raises
    ------
    TypeError, ValueError
        For a value of the wrong type or range.

    Examples
    --------
    >>> LocalSGD(lr=0.1, batch_size=10)
    LocalSGD(lr=0.1, batch_size=10, epochs=1, momentum=0.0, weight_decay=0.0)
    """

    lr: float = 0.05
    batch_size: int = 32
    epochs: int = 1
    momentum: float = 0.0
    weight_decay: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "lr", check_scalar(self.lr, "lr", "real", min_val=0.0, include_min=False))
        object.__setattr__(self, "batch_size", check_scalar(self.batch_size, "batch_size", "int", min_val=1))
        object.__setattr__(self, "epochs", check_scalar(self.epochs, "epochs", "int", min_val=1))
        object.__setattr__(
            self,
            "momentum",
            check_scalar(self.momentum, "momentum", "real", min_val=0.0, max_val=1.0, include_max=False),
        )
        object.__setattr__(self, "weight_decay", check_scalar(self.weight_decay, "weight_decay", "real", min_val=0.0))


@dataclass(frozen=True)
class ClientUpdates:
    """What a call of :func:`train_clients` produced: every client's trained parameters and where it started.

    Parameters
    ----------
    client_ids : ndarray of int64, shape (n,)
        The clients, in row order.
    start : ndarray of float32, shape (d,) or (n, d)
        The parameters each client started from (one vector when all started from the same).
    params : ndarray of float32, shape (n, d)
        Each client's parameters after local training.
    n_samples : ndarray of int64, shape (n,)
        Examples each client trained on.
    round_index : int
        The round whose example orders were drawn (:func:`client_generator`).
    base_version : ndarray of int64, shape (n,)
        Version (e.g. server round) of the model each client started from; an
        asynchronous server reads staleness from it.
    seconds : float
        Wall-clock time of the call.
    method : str
        ``"vmap"`` or ``"loop"``.
    """

    client_ids: np.ndarray
    start: np.ndarray
    params: np.ndarray
    n_samples: np.ndarray
    round_index: int
    base_version: np.ndarray
    seconds: float = 0.0
    method: str = field(default="loop")

    @property
    def n_clients(self) -> int:
        """Number of clients (rows)."""
        return int(self.params.shape[0])

    @property
    def deltas(self) -> np.ndarray:
        """``params - start``: the model updates ``Δ_i`` (float32, shape (n, d), a new array)."""
        return self.params - self.start

    def select(self, rows) -> ClientUpdates:
        """The updates of some rows only (e.g. those an asynchronous server buffers).

        Parameters
        ----------
        rows : array-like of int or bool
            Row positions, or a mask over the rows.

        Returns
        -------
        ClientUpdates
            The selected rows, same round; ``seconds`` is kept.
        """
        rows = np.arange(self.n_clients)[np.asarray(rows)]
        start = self.start if self.start.ndim == 1 else self.start[rows]
        return ClientUpdates(
            client_ids=self.client_ids[rows],
            start=start,
            params=self.params[rows],
            n_samples=self.n_samples[rows],
            round_index=self.round_index,
            base_version=self.base_version[rows],
            seconds=self.seconds,
            method=self.method,
        )


def client_generator(random_state: SeedLike, round_index: int, client_id: int) -> np.random.Generator:
    """The generator of client ``client_id``'s example orders in round ``round_index``.

    It depends on the root seed, the round and the client only, so a client
    trains identically whichever other clients take part, and in whichever
    process or order they are simulated.

    Parameters
    ----------
    random_state : int, numpy.random.SeedSequence or None
        The simulation's root seed (:func:`fedlib.utils.root_sequence`).
    round_index : int
        The round (or, asynchronously, the server version the client was sent).
    client_id : int
        The client's id (not its position in a list).

    Returns
    -------
    numpy.random.Generator
        Each local epoch draws one ``permutation`` from it.

    Examples
    --------
    >>> a = client_generator(0, round_index=2, client_id=7).permutation(5)
    >>> b = client_generator(0, round_index=2, client_id=7).permutation(5)
    >>> bool((a == b).all())
    True
    """
    return np.random.default_rng(_child(root_sequence(random_state), _TRAIN, round_index, client_id))


def _as_features(X) -> torch.Tensor:
    """float32 tensor sharing memory with ``X`` when it is already a writable C-contiguous float32 array or tensor.

    A read-only array (a memory map that joblib hands to a worker, a frozen view) is copied once: torch
    cannot share memory it may not write to. A contiguous float32 tensor without gradient is returned as
    it is, not as a new view of it: an estimator whose trainers all hold the same tensor (e.g.
    :class:`fedlib.unlearn.ClusteredUnlearning`) then pickles one copy of the data, not one per trainer.
    """
    if isinstance(X, torch.Tensor):
        if X.dtype == torch.float32 and X.is_contiguous() and not X.requires_grad:
            return X
        return X.detach().to(torch.float32).contiguous()
    X = np.ascontiguousarray(X, dtype=np.float32)
    return torch.from_numpy(X if X.flags.writeable else X.copy())


def _as_labels(y) -> torch.Tensor:
    if isinstance(y, torch.Tensor):
        if y.dtype == torch.int64 and y.is_contiguous() and not y.requires_grad:
            return y  # as it is, like _as_features
        return y.detach().to(torch.int64).contiguous()
    y = np.asarray(y)
    if y.dtype.kind == "f" and np.isfinite(y).all() and (y == np.round(y)).all():
        y = y.astype(np.int64)  # whole-number floats, as scikit-learn's classifiers take them
    if y.dtype.kind not in "iu":
        type_of_target(y, input_name="y", raise_unknown=True)  # scikit-learn's message for unknown label types
        raise TypeError(f"labels must be integers, got dtype {y.dtype}.")
    return torch.from_numpy(np.ascontiguousarray(y, dtype=np.int64))


def _check_clients(clients, n_samples: int) -> list[np.ndarray]:
    if len(clients) == 0:
        raise ValueError("at least one client is needed.")
    out = []
    for i, rows in enumerate(clients):
        rows = np.asarray(rows)
        if rows.ndim != 1 or rows.dtype.kind not in "iu":
            raise ValueError(f"client {i}: rows must be a 1-D array of integer indices, got {rows.dtype} {rows.shape}.")
        if rows.size == 0:
            raise ValueError(f"client {i} holds no examples; every client needs at least one.")
        if rows.min() < 0 or rows.max() >= n_samples:
            raise ValueError(f"client {i}: row indices must lie in [0, {n_samples}), got [{rows.min()}, {rows.max()}].")
        out.append(rows.astype(np.int64, copy=False))
    return out


def check_training_data(X, y, parts=None) -> tuple[torch.Tensor, torch.Tensor, list[np.ndarray]]:
    """The ``X``, ``y`` and ``parts`` of a federated ``fit``, checked as scikit-learn checks an estimator's input.

    ``X`` is dense, numeric, non-empty and real (scikit-learn's :func:`~sklearn.utils.check_array`
    with ``allow_nd``: images keep their shape), ``y`` holds non-negative integer labels, one per
    row, and every row a client holds is finite. Rows no client holds are not checked, since they
    are never read: a retraining may be given ``X`` with a forgotten client's rows replaced by NaN.

    Parameters
    ----------
    X : array-like or torch.Tensor of shape (n_samples, ...)
        Examples.
    y : array-like or torch.Tensor of int, shape (n_samples,)
        Labels.
    parts : sequence of array-like of int, optional
        Each client's rows of ``X``; default one client holding every row.

    Returns
    -------
    X : torch.Tensor of float32
        Sharing memory with ``X`` when it already is a C-contiguous float32 array or tensor.
    y : torch.Tensor of int64
        The labels.
    clients : list of ndarray of int64
        Each client's rows (one client of every row without ``parts``).

    Raises
    ------
    TypeError
        For sparse input or labels that are not integers.
    ValueError
        For empty, complex or non-numeric ``X``, NaN or infinity in a row a client holds,
        negative labels, unknown label types, ``X`` and ``y`` of different lengths, or bad ``parts``.
    """
    if isinstance(X, torch.Tensor):
        if X.numel() == 0 or X.ndim < 2:
            raise ValueError(f"X must be a non-empty tensor of at least 2 dimensions, got shape {tuple(X.shape)}.")
    else:
        if sparse.issparse(X):
            raise TypeError("sparse input is not supported: the models train on dense arrays (e.g. X.toarray()).")
        X = sklearn_check_array(X, dtype="numeric", allow_nd=True, ensure_all_finite=False, input_name="X")
    X_t = _as_features(X)
    n = X_t.shape[0]
    clients = [np.arange(n, dtype=np.int64)] if parts is None else _check_clients(parts, n)
    held = np.zeros(n, dtype=bool)
    held[np.concatenate(clients)] = True
    flat = X_t.reshape(n, -1)
    for start in range(0, n, _FINITE_CHUNK):
        stop = min(n, start + _FINITE_CHUNK)
        bad = ~torch.isfinite(flat[start:stop]).all(dim=1).cpu().numpy()
        if (bad & held[start:stop]).any():
            row = start + int(np.flatnonzero(bad & held[start:stop])[0])
            raise ValueError(f"Input X contains NaN or infinity (row {row}, held by a client).")
    y_t = _as_labels(y)
    if y_t.ndim != 1 or y_t.shape[0] != n:
        raise ValueError(f"y must hold one label per row of X ({n}), got shape {tuple(y_t.shape)}.")
    if int(y_t.min()) < 0:
        raise ValueError("labels must be >= 0.")
    return X_t, y_t, clients


def check_queries(X, n_features: int, estimator: str):
    """Examples to predict on, checked as scikit-learn checks them: dense, finite, with the fitted feature count.

    Parameters
    ----------
    X : array-like or torch.Tensor of shape (n_samples, ...)
        Queries.
    n_features : int
        ``n_features_in_`` of the fitted estimator (features per example, all axes after the first).
    estimator : str
        Its name, for the message.

    Returns
    -------
    ndarray or torch.Tensor
        ``X`` (an array is converted by :func:`sklearn.utils.check_array` with ``allow_nd``).

    Raises
    ------
    TypeError
        For sparse input.
    ValueError
        For empty, 1-D, non-finite input or another number of features.
    """
    if isinstance(X, torch.Tensor):
        if not torch.isfinite(X).all():
            raise ValueError("Input X contains NaN or infinity.")
    else:
        if sparse.issparse(X):
            raise TypeError("sparse input is not supported: the models take dense arrays (e.g. X.toarray()).")
        X = sklearn_check_array(X, dtype="numeric", allow_nd=True, input_name="X")
    got = int(np.prod(X.shape[1:], dtype=np.int64))
    if got != n_features:
        raise ValueError(f"X has {got} features, but {estimator} is expecting {n_features} features as input.")
    return X


#: Rows per chunk when X is checked for NaN and infinity (bounds the temporary boolean array).
_FINITE_CHUNK = 65536


def _loss(model: nn.Module):
    """Weighted mean cross-entropy of one client's batch: ``Σ w_j ℓ_j / count`` (the mean when all weights are 1)."""

    def loss(params, x, y, w, count):
        logits = functional_call(model, params, (x,))
        return (F.cross_entropy(logits, y, reduction="none") * w).sum() / count

    return loss


def _sgd_step(params, grads, bufs, config: LocalSGD, first: bool, active=None) -> None:
    """:class:`torch.optim.SGD`'s update, in place, of parameter tensors (one client's, or stacks of clients').

    ``params``, ``grads`` and ``bufs`` are matching lists of tensors (``bufs``
    only with momentum). With ``active`` (0/1 per client, on the leading
    dimension), inactive clients' parameters and buffers stay bit for bit.
    """
    for i, (p, g) in enumerate(zip(params, grads, strict=True)):
        if config.weight_decay:
            g = g.add(p, alpha=config.weight_decay)
        mask = None if active is None else active.view(-1, *([1] * (p.dim() - 1)))
        if mask is not None:
            g = g * mask
        if config.momentum:
            if first:
                bufs[i].copy_(g)
            elif mask is None:
                bufs[i].mul_(config.momentum).add_(g)
            else:
                bufs[i].mul_(torch.where(mask > 0, config.momentum, 1.0)).add_(g)
            # an inactive client's buffer is kept, not applied: its parameters must not move either
            g = bufs[i] if mask is None else bufs[i] * mask
        p.add_(g, alpha=-config.lr)


def _train_loop(model, layout, P, X, y, orders, config: LocalSGD) -> None:
    """Client after client, with plain autograd; ``P`` (n, d) holds the starts and receives the results.

    Everything runs on ``P``'s device (``X`` and ``y`` must be there too); the orders are host arrays.

    A private copy of ``model`` has its parameters pointed at the views of one
    working vector (no copies per step), which holds row ``c`` of ``P`` while
    client ``c`` trains. The working vector is the same torch allocation for
    every client: a row of ``P`` starts at an offset that depends on the
    client's position, and vectorised kernels round differently (FMA in the
    body, separate multiply and add in the tails) at different alignments,
    which would make a client's bits depend on which clients come before it.
    """
    device = P.device
    work = copy.deepcopy(model).to(device)  # on the CPU ``to`` changes nothing
    params = [dict(work.named_parameters())[name] for name in layout.names]
    row = torch.empty(layout.n_parameters, dtype=torch.float32, device=device)
    views = layout.unflatten(row)
    for p, name in zip(params, layout.names, strict=True):
        p.data = views[name]
    B = config.batch_size
    for c, epochs in enumerate(orders):
        row.copy_(P[c])
        bufs = [torch.empty_like(p) for p in params] if config.momentum else None
        first = True
        for order in epochs:
            order = torch.from_numpy(order).to(device)
            for b in range(0, len(order), B):
                idx = order[b : b + B]
                for p in params:
                    p.grad = None
                F.cross_entropy(work(X[idx]), y[idx]).backward()
                with torch.no_grad():
                    _sgd_step(params, [p.grad for p in params], bufs, config, first)
                first = False
        P[c].copy_(row)


def _train_vmap(model, layout, P, X, y, orders, config: LocalSGD) -> None:
    """All clients of ``P`` (n, d) at once; shorter clients skip the extra steps.

    Everything runs on ``P``'s device (``X`` and ``y`` must be there too): each step's indices, weights
    and counts are built on the host from the orders and moved there.
    """
    device = P.device
    step = vmap(grad(_loss(model)))
    B = config.batch_size
    n = P.shape[0]
    views = layout.unflatten(P)
    params = [views[name] for name in layout.names]
    if config.momentum:
        buf_views = layout.unflatten(torch.empty_like(P))
        bufs = [buf_views[name] for name in layout.names]
    else:
        bufs = None
    sizes = np.array([len(epochs[0]) for epochs in orders])
    width = int(-(-sizes.max() // B)) * B
    first = True
    for e in range(config.epochs):
        rows = np.full((n, width), -1, dtype=np.int64)
        for c in range(n):
            rows[c, : sizes[c]] = orders[c][e]
        # a short client's padding repeats one of its own rows (weight 0), never another client's
        pad = torch.from_numpy(np.array([orders[c][e][0] if sizes[c] else 0 for c in range(n)], dtype=np.int64))
        pad = pad.to(device)
        for b in range(0, width, B):
            idx = rows[:, b : b + B]
            valid = idx >= 0
            counts = valid.sum(axis=1)
            k = int(counts.max())
            idx, valid = idx[:, :k], valid[:, :k]
            idx_t = torch.where(torch.from_numpy(valid).to(device), torch.from_numpy(idx).to(device), pad[:, None])
            w = torch.from_numpy(valid.astype(np.float32)).to(device)
            count = torch.from_numpy(np.maximum(counts, 1).astype(np.float32)).to(device)
            grads = step(views, X[idx_t], y[idx_t], w, count)
            active = torch.from_numpy((counts > 0).astype(np.float32)).to(device) if (counts == 0).any() else None
            _sgd_step(params, [grads[name] for name in layout.names], bufs, config, first, active)
            first = False


def choose_method(sizes, n_parameters: int, batch_size: int) -> str:
    """The faster path for these clients, as measured by ``benchmarks/bench_learn.py`` on a 2-core CPU.

    ``"vmap"`` pays off when many clients take few steps each and the model is
    small; it wastes work on padding when client sizes differ a lot.

    Parameters
    ----------
    sizes : array-like of int
        Examples per client.
    n_parameters : int
        ``d``.
    batch_size : int
        ``B``.

    Returns
    -------
    str
        ``"vmap"`` or ``"loop"``.

    Examples
    --------
    >>> choose_method([40] * 200, 11274, 32), choose_method([2000] * 4, 11274, 32)
    ('vmap', 'loop')
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    if sizes.size < 4 or n_parameters > 200_000:
        return "loop"
    if sizes.max() > 1.5 * sizes.mean():  # ragged clients: much of the batched work would be padding
        return "loop"
    return "vmap" if -(-sizes.mean() // batch_size) <= 16 else "loop"


def train_clients(
    model: nn.Module,
    start,
    X,
    y,
    clients: Sequence,
    *,
    config: LocalSGD | None = None,
    round_index: int = 0,
    client_ids=None,
    base_version=0,
    random_state: SeedLike = None,
    method: str = "auto",
    n_threads: int | None = 1,
    device: str | torch.device | None = None,
) -> ClientUpdates:
    """Train every client locally from its start and return the trained parameters.

    Client ``i`` trains on the rows ``clients[i]`` of ``(X, y)``, starting from
    ``start`` (or ``start[i]``), for ``config.epochs`` passes in orders drawn
    from :func:`client_generator` ``(random_state, round_index, client_ids[i])``.

    Parameters
    ----------
    model : torch.nn.Module
        The architecture; its own parameters are neither read nor changed.
    start : array-like of float32, shape (d,) or (n_clients, d)
        Where the clients start: one global model, or one per client
        (asynchronous clients hold models of different versions).
    X : ndarray or torch.Tensor of float, shape (n_samples, ...)
        All examples (e.g. :func:`fedlib.data.image_array`); float32 arrays are used without a copy.
    y : array-like of int, shape (n_samples,)
        Labels.
    clients : sequence of array-like of int
        Each client's rows of ``X``.
    config : LocalSGD, optional
        Step size, batch size, epochs, momentum, weight decay; default ``LocalSGD()``.
    round_index : int, default=0
        Selects the example orders (:func:`client_generator`).
    client_ids : array-like of int, optional
        The clients' ids for their streams and the result; default ``0..n_clients-1``.
    base_version : int or array-like of int, default=0
        Version of the model(s) in ``start``, recorded in the result.
    random_state : int, numpy.random.SeedSequence or None, default=None
        Root seed of the simulation (:func:`fedlib.utils.root_sequence`).
    method : {"auto", "vmap", "loop"}, default="auto"
        ``"auto"``: :func:`choose_method`.
    n_threads : int or None, default=1
        ``torch.set_num_threads(n_threads)`` before training (it stays set);
        ``None`` leaves torch's setting alone.
    device : str or torch.device, optional
        Where to train (:func:`resolve_device`: ``"cpu"``, ``"cuda"``, ``"cuda:N"``, ``"auto"``);
        default the device of ``X`` when it is a tensor, else the CPU. ``X`` and ``y`` are moved
        there unless they already are (a trainer moves them once per fit and passes the copies);
        the parameter matrix is allocated there. The result is on the host either way.

    Returns
    -------
    ClientUpdates
        The trained parameters (float32 numpy, on the host), starts, ids and sample counts.

    Raises
    ------
    ValueError
        If a client has no example or a row out of range, ``start`` has the
        wrong shape, or ``X`` and ``y`` differ in length; for a ``device`` torch does not know.
    TypeError
        For a ``device`` that is neither a string nor a :class:`torch.device`.
    fedlib.exceptions.DeviceUnavailableError
        For a CUDA ``device`` on a machine where torch sees no GPU.

    Examples
    --------
    >>> from fedlib.learn import get_flat, make_model
    >>> model = make_model("softmax", random_state=0)
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.random((60, 1, 28, 28), dtype=np.float32), rng.integers(0, 10, 60)
    >>> out = train_clients(model, get_flat(model), X, y, [np.arange(30), np.arange(30, 60)])
    >>> out.params.shape, out.deltas.dtype
    ((2, 7850), dtype('float32'))
    """
    began = time.perf_counter()
    config = LocalSGD() if config is None else config
    if not isinstance(config, LocalSGD):
        raise TypeError(f"config must be a LocalSGD, got {type(config).__name__}.")
    check_option(method, "method", ("auto", "vmap", "loop"))
    round_index = check_scalar(round_index, "round_index", "int", min_val=0)
    if n_threads is not None:
        torch.set_num_threads(check_scalar(n_threads, "n_threads", "int", min_val=1))
    device = _data_device(X) if device is None else resolve_device(device)
    X_t, y_t = _as_features(X).to(device), _as_labels(y).to(device)  # on their device already: unchanged
    if X_t.shape[0] != y_t.shape[0]:
        raise ValueError(f"X has {X_t.shape[0]} rows but y has {y_t.shape[0]}.")
    rows = _check_clients(clients, X_t.shape[0])
    n = len(rows)
    ids = np.arange(n, dtype=np.int64) if client_ids is None else np.asarray(client_ids, dtype=np.int64).ravel()
    if ids.shape != (n,):
        raise ValueError(f"client_ids must hold one id per client ({n}), got shape {ids.shape}.")
    versions = np.broadcast_to(np.asarray(base_version, dtype=np.int64), (n,)).copy()
    layout = ParameterLayout(model)
    d = layout.n_parameters
    start = np.asarray(start, dtype=np.float32)
    if start.shape not in ((d,), (n, d)):
        raise ValueError(
            f"start must have shape ({d},) or ({n}, {d}) for this model and {n} clients, got {start.shape}."
        )
    root = root_sequence(random_state)
    orders = []
    for client_rows, cid in zip(rows, ids, strict=True):
        rng = np.random.default_rng(_child(root, _TRAIN, round_index, cid))
        orders.append([client_rows[rng.permutation(len(client_rows))] for _ in range(config.epochs)])
    sizes = np.array([len(r) for r in rows], dtype=np.int64)
    if method == "auto":
        method = choose_method(sizes, d, config.batch_size)
    # The result, trained in place; allocated by torch (64-byte aligned: numpy's 16-byte alignment made the
    # batched products and updates several times slower in bench_learn.py).
    P = torch.empty((n, d), dtype=torch.float32, device=device)
    P.copy_(torch.from_numpy(start).expand(n, d) if start.ndim == 1 else torch.from_numpy(start))
    with _cuda_determinism(device):  # on the CPU: nothing
        if method == "loop":
            _train_loop(model, layout, P, X_t, y_t, orders, config)
        else:
            chunk = max(1, _VMAP_MAX_FLOATS // d)
            for lo in range(0, n, chunk):
                _train_vmap(model, layout, P[lo : lo + chunk], X_t, y_t, orders[lo : lo + chunk], config)
    return ClientUpdates(
        client_ids=ids,
        start=start.copy(),
        params=P.cpu().numpy(),  # on the CPU, P itself
        n_samples=sizes,
        round_index=round_index,
        base_version=versions,
        seconds=time.perf_counter() - began,
        method=method,
    )
