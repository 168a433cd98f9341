"""Federated averaging (McMahan et al., AISTATS 2017) over a pluggable aggregator.

One round of :class:`FederatedTrainer`:

1. the server picks the participants (all clients, or a fraction ``C`` of
   them) and the clients who will drop out of this round's aggregation (a rate,
   or any callable);
2. every participant that stays trains locally from the global parameters
   ``θ`` (:func:`train_clients`) and sends ``w_i Δ_i``, its update scaled by
   its FedAvg weight (:func:`fedavg_weights`);
3. an :class:`Aggregator` sums the rows it receives: :class:`PlainSum` in the
   clear, or secure aggregation, which sums quantised updates and may lose
   more clients or abort;
4. the server averages over the clients whose inputs are in the sum, and
   only those (:func:`server_update`): ``θ ← θ + η_g Σ_{i∈S} w_i Δ_i / Σ_{i∈S} w_i``.

With ``weighting="samples"`` (FedAvg's ``n_k / n``), ``w_i = n_i / n̄`` with
``n̄`` the participants' mean size, which keeps the inputs the size of the
updates (what fixed-point encoding for secure aggregation needs) and costs
nothing when the shares are equal, as in Liu et al. (TDSC 2025): every ``w_i``
is then exactly 1. The server must know the ``n_i`` of the summed clients;
``weighting="uniform"`` needs nothing but the count.

The client step (:func:`train_clients`, whose :class:`ClientUpdates` record
the model version each client started from) and the server step
(:func:`server_update`) are separate functions, so that an asynchronous
server (KNOT, Su & Li, INFOCOM 2023) can call them at different times.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
import torch
from sklearn.base import BaseEstimator
from torch import nn

from fedlib._random import check_random_state, root_sequence
from fedlib._typing import SeedLike
from fedlib._validation import check_is_fitted, check_option, check_scalar
from fedlib.learn._device import DeviceData, _as_features, _as_labels, resolve_device
from fedlib.learn._evaluate import accuracy
from fedlib.learn._federation import Federation, RoundRequest
from fedlib.learn._local import (
    _AGGREGATE,
    _INIT,
    _ROUND,
    ClientUpdates,
    LocalSGD,
    _child,
    check_training_data,
    train_clients,
)
from fedlib.learn._models import init_parameters, make_model
from fedlib.learn._params import ParameterLayout, get_flat


@runtime_checkable
class Aggregated(Protocol):
    """What an aggregator returns: the sum, and the rows whose inputs are in it.

    Optional attributes a trainer records when present: ``bytes_sent`` and
    ``bytes_received`` (all clients' uploads and downloads, int) and
    ``seconds`` (compute time per phase, dict of str to float).

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.learn import Aggregated, PlainSum
    >>> out = PlainSum().aggregate(np.ones((3, 2)), dropped=[0])
    >>> isinstance(out, Aggregated), out.total.tolist(), out.summed.tolist()
    (True, [2.0, 2.0], [1, 2])
    """

    total: np.ndarray
    summed: np.ndarray


@runtime_checkable
class Aggregator(Protocol):
    """Sums the rows of an update matrix: :class:`PlainSum`, or secure aggregation (``secagg.SecureAggregator``).

    Examples
    --------
    Any object with this ``aggregate`` method is one, e.g. a toy server that keeps the first row only:

    >>> import numpy as np
    >>> from fedlib.learn import Aggregator, FederatedTrainer, PlainTotal
    >>> class FirstOnly:
    ...     def aggregate(self, updates, *, dropped=None, random_state=None):
    ...         return PlainTotal(total=np.asarray(updates[0], dtype=np.float64), summed=np.array([0]))
    >>> isinstance(FirstOnly(), Aggregator)
    True
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.random((30, 4), dtype=np.float32), rng.integers(0, 2, 30)
    >>> trainer = FederatedTrainer(aggregator=FirstOnly(), random_state=0)
    >>> trainer.fit(X, y, parts=np.array_split(np.arange(30), 3)).history_[0].summed.tolist()
    [0]
    """

    def aggregate(self, updates, *, dropped=None, random_state: SeedLike = None) -> Aggregated:
        """Sum the rows of ``updates`` whose clients make it through the round.

        Parameters
        ----------
        updates : ndarray of float32, shape (n, d)
            One input per participant, in participant order. The rows of
            ``dropped`` clients are zeros and must not be summed.
        dropped : array-like of int, optional
            Rows whose clients drop out before sending their input (the trainer
            always passes them; ``None`` lets the aggregator draw its own).
        random_state : int, numpy.random.Generator or None, default=None
            The round's randomness (keys, graphs, the aggregator's own dropouts).

        Returns
        -------
        Aggregated
            ``total``: the sum, shape (d,); ``summed``: the rows in it.
        """


@dataclass(frozen=True)
class PlainTotal:
    """The outcome of :meth:`PlainSum.aggregate`.

    Parameters
    ----------
    total : ndarray of float64, shape (d,)
        Sum of the summed rows.
    summed : ndarray of int64
        The rows in the sum.
    bytes_sent : int, default=0
        Uploads: 4 bytes per float32 entry of every summed row.
    bytes_received : int, default=0
        Downloads of the aggregation itself (none in the clear).
    seconds : dict of str to float, default={}
        Compute time per phase (none to report).

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.learn import PlainSum
    >>> out = PlainSum().aggregate(np.ones((2, 3), dtype=np.float32))
    >>> type(out).__name__, out.total.tolist(), out.summed.tolist(), out.bytes_sent
    ('PlainTotal', [2.0, 2.0, 2.0], [0, 1], 24)
    """

    total: np.ndarray
    summed: np.ndarray
    bytes_sent: int = 0
    bytes_received: int = 0
    seconds: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class PlainSum:
    """The server receives every update in the clear and sums it: FedAvg without secure aggregation.

    Parameters
    ----------
    dropout_rate : float, default=0.0
        Used only when :meth:`aggregate` is called without ``dropped``: each
        row is then lost with this probability.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.learn import PlainSum
    >>> out = PlainSum().aggregate(np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]), dropped=[1])
    >>> out.total.tolist(), out.summed.tolist()
    ([6.0, 8.0], [0, 2])
    """

    dropout_rate: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(
            self,
            "dropout_rate",
            check_scalar(self.dropout_rate, "dropout_rate", "real", min_val=0.0, max_val=1.0, include_max=False),
        )

    def aggregate(self, updates, *, dropped=None, random_state: SeedLike = None) -> PlainTotal:
        """Sum the rows of ``updates`` that did not drop, in float64.

        Parameters
        ----------
        updates : array-like of float, shape (n, d)
            One input per participant.
        dropped : array-like of int, optional
            Rows left out; default: each row independently with probability ``dropout_rate``.
        random_state : int, numpy.random.Generator or None, default=None
            Draws the dropouts when ``dropped`` is not given.

        Returns
        -------
        PlainTotal
            The sum and the summed rows.

        Raises
        ------
        ValueError
            If ``updates`` is not 2-D or ``dropped`` names a row that does not exist.
        """
        U = np.asarray(updates)
        if U.ndim != 2:
            raise ValueError(f"updates must be 2-D (n_participants, d), got shape {U.shape}.")
        n, d = U.shape
        if dropped is None:
            lost = check_random_state(random_state).random(n) < self.dropout_rate
        else:
            lost = np.zeros(n, dtype=bool)
            lost[_check_rows(dropped, n, "dropped")] = True
        summed = np.flatnonzero(~lost)
        return PlainTotal(total=U[summed].sum(axis=0, dtype=np.float64), summed=summed, bytes_sent=4 * d * summed.size)


def _check_rows(rows, n: int, name: str) -> np.ndarray:
    rows = np.unique(np.asarray(rows, dtype=np.int64).ravel())
    if rows.size and (rows[0] < 0 or rows[-1] >= n):
        raise ValueError(f"{name} must be rows in [0, {n}), got {rows.tolist()}.")
    return rows


def fedavg_weights(n_samples, weighting: str = "samples") -> np.ndarray:
    """FedAvg's weight of each participant, scaled to mean 1.

    Parameters
    ----------
    n_samples : array-like of int, shape (n,)
        The participants' numbers of examples.
    weighting : {"samples", "uniform"}, default="samples"
        ``"samples"``: ``n_i / mean(n)`` (McMahan et al.'s ``n_k / n`` up to a
        constant factor); ``"uniform"``: all ones.

    Returns
    -------
    ndarray of float64, shape (n,)
        Exactly 1 everywhere when the sizes are equal.

    Examples
    --------
    >>> from fedlib.learn import fedavg_weights
    >>> fedavg_weights([10, 30]).tolist(), fedavg_weights([40, 40]).tolist()
    ([0.5, 1.5], [1.0, 1.0])
    """
    check_option(weighting, "weighting", ("samples", "uniform"))
    sizes = np.asarray(n_samples, dtype=np.float64).ravel()
    if weighting == "uniform" or sizes.size == 0:
        return np.ones(sizes.size)
    if np.any(sizes <= 0):
        raise ValueError("every participant needs a positive number of samples.")
    return sizes / sizes.mean()


def fedavg_mean(vectors, n_samples, weighting: str = "samples") -> np.ndarray:
    """FedAvg's weighted mean of client vectors: ``Σ_i w_i v_i / Σ_i w_i`` with ``w_i`` from :func:`fedavg_weights`.

    The model a FedAvg server forms from its clients' models (McMahan et al., AISTATS 2017,
    Alg. 1: ``w ← Σ_k (n_k / n) w_k``), or the mean step from their updates. Summed in
    float64 in client order and returned in float64: the caller rounds once, to the model's
    float32, after adding it to whatever it updates.

    Parameters
    ----------
    vectors : array-like of float, shape (n, d)
        One row per client: its model or its update.
    n_samples : array-like of int, shape (n,)
        The clients' numbers of examples.
    weighting : {"samples", "uniform"}, default="samples"
        As :func:`fedavg_weights`.

    Returns
    -------
    ndarray of float64, shape (d,)
        The weighted mean.

    Examples
    --------
    >>> from fedlib.learn import fedavg_mean
    >>> fedavg_mean([[0.0, 4.0], [4.0, 0.0]], [10, 30]).tolist()
    [3.0, 1.0]
    """
    weights = fedavg_weights(n_samples, weighting)
    return np.einsum("i,id->d", weights / weights.sum(), np.asarray(vectors))


def server_update(global_parameters, aggregated: Aggregated, *, weights=None, server_lr: float = 1.0) -> np.ndarray:
    """FedAvg's server step over the clients that were summed: ``θ + η_g · total / Σ_{i∈summed} w_i``.

    Parameters
    ----------
    global_parameters : array-like of float32, shape (d,)
        ``θ``.
    aggregated : Aggregated
        ``total`` (the sum of the summed clients' ``w_i Δ_i``) and ``summed`` (their rows).
    weights : array-like of float, shape (n,), optional
        Every participant's ``w_i`` (rows as in the aggregation); default all ones,
        so that the step is the plain mean over the summed clients.
    server_lr : float, default=1.0
        ``η_g``; 1 is FedAvg.

    Returns
    -------
    ndarray of float32, shape (d,)
        The new global parameters; a copy of ``θ`` when nobody was summed.

    Raises
    ------
    ValueError
        If ``total`` does not match ``θ`` or the summed weights are not positive.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.learn import PlainSum, server_update
    >>> out = PlainSum().aggregate(np.array([[1.0], [3.0], [8.0]]), dropped=[2])
    >>> server_update(np.zeros(1, dtype=np.float32), out).tolist()
    [2.0]
    """
    theta = np.asarray(global_parameters, dtype=np.float32)
    server_lr = check_scalar(server_lr, "server_lr", "real", min_val=0.0, include_min=False)
    summed = np.asarray(aggregated.summed, dtype=np.int64)
    if summed.size == 0:
        return theta.copy()
    total = np.asarray(aggregated.total, dtype=np.float64)
    if total.shape != theta.shape:
        raise ValueError(f"the aggregated total has shape {total.shape}, the parameters {theta.shape}.")
    denominator = float(summed.size) if weights is None else float(np.asarray(weights, dtype=np.float64)[summed].sum())
    if not denominator > 0:
        raise ValueError(f"the summed clients' weights add up to {denominator}; they must be positive.")
    return (theta + server_lr * total / denominator).astype(np.float32)


@dataclass(frozen=True)
class RoundRecord:
    """What happened in one round of :class:`FederatedTrainer`.

    Parameters
    ----------
    round_index : int
        0 for the first round; the model after it is version ``round_index + 1``.
    participants : ndarray of int64
        Ids of the clients asked to take part.
    dropped : ndarray of int64
        Ids of those who dropped out before sending their update (they did not train).
    summed : ndarray of int64
        Ids of those whose updates are in the aggregate (all the others, unless the aggregator lost more).
    aborted : bool
        The aggregation output nothing (an ``abort_on`` exception); ``θ`` did not change.
    train_seconds : float
        Local training of all participants together.
    aggregate_seconds : float
        The aggregator's call (secure aggregation: every party's compute, in one process).
    bytes_sent, bytes_received : int
        The aggregation's uploads and downloads over all clients, as the aggregator counts them
        (in the clear: 4 bytes per float32 of every summed update).
    broadcast_bytes : int
        The global model sent to every participant (4 bytes per parameter each).
    accuracy : float or None
        Test accuracy of the model after the round, if evaluated.
    phase_seconds : dict of str to float
        The aggregator's own split of its compute time (empty for :class:`PlainSum`).

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.learn import FederatedTrainer
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.random((40, 4), dtype=np.float32), rng.integers(0, 2, 40)
    >>> trainer = FederatedTrainer(rounds=2, participation=0.75, dropout=0.3, random_state=0)
    >>> trainer = trainer.fit(X, y, parts=np.array_split(np.arange(40), 4), test_data=(X, y))
    >>> [(r.participants.tolist(), r.dropped.tolist(), r.summed.tolist()) for r in trainer.history_]
    [([0, 2, 3], [2], [0, 3]), ([0, 1, 3], [0], [1, 3])]
    >>> record = trainer.history_[-1]
    >>> record.bytes_sent == 4 * trainer.n_parameters * record.summed.size, round(record.accuracy, 2)
    (True, 0.45)
    >>> record.as_row()["round"], record.as_row()["summed"]
    (2, 2)
    """

    round_index: int
    participants: np.ndarray
    dropped: np.ndarray
    summed: np.ndarray
    aborted: bool
    train_seconds: float
    aggregate_seconds: float
    bytes_sent: int
    bytes_received: int
    broadcast_bytes: int
    accuracy: float | None = None
    phase_seconds: dict[str, float] = field(default_factory=dict)

    def as_row(self) -> dict[str, Any]:
        """The record as scalars, for a table (``pandas.DataFrame([r.as_row() for r in history])``).

        Returns
        -------
        dict of str to scalar
            ``round`` (1-based), ``participants``, ``dropped``, ``summed`` (counts),
            ``aborted``, ``train seconds``, ``aggregate seconds``, ``bytes sent``,
            ``bytes received``, ``broadcast bytes`` and ``accuracy`` (NaN if not evaluated).
        """
        return {
            "round": self.round_index + 1,
            "participants": int(self.participants.size),
            "dropped": int(self.dropped.size),
            "summed": int(self.summed.size),
            "aborted": self.aborted,
            "train seconds": self.train_seconds,
            "aggregate seconds": self.aggregate_seconds,
            "bytes sent": self.bytes_sent,
            "bytes received": self.bytes_received,
            "broadcast bytes": self.broadcast_bytes,
            "accuracy": np.nan if self.accuracy is None else self.accuracy,
        }


_HISTORY_COLUMNS = (
    "round",
    "participants",
    "dropped",
    "summed",
    "aborted",
    "train seconds",
    "aggregate seconds",
    "bytes sent",
    "bytes received",
    "broadcast bytes",
    "accuracy",
)

DropoutRule = Callable[[int, np.ndarray, np.random.Generator], Sequence[int]]
"""``dropout(round_index, participant_ids, rng) -> ids of the participants who drop`` in that round."""


def _federation_clients(federation: Federation, y, parts, client_ids) -> tuple[np.ndarray, np.ndarray]:
    """The ids and sizes of the clients a trainer fitted on ``federation`` trains (all, or ``client_ids``)."""
    if y is not None or parts is not None:
        raise ValueError("a Federation holds the clients' examples and labels: fit(federation) takes no y or parts.")
    every = np.asarray(federation.client_ids, dtype=np.int64).ravel()
    sizes = np.asarray(federation.n_samples, dtype=np.int64).ravel()
    if every.size == 0 or sizes.shape != every.shape or np.unique(every).size != every.size:
        raise ValueError(
            f"a Federation needs distinct client_ids and one n_samples each; got {every.size} ids and "
            f"{sizes.size} sizes."
        )
    if sizes.min() < 1:
        empty = int(every[sizes.argmin()])
        raise ValueError(f"every client of a Federation needs an example; client {empty} has none.")
    if int(federation.n_classes) < 1:
        raise ValueError(f"a Federation's n_classes must be at least 1, got {federation.n_classes}.")
    if client_ids is None:
        return every, sizes
    ids = np.asarray(client_ids, dtype=np.int64).ravel()
    unknown = np.setdiff1d(ids, every)
    if ids.size == 0 or np.unique(ids).size != ids.size or unknown.size:
        raise ValueError(
            f"client_ids must be distinct clients of the federation; {unknown.tolist() or ids.tolist()} are not."
        )
    order = np.argsort(every)
    return ids, sizes[order[np.searchsorted(every, ids, sorter=order)]]


class FederatedTrainer(BaseEstimator):
    """FedAvg of one model over a fixed set of clients, round by round, with any aggregator.

    A scikit-learn estimator: the hyper-parameters here, the clients' data in
    :meth:`fit`, which trains ``rounds`` rounds; :meth:`step` and :meth:`run`
    continue from there. Liu et al. (TDSC 2025) run one such trainer per
    cluster, with secure aggregation inside; unlearning a client retrains its
    cluster from scratch: a new trainer fitted on the remaining clients with a
    fresh seed (:meth:`fedlib.unlearn.ClusteredUnlearning.fresh_trainer`).

    Every random choice comes from the root seed and the round: the initial
    model (:func:`init_parameters`), participants and dropouts, each client's
    example order (:func:`client_generator`: client ``c`` in round ``r``) and
    the aggregator's randomness. A seed therefore fixes every bit of a run,
    and two trainers with the same seed and clients agree whatever else ran in
    between. The entry points set ``torch.set_num_threads(n_threads)``
    (default 1, see :func:`train_clients`).

    Local training and evaluation run on ``device``: :meth:`fit` moves the
    examples (and the test set) there once; the global model, aggregation,
    history and checkpoints stay on the host in numpy.

    Parameters
    ----------
    model : str or torch.nn.Module, default="softmax"
        A :data:`MODELS` name (built for the row shape of the ``X`` given to
        :meth:`fit` and ``n_classes``) or an architecture without buffers; its
        parameters are re-drawn from the seed.
    rounds : int, default=1
        Rounds :meth:`fit` trains (0: set up only).
    n_classes : int, optional
        Output units when ``model`` is a name; default ``max(y) + 1``.
    local : LocalSGD, optional
        Local training; default ``LocalSGD()`` (lr 0.05, batch 32, 1 epoch).
    aggregator : Aggregator, optional
        Default :class:`PlainSum`.
    weighting : {"samples", "uniform"}, default="samples"
        FedAvg weights (:func:`fedavg_weights`).
    participation : float, default=1.0
        Share ``C`` of the clients drawn (uniformly, without replacement) every round; at least one.
    dropout : float or callable, default=0.0
        A rate: each participant drops independently with this probability; or
        ``dropout(round_index, participant_ids, rng) -> ids`` (:data:`DropoutRule`).
    server_lr : float, default=1.0
        ``η_g`` of :func:`server_update`.
    eval_every : int, default=1
        Rounds between evaluations on the ``test_data`` given to :meth:`fit`.
    abort_on : tuple of exception types, default=()
        Exceptions of the aggregator that mean "this round output nothing"
        (e.g. ``(fedlib.exceptions.SecAggAbort,)``): the round is recorded as
        aborted and ``θ`` stays. Any other exception propagates.
    keep_checkpoints : bool, default=False
        Keep the parameters of every version, for :meth:`rollback`.
    method : {"auto", "vmap", "loop"}, default="auto"
        Local-training path (:func:`train_clients`).
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None, default=None
        Root seed.
    n_threads : int or None, default=1
        torch threads (``None``: leave torch's setting alone).
    device : str or torch.device, default="cpu"
        Where local training and evaluation run: ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"auto"``
        (a GPU when torch sees one); resolved by :meth:`fit` (:func:`resolve_device`). On the
        CPU the bits are those of a run without the option; on a GPU they agree with the CPU's
        to a tolerance only (different kernels and summation orders).

    Attributes
    ----------
    params_ : ndarray of float32, shape (d,)
        The current global model (on the host, whatever ``device``).
    device_ : torch.device
        The device training runs on (``device`` resolved).
    round_ : int
        Rounds completed since :meth:`fit` or the last :meth:`reset` (the version of ``params_``).
    history_ : list of RoundRecord
        One record per round since :meth:`fit` or the last :meth:`reset`.
    checkpoints_ : dict of int to ndarray
        Version -> parameters (with ``keep_checkpoints``; version 0 is the initial model).
    clients_ : list of ndarray of int64 or None
        Each client's rows of ``X`` (the ``parts`` given to :meth:`fit`); ``None`` when fitted on a
        :class:`Federation` (the rows are the clients').
    client_ids_ : ndarray of int64
        The clients' ids.
    model_ : torch.nn.Module
        The architecture (its own parameters are not used).
    n_features_in_ : int
        Features per example (the product of ``X.shape[1:]``).

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.learn import FederatedTrainer
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.random((90, 1, 28, 28), dtype=np.float32), rng.integers(0, 3, 90)
    >>> parts = np.array_split(np.arange(90), 3)
    >>> trainer = FederatedTrainer("softmax", rounds=2, random_state=0).fit(X, y, parts=parts)
    >>> trainer.round_, [r.summed.tolist() for r in trainer.history_]
    (2, [[0, 1, 2], [0, 1, 2]])
    >>> trainer.run(1).round_, trainer.n_features_in_
    (3, 784)

    Set up only, then train round by round:

    >>> trainer = FederatedTrainer("softmax", participation=0.5).fit(X, y, parts=parts, n_rounds=0)
    >>> trainer.round_, trainer.step().participants.size
    (0, 2)
    """

    def __init__(
        self,
        model: str | nn.Module = "softmax",
        *,
        rounds: int = 1,
        n_classes: int | None = None,
        local: LocalSGD | None = None,
        aggregator: Aggregator | None = None,
        weighting: str = "samples",
        participation: float = 1.0,
        dropout: float | DropoutRule = 0.0,
        server_lr: float = 1.0,
        eval_every: int = 1,
        abort_on: tuple[type[BaseException], ...] = (),
        keep_checkpoints: bool = False,
        method: str = "auto",
        random_state: SeedLike = None,
        n_threads: int | None = 1,
        device: str | torch.device = "cpu",
    ) -> None:
        self.model = model
        self.rounds = rounds
        self.n_classes = n_classes
        self.local = local
        self.aggregator = aggregator
        self.weighting = weighting
        self.participation = participation
        self.dropout = dropout
        self.server_lr = server_lr
        self.eval_every = eval_every
        self.abort_on = abort_on
        self.keep_checkpoints = keep_checkpoints
        self.method = method
        self.random_state = random_state
        self.n_threads = n_threads
        self.device = device

    def fit(
        self,
        X,
        y=None,
        *,
        parts: Sequence | None = None,
        client_ids=None,
        test_data: tuple | None = None,
        n_rounds: int | None = None,
    ) -> FederatedTrainer:
        """Set the federation up (the initial model from ``random_state``, round 0) and train ``rounds`` rounds.

        Calling it again starts over: the same seed and data give the same bits.

        Parameters
        ----------
        X : ndarray or torch.Tensor of float, shape (n_samples, ...), or Federation
            All clients' examples (e.g. :func:`fedlib.data.image_array`); or a
            :class:`Federation` whose clients keep their examples and train where
            they are (e.g. :class:`fedlib.flower.FlowerFederation`), with ``y`` and
            ``parts`` left out.
        y : array-like of int, shape (n_samples,)
            Labels in ``[0, n_classes)``.
        parts : sequence of array-like of int, optional
            Each client's rows of ``X``; default one client holding every row.
        client_ids : array-like of int, optional
            Global ids of the clients (for their training streams and the
            history); default ``0..n_clients-1``. A client keeps its stream in
            whichever cluster it is trained. With a :class:`Federation`: the
            clients of it to train (default all).
        test_data : (X_test, y_test), optional
            Evaluated after every ``eval_every`` rounds (``accuracy`` in the history).
        n_rounds : int, optional
            Train this many rounds instead of ``rounds``; 0 only sets up (then
            :meth:`step` or :meth:`run`).

        Returns
        -------
        FederatedTrainer
            ``self``, fitted.

        Raises
        ------
        ValueError
            For labels out of range, empty or out-of-range clients, or bad options.
        TypeError
            For a ``model``, ``local``, ``aggregator``, ``abort_on`` or ``device`` of the wrong type.
        fedlib.exceptions.DeviceUnavailableError
            For a CUDA ``device`` on a machine without one (before any data is read).
        """
        return self._fit(X, y, parts=parts, client_ids=client_ids, test_data=test_data, n_rounds=n_rounds)

    def _fit(self, X, y, *, parts, client_ids, test_data, n_rounds, shared: tuple = ()) -> FederatedTrainer:
        """:meth:`fit`; ``shared`` holds device copies (``DeviceData``) of the same host tensors to reuse.

        An estimator that fits one trainer per cluster on the same examples passes its own copies, so
        the examples sit on a GPU once, not once per trainer.
        """
        rounds = check_scalar(self.rounds, "rounds", "int", min_val=0)
        n_rounds = rounds if n_rounds is None else check_scalar(n_rounds, "n_rounds", "int", min_val=0)
        local = LocalSGD() if self.local is None else self.local
        if not isinstance(local, LocalSGD):
            raise TypeError(f"local must be a LocalSGD, got {type(local).__name__}.")
        aggregator = PlainSum() if self.aggregator is None else self.aggregator
        if not callable(getattr(aggregator, "aggregate", None)):
            raise TypeError(
                f"aggregator must have an aggregate(updates, *, dropped, random_state) method: {self.aggregator!r}."
            )
        weighting = check_option(self.weighting, "weighting", ("samples", "uniform"))
        participation = check_scalar(
            self.participation, "participation", "real", min_val=0.0, max_val=1.0, include_min=False
        )
        if callable(self.dropout):
            dropout = self.dropout
        else:
            dropout = check_scalar(self.dropout, "dropout", "real", min_val=0.0, max_val=1.0, include_max=False)
        server_lr = check_scalar(self.server_lr, "server_lr", "real", min_val=0.0, include_min=False)
        eval_every = check_scalar(self.eval_every, "eval_every", "int", min_val=1)
        abort_on = tuple(self.abort_on)
        if not all(isinstance(e, type) and issubclass(e, BaseException) for e in abort_on):
            raise TypeError(f"abort_on must be a tuple of exception types, got {self.abort_on!r}.")
        method = check_option(self.method, "method", ("auto", "vmap", "loop"))
        n_threads = None if self.n_threads is None else check_scalar(self.n_threads, "n_threads", "int", min_val=1)
        device = resolve_device(self.device)

        if isinstance(X, Federation):
            federation, X_, y_, clients = X, None, None, None
            ids, sizes = _federation_clients(federation, y, parts, client_ids)
            input_shape, max_label = tuple(int(k) for k in federation.input_shape), int(federation.n_classes) - 1
        else:
            federation = None
            if y is None:
                raise ValueError(
                    f"{type(self).__name__} requires y to be passed, but the target y is None "
                    "(only a Federation, whose clients hold their labels, is fitted without y)."
                )
            X_, y_, clients = check_training_data(X, y, parts)
            n = len(clients)
            ids = (
                np.arange(n, dtype=np.int64) if client_ids is None else np.asarray(client_ids, dtype=np.int64).ravel()
            )
            if ids.shape != (n,) or np.unique(ids).size != n:
                raise ValueError(f"client_ids must hold {n} distinct ids, got {ids.tolist()}.")
            sizes = np.array([len(c) for c in clients], dtype=np.int64)
            input_shape, max_label = tuple(X_.shape[1:]), int(y_.max())
        model = self.model
        if isinstance(model, str):
            classes = max_label + 1 if self.n_classes is None else self.n_classes
            model = make_model(model, max(classes, 2), random_state=0, input_shape=input_shape)
        elif not isinstance(model, nn.Module):
            raise TypeError(f"model must be a model name or a torch.nn.Module, got {type(model).__name__}.")
        with torch.no_grad():
            n_out = int(model(torch.zeros((1, *input_shape)) if X_ is None else X_[:1]).shape[-1])
        if max_label >= n_out:
            raise ValueError(f"labels must lie in [0, {n_out}) for a model with {n_out} outputs; found {max_label}.")
        if test_data is not None:
            X_test, y_test = test_data
            test = (_as_features(X_test), _as_labels(y_test))
            if test[0].shape[0] != test[1].shape[0]:
                raise ValueError("test_data: X_test and y_test differ in length.")
        else:
            test = None

        self._local, self._aggregator, self._weighting = local, aggregator, weighting
        self._participation, self._dropout, self._server_lr = participation, dropout, server_lr
        self._eval_every, self._abort_on, self._keep_checkpoints = eval_every, abort_on, bool(self.keep_checkpoints)
        self._method, self._n_threads = method, n_threads
        self._X, self._y, self._test = X_, y_, test
        self._federation, self._sizes = federation, sizes
        # the examples on the device, moved once (on the CPU: the tensors above); a pickle keeps the host tensors
        self.device_ = device
        self._X_device = None if X_ is None else DeviceData.reuse(X_, device, shared)
        self._y_device = None if y_ is None else DeviceData.reuse(y_, device, shared)
        self._test_device = None if test is None else DeviceData.reuse(test[0], device, shared)
        self.n_features_in_ = int(np.prod(input_shape, dtype=np.int64))
        self.clients_ = clients
        self.client_ids_ = ids
        self.model_ = model
        self._layout = ParameterLayout(model)
        self._root = root_sequence(self.random_state)
        self._reset()
        return self.run(n_rounds)

    @property
    def n_clients(self) -> int:
        """Number of clients."""
        check_is_fitted(self, "params_")
        return len(self.client_ids_)

    @property
    def n_parameters(self) -> int:
        """``d``, the length of :attr:`params_`."""
        check_is_fitted(self, "params_")
        return self._layout.n_parameters

    def reset(self, random_state: SeedLike = None, *, parameters=None) -> FederatedTrainer:
        """Start over: a new initial model from the seed, round 0, empty history.

        Parameters
        ----------
        random_state : int, numpy.random.SeedSequence or None, optional
            The new root seed; ``None`` keeps the current one (the same initial
            model and streams). The ``random_state`` parameter is not changed.
        parameters : array-like of float32, shape (d,), optional
            Start from these parameters instead of a seeded initialisation.

        Returns
        -------
        FederatedTrainer
            ``self``.

        Raises
        ------
        ValueError
            If ``parameters`` does not have shape ``(d,)``.
        """
        check_is_fitted(self, "params_")
        if random_state is not None:
            self._root = root_sequence(random_state)
        return self._reset(parameters)

    def _reset(self, parameters=None) -> FederatedTrainer:
        """Round 0 from the current root seed (or from ``parameters``)."""
        if parameters is None:
            init_parameters(self.model_, random_state=np.random.default_rng(_child(self._root, _INIT)))
            params = get_flat(self.model_)
        else:
            params = np.array(parameters, dtype=np.float32)
            if params.shape != (self._layout.n_parameters,):
                raise ValueError(f"parameters must have shape ({self._layout.n_parameters},), got {params.shape}.")
        self.params_ = params
        self.round_ = 0
        self.history_: list[RoundRecord] = []
        self.checkpoints_: dict[int, np.ndarray] = {0: self.params_.copy()} if self._keep_checkpoints else {}
        return self

    def _draw_round(self, round_index: int) -> tuple[np.ndarray, np.ndarray]:
        """Positions of this round's participants, and the positions (among them) of those who drop."""
        rng = np.random.default_rng(_child(self._root, _ROUND, round_index))
        n = self.n_clients
        if self._participation < 1.0:
            m = max(1, round(self._participation * n))
            participants = np.sort(rng.choice(n, size=m, replace=False))
        else:
            participants = np.arange(n)
        if callable(self._dropout):
            ids = self.client_ids_[participants]
            chosen = np.asarray(self._dropout(round_index, ids.copy(), rng), dtype=np.int64).ravel()
            outside = np.setdiff1d(chosen, ids)
            if outside.size:
                raise ValueError(f"the dropout rule returned ids {outside.tolist()} that are not participants.")
            dropped = np.flatnonzero(np.isin(ids, chosen))
        elif self._dropout > 0:
            dropped = np.flatnonzero(rng.random(participants.size) < self._dropout)
        else:
            dropped = np.array([], dtype=np.int64)
        return participants, dropped

    def local_updates(
        self, positions, *, start=None, round_index: int | None = None, base_version=None
    ) -> ClientUpdates:
        """Local training of some clients (the client half of a round, for a custom server loop).

        Parameters
        ----------
        positions : array-like of int
            Positions of the clients in :attr:`client_ids_`; the result's rows follow this order.
        start : array-like of float32, shape (d,) or (n, d), optional
            Where they start (row ``i`` for ``positions[i]``); default :attr:`params_`.
        round_index : int, optional
            Selects the example orders; default :attr:`round_`.
        base_version : int or array-like of int, optional
            Version of ``start``; default :attr:`round_`.

        Returns
        -------
        ClientUpdates
            Their trained parameters.

        Raises
        ------
        ValueError
            If a position is not that of a client.
        """
        check_is_fitted(self, "params_")
        if self._federation is not None:
            raise TypeError(
                "local_updates needs the clients' examples in this process; this trainer was fitted on a Federation, "
                "whose clients train where their data is (step() and run() train them)."
            )
        # in the order given (not sorted): row i of a per-client ``start`` belongs to ``positions[i]``
        positions = np.asarray(positions, dtype=np.int64).ravel()
        if positions.size and (positions.min() < 0 or positions.max() >= self.n_clients):
            raise ValueError(f"positions must be rows in [0, {self.n_clients}), got {positions.tolist()}.")
        r = self.round_ if round_index is None else round_index
        return train_clients(
            self.model_,
            self.params_ if start is None else start,
            self._X_device.get(),
            self._y_device.get(),
            [self.clients_[p] for p in positions],
            config=self._local,
            round_index=r,
            client_ids=self.client_ids_[positions],
            base_version=self.round_ if base_version is None else base_version,
            random_state=self._root,
            method=self._method,
            n_threads=self._n_threads,
            device=self.device_,
        )

    def step(self) -> RoundRecord:
        """Run one round and return its record.

        Returns
        -------
        RoundRecord
            Participants, dropouts, summed clients, times, bytes and (if due) test accuracy.

        Raises
        ------
        ValueError
            If the aggregator reports summing a client who dropped.
        """
        check_is_fitted(self, "params_")
        r = self.round_
        participants, dropped = self._draw_round(r)
        n, d = participants.size, self.n_parameters
        stays = np.setdiff1d(np.arange(n), dropped)
        weights = fedavg_weights(self._sizes[participants], self._weighting)
        train_seconds = 0.0
        # clients fitted as a Federation train where their examples are and keep their weighted updates;
        # otherwise (or when nobody trains) the rows are built here, zero for those who dropped
        remote = self._federation is not None and stays.size > 0
        if remote:
            request = RoundRequest(
                model=self.model_, start=self.params_, participants=self.client_ids_[participants], dropped=dropped,
                weights=weights, local=self._local, round_index=r, base_version=r, random_state=self._root,
                method=self._method, aggregator=self._aggregator,
            )  # fmt: skip
            train_seconds = float(self._federation.train(request))
        else:
            inputs = np.zeros((n, d), dtype=np.float32)
            if stays.size:
                updates = self.local_updates(participants[stays])
                train_seconds = updates.seconds
                deltas = updates.deltas
                inputs[stays] = (
                    deltas if np.all(weights[stays] == 1.0) else deltas * weights[stays, None].astype(np.float32)
                )
        began = time.perf_counter()
        rng = np.random.default_rng(_child(self._root, _AGGREGATE, r))
        try:
            if remote:
                aggregated = self._federation.aggregate(random_state=rng)
            else:
                aggregated = self._aggregator.aggregate(inputs, dropped=dropped, random_state=rng)
        except self._abort_on:
            aggregated = None
        aggregate_seconds = time.perf_counter() - began
        if aggregated is None:
            summed, sent, received, phases = np.array([], dtype=np.int64), 0, 0, {}
        else:
            summed = np.asarray(aggregated.summed, dtype=np.int64)
            if np.isin(summed, dropped).any():
                raise ValueError(
                    f"the aggregator summed rows {np.intersect1d(summed, dropped).tolist()} that dropped out."
                )
            self.params_ = server_update(self.params_, aggregated, weights=weights, server_lr=self._server_lr)
            sent = int(getattr(aggregated, "bytes_sent", 4 * d * summed.size))
            received = int(getattr(aggregated, "bytes_received", 0))
            phases = dict(getattr(aggregated, "seconds", {}) or {})
        self.round_ += 1
        if self._keep_checkpoints:
            self.checkpoints_[self.round_] = self.params_.copy()
        acc = self.evaluate() if self._test is not None and self.round_ % self._eval_every == 0 else None
        ids = self.client_ids_[participants]
        record = RoundRecord(
            round_index=r,
            participants=ids,
            dropped=ids[dropped],
            summed=ids[summed],
            aborted=aggregated is None,
            train_seconds=train_seconds,
            aggregate_seconds=aggregate_seconds,
            bytes_sent=sent,
            bytes_received=received,
            broadcast_bytes=4 * d * n,
            accuracy=acc,
            phase_seconds=phases,
        )
        self.history_.append(record)
        return record

    def run(self, n_rounds: int) -> FederatedTrainer:
        """Run ``n_rounds`` more rounds (continuing from the current model).

        Parameters
        ----------
        n_rounds : int
            Rounds to run (0 is allowed).

        Returns
        -------
        FederatedTrainer
            ``self``.
        """
        check_is_fitted(self, "params_")
        n_rounds = check_scalar(n_rounds, "n_rounds", "int", min_val=0)
        for _ in range(n_rounds):
            self.step()
        return self

    def rollback(self, version: int) -> FederatedTrainer:
        """Return to the model of an earlier version and forget the rounds after it (KNOT's rollback).

        Later rounds reuse the seeds of the rounds they replace, as a retrained
        system with restored random states would.

        Parameters
        ----------
        version : int
            A kept version, in ``[0, round_]``.

        Returns
        -------
        FederatedTrainer
            ``self``.

        Raises
        ------
        ValueError
            Without ``keep_checkpoints``, or for a version that was not kept.
        """
        check_is_fitted(self, "params_")
        version = check_scalar(version, "version", "int", min_val=0, max_val=self.round_)
        if version not in self.checkpoints_:
            raise ValueError(
                f"version {version} was not kept: create the trainer with keep_checkpoints=True and fit it again."
            )
        self.params_ = self.checkpoints_[version].copy()
        self.round_ = version
        self.history_ = [h for h in self.history_ if h.round_index < version]
        self.checkpoints_ = {v: p for v, p in self.checkpoints_.items() if v <= version}
        return self

    def evaluate(self, X=None, y=None) -> float:
        """Accuracy of the current model on ``(X, y)``, default the ``test_data`` given to :meth:`fit`.

        The forward passes run on :attr:`device_` (``X`` is moved there; the test data already is).

        Parameters
        ----------
        X : ndarray or torch.Tensor of float, optional
            Inputs; with ``y``.
        y : array-like of int, optional
            Labels.

        Returns
        -------
        float
            Accuracy in ``[0, 1]``.

        Raises
        ------
        ValueError
            Without data to evaluate on.
        """
        check_is_fitted(self, "params_")
        if X is None and y is None:
            if self._test is None:
                raise ValueError("no test data: pass X and y, or give test_data to fit.")
            X, y = self._test_device.get(), self._test[1]
        elif X is None or y is None:
            raise ValueError("pass both X and y.")
        return float(
            accuracy(self.model_, X, y, parameters=self.params_, n_threads=self._n_threads, device=self.device_)
        )

    def history_table(self) -> dict[str, list]:
        """The history as columns (``pandas.DataFrame(trainer.history_table())``).

        Returns
        -------
        dict of str to list
            The columns of :meth:`RoundRecord.as_row`, one entry per round.
        """
        check_is_fitted(self, "params_")
        rows = [record.as_row() for record in self.history_]
        return {key: [row[key] for row in rows] for key in _HISTORY_COLUMNS}


def fedavg(
    model: str | nn.Module,
    X,
    y,
    parts: Sequence,
    *,
    rounds: int,
    client_ids=None,
    test_data: tuple | None = None,
    **options,
) -> FederatedTrainer:
    """Train one model with FedAvg: ``FederatedTrainer(model, rounds=rounds, **options).fit(X, y, parts=parts)``.

    Parameters
    ----------
    model : str or torch.nn.Module
        A :data:`MODELS` name or an architecture.
    X : ndarray or torch.Tensor of float, shape (n_samples, ...)
        All clients' examples.
    y : array-like of int, shape (n_samples,)
        Labels.
    parts : sequence of array-like of int
        Each client's rows of ``X``.
    rounds : int
        Communication rounds ``R``.
    client_ids : array-like of int, optional
        As in :meth:`FederatedTrainer.fit`.
    test_data : (X_test, y_test), optional
        As in :meth:`FederatedTrainer.fit`.
    **options
        Any other parameter of :class:`FederatedTrainer` (``local``,
        ``aggregator``, ``dropout``, ``random_state``, ...).

    Returns
    -------
    FederatedTrainer
        Fitted, after ``rounds`` rounds: ``params_``, ``history_``.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.learn import fedavg
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.random((40, 5), dtype=np.float32), rng.integers(0, 2, 40)
    >>> fedavg("softmax", X, y, np.array_split(np.arange(40), 4), rounds=3).round_
    3
    """
    trainer = FederatedTrainer(model, rounds=rounds, **options)
    return trainer.fit(X, y, parts=parts, client_ids=client_ids, test_data=test_data)
