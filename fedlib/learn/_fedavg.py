"""Federated averaging (McMahan et al., AISTATS 2017) over a pluggable aggregator.

A round: every participant trains locally from the global parameters
(:func:`train_clients`), the aggregator sums their updates (a plain sum, or
secure aggregation, which may lose users to dropouts or abort), and the server
moves the global parameters by the mean update of the users that were summed:
``θ ← θ + (Σ_{i ∈ S} Δ_i) / |S|`` (equal weights: the clients of Liu et al.
hold equal shares of the data). A round whose aggregation aborts leaves ``θ``
unchanged and is recorded as skipped.

The client step (:func:`train_clients`) and the server step
(:func:`server_update`) are separate functions, so that an asynchronous
simulator can call them at different times.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
import pandas as pd
import torch
from torch import nn

from fedlib._typing import SeedLike
from fedlib._validation import check_random_state, check_scalar, spawn_generators
from fedlib.learn._evaluate import accuracy
from fedlib.learn._local import train_clients
from fedlib.learn._params import get_flat
from fedlib.secagg import SecAggAbort


class Aggregated(Protocol):
    """What an aggregator returns: the sum and who is in it."""

    total: np.ndarray
    summed: np.ndarray


class Aggregator(Protocol):
    """Sums the rows of an update matrix; :class:`PlainSum` or :class:`fedlib.secagg.SecureAggregator`."""

    def aggregate(self, updates, *, random_state: SeedLike = None) -> Aggregated:
        """Sum the rows of ``updates`` that make it through aggregation.

        Parameters
        ----------
        updates : ndarray of float32, shape (n, d)
            One update per participant.
        random_state : int, numpy.random.Generator or None, default=None
            The round's randomness (dropouts, keys).

        Returns
        -------
        Aggregated
            ``total`` and ``summed``.
        """


@dataclass(frozen=True)
class PlainSum:
    """The server sees every update and sums them (no privacy): the baseline without secure aggregation.

    Parameters
    ----------
    dropout_rate : float, default=0.0
        Each participant's update is lost with this probability, as in a
        secure round, so that baselines face the same dropouts.
    """

    dropout_rate: float = 0.0

    def aggregate(self, updates, *, random_state: SeedLike = None) -> PlainTotal:
        """Sum the rows of ``updates`` whose users did not drop.

        Parameters
        ----------
        updates : array-like of float, shape (n, d)
            One update per participant.
        random_state : int, numpy.random.Generator or None, default=None
            Draws the dropouts.

        Returns
        -------
        PlainTotal
            The float64 sum and the rows in it.
        """
        U = np.asarray(updates)
        rng = check_random_state(random_state)
        kept = np.flatnonzero(rng.random(len(U)) >= self.dropout_rate)
        return PlainTotal(total=U[kept].sum(axis=0, dtype=np.float64), summed=kept)


@dataclass(frozen=True)
class PlainTotal:
    """The result of :meth:`PlainSum.aggregate`.

    Parameters
    ----------
    total : ndarray of float64
        Sum of the kept rows.
    summed : ndarray of int64
        The kept rows.
    bytes_sent : int, default=0
        Uploads, counted as 4 bytes per float32 parameter of every kept row.
    """

    total: np.ndarray
    summed: np.ndarray
    bytes_sent: int = field(default=0)


def server_update(global_parameters, aggregated: Aggregated) -> np.ndarray:
    """FedAvg's server step: ``θ + total / |summed|`` (``θ`` itself if nobody was summed).

    Parameters
    ----------
    global_parameters : array-like of float32, shape (d,)
        ``θ``.
    aggregated : Aggregated
        The aggregator's output.

    Returns
    -------
    ndarray of float32, shape (d,)
        The new global parameters.
    """
    theta = np.asarray(global_parameters, dtype=np.float32)
    if len(aggregated.summed) == 0:
        return theta.copy()
    return (theta + np.asarray(aggregated.total, dtype=np.float64) / len(aggregated.summed)).astype(np.float32)


@dataclass(frozen=True)
class FedAvgResult:
    """Parameters after training and one row per round.

    Parameters
    ----------
    parameters : ndarray of float32, shape (d,)
        The global model after the last round.
    history : pandas.DataFrame
        Per round: ``round``, ``participants``, ``summed``, ``aborted``, ``accuracy`` (when a test set is
        given), ``train seconds``, ``aggregate seconds``, ``bytes sent``.
    """

    parameters: np.ndarray
    history: pd.DataFrame


def fedavg(
    model: nn.Module,
    images,
    labels,
    clients,
    *,
    rounds: int,
    aggregator: Aggregator | None = None,
    local_epochs: int = 1,
    batch_size: int = 32,
    lr: float = 0.05,
    start=None,
    test: tuple | None = None,
    random_state: SeedLike = None,
) -> FedAvgResult:
    """Train one federated model with FedAvg for ``rounds`` rounds over ``clients``.

    Calls ``torch.set_num_threads(1)``: many small models train faster on one
    thread each than on a thread pool, and a simulation is then reproducible
    across machines with different core counts.

    Parameters
    ----------
    model : torch.nn.Module
        The architecture; its initial parameters are the start unless ``start`` is given.
    images : torch.Tensor of shape (n, 1, 28, 28)
        All examples (float32); clients index into it.
    labels : torch.Tensor of shape (n,)
        int64 labels.
    clients : sequence of array-like of int
        Each client's example indices.
    rounds : int
        Communication rounds ``R``.
    aggregator : Aggregator, optional
        Sums each round's updates; default :class:`PlainSum`.
    local_epochs : int, default=1
        ``E``, local passes per round.
    batch_size : int, default=32
        ``B``.
    lr : float, default=0.05
        SGD step size.
    start : array-like of float32, optional
        Initial flat parameters (to continue training); default the model's own.
    test : (images, labels), optional
        Evaluated after every round.
    random_state : int, numpy.random.Generator or None, default=None
        Every round's example orders and aggregation randomness.

    Returns
    -------
    FedAvgResult
        Final parameters and the per-round history.

    Raises
    ------
    ValueError
        If ``clients`` is empty.
    """
    rounds = check_scalar(rounds, "rounds", "int", min_val=0)
    if len(clients) == 0:
        raise ValueError("FedAvg needs at least one client.")
    torch.set_num_threads(1)
    aggregator = aggregator or PlainSum()
    theta = get_flat(model) if start is None else np.asarray(start, dtype=np.float32).copy()
    client_images = [images[torch.as_tensor(np.asarray(c, dtype=np.int64))] for c in clients]
    client_labels = [labels[torch.as_tensor(np.asarray(c, dtype=np.int64))] for c in clients]
    if len({len(c) for c in clients}) == 1:
        client_images, client_labels = torch.stack(client_images), torch.stack(client_labels)
    rows = []
    for r, rng in enumerate(spawn_generators(random_state, rounds)):
        t0 = time.perf_counter()
        updates = train_clients(
            model, theta, client_images, client_labels,
            epochs=local_epochs, batch_size=batch_size, lr=lr, random_state=rng,
        )  # fmt: skip
        t1 = time.perf_counter()
        try:
            aggregated = aggregator.aggregate(updates, random_state=rng)
            theta, aborted, summed = server_update(theta, aggregated), False, len(aggregated.summed)
            sent = int(getattr(aggregated, "bytes_sent", 0)) or 4 * updates.shape[1] * summed
        except SecAggAbort:  # the round outputs nothing; θ stays
            aborted, summed, sent = True, 0, 0
        t2 = time.perf_counter()
        row = {"round": r + 1, "participants": len(clients), "summed": summed, "aborted": aborted,
               "train seconds": t1 - t0, "aggregate seconds": t2 - t1, "bytes sent": sent}  # fmt: skip
        if test is not None:
            row["accuracy"] = accuracy(model, test[0], test[1], parameters=theta)
        rows.append(row)
    return FedAvgResult(parameters=theta, history=pd.DataFrame(rows))
