"""KNOT's client profile (Su & Li, INFOCOM 2023, Sec. IV-A): training time and model disparity.

Before clustering, every client trains once from a random model ``ω_0``; the
server averages the results into ``ω_1`` (the clients' consensus). A client's
*disparity* ``S_k`` compares its own update ``Δ_k`` with the consensus
``ω_1 − ω_0`` by the cosine ``Θ``:

- ``variant="paper"`` (corrected): ``S_k = (1 − Θ(ω_1 − ω_0, Δ_k)) / 2``; the
  paper prints ``Θ(ω_0 − ω_1, Δ_k)``, which contradicts its own reading that a
  small ``S_k`` marks a representative client;
- ``variant="plato"``: the authors' code, ``(1 + Θ(ω_1 − ω_0, Δ_k)) / 2`` with
  ``Δ_k`` taken in a second round from ``ω_1``: a similarity, the mirrored axis.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from fedlib._typing import SeedLike
from fedlib._validation import check_option
from fedlib.learn._fedavg import fedavg_mean
from fedlib.learn._local import LocalSGD, train_clients


@dataclass(frozen=True)
class ClientProfile:
    """Per-client features for KNOT's assignment.

    Parameters
    ----------
    times : ndarray of float64, shape (K,)
        Training times ``T_k`` (as given: simulated or measured).
    disparity : ndarray of float64, shape (K,)
        ``S_k`` in ``[0, 1]``.
    cosine : ndarray of float64, shape (K,)
        ``Θ(ω_1 − ω_0, Δ_k)``.
    consensus : ndarray of float32, shape (d,)
        ``ω_1``, the profiling round's average model.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.learn import AsyncFederatedTrainer
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.random((40, 4), dtype=np.float32), rng.integers(0, 2, 40)
    >>> trainer = AsyncFederatedTrainer(concurrency=4, buffer=4, random_state=0)
    >>> trainer = trainer.fit(X, y, parts=np.array_split(np.arange(40), 4), training_times=[1.0, 2.0, 3.0, 4.0])
    >>> profile = trainer.profile()
    >>> profile.times.tolist(), profile.disparity.round(2).tolist(), profile.consensus.shape
    ([1.0, 2.0, 3.0, 4.0], [0.26, 0.44, 0.58, 0.07], (10,))
    >>> bool(np.allclose(profile.disparity, (1 - profile.cosine) / 2))
    True
    """

    times: np.ndarray
    disparity: np.ndarray
    cosine: np.ndarray
    consensus: np.ndarray


def profile_clients(
    model: nn.Module,
    start,
    X,
    y,
    clients,
    *,
    training_times,
    local: LocalSGD | None = None,
    variant: str = "paper",
    random_state: SeedLike = None,
    method: str = "auto",
    device: str | torch.device | None = None,
) -> ClientProfile:
    """Profile every client as KNOT does before clustering (Sec. IV-A).

    Parameters
    ----------
    model : torch.nn.Module
        The architecture.
    start : array-like of float32, shape (d,)
        ``ω_0``.
    X : ndarray of float, shape (n_samples, ...)
        All clients' examples.
    y : array-like of int, shape (n_samples,)
        Labels.
    clients : sequence of array-like of int
        Each client's rows.
    training_times : array-like of float, shape (K,)
        ``T_k``.
    local : LocalSGD, optional
        Local training.
    variant : {"paper", "plato"}, default="paper"
        Which disparity (module docstring).
    random_state : int, numpy.random.SeedSequence or None, default=None
        Root seed of the profiling rounds (rounds 0 and 1 of :func:`train_clients`).
    method : {"auto", "vmap", "loop"}, default="auto"
        Local-training path.
    device : str or torch.device, optional
        Where the clients train (:func:`train_clients`); default the device of ``X`` when it is a
        tensor, else the CPU. The cosines are computed on the host.

    Returns
    -------
    ClientProfile
        Times, disparities, cosines and ``ω_1``.

    Raises
    ------
    ValueError
        If ``training_times`` does not hold one time per client.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.learn import get_flat, make_model, profile_clients
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.random((60, 4), dtype=np.float32), rng.integers(0, 2, 60)
    >>> model = make_model("softmax", 2, input_shape=(4,), random_state=0)
    >>> p = profile_clients(model, get_flat(model), X, y, np.array_split(np.arange(60), 3), training_times=[1, 2, 3])
    >>> bool(((0 <= p.disparity) & (p.disparity <= 1)).all()), p.disparity.shape
    (True, (3,))
    """
    check_option(variant, "variant", ("paper", "plato"))
    times = np.asarray(training_times, dtype=np.float64).ravel()
    if times.shape != (len(clients),):
        raise ValueError(f"training_times must hold one time per client ({len(clients)}), got {times.shape}.")
    omega0 = np.asarray(start, dtype=np.float32)
    first = train_clients(model, omega0, X, y, clients, config=local, round_index=0, random_state=random_state,
                          method=method, device=device)  # fmt: skip
    omega1 = fedavg_mean(first.params, first.n_samples).astype(np.float32)
    if variant == "paper":
        deltas = first.deltas
    else:
        second = train_clients(model, omega1, X, y, clients, config=local, round_index=1, random_state=random_state,
                               method=method, device=device)  # fmt: skip
        deltas = second.deltas
    consensus = (omega1 - omega0).astype(np.float64)
    norms = np.linalg.norm(deltas.astype(np.float64), axis=1) * np.linalg.norm(consensus)
    cosine = np.divide(deltas.astype(np.float64) @ consensus, norms, out=np.zeros(len(clients)), where=norms > 0)
    cosine = np.clip(cosine, -1.0, 1.0)
    disparity = (1.0 - cosine) / 2.0 if variant == "paper" else (1.0 + cosine) / 2.0
    return ClientProfile(times=times, disparity=disparity, cosine=cosine, consensus=omega1)
