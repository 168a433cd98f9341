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
from dataclasses import dataclass, replace

import numpy as np

from fedlib._typing import SeedLike
from fedlib._validation import check_ids, check_scalar
from fedlib.learn import AsyncFederatedTrainer, LocalSGD, fedavg_weights


@dataclass(frozen=True)
class CalibrationReport:
    """What :func:`federaser` did for one cluster.

    Parameters
    ----------
    cluster : int
        The cluster rebuilt.
    rounds : ndarray of int64
        The stored rounds replayed, in order (rounds left with no other client are skipped).
    calibrating_clients : ndarray of int64
        Clients that trained for calibration, per step summed (a client counts once per step).
    simulated_seconds : float
        Simulated time charged: the slowest calibrating client of every step after the first.
    wall_seconds : float
        Wall-clock seconds of the rebuild.
    params : ndarray of float32, shape (d,)
        The rebuilt model.
    """

    cluster: int
    rounds: np.ndarray
    calibrating_clients: int
    simulated_seconds: float
    wall_seconds: float
    params: np.ndarray


def _calibration_config(local: LocalSGD, ratio: float) -> tuple[LocalSGD, float]:
    """``r · E`` epochs: whole epochs when ``r · E ≥ 1``, else one pass over that fraction of the examples."""
    epochs = ratio * local.epochs
    if epochs >= 1:
        return replace(local, epochs=round(epochs)), 1.0
    return replace(local, epochs=1), epochs


def federaser(
    trainer: AsyncFederatedTrainer,
    client_ids,
    *,
    ratio: float = 0.5,
    random_state: SeedLike = 0,
) -> list[CalibrationReport]:
    """Erase clients from a running asynchronous trainer with FedEraser (Liu et al., IWQoS 2021).

    The clients stop being selected and their results in flight are dropped
    (:meth:`~fedlib.learn.AsyncFederatedTrainer.erase` without rollback); every cluster they
    took part in is rebuilt from its initial model with the calibrated stored updates of the
    other clients, and the trainer goes on from the rebuilt model after the simulated time
    of the calibration (:meth:`~fedlib.learn.AsyncFederatedTrainer.replace_model`).

    Parameters
    ----------
    trainer : AsyncFederatedTrainer
        Built with ``store_updates=Δt`` (FedEraser: 2).
    client_ids : array-like of int
        Clients to erase.
    ratio : float, default=0.5
        ``r``: calibration training runs ``r · E`` local epochs (FedEraser: 0.5).
    random_state : int, numpy.random.SeedSequence or None, default=0
        Root of the calibration clients' example orders.

    Returns
    -------
    list of CalibrationReport
        One per rebuilt cluster.

    Raises
    ------
    ValueError
        If the trainer keeps no updates, or for clients it cannot erase (unknown, repeated, already erased).

    Examples
    --------
    >>> from fedlib.learn import AsyncFederatedTrainer
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.random((80, 6), dtype=np.float32), rng.integers(0, 2, 80)
    >>> trainer = AsyncFederatedTrainer("softmax", X, y, np.array_split(np.arange(80), 8),
    ...                                 training_times=np.arange(1.0, 9.0), concurrency=4, buffer=2,
    ...                                 store_updates=2).run(rounds=6)
    >>> first = int(trainer.history_[0].clients[0])  # took part in round 1
    >>> [report.rounds.tolist() for report in federaser(trainer, [first])]
    [[1, 3, 5]]
    """
    if trainer.store_updates is None:
        raise ValueError("FedEraser needs the stored client updates: build the trainer with store_updates=Δt.")
    ratio = check_scalar(ratio, "ratio", "real", min_val=0.0, max_val=1.0, include_min=False)
    ids = check_ids(client_ids, "client_ids")
    trainer.erase(ids, rollback=False)
    forgotten = np.asarray(trainer.erased_, dtype=np.int64)
    took_part = ids[trainer.first_selected_[ids] > 0]
    config, fraction = _calibration_config(trainer.local, ratio)
    reports = []
    for n in np.unique(trainer.cluster_labels[took_part]).tolist():
        began = time.perf_counter()
        params = trainer.checkpoints_[n][0].astype(np.float32).copy()
        rounds, calibrating, seconds = [], 0, 0.0
        for stored in (s for s in trainer.stored_updates_ if s.cluster == n):
            keep = ~np.isin(stored.clients, forgotten)
            if not keep.any():
                continue
            clients, updates = stored.clients[keep], stored.updates[keep]
            weights = fedavg_weights(stored.n_samples[keep])
            weights = weights / weights.sum()
            if rounds:  # calibrate: the stored length in the direction of fresh training from the rebuilt model
                fresh = trainer.local_updates(
                    params,
                    clients,
                    local=config,
                    fraction=fraction,
                    round_index=stored.round_index,
                    random_state=random_state,
                )
                direction = fresh.deltas.astype(np.float64)
                lengths = np.linalg.norm(direction, axis=1)
                scale = np.divide(
                    np.linalg.norm(updates.astype(np.float64), axis=1),
                    lengths,
                    out=np.zeros_like(lengths),
                    where=lengths > 0,
                )
                updates = direction * scale[:, None]
                calibrating += clients.size
                seconds += ratio * float(trainer.training_times[clients].max())
            params = (params + weights @ np.asarray(updates, dtype=np.float64)).astype(np.float32)
            rounds.append(stored.round_index)
        trainer.replace_model(n, params, seconds=seconds)
        reports.append(
            CalibrationReport(
                cluster=n,
                rounds=np.array(rounds, dtype=np.int64),
                calibrating_clients=calibrating,
                simulated_seconds=seconds,
                wall_seconds=time.perf_counter() - began,
                params=params,
            )
        )
    return reports
