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

On the CPU many small clients of a model without pooling (the book's 200
clients × 40 images of ``cnn_small``) run up to several times faster with
``"vmap"``; ragged clients (vmap pads every client to the longest one's steps),
max pooling (LeNet-5, FedAvg's CNN) or a large model favour ``"loop"``.
``"auto"`` asks :func:`choose_method`: a deterministic cost model of both paths,
fitted to ``benchmarks/bench_learn.py``'s measurements, reading the model's
layers, the clients' sizes and the batch size (on a GPU: ``"vmap"``, unmeasured).

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
import math
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from scipy import sparse
from sklearn.utils import check_array as sklearn_check_array
from torch import nn
from torch.func import functional_call, grad, vmap

from fedlib._random import child_sequence as _child
from fedlib._random import root_sequence
from fedlib._typing import SeedLike
from fedlib._validation import check_disjoint_clients, check_option, check_scalar
from fedlib.learn._device import _as_features, _as_labels, _data_device, _parse_device, cuda_determinism, resolve_device
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
    >>> from fedlib.learn import LocalSGD
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

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.learn import get_flat, make_model, train_clients
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.random((20, 4), dtype=np.float32), rng.integers(0, 2, 20)
    >>> model = make_model("softmax", 2, input_shape=(4,), random_state=0)
    >>> out = train_clients(model, get_flat(model), X, y, [np.arange(8), np.arange(8, 20)], client_ids=[5, 9])
    >>> out.n_clients, out.client_ids.tolist(), out.n_samples.tolist(), out.method
    (2, [5, 9], [8, 12], 'loop')
    >>> out.deltas.shape, out.select([1]).client_ids.tolist()
    ((2, 10), [9])
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
    >>> from fedlib.learn import client_generator
    >>> a = client_generator(0, round_index=2, client_id=7).permutation(5)
    >>> b = client_generator(0, round_index=2, client_id=7).permutation(5)
    >>> bool((a == b).all())
    True
    """
    return np.random.default_rng(_child(root_sequence(random_state), _TRAIN, round_index, client_id))


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
        negative labels, unknown label types, ``X`` and ``y`` of different lengths, or bad ``parts``: among
        them clients that share a row (forgetting a client must remove every trace of its rows).

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.learn import check_training_data
    >>> X, y, clients = check_training_data(np.zeros((6, 2)), [0, 1, 0, 1, 0, 1], parts=[[0, 1, 2], [3, 4, 5]])
    >>> X.dtype, y.dtype, [c.tolist() for c in clients]
    (torch.float32, torch.int64, [[0, 1, 2], [3, 4, 5]])
    >>> X_nan = np.zeros((6, 2))
    >>> X_nan[5] = np.nan
    >>> check_training_data(X_nan, y, parts=[[0, 1, 2], [3, 4]])[2][1].tolist()  # no client holds row 5
    [3, 4]
    >>> check_training_data(X_nan, y)
    Traceback (most recent call last):
    ...
    ValueError: Input X contains NaN or infinity (row 5, held by a client).
    >>> check_training_data(np.zeros((6, 2)), y, parts=[[0, 1, 2, 3], [3, 4, 5]])
    Traceback (most recent call last):
    ...
    ValueError: parts overlap: 1 row(s) (e.g. row 3) are held by more than one client (clients [0, 1]); ...
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
    check_disjoint_clients(clients)
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

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.learn import check_queries
    >>> check_queries(np.zeros((3, 1, 2, 2)), 4, "FederatedTrainer").shape
    (3, 1, 2, 2)
    >>> check_queries([[0.0, 1.0, 2.0]], 2, "FederatedTrainer")
    Traceback (most recent call last):
    ...
    ValueError: X has 3 features, but FederatedTrainer is expecting 2 features as input.
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


#: Tensors larger than this many float32 values (32 MiB, glibc's largest ``mmap`` threshold) are mapped afresh by
#: every allocation, so each step that creates one pays page faults on all of it (the ``mmap`` cost below).
_MMAP_FLOATS = 1 << 23

_CONVS = (nn.Conv1d, nn.Conv2d, nn.Conv3d)
_POOLS = (nn.MaxPool1d, nn.MaxPool2d, nn.MaxPool3d)
_VIEWS = (nn.Flatten, nn.Unflatten, nn.Identity)


@dataclass(frozen=True)
class PathCost:
    """Seconds per unit of work of one training path on the CPU: the fitted constants of :func:`choose_method`.

    Parameters
    ----------
    call : float
        Once per call of the path (once per chunk of clients under vmap).
    client : float
        Once per client (its example order, its row of the parameter matrix).
    step : float
        Once per SGD step (one client's step on the loop, one batched step of a chunk of clients under vmap).
    layer : float
        Per step, for every module holding parameters.
    conv : float
        Per step, again for every convolution.
    parameter : float
        Per parameter per client and step.
    mac_linear : float
        Per example (padding included under vmap), per multiply-add of a linear layer.
    mac_conv : float
        Per example, per multiply-add of a convolution.
    pool : float
        Per example, per value entering a max-pooling layer.
    embedding : float
        Per example, per embedding value looked up.
    activation : float
        Per example, per value of the input and of every layer's output.
    mmap : float
        Per value of a tensor above 2**23 floats, each time it is made (fresh pages).

    Examples
    --------
    >>> from dataclasses import fields
    >>> from fedlib.learn import PATH_COSTS, PathCost, make_model, path_seconds
    >>> isinstance(PATH_COSTS["loop"], PathCost), PATH_COSTS["vmap"].step > PATH_COSTS["loop"].step
    (True, True)

    A cost of 1 for one term and 0 for the others counts that term's work, here the SGD steps
    (vmap runs every client for the steps of the longest):

    >>> steps = PathCost(**{f.name: 0.0 for f in fields(PathCost)} | {"step": 1.0})
    >>> path_seconds([10, 20, 40], make_model("softmax", input_shape=(4,)), 8, costs={"loop": steps, "vmap": steps})
    {'loop': 10.0, 'vmap': 5.0}
    """

    call: float
    client: float
    step: float
    layer: float
    conv: float
    parameter: float
    mac_linear: float
    mac_conv: float
    pool: float
    embedding: float
    activation: float
    mmap: float


#: Fitted by ``python benchmarks/bench_learn.py --fit`` (see choose_method's Notes).
_LOOP_COST = PathCost(
    call=6.6e-04,
    client=6.8e-05,
    step=6.4e-05,
    layer=1.9e-05,
    conv=2.1e-04,
    parameter=2.1e-09,
    mac_linear=1.1e-11,
    mac_conv=1.0e-10,
    pool=5.4e-09,
    embedding=2.2e-08,
    activation=1.7e-09,
    mmap=1.3e-09,
)
_VMAP_COST = PathCost(
    call=1.7e-04,
    client=3.9e-05,
    step=1.1e-03,
    layer=0.0,
    conv=2.1e-04,
    parameter=2.0e-09,
    mac_linear=7.9e-12,
    mac_conv=1.1e-10,
    pool=1.3e-08,
    embedding=1.6e-08,
    activation=2.2e-09,
    mmap=1.3e-09,
)
#: The fitted constants of both paths (:class:`PathCost`), by path: what :func:`path_seconds` multiplies the work by.
PATH_COSTS = {"loop": _LOOP_COST, "vmap": _VMAP_COST}


@dataclass(frozen=True)
class _Work:
    """What one example and one step cost a model, counted once by tracing it on torch's meta device.

    ``layers`` and ``convs`` count modules holding parameters and convolutions among them;
    ``mac_linear``, ``mac_conv``, ``pool`` and ``embedding`` are per-example counts (see
    ``PathCost``); ``activations`` the values per example of the input and of each module's output
    (views such as ``Flatten`` left out); ``tensors`` the sizes of the parameter tensors.
    """

    n_parameters: int
    layers: int
    convs: int
    mac_linear: float
    mac_conv: float
    pool: float
    embedding: float
    activations: tuple[int, ...]
    tensors: tuple[int, ...]


#: ``_model_work`` per model (weakly held) and per (input shape, parameter shapes): a trace takes milliseconds.
_WORK_CACHE: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _default_input_shape(model: nn.Module) -> tuple[int, ...] | None:
    """One example's shape, read from the first module holding parameters: ``(in_features,)`` or 28x28 images."""
    for module in model.modules():
        if next(module.children(), None) is None and next(module.parameters(recurse=False), None) is not None:
            if isinstance(module, nn.Linear):
                return (module.in_features,)
            if isinstance(module, _CONVS):
                return (module.in_channels, *([28] * (module.weight.dim() - 2)))
            return None
    return None


def _model_work(model: nn.Module, input_shape: tuple[int, ...] | None) -> _Work:
    """Count ``model``'s work per example and per step (``_Work``), running it once on the meta device.

    Without a shape to trace with, or when the model does not run on the meta device, every
    parameter counts as one multiply-add of a linear layer per example (true of a stack of
    ``Linear`` layers) and no activation is counted.
    """
    shape = _default_input_shape(model) if input_shape is None else input_shape
    key = (shape, tuple(tuple(p.shape) for p in model.parameters()))
    cached = _WORK_CACHE.setdefault(model, {})
    if key in cached:
        return cached[key]
    tensors = tuple(int(p.numel()) for p in model.parameters())
    leaves = [m for m in model.modules() if next(m.children(), None) is None]
    owners = [m for m in leaves if next(m.parameters(recurse=False), None) is not None]
    counts = dict.fromkeys(("mac_linear", "mac_conv", "pool", "embedding"), 0.0)
    activations: list[int] = []

    def count(module: nn.Module, inputs, output) -> None:
        if isinstance(module, nn.Linear):
            counts["mac_linear"] += output.numel() * module.in_features
        elif isinstance(module, _CONVS):
            counts["mac_conv"] += output.numel() * module.in_channels // module.groups * math.prod(module.kernel_size)
        elif isinstance(module, _POOLS):
            counts["pool"] += inputs[0].numel()
        elif isinstance(module, nn.Embedding):
            counts["embedding"] += output.numel()
        if isinstance(output, torch.Tensor) and not isinstance(module, _VIEWS):
            activations.append(int(output.numel()))

    traced = False
    if shape is not None:
        handles = [m.register_forward_hook(count) for m in leaves]
        try:
            state = {name: torch.empty_like(t, device="meta") for name, t in model.named_parameters()}
            state |= {name: torch.empty_like(t, device="meta") for name, t in model.named_buffers()}
            functional_call(model, state, (torch.empty((1, *shape), device="meta"),))
            traced = True
        except (RuntimeError, NotImplementedError, TypeError, ValueError, IndexError):
            pass  # e.g. a forward that reads values (.item(), numpy): counted from the parameters below
        finally:
            for handle in handles:
                handle.remove()
    if traced:
        activations.insert(0, math.prod(shape))
    else:
        counts = {"mac_linear": float(sum(tensors)), "mac_conv": 0.0, "pool": 0.0, "embedding": 0.0}
        activations = []
    work = _Work(
        n_parameters=sum(tensors),
        layers=len(owners),
        convs=sum(isinstance(m, _CONVS) for m in owners),
        activations=tuple(activations),
        tensors=tensors,
        **counts,
    )
    cached[key] = work
    return work


def _path_seconds(work: _Work, cost: PathCost, method: str, sizes: np.ndarray, batch_size: int) -> float:
    """Predicted seconds of one epoch of ``method`` (``"loop"`` or ``"vmap"``) over clients of these sizes.

    The work comes in groups: each client alone on the loop; under vmap each chunk of clients, every
    client of it running over as many examples as the chunk's longest client (the padding).
    """
    sizes = np.asarray(sizes, dtype=np.float64)
    if method == "loop":
        calls, clients, examples = 1, np.ones_like(sizes), sizes
    else:
        starts = np.arange(0, sizes.size, max(1, _VMAP_MAX_FLOATS // work.n_parameters))
        calls, clients = starts.size, np.diff(np.append(starts, sizes.size))
        examples = np.maximum.reduceat(sizes, starts)
    steps = np.ceil(examples / batch_size)
    batch = np.minimum(examples, batch_size)
    per_step = cost.step + cost.layer * work.layers + cost.conv * work.convs
    per_example = (
        cost.mac_linear * work.mac_linear
        + cost.mac_conv * work.mac_conv
        + cost.pool * work.pool
        + cost.embedding * work.embedding
        + cost.activation * sum(work.activations)
    )
    mapped_parameters = sum(np.where(clients * t > _MMAP_FLOATS, clients * t, 0.0) for t in work.tensors)
    mapped_activations = sum(np.where(clients * batch * a > _MMAP_FLOATS, a, 0.0) for a in work.activations)
    per_group_step = per_step + cost.parameter * clients * work.n_parameters + cost.mmap * mapped_parameters
    per_client = cost.client + examples * (per_example + cost.mmap * mapped_activations)
    return float(cost.call * calls + np.sum(steps * per_group_step + clients * per_client))


def _check_rule(sizes, model, batch_size, device, input_shape):
    """The arguments of :func:`choose_method` and :func:`path_seconds`, checked."""
    sizes = np.asarray(sizes)
    if sizes.ndim != 1 or sizes.size == 0:
        raise ValueError(f"sizes must be a non-empty 1-D sequence (examples per client), got shape {sizes.shape}.")
    if sizes.dtype.kind not in "iu":
        raise TypeError(f"sizes must hold integers (examples per client), got dtype {sizes.dtype}.")
    sizes = sizes.astype(np.int64)
    if sizes.min() < 1:
        raise ValueError(f"every client needs at least one example: sizes must be >= 1, got {int(sizes.min())}.")
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}.")
    batch_size = check_scalar(batch_size, "batch_size", "int", min_val=1)
    device = _parse_device(device, only="the rule knows the CPU and CUDA GPUs only")
    if input_shape is not None:
        input_shape = tuple(int(check_scalar(s, "input_shape entries", "int", min_val=1)) for s in input_shape)
        if not input_shape:
            raise ValueError("input_shape must have at least one dimension (one example's shape, X.shape[1:]).")
    return sizes, batch_size, device, input_shape


def path_seconds(sizes, model, batch_size: int, *, input_shape=None, costs=None) -> dict[str, float]:
    """Seconds one call of :func:`train_clients` takes by each path on the CPU, as :func:`choose_method` predicts.

    The cost model behind ``method="auto"``: the model's work per example (traced once on torch's meta
    device), the clients' steps with vmap's padding and chunking, times the constants of ``PATH_COSTS``.

    Parameters
    ----------
    sizes : array-like of int
        Examples per client.
    model : torch.nn.Module
        The architecture.
    batch_size : int
        ``B``.
    input_shape : tuple of int, optional
        One example's shape (``X.shape[1:]``); default read from the first layer.
    costs : dict, optional
        ``{"loop": PathCost, "vmap": PathCost}``; default ``PATH_COSTS``. With a cost of 1 for one term and
        0 for the others, the result is that term's amount of work (how ``benchmarks/bench_learn.py --fit``
        fits the constants).

    Returns
    -------
    dict
        ``{"loop": seconds, "vmap": seconds}``.

    Examples
    --------
    >>> from fedlib.learn import make_model, path_seconds
    >>> seconds = path_seconds([40] * 200, make_model("cnn_small"), 32)
    >>> sorted(seconds), seconds["vmap"] < seconds["loop"]
    (['loop', 'vmap'], True)
    """
    sizes, batch_size, _, input_shape = _check_rule(sizes, model, batch_size, "cpu", input_shape)
    costs = PATH_COSTS if costs is None else costs
    work = _model_work(model, input_shape)
    return {method: _path_seconds(work, costs[method], method, sizes, batch_size) for method in ("loop", "vmap")}


def choose_method(
    sizes,
    model: nn.Module,
    batch_size: int,
    *,
    device: str | torch.device = "cpu",
    input_shape: Sequence[int] | None = None,
) -> str:
    r"""The faster path of :func:`train_clients` for these clients, by a cost model fitted on the CPU.

    A deterministic rule (no timing at run time: the two paths agree only to about 1e-5, so a choice
    that followed the machine's momentary load would give a seed different bits from run to run).
    On the CPU it predicts the seconds of both paths from the clients' sizes, the batch size and
    the model's layers, and returns the cheaper; see Notes.

    Parameters
    ----------
    sizes : array-like of int
        Examples per client, in the order the clients are trained (vmap chunks them in that order).
    model : torch.nn.Module
        The architecture; its layers are counted (on torch's meta device, without computing), its
        parameter values are not read.
    batch_size : int
        ``B``.
    device : str or torch.device, default="cpu"
        ``"cpu"``, ``"cuda"``, ``"cuda:N"``, ``"auto"`` (CUDA when torch sees a GPU) or a
        :class:`torch.device`; whether the GPU is present is not checked.
    input_shape : sequence of int, optional
        One example's shape (``X.shape[1:]``), which the layers' work depends on; default read
        from the first layer: ``(in_features,)`` for a linear one, 28×28 images with its
        ``in_channels`` for a convolution. A model that cannot be traced counts one multiply-add
        per parameter and example.

    Returns
    -------
    str
        ``"vmap"`` or ``"loop"``.

    Raises
    ------
    TypeError
        If ``sizes`` do not hold integers, ``model`` is not a :class:`torch.nn.Module`, ``batch_size``
        is not an integer, or ``device`` neither a string nor a :class:`torch.device`.
    ValueError
        For no client, a client without examples, ``sizes`` not 1-D,
        ``batch_size < 1``, a model without parameters, an empty or non-positive ``input_shape``,
        or a device other than the CPU and CUDA.

    Notes
    -----
    **CPU.** Client ``i`` holds ``s_i`` examples. The loop runs ``ceil(s_i / B)`` steps per client;
    vmap runs the clients in chunks of ``max(1, 2**24 // d)`` (``d`` parameters), each chunk for
    the steps of its longest client ``s_max``, every client of it computing on ``s_max`` examples
    (the padding waste ``n s_max / sum(s_i)``). A path's seconds are

    .. math::

        \begin{aligned}
        T = \sum_{\text{groups}} \Big[ & \lceil e/B \rceil \, (c_\text{step} + c_\text{layer} L + c_\text{conv} C
            + c_\text{parameter} m d) \\
        & + m e \, (c_\text{mac,lin} M_\text{lin} + c_\text{mac,conv} M_\text{conv}
            + c_\text{pool} P \\
        & + c_\text{embedding} E + c_\text{activation} A) \Big] + \text{mmap terms},
        \end{aligned}

    a group being one client (``m = 1``, ``e = s_i``) on the loop and one chunk (``m`` clients,
    ``e = s_max``) under vmap; ``L`` modules hold parameters, ``C`` of them convolutions; per
    example ``M_lin`` and ``M_conv`` multiply-adds of linear and convolutional layers, ``P`` values
    entering max pooling, ``E`` embedding values, ``A`` values of the input and every layer's
    output. A tensor of more than ``2**23`` float32 values (32 MiB: glibc maps larger allocations
    afresh) costs ``c_mmap`` per value each time a step makes it: the ``m``-client stacks of a
    parameter, and of an activation (``m · min(e, B)`` examples).

    The constants, in seconds (loop / vmap), were fitted by ``python benchmarks/bench_learn.py --fit``
    to its calibration grid (one epoch of plain SGD on one torch thread; 1 to 512 clients of 1 or 6
    batches of 1, 8 or 64 examples; the six models of :func:`make_model` and an MLP with 512 hidden
    units) and to the 21 "fit" rows of its table (five models, five client regimes), by least
    squares on the logarithms of the predicted over the measured seconds, weighted toward the ratio
    of the two paths (see the benchmark's ``fit``), on a 2-core Intel Xeon (Sapphire Rapids) KVM
    guest shared with other jobs, torch 2.13.0+cpu, 2026-11-27. The table's other rows are held out:
    they test the rule. Rerun it to re-derive the constants on another machine:

    ==============  =========  =========  ==========================================================
    constant        loop       vmap       seconds per
    ==============  =========  =========  ==========================================================
    call              6.6e-04    1.7e-04  call of the path (under vmap: per chunk of clients)
    client            6.8e-05    3.9e-05  client (its example order, its row of the parameter matrix)
    step              6.4e-05    1.1e-03  step (one client's on the loop, a chunk's under vmap)
    layer             1.9e-05    0.0e+00  step and module holding parameters
    conv              2.1e-04    2.1e-04  step and convolution
    parameter         2.1e-09    2.0e-09  step, client and parameter
    mac_linear        1.1e-11    7.9e-12  example and multiply-add of a linear layer
    mac_conv          1.0e-10    1.1e-10  example and multiply-add of a convolution
    pool              5.4e-09    1.3e-08  example and value entering max pooling
    embedding         2.2e-08    1.6e-08  example and embedding value looked up
    activation        1.7e-09    2.2e-09  example and value of the input or of a layer's output
    mmap              1.3e-09    1.3e-09  value of a tensor above 32 MiB, each time a step makes it
    ==============  =========  =========  ==========================================================

    What they say: a step of vmap costs about 15 times one of the loop (batching rules, one
    dispatch per stacked tensor), which many clients share; both pay about 2 ns per parameter,
    client and step (gradient, update); a multiply-add of a convolution costs about the same on
    both paths, but a value entering max pooling more than twice as much under vmap (the backward
    of batched max pooling: LeNet-5 and FedAvg's CNN train faster client by client unless batches
    are small); the stacked activations of many clients fall out of cache and, above 32 MiB, into
    fresh pages. The split of the linear layers' work between ``mac_linear`` and ``activation`` is
    loose (the grid tells them apart poorly); their sum fits. ``bench_learn.py`` prints, for each of
    its rows, the measured and the predicted speed-up and whether the rule picked the faster path:
    in two runs on 2026-11-27 it did in 50 and 49 of 55 rows (20 of the 21 fit rows; a tie within
    5% counted as right). In each miss it had predicted a near tie (0.90 to 1.05 times), and the
    measured speed-up was 0.79 to 1.45 times.

    **GPU.** On a CUDA device the rule returns ``"vmap"`` whenever there are at least two clients
    and a chunk holds at least two (``d <= 2**23``), since a GPU's per-kernel launch cost makes the
    client loop the slow path. This is **not measured**: the machine the constants come from has
    no GPU.

    Examples
    --------
    >>> from fedlib.learn import choose_method, make_model
    >>> choose_method([40] * 200, make_model("cnn_small"), 32)  # the book's default: many small clients
    'vmap'
    >>> choose_method([40] * 200, make_model("lenet5"), 32)  # max pooling under vmap is slow on the CPU
    'loop'
    >>> choose_method([10] * 199 + [400], make_model("softmax"), 32)  # one large client: mostly padding
    'loop'
    >>> choose_method([40] * 200, make_model("lenet5"), 32, device="cuda")  # not measured, see Notes
    'vmap'
    """
    sizes, batch_size, device, input_shape = _check_rule(sizes, model, batch_size, device, input_shape)
    d = sum(int(p.numel()) for p in model.parameters())
    if d == 0:
        raise ValueError("the model has no parameters.")
    if device.type == "cuda":
        return "vmap" if sizes.size >= 2 and _VMAP_MAX_FLOATS // d >= 2 else "loop"
    seconds = path_seconds(sizes, model, batch_size, input_shape=input_shape)
    return "vmap" if seconds["vmap"] < seconds["loop"] else "loop"


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
    >>> import numpy as np
    >>> from fedlib.learn import get_flat, make_model, train_clients
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
        method = choose_method(sizes, model, config.batch_size, device=device, input_shape=tuple(X_t.shape[1:]))
    # The result, trained in place; allocated by torch (64-byte aligned: numpy's 16-byte alignment made the
    # batched products and updates several times slower in bench_learn.py).
    P = torch.empty((n, d), dtype=torch.float32, device=device)
    P.copy_(torch.from_numpy(start).expand(n, d) if start.ndim == 1 else torch.from_numpy(start))
    with cuda_determinism(device):  # on the CPU: nothing
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
