"""FedEraser: approximate federated unlearning by calibrating the server's stored client updates.

Liu, Ma, Yang, Wang and Liu, "FedEraser: Enabling Efficient Client-Level Data Removal from Federated
Learning Models" (IEEE IWQoS 2021). During training the server keeps the client updates of every
``Δt``-th round (rounds ``t_1 = 1, t_2 = 1 + Δt, ...``). To forget client ``k_u`` it rebuilds the
model from the start, one stored round per step, without ``k_u``:

- step 1 applies the stored updates of the other clients as they are (the initial model holds
  nothing of ``k_u``);
- each later step ``j`` asks every other client of round ``t_j`` for a *calibration* update
  ``Û_k``: local training from the rebuilt model for ``r · E`` epochs, a fraction ``r`` of the
  usual work; the step applies ``Ũ_k = ‖U_k^{t_j}‖ · Û_k / ‖Û_k‖``, the stored update's length in
  the calibrated direction, averaged with FedAvg's sample weights.

The rebuilt model is not the model trained without ``k_u``: the stored updates were computed from
models that had seen ``k_u``. FedEraser is approximate; KNOT (Su & Li, INFOCOM 2023) compares
against it in Table II. KNOT does not say how FedEraser runs asynchronously; here the stored
rounds are every ``Δt``-th aggregation of the buffered server, each step is charged the
simulated time of its slowest calibrating client (``r · T_k``), and training resumes from the
rebuilt model.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
import torch
from torch import nn

from fedlib._typing import SeedLike
from fedlib._validation import check_scalar
from fedlib.base import UnlearningReport
from fedlib.learn import AsyncFederatedTrainer, LocalSGD, fedavg_mean

__all__ = ["FedEraser"]


def _calibration_config(local: LocalSGD, ratio: float) -> tuple[LocalSGD, float]:
    """``r · E`` epochs: whole epochs when ``r · E ≥ 1``, else one pass over that fraction of the examples."""
    epochs = ratio * local.epochs
    if epochs >= 1:
        return replace(local, epochs=round(epochs)), 1.0
    return replace(local, epochs=1), epochs


class FedEraser(AsyncFederatedTrainer):
    """An asynchronous federated trainer that forgets clients with FedEraser (Liu et al., IWQoS 2021).

    Training is :class:`~fedlib.learn.AsyncFederatedTrainer`'s, with the server keeping the client
    updates of every ``interval``-th aggregation of each cluster. ``unlearn(clients=...)`` stops
    selecting the clients and drops their results in flight; every cluster they took part in is
    rebuilt from its initial model with the calibrated stored updates of the other clients, and
    training goes on from the rebuilt model after the simulated time of the calibration
    (:meth:`~fedlib.learn.AsyncFederatedTrainer.replace_model`).

    Parameters
    ----------
    model : str or torch.nn.Module, default="softmax"
        As :class:`~fedlib.learn.AsyncFederatedTrainer`.
    concurrency : int
        ``P``, clients in flight.
    buffer : int
        ``M``, results per aggregation.
    interval : int, default=2
        ``Δt``: the server keeps the updates of rounds ``1, 1 + Δt, 1 + 2Δt, ...`` (FedEraser: 2).
    ratio : float, default=0.5
        ``r``: calibration training runs ``r · E`` local epochs (FedEraser: 0.5).
    n_classes : int, optional
        As :class:`~fedlib.learn.AsyncFederatedTrainer`.
    local : LocalSGD, optional
        Local training (also the calibration's, for ``r · E`` epochs).
    aggregation : {"average", "fedbuff"}, default="average"
        As :class:`~fedlib.learn.AsyncFederatedTrainer`.
    staleness_scaling : bool, default=False
        As :class:`~fedlib.learn.AsyncFederatedTrainer`.
    server_lr : float, default=1.0
        As :class:`~fedlib.learn.AsyncFederatedTrainer`.
    staleness_bound : int, optional
        As :class:`~fedlib.learn.AsyncFederatedTrainer`.
    schedule : {"global", "per_cluster"}, default="global"
        As :class:`~fedlib.learn.AsyncFederatedTrainer`.
    metric : {"accuracy", "perplexity"}, default="accuracy"
        As :class:`~fedlib.learn.AsyncFederatedTrainer`.
    method : {"auto", "vmap", "loop"}, default="auto"
        As :class:`~fedlib.learn.AsyncFederatedTrainer`.
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None, default=None
        Root seed of training and of the calibrating clients' example orders.
    n_threads : int or None, default=1
        torch threads.
    device : str or torch.device, default="cpu"
        Where local training, calibration and testing run (``"cpu"``, ``"cuda"``, ``"cuda:N"``,
        ``"auto"``), as :class:`~fedlib.learn.AsyncFederatedTrainer`; the stored updates and the
        rebuilt models stay on the host.

    Notes
    -----
    The report of :meth:`unlearn` has ``exact=False`` (the rebuilt model is not the one training
    without the clients gives), ``rounds`` the stored rounds replayed, ``client_seconds`` the
    calibration training (all clients, wall clock), ``server_seconds`` the rest of the rebuild,
    ``bytes_sent`` the calibrating clients' float32 updates, and in ``details``: ``clusters``
    (rebuilt), ``replayed`` (cluster → the stored rounds replayed, in order; rounds left with no
    other client are skipped), ``calibrating_clients`` (cluster → clients that trained, a client
    counting once per step) and ``simulated_seconds`` (cluster → simulated time charged: the
    slowest calibrating client of every step after the first, ``r · T_k``). Only the cluster's
    first stored round goes uncalibrated: if it held only forgotten clients, every replayed round
    is calibrated.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.unlearn import FedEraser
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.random((80, 6), dtype=np.float32), rng.integers(0, 2, 80)
    >>> eraser = FedEraser("softmax", concurrency=4, buffer=2, random_state=0).fit(
    ...     X, y, parts=np.array_split(np.arange(80), 8), training_times=np.arange(1.0, 9.0), rounds=6)
    >>> first = int(eraser.history_[0].clients[0])  # took part in round 1
    >>> report = eraser.unlearn(clients=[first])
    >>> report.exact, report.details["replayed"]
    (False, {0: (1, 3, 5)})
    """

    def __init__(
        self,
        model: str | nn.Module = "softmax",
        *,
        concurrency: int,
        buffer: int,
        interval: int = 2,
        ratio: float = 0.5,
        n_classes: int | None = None,
        local: LocalSGD | None = None,
        aggregation: str = "average",
        staleness_scaling: bool = False,
        server_lr: float = 1.0,
        staleness_bound: int | None = None,
        schedule: str = "global",
        metric: str = "accuracy",
        method: str = "auto",
        random_state: SeedLike = None,
        n_threads: int | None = 1,
        device: str | torch.device = "cpu",
    ) -> None:
        super().__init__(
            model,
            concurrency=concurrency,
            buffer=buffer,
            n_classes=n_classes,
            local=local,
            aggregation=aggregation,
            staleness_scaling=staleness_scaling,
            server_lr=server_lr,
            staleness_bound=staleness_bound,
            schedule=schedule,
            metric=metric,
            method=method,
            random_state=random_state,
            n_threads=n_threads,
            device=device,
        )
        del self.store_updates  # FedEraser keeps updates every ``interval`` rounds: not a parameter here
        self.interval = interval
        self.ratio = ratio

    def _store_interval(self) -> int:
        return check_scalar(self.interval, "interval (Δt)", "int", min_val=1)

    def _unlearn(self, samples: np.ndarray, clients: np.ndarray) -> UnlearningReport:
        ratio = check_scalar(self.ratio, "ratio (r)", "real", min_val=0.0, max_val=1.0, include_min=False)
        began = time.perf_counter()
        self._stop_clients(clients)
        forgotten = np.asarray(self.unlearned_, dtype=np.int64)
        took_part = clients[self.first_selected_[clients] > 0]
        config, fraction = _calibration_config(self._local, ratio)
        replayed, calibrating, simulated = {}, {}, {}
        client_seconds, uploads = 0.0, 0
        for n in np.unique(self.cluster_labels_[took_part]).tolist():
            params = self.checkpoints_[n][0].astype(np.float32).copy()
            rounds, count, seconds = [], 0, 0.0
            for step, stored in enumerate(s for s in self.stored_updates_ if s.cluster == n):
                keep = ~np.isin(stored.clients, forgotten)
                if not keep.any():
                    continue
                ids, updates = stored.clients[keep], stored.updates[keep]
                # only the cluster's first stored round was trained from the initial model: every later one is
                # calibrated, even when the rounds before it were skipped (the stored length in the direction
                # of fresh training from the rebuilt model)
                if step > 0:
                    fresh = self.local_updates(
                        params, ids, local=config, fraction=fraction, round_index=stored.round_index,
                        random_state=self._root,
                    )  # fmt: skip
                    client_seconds += fresh.seconds
                    direction = fresh.deltas.astype(np.float64)
                    lengths = np.linalg.norm(direction, axis=1)
                    scale = np.divide(
                        np.linalg.norm(updates.astype(np.float64), axis=1),
                        lengths,
                        out=np.zeros_like(lengths),
                        where=lengths > 0,
                    )
                    updates = direction * scale[:, None]
                    count += ids.size
                    uploads += ids.size * direction.shape[1] * np.dtype(np.float32).itemsize
                    seconds += ratio * float(self.training_times_[ids].max())
                params = (params + fedavg_mean(np.asarray(updates, dtype=np.float64), stored.n_samples[keep])).astype(
                    np.float32
                )
                rounds.append(stored.round_index)
            self.replace_model(n, params, seconds=seconds)
            replayed[n], calibrating[n], simulated[n] = tuple(rounds), count, seconds
        return UnlearningReport(
            forgotten_clients=tuple(clients.tolist()),
            server_refit=bool(replayed),
            rounds=sum(len(r) for r in replayed.values()),
            client_seconds=client_seconds,
            server_seconds=time.perf_counter() - began - client_seconds,
            bytes_sent=int(uploads),
            exact=False,
            details={
                "clusters": tuple(replayed),
                "replayed": replayed,
                "calibrating_clients": calibrating,
                "simulated_seconds": simulated,
            },
        )
