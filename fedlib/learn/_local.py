"""Local training of many clients at once: plain mini-batch SGD, vectorised over clients with ``torch.func``.

Every client starts from the same global parameters and runs ``epochs`` passes
of SGD over its own data in its own random order (FedAvg's ClientUpdate,
McMahan et al. 2017, Alg. 1). Clients train one after another with plain
autograd; with ``vectorise=True`` and equally many examples per client, as in
the IID splits of Liu et al. (TDSC 2025), one call of ``vmap(grad(loss))``
steps all of them together instead.
"""

from __future__ import annotations

import copy

import numpy as np
import torch
from torch import nn
from torch.func import functional_call, grad, vmap

from fedlib._typing import SeedLike
from fedlib._validation import check_random_state, check_scalar
from fedlib.learn._params import n_parameters


def _batch_orders(n_clients: int, n_examples: int, epochs: int, rng: np.random.Generator) -> np.ndarray:
    """``(epochs, n_clients, n_examples)`` permutations: each client's order of its examples in each epoch."""
    base = np.broadcast_to(np.arange(n_examples), (epochs, n_clients, n_examples))
    return rng.permuted(base, axis=2)


def _loss(model: nn.Module):
    def loss(params, x, y):
        return nn.functional.cross_entropy(functional_call(model, params, (x,)), y)

    return loss


def train_clients(
    model: nn.Module,
    start,
    images,
    labels,
    *,
    epochs: int = 1,
    batch_size: int = 32,
    lr: float = 0.05,
    vectorise: bool = False,
    random_state: SeedLike = None,
) -> np.ndarray:
    """Train every client from ``start`` on its own data and return the updates ``θ_i − start``.

    Parameters
    ----------
    model : torch.nn.Module
        The architecture (its own parameters are not changed).
    start : array-like of float32, shape (d,)
        The global parameters every client starts from.
    images : sequence of tensors or a tensor of shape (n_clients, n, 1, 28, 28)
        Client ``i``'s examples (float32). Equal ``n`` for all clients takes the vectorised path.
    labels : sequence of tensors or a tensor of shape (n_clients, n)
        Client ``i``'s labels (int64).
    epochs : int, default=1
        Local passes over the data.
    batch_size : int, default=32
        Mini-batch size; the last batch of an epoch may be smaller.
    lr : float, default=0.05
        SGD step size (no momentum, no weight decay).
    vectorise : bool, default=False
        Step all clients together with ``vmap(grad(loss))`` when they hold
        equally many examples. On a CPU a plain loop over clients was faster
        for the book's CNN (``benchmarks/bench_learn.py``); both give the same
        SGD up to float rounding.
    random_state : int, numpy.random.Generator or None, default=None
        Draws every client's example order; a seed fixes every bit.

    Returns
    -------
    ndarray of float32, shape (n_clients, d)
        Row ``i``: client ``i``'s parameters after training minus ``start``.

    Raises
    ------
    ValueError
        If a client has no example, or images and labels disagree.
    """
    epochs = check_scalar(epochs, "epochs", "int", min_val=1)
    batch_size = check_scalar(batch_size, "batch_size", "int", min_val=1)
    lr = check_scalar(lr, "lr", "real", min_val=0.0, include_min=False)
    rng = check_random_state(random_state)
    start = torch.as_tensor(np.asarray(start, dtype=np.float32))
    if start.numel() != n_parameters(model):
        raise ValueError(f"start has {start.numel()} values for a model of {n_parameters(model)} parameters.")
    sizes = [len(x) for x in images]
    if len(sizes) != len(labels) or any(len(x) != len(y) for x, y in zip(images, labels, strict=True)):
        raise ValueError("every client needs as many labels as images.")
    if min(sizes, default=0) < 1:
        raise ValueError("every client needs at least one example.")
    names = [name for name, _ in model.named_parameters()]
    shapes = [p.shape for _, p in model.named_parameters()]
    pieces = torch.split(start, [int(np.prod(s)) for s in shapes])
    params0 = {n: piece.reshape(s) for n, piece, s in zip(names, pieces, shapes, strict=True)}
    if vectorise and len(set(sizes)) == 1:
        X = images if isinstance(images, torch.Tensor) else torch.stack(list(images))
        Y = labels if isinstance(labels, torch.Tensor) else torch.stack(list(labels))
        trained = _train_vectorised(model, params0, X, Y, epochs, batch_size, lr, rng)
    else:
        orders = [_batch_orders(1, n, epochs, rng)[:, 0] for n in sizes]
        work = copy.deepcopy(model)
        trained = torch.stack(
            [_train_one(work, start, x, y, o, batch_size, lr) for x, y, o in zip(images, labels, orders, strict=True)]
        )
    return (trained - start).numpy()


def _train_one(model, start, x, y, orders, batch_size, lr) -> torch.Tensor:
    """Plain autograd SGD of one client, in the given per-epoch example orders; returns flat parameters."""
    torch.nn.utils.vector_to_parameters(start.clone(), model.parameters())
    params = list(model.parameters())
    model.train()
    for order in orders:
        order = torch.as_tensor(order)
        for b in range(0, len(order), batch_size):
            idx = order[b : b + batch_size]
            for p in params:
                p.grad = None
            nn.functional.cross_entropy(model(x[idx]), y[idx]).backward()
            with torch.no_grad():
                for p in params:
                    p -= lr * p.grad
    return torch.nn.utils.parameters_to_vector(params).detach()


def _train_vectorised(model, params0, X, Y, epochs, batch_size, lr, rng) -> torch.Tensor:
    """SGD for clients with equally many examples; returns ``(n_clients, d)`` flat parameters."""
    n_clients, n = X.shape[0], X.shape[1]
    params = {k: v.expand(n_clients, *v.shape).clone() for k, v in params0.items()}
    step = vmap(grad(_loss(model)))
    rows = torch.arange(n_clients)[:, None]
    for order in _batch_orders(n_clients, n, epochs, rng):
        order = torch.as_tensor(order)
        for b in range(0, n, batch_size):
            idx = order[:, b : b + batch_size]
            grads = step(params, X[rows, idx], Y[rows, idx])
            params = {k: v - lr * grads[k] for k, v in params.items()}
    return torch.cat([v.reshape(n_clients, -1) for v in params.values()], dim=1).detach()
