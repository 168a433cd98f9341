"""Asynchronous federated learning on a simulated clock, with clustered aggregation and rollback.

The semantics are those of the Plato framework, in which KNOT (Su & Li,
INFOCOM 2023) and its baselines were run:

- client ``k`` takes a fixed simulated time ``T_k`` per local training
  (:func:`pareto_training_times`: Plato's ``(20 + min(Lomax(α = 1), 30)) · epochs``);
- the server keeps ``P`` clients in flight: whenever updates have been
  processed it draws as many idle clients as it needs, sends each the current
  model of its cluster, and the client trains at once (real torch training)
  while its result waits in a queue ordered by simulated finish time;
- an aggregation pops the ``M`` earliest results (FedBuff's buffer; with a
  staleness bound, also every result that would be too stale) and moves the
  clock to the last finish time; nothing sleeps;
- each cluster's model is updated from its own clients only: Plato averages
  the received client models (``aggregation="average"``), FedBuff proper adds
  the mean of their deltas, optionally scaled by ``1/√(1 + τ)``
  (``aggregation="fedbuff"``);
- forgetting clients (``unlearn(clients=...)``) rolls back only their clusters to the checkpoint before
  the first round any of them took part in, and results computed from the
  pre-rollback models are discarded when they arrive; the other clusters go on.

With ``M = P`` every round waits for all the clients it sent: synchronous
FedAvg. With one cluster it is FedBuff (or FedAvg) with global rollback.

Local training and testing run on ``device`` (the examples are moved there once
per fit); the clock, the queues, the cluster models, checkpoints and stored
updates stay on the host in numpy.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass, field

import numpy as np
import torch
from sklearn.base import BaseEstimator
from torch import nn

from fedlib._random import check_random_state, root_sequence
from fedlib._typing import SeedLike
from fedlib._validation import check_bool, check_ids, check_is_fitted, check_option, check_scalar
from fedlib.base import UnlearningMixin, UnlearningReport
from fedlib.exceptions import UnlearningRequestError
from fedlib.learn._device import DeviceData, _as_features, _as_labels, resolve_device
from fedlib.learn._evaluate import accuracy, perplexity
from fedlib.learn._fedavg import fedavg_mean, fedavg_weights
from fedlib.learn._local import (
    _INIT,
    _ROUND,
    ClientUpdates,
    LocalSGD,
    _child,
    check_training_data,
    train_clients,
)
from fedlib.learn._models import init_parameters, make_model
from fedlib.learn._params import get_flat
from fedlib.learn._profile import ClientProfile, profile_clients

#: Stream keys of the trainer's root beyond those of local training (0-3): work outside the loop.
_OUTSIDE, _FRACTION, _PROFILE = 16, 17, 18

#: The test metrics a trainer can report, by name.
_METRICS = {"accuracy": accuracy, "perplexity": perplexity}


def _check_labels(y, n_classes: int, name: str) -> None:
    """Refuse labels outside ``0..n_classes-1`` (torch would fail mid-training, or accuracy would read 0)."""
    if y.numel() and (int(y.min()) < 0 or int(y.max()) >= n_classes):
        raise ValueError(
            f"{name} must hold class labels in 0..{n_classes - 1} (n_classes={n_classes}), "
            f"got labels in {int(y.min())}..{int(y.max())}."
        )


def pareto_training_times(
    n_clients: int,
    *,
    average: float = 20.0,
    alpha: float = 1.0,
    max_extra: float = 30.0,
    epochs: int = 1,
    random_state: SeedLike = None,
) -> np.ndarray:
    """Simulated seconds per local training, heavy-tailed as in KNOT's experiments (Plato's latency model).

    ``T_k = (average + min(E_k, max_extra)) · epochs`` with ``E_k`` drawn from
    numpy's ``pareto(alpha)`` (a Lomax law on ``[0, ∞)``), once per client.

    Parameters
    ----------
    n_clients : int
        ``K``.
    average : float, default=20.0
        Plato's ``avg_training_time``.
    alpha : float, default=1.0
        Tail index (KNOT: 1).
    max_extra : float, default=30.0
        Plato's ``max_sleep_time``: the cap on the extra time.
    epochs : int, default=1
        Local epochs.
    random_state : int, numpy.random.Generator or None, default=None
        Plato seeds its draw with 1.

    Returns
    -------
    ndarray of float64, shape (K,)
        Seconds.

    Examples
    --------
    >>> from fedlib.learn import pareto_training_times
    >>> t = pareto_training_times(1000, random_state=0)
    >>> bool(t.min() >= 20.0), bool(t.max() <= 50.0)
    (True, True)
    """
    K = check_scalar(n_clients, "n_clients", "int", min_val=1)
    alpha = check_scalar(alpha, "alpha", "real", min_val=0.0, include_min=False)
    rng = check_random_state(random_state)
    extra = np.minimum(rng.pareto(alpha, K), check_scalar(max_extra, "max_extra", "real", min_val=0.0))
    return (check_scalar(average, "average", "real", min_val=0.0) + extra) * check_scalar(
        epochs, "epochs", "int", min_val=1
    )


@dataclass(frozen=True)
class AsyncRound:
    """One aggregation of :class:`AsyncFederatedTrainer`.

    Parameters
    ----------
    round_index : int
        1 for the first aggregation.
    time : float
        Simulated seconds at the aggregation (the last finish time popped).
    clients : ndarray of int64
        Clients whose results were popped.
    staleness : ndarray of int64
        ``τ`` of each: rounds between the model it started from and this aggregation.
    discarded : ndarray of int64
        Popped clients whose results were dropped (computed from a rolled-back model, or of a forgotten client).
    clusters : ndarray of int64
        Clusters whose models changed.
    scores : ndarray of float64
        The test metric of every cluster model after the aggregation (NaN without test data).
    train_seconds : float
        Wall-clock seconds of the local training launched in this round.
    finish_times : ndarray of float64
        Simulated finish time of each popped result (a client started at its finish minus its ``T_k``).
    eval_seconds : float
        Wall-clock seconds of testing the changed cluster models.
    step_seconds : float
        Wall-clock seconds of the whole aggregation step, training and testing included.
    metric : {"accuracy", "perplexity"}, default="accuracy"
        What ``scores`` measure: higher accuracy or lower perplexity is better.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.learn import AsyncFederatedTrainer
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.random((40, 4), dtype=np.float32), rng.integers(0, 2, 40)
    >>> trainer = AsyncFederatedTrainer(concurrency=3, buffer=2, random_state=0)
    >>> trainer = trainer.fit(X, y, parts=np.array_split(np.arange(40), 4), training_times=[1.0, 2.0, 3.0, 4.0],
    ...                       test_data=(X, y), rounds=2)
    >>> record = trainer.history_[1]
    >>> record.round_index, record.time, record.clients.tolist(), record.staleness.tolist()
    (2, 4.0, [3, 0], [1, 0])
    >>> round(record.best, 2), record.reached(0.5)
    (0.45, False)
    """

    round_index: int
    time: float
    clients: np.ndarray
    staleness: np.ndarray
    discarded: np.ndarray
    clusters: np.ndarray
    scores: np.ndarray
    train_seconds: float
    finish_times: np.ndarray
    eval_seconds: float
    step_seconds: float
    metric: str = "accuracy"

    @property
    def overhead_seconds(self) -> float:
        """Wall-clock seconds of the simulator itself: the step without local training and testing."""
        return max(0.0, self.step_seconds - self.train_seconds - self.eval_seconds)

    @property
    def best(self) -> float:
        """The global score as Plato reports it under clustering: the best cluster model's (NaN before any test)."""
        if not np.isfinite(self.scores).any():
            return float("nan")
        return float(np.nanmax(self.scores) if self.metric == "accuracy" else np.nanmin(self.scores))

    def reached(self, target: float) -> bool:
        """Whether the best cluster model reached ``target`` (at least it for accuracy, at most for perplexity).

        Parameters
        ----------
        target : float
            Accuracy or perplexity.

        Returns
        -------
        bool
            ``False`` before any test.
        """
        best = self.best
        return bool(best >= target if self.metric == "accuracy" else best <= target)


@dataclass(frozen=True)
class StoredUpdates:
    """The client updates of one aggregation, kept for calibrated unlearning (FedEraser, Liu et al. 2021).

    Parameters
    ----------
    round_index : int
        The aggregation they were aggregated in (the schedule's counter; under ``"global"`` clusters share it).
    cluster : int
        Their cluster.
    clients : ndarray of int64, shape (m,)
        The clients, in increasing order.
    updates : ndarray of float32, shape (m, d)
        Each client's local update: its trained model minus the model it started from.
    n_samples : ndarray of int64, shape (m,)
        Examples each trained on.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.learn import AsyncFederatedTrainer
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.random((40, 4), dtype=np.float32), rng.integers(0, 2, 40)
    >>> trainer = AsyncFederatedTrainer(concurrency=2, buffer=2, store_updates=1, random_state=0)
    >>> trainer = trainer.fit(X, y, parts=np.array_split(np.arange(40), 4), cluster_labels=[0, 0, 1, 1], rounds=2)
    >>> [(s.round_index, s.cluster, s.clients.tolist(), s.updates.shape) for s in trainer.stored_updates_]
    [(1, 0, [1], (1, 10)), (1, 1, [2], (1, 10)), (2, 0, [0], (1, 10)), (2, 1, [3], (1, 10))]
    """

    round_index: int
    cluster: int
    clients: np.ndarray
    updates: np.ndarray
    n_samples: np.ndarray


@dataclass(order=True)
class _InFlight:
    finish: float
    sequence: int
    client: int = field(compare=False)
    cluster: int = field(compare=False)
    start_round: int = field(compare=False)
    epoch: int = field(compare=False)  # the cluster's rollback epoch when the client started
    start: np.ndarray = field(compare=False, repr=False)
    params: np.ndarray = field(compare=False, repr=False)
    n_samples: int = field(compare=False)


class AsyncFederatedTrainer(UnlearningMixin, BaseEstimator):
    """Asynchronous (FedBuff-style) federated learning on a simulated clock, per cluster; unlearning by rollback.

    KNOT (Su & Li, INFOCOM 2023, Sec. III) and its baselines on Plato's clock: hyper-parameters here, the
    clients' data and simulated training times in :meth:`fit`, and ``unlearn(clients=...)`` rolls back the
    clusters of the forgotten clients to before they first took part; the following :meth:`run` retrains them.

    Parameters
    ----------
    model : str or torch.nn.Module, default="softmax"
        A :data:`MODELS` name or an architecture without buffers.
    concurrency : int
        ``P``, clients in flight.
    buffer : int
        ``M``, results per aggregation (``M = P``: synchronous FedAvg).
    n_classes : int, optional
        Output units when ``model`` is a name; default ``max(y) + 1``.
    local : LocalSGD, optional
        Local training; default ``LocalSGD()``.
    aggregation : {"average", "fedbuff"}, default="average"
        ``"average"``: the cluster model becomes the sample-weighted mean of the received client
        models (Plato's semantics, which produced KNOT's numbers); ``"fedbuff"``: the cluster model
        moves by ``server_lr`` times the weighted mean of the clients' deltas from their start models.
    staleness_scaling : bool, default=False
        ``"fedbuff"`` only: scale each delta by ``1/√(1 + τ)``.
    server_lr : float, default=1.0
        ``"fedbuff"`` only.
    staleness_bound : int, optional
        Results with ``τ`` above it are waited for in the next aggregation (Plato's
        ``staleness_bound``; default none).
    schedule : {"global", "per_cluster"}, default="global"
        ``"global"``: one selection and one buffer for all clients, as Plato runs KNOT (an
        aggregation updates every cluster that received results); ``"per_cluster"``: every cluster
        keeps its share of ``P`` in flight and of ``M`` in its buffer, draws its own clients and
        aggregates on its own, so that forgetting a client of one cluster changes nothing in the others.
    metric : {"accuracy", "perplexity"}, default="accuracy"
        The test metric (:func:`~fedlib.learn.accuracy` or :func:`~fedlib.learn.perplexity`).
    store_updates : int, optional
        Keep the client updates of every ``store_updates``-th aggregation of each cluster
        (rounds 1, 1 + Δt, 1 + 2Δt, ...), as FedEraser's server does; default none.
    method : {"auto", "vmap", "loop"}, default="auto"
        Local-training path.
    random_state : int, numpy.random.SeedSequence or None, default=None
        Root seed: initial model, selections and example orders.
    n_threads : int or None, default=1
        torch threads.
    device : str or torch.device, default="cpu"
        Where local training and testing run: ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"auto"``
        (a GPU when torch sees one); resolved by :meth:`fit` (:func:`~fedlib.learn.resolve_device`).
        On the CPU the bits are those of a run without the option; on a GPU they agree with the
        CPU's to a tolerance only.

    Attributes
    ----------
    params_ : ndarray of float32, shape (n_clusters, d)
        Every cluster's model (on the host, whatever ``device``).
    device_ : torch.device
        The device training runs on (``device`` resolved).
    n_features_in_ : int
        Features per example (the product of ``X.shape[1:]``).
    clients_ : list of ndarray of int64
        Each client's rows of ``X`` (the ``parts`` given to :meth:`fit`).
    training_times_ : ndarray of float64, shape (K,)
        Simulated seconds per local training of each client.
    cluster_labels_ : ndarray of int64, shape (K,)
        Each client's cluster.
    n_clusters_ : int
        Clusters.
    time_ : float
        Simulated seconds so far.
    round_ : int
        Aggregations so far (each cluster also counts its own under ``"per_cluster"``).
    history_ : list of AsyncRound
        One record per aggregation.
    unlearned_ : list of int
        Forgotten clients, in the order of the requests.
    first_selected_ : ndarray of int64, shape (K,)
        The round (of its cluster's schedule) each client was first sent a model in; -1 if never.
    checkpoints_ : list of dict
        Per cluster, the model after each of its aggregations (and 0: the initial model).
    stored_updates_ : list of StoredUpdates
        With ``store_updates``, the kept aggregations in order.
    fit_report_ : UnlearningReport
        What :meth:`fit`'s training cost: the clients that took part, aggregations (``rounds``), local
        training (``client_seconds``, all clients' wall clock: the simulation trains them in one process),
        the rest of the loop (``server_seconds``); ``details``: ``simulated_seconds`` (the clock) and
        ``eval_seconds`` (testing).

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.learn import AsyncFederatedTrainer
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.random((80, 6), dtype=np.float32), rng.integers(0, 2, 80)
    >>> trainer = AsyncFederatedTrainer("softmax", concurrency=4, buffer=2, random_state=0)
    >>> trainer = trainer.fit(X, y, parts=np.array_split(np.arange(80), 8), training_times=np.arange(1.0, 9.0),
    ...                       rounds=3)
    >>> trainer.round_, [r.clients.size for r in trainer.history_]
    (3, [2, 2, 2])
    >>> report = trainer.unlearn(clients=[int(trainer.history_[0].clients[0])])
    >>> report.forgotten, report.exact, report.details["clusters"]
    ('clients (1,)', True, (0,))
    """

    _fitted_attribute = "params_"

    unlearns = frozenset({"clients"})

    def __init__(
        self,
        model: str | nn.Module = "softmax",
        *,
        concurrency: int,
        buffer: int,
        n_classes: int | None = None,
        local: LocalSGD | None = None,
        aggregation: str = "average",
        staleness_scaling: bool = False,
        server_lr: float = 1.0,
        staleness_bound: int | None = None,
        schedule: str = "global",
        metric: str = "accuracy",
        store_updates: int | None = None,
        method: str = "auto",
        random_state: SeedLike = None,
        n_threads: int | None = 1,
        device: str | torch.device = "cpu",
    ) -> None:
        self.model = model
        self.concurrency = concurrency
        self.buffer = buffer
        self.n_classes = n_classes
        self.local = local
        self.aggregation = aggregation
        self.staleness_scaling = staleness_scaling
        self.server_lr = server_lr
        self.staleness_bound = staleness_bound
        self.schedule = schedule
        self.metric = metric
        self.store_updates = store_updates
        self.method = method
        self.random_state = random_state
        self.n_threads = n_threads
        self.device = device

    def _store_interval(self) -> int | None:
        """Δt of the kept client updates (a subclass may fix it)."""
        return self.store_updates

    def fit(
        self,
        X,
        y,
        *,
        parts=None,
        training_times=None,
        cluster_labels=None,
        test_data: tuple | None = None,
        start_time: float = 0.0,
        rounds: int | None = None,
        until: float | None = None,
        target: float | None = None,
    ) -> AsyncFederatedTrainer:
        """Set the federation up and, given a stopping rule, train (:meth:`run`).

        Without ``rounds`` or ``until`` nothing is sent yet: the clients can be profiled
        (:meth:`profile`) and clustered (:meth:`set_clusters`) before :meth:`run`, as KNOT does.

        Parameters
        ----------
        X : ndarray or torch.Tensor of float, shape (n_samples, ...)
            All clients' examples.
        y : array-like of int, shape (n_samples,)
            Labels.
        parts : sequence of array-like of int, optional
            Each client's rows of ``X`` (client ids are positions in this list); default one client
            holding every row.
        training_times : array-like of float, shape (K,), optional
            Simulated seconds per local training of each client (:func:`~fedlib.learn.pareto_training_times`);
            default one second each.
        cluster_labels : array-like of int, shape (K,), optional
            Each client's cluster; default one cluster.
        test_data : (X_test, y_test), optional
            Evaluated after every aggregation, for the clusters it changed.
        start_time : float, default=0.0
            The simulated clock at the start (e.g. after a profiling round).
        rounds, until, target : optional
            As :meth:`run`.

        Returns
        -------
        AsyncFederatedTrainer
            ``self``.

        Raises
        ------
        ValueError
            For bad options (``M > P``, ``P > K``), overlapping ``parts``, labels outside
            ``0..n_classes-1``, test data of another example shape, training times that are not
            positive and finite, or cluster labels of the wrong length, fractional or with gaps.
        TypeError
            For cluster labels that are not numbers, or a ``device`` of the wrong type.
        fedlib.exceptions.DeviceUnavailableError
            For a CUDA ``device`` on a machine without one (before any data is read).
        """
        device = resolve_device(self.device)
        self._X, self._y, self.clients_ = check_training_data(X, y, parts)
        K = len(self.clients_)
        self.n_features_in_ = int(np.prod(self._X.shape[1:], dtype=np.int64))
        self.training_times_ = (
            np.ones(K) if training_times is None else np.asarray(training_times, dtype=np.float64).ravel()
        )
        if self.training_times_.shape != (K,) or not (
            np.isfinite(self.training_times_).all() and (self.training_times_ > 0).all()
        ):
            raise ValueError(
                f"training_times must hold {K} positive finite times (seconds > 0), "
                f"got shape {self.training_times_.shape} with values {self.training_times_[:8].tolist()}."
            )
        self._concurrency = check_scalar(self.concurrency, "concurrency (P)", "int", min_val=1, max_val=K)
        self._buffer = check_scalar(self.buffer, "buffer (M)", "int", min_val=1, max_val=self._concurrency)
        self._local = LocalSGD() if self.local is None else self.local
        self._aggregation = check_option(self.aggregation, "aggregation", ("average", "fedbuff"))
        self._staleness_scaling = bool(self.staleness_scaling)
        self._server_lr = check_scalar(
            self.server_lr, "server_lr", "real", min_val=0.0, include_min=False, max_val=np.finfo(np.float64).max
        )
        self._staleness_bound = (
            None
            if self.staleness_bound is None
            else check_scalar(self.staleness_bound, "staleness_bound", "int", min_val=0)
        )
        self._method = check_option(self.method, "method", ("auto", "vmap", "loop"))
        model = self.model
        if isinstance(model, str):
            if self.n_classes is None:
                classes = int(self._y.max()) + 1
            else:
                classes = check_scalar(self.n_classes, "n_classes", "int", min_val=1)
                _check_labels(self._y, classes, "y")
            model = make_model(model, max(classes, 2), random_state=0, input_shape=tuple(self._X.shape[1:]))
        self.model_ = model
        self._test = None if test_data is None else self._check_test_data(test_data)
        # the examples on the device, moved once (on the CPU: the tensors themselves); a pickle keeps the host ones
        self.device_ = device
        self._X_device, self._y_device = DeviceData.reuse(self._X, device), DeviceData.reuse(self._y, device)
        self._test_device = None if self._test is None else DeviceData.reuse(self._test[0], device)
        self._metric = check_option(self.metric, "metric", tuple(_METRICS))
        interval = self._store_interval()
        self._store = None if interval is None else check_scalar(interval, "store_updates", "int", min_val=1)
        self.stored_updates_: list[StoredUpdates] = []
        self._root = root_sequence(self.random_state)
        self._schedule = check_option(self.schedule, "schedule", ("global", "per_cluster"))
        init_parameters(model, random_state=np.random.default_rng(_child(self._root, _INIT)))
        self._initial = get_flat(model)
        self.time_ = check_scalar(start_time, "start_time", "real", min_val=0.0)
        self.round_ = 0
        self.history_: list[AsyncRound] = []
        self.unlearned_: list[int] = []
        self.first_selected_ = np.full(K, -1, dtype=np.int64)
        self._sequence = 0
        self._busy = np.zeros(K, dtype=bool)
        self._started = False
        self._pending_train_seconds = 0.0  # training launched by next_time(), booked to the next step
        self._set_clusters(np.zeros(K, dtype=np.int64) if cluster_labels is None else cluster_labels)
        if rounds is not None or until is not None:
            self.run(rounds=rounds, until=until, target=target)
        train = sum(r.train_seconds for r in self.history_)
        evaluate = sum(r.eval_seconds for r in self.history_)
        self.fit_report_ = UnlearningReport(
            clients_retrained=tuple(np.flatnonzero(self.first_selected_ > 0).tolist()),
            server_refit=bool(self.history_),
            rounds=self.round_,
            client_seconds=float(train),
            server_seconds=max(0.0, float(sum(r.step_seconds for r in self.history_) - train - evaluate)),
            details={"simulated_seconds": self.time_, "eval_seconds": float(evaluate)},
        )
        return self

    def _check_test_data(self, test_data) -> tuple:
        """``(X_test, y_test)`` as tensors, with ``X``'s example shape and labels the model can score."""
        if not isinstance(test_data, (tuple, list)) or len(test_data) != 2:
            raise ValueError("test_data must be a pair (X_test, y_test).")
        X_test, y_test = _as_features(test_data[0]), _as_labels(test_data[1])
        if X_test.ndim < 2 or tuple(X_test.shape[1:]) != tuple(self._X.shape[1:]) or X_test.shape[0] == 0:
            raise ValueError(
                f"test_data: X_test must hold examples of shape {tuple(self._X.shape[1:])} like X, "
                f"got {tuple(X_test.shape)}."
            )
        if not torch.isfinite(X_test).all():
            raise ValueError("test_data: X_test contains NaN or infinity.")
        if y_test.ndim != 1 or y_test.shape[0] != X_test.shape[0]:
            raise ValueError(
                f"test_data: y_test must hold one label per row of X_test ({X_test.shape[0]}), "
                f"got shape {tuple(y_test.shape)}."
            )
        if isinstance(self.model, str):  # the classes are known: labels outside them would score 0
            classes = int(self._y.max()) + 1 if self.n_classes is None else int(self.n_classes)
            _check_labels(y_test, max(classes, 2), "test_data: y_test")
        return X_test, y_test

    def set_clusters(self, cluster_labels) -> AsyncFederatedTrainer:
        """Assign the clients to clusters (e.g. after profiling them); only before the first aggregation.

        Every cluster starts from the same initial model.

        Parameters
        ----------
        cluster_labels : array-like of int, shape (K,)
            Each client's cluster, ``0..N-1``.

        Returns
        -------
        AsyncFederatedTrainer
            ``self``.

        Raises
        ------
        ValueError
            For labels of the wrong length, negative, fractional, or numbering the clusters with gaps.
        TypeError
            For labels that are not numbers.
        RuntimeError
            Once training has started.
        """
        check_is_fitted(self, "clients_")
        return self._set_clusters(cluster_labels)

    def _set_clusters(self, cluster_labels) -> AsyncFederatedTrainer:
        if self._started:
            raise RuntimeError("clusters can only be set before the first aggregation.")
        K = self.n_clients
        labels = check_ids(cluster_labels, "cluster_labels")
        if labels.shape != (K,) or labels.min() < 0:
            raise ValueError(f"cluster_labels must hold {K} non-negative labels, got shape {labels.shape}.")
        missing = np.setdiff1d(np.arange(labels.max() + 1), labels)
        if missing.size:
            raise ValueError(
                f"cluster_labels must number the clusters 0..N-1 without gaps: no client is in cluster(s) "
                f"{missing[:8].tolist()} of 0..{int(labels.max())} "
                "(relabel them, e.g. with np.unique(labels, return_inverse=True))."
            )
        self.cluster_labels_ = labels
        self.n_clusters_ = int(labels.max()) + 1
        if self._schedule == "global":
            groups = [np.arange(self.n_clusters_)]
            self._select_rngs = [np.random.default_rng(_child(self._root, _ROUND))]
        else:
            groups = [np.array([n]) for n in range(self.n_clusters_)]
            self._select_rngs = [
                np.random.default_rng(_child(self._root, _ROUND, 1 + n)) for n in range(self.n_clusters_)
            ]
        self._group_members = [np.flatnonzero(np.isin(labels, group)) for group in groups]
        sizes = np.array([members.size for members in self._group_members])
        if self._schedule == "global":
            self._group_concurrency, self._group_buffer = [self._concurrency], [self._buffer]
        else:  # each cluster keeps its share of P in flight and of M in its buffer (at least one)
            self._group_concurrency = [max(1, min(int(m), round(self._concurrency * m / K))) for m in sizes]
            self._group_buffer = [
                max(1, min(c, round(self._buffer * m / K))) for c, m in zip(self._group_concurrency, sizes, strict=True)
            ]
        self._group_round = np.zeros(len(groups), dtype=np.int64)
        self._queues: list[list[_InFlight]] = [[] for _ in groups]
        self.params_ = np.tile(self._initial, (self.n_clusters_, 1))
        self.checkpoints_: list[dict[int, np.ndarray]] = [{0: self._initial.copy()} for _ in range(self.n_clusters_)]
        self._epoch = np.zeros(self.n_clusters_, dtype=np.int64)  # bumped by every rollback of the cluster
        self._aggregations = np.zeros(self.n_clusters_, dtype=np.int64)  # each cluster's own, for store_updates
        self._scores = np.full(self.n_clusters_, np.nan)
        return self

    def profile(self, *, variant: str = "paper", charge: bool = True) -> ClientProfile:
        """KNOT's profiling round (Su & Li 2023, Sec. IV-A) on this trainer's clients, from its initial model.

        Every client trains once (:func:`~fedlib.learn.profile_clients`); the round is synchronous,
        so with ``charge`` the clock moves by the slowest client's time.

        Parameters
        ----------
        variant : {"paper", "plato"}, default="paper"
            The disparity's definition (:func:`~fedlib.learn.profile_clients`).
        charge : bool, default=True
            Move the clock by ``max T_k``.

        Returns
        -------
        ClientProfile
            ``T_k`` and ``S_k`` of every client.

        Raises
        ------
        RuntimeError
            Once training has started.
        """
        check_is_fitted(self, "clients_")
        if self._started:
            raise RuntimeError("profile the clients before the first aggregation.")
        result = profile_clients(
            self.model_,
            self._initial,
            self._X_device.get(),
            self._y_device.get(),
            self.clients_,
            training_times=self.training_times_,
            local=self._local,
            variant=variant,
            random_state=_child(self._root, _PROFILE),
            method=self._method,
            device=self.device_,
        )
        if charge:
            self.time_ += float(self.training_times_.max())
        return result

    @property
    def n_clients(self) -> int:
        """``K``: the clients given to :meth:`fit`, forgotten ones included."""
        check_is_fitted(self, "clients_")
        return len(self.clients_)

    # -- the loop -----------------------------------------------------------------------------------------------------

    def _launch(self, g: int) -> float:
        """Fill group ``g``'s flight with idle members not forgotten; they train now. Wall seconds of the training."""
        members = self._group_members[g]
        idle = members[~self._busy[members] & ~np.isin(members, self.unlearned_)]
        wanted = min(self._group_concurrency[g] - int(self._busy[members].sum()), idle.size)
        if wanted <= 0:
            return 0.0
        chosen = np.sort(self._select_rngs[g].choice(idle, size=wanted, replace=False))
        clusters = self.cluster_labels_[chosen]
        r = int(self._group_round[g]) + 1
        updates = train_clients(
            self.model_,
            self.params_[clusters],
            self._X_device.get(),
            self._y_device.get(),
            [self.clients_[k] for k in chosen],
            config=self._local,
            round_index=r,
            client_ids=chosen,
            base_version=r - 1,
            random_state=self._root,
            method=self._method,
            n_threads=self.n_threads,
            device=self.device_,
        )
        for row, k in enumerate(chosen.tolist()):
            n = int(clusters[row])
            if self.first_selected_[k] < 0:
                self.first_selected_[k] = r
            heapq.heappush(
                self._queues[g],
                _InFlight(
                    finish=self.time_ + float(self.training_times_[k]),
                    sequence=self._sequence,
                    client=k,
                    cluster=n,
                    start_round=r,
                    epoch=int(self._epoch[n]),
                    start=updates.start[row],
                    params=updates.params[row],
                    n_samples=int(updates.n_samples[row]),
                ),
            )
            self._sequence += 1
            self._busy[k] = True
        return updates.seconds

    def _start(self) -> float:
        """Send the first models (once). Wall seconds of the training."""
        if self._started:
            return 0.0
        self._started = True
        return sum(self._launch(g) for g in range(len(self._queues)))

    def next_time(self) -> float:
        """Simulated time of the next aggregation (the first clients are sent their models if not yet).

        Returns
        -------
        float
            Seconds; infinite when no client is in flight.
        """
        check_is_fitted(self, "clients_")
        self._pending_train_seconds += self._start()
        return min(self._due(g) for g in range(len(self._queues)))

    def _due(self, g: int) -> float:
        """When group ``g`` aggregates next: the finish of its ``M``-th earliest result (or its last)."""
        queue = self._queues[g]
        if not queue:
            return np.inf
        return heapq.nsmallest(min(self._group_buffer[g], len(queue)), queue)[-1].finish

    def _pop(self, g: int) -> list[_InFlight]:
        """Group ``g``'s ``M`` earliest results, and with a staleness bound every result that would exceed it."""
        queue = self._queues[g]
        popped = [heapq.heappop(queue) for _ in range(min(self._group_buffer[g], len(queue)))]
        if self._staleness_bound is not None and queue:
            r = int(self._group_round[g]) + 1
            too_old = [item.finish for item in queue if r - item.start_round > self._staleness_bound]
            if too_old:
                latest = max(too_old)
                while queue and queue[0].finish <= latest:
                    popped.append(heapq.heappop(queue))
        return popped

    def step(self) -> AsyncRound:
        """Aggregate the next due group's earliest ``M`` results, then send its idle clients the new models.

        Returns
        -------
        AsyncRound
            The aggregation's record.

        Raises
        ------
        RuntimeError
            If no client is left to train.
        """
        check_is_fitted(self, "clients_")
        began = time.perf_counter()
        train_seconds = self._start() + self._pending_train_seconds
        self._pending_train_seconds = 0.0
        due = [self._due(g) for g in range(len(self._queues))]
        g = int(np.argmin(due))
        if not np.isfinite(due[g]):
            raise RuntimeError("no client is in flight: every client is forgotten.")
        popped = self._pop(g)
        self.round_ += 1
        self._group_round[g] += 1
        r = int(self._group_round[g])
        self.time_ = max(self.time_, max(item.finish for item in popped))
        kept, discarded = [], []
        for item in popped:
            self._busy[item.client] = False
            stale_model = item.epoch != self._epoch[item.cluster]
            (discarded if stale_model or item.client in self.unlearned_ else kept).append(item)
        changed = sorted({item.cluster for item in kept})
        for n in changed:
            mine = sorted((item for item in kept if item.cluster == n), key=lambda item: item.client)
            self._aggregate(n, mine, r)  # in client order: the same sum whatever the arrival order
            self.checkpoints_[n][r] = self.params_[n].copy()
        eval_began = time.perf_counter()
        for n in changed:
            self._evaluate(n)
        eval_seconds = time.perf_counter() - eval_began
        train_seconds += self._launch(g)
        record = AsyncRound(
            round_index=self.round_,
            time=self.time_,
            clients=np.array([item.client for item in popped], dtype=np.int64),
            staleness=np.array([r - item.start_round for item in popped], dtype=np.int64),
            discarded=np.array([item.client for item in discarded], dtype=np.int64),
            clusters=np.array(changed, dtype=np.int64),
            scores=self._scores.copy(),
            train_seconds=train_seconds,
            finish_times=np.array([item.finish for item in popped], dtype=np.float64),
            eval_seconds=eval_seconds,
            step_seconds=time.perf_counter() - began,
            metric=self._metric,
        )
        self.history_.append(record)
        return record

    def _evaluate(self, n: int) -> None:
        if self._test is not None:
            self._scores[n] = _METRICS[self._metric](
                self.model_,
                self._test_device.get(),
                self._test[1],
                parameters=self.params_[n],
                n_threads=self.n_threads,
                device=self.device_,
            )

    def _aggregate(self, n: int, items: list[_InFlight], r: int) -> None:
        self._aggregations[n] += 1
        if self._store is not None and (self._aggregations[n] - 1) % self._store == 0:
            self.stored_updates_.append(
                StoredUpdates(
                    round_index=r,
                    cluster=n,
                    clients=np.array([item.client for item in items], dtype=np.int64),
                    updates=np.stack([item.params - item.start for item in items]),
                    n_samples=np.array([item.n_samples for item in items], dtype=np.int64),
                )
            )
        n_samples = [item.n_samples for item in items]
        if self._aggregation == "average":
            self.params_[n] = fedavg_mean(np.stack([item.params for item in items]), n_samples).astype(np.float32)
            return
        weights = fedavg_weights(n_samples)
        weights = weights / weights.sum()
        staleness = np.array([r - item.start_round for item in items], dtype=np.float64)
        scale = 1.0 / np.sqrt(1.0 + staleness) if self._staleness_scaling else np.ones(len(items))
        deltas = np.stack([item.params - item.start for item in items])
        self.params_[n] = (self.params_[n] + self._server_lr * np.einsum("i,id->d", weights * scale, deltas)).astype(
            np.float32
        )

    def run(self, *, rounds: int | None = None, until: float | None = None, target: float | None = None):
        """Aggregate for ``rounds`` more aggregations, until simulated time ``until``, or until ``target``.

        Parameters
        ----------
        rounds : int, optional
            Most aggregations to run.
        until : float, optional
            Run every aggregation due by this simulated time, then set the clock to it (an event at
            ``until``, e.g. an unlearning request, then comes between two aggregations, for every method alike).
        target : float, optional
            Stop once the best cluster model's test metric reaches this (:meth:`~fedlib.learn.AsyncRound.reached`).

        Returns
        -------
        AsyncFederatedTrainer
            ``self``.

        Raises
        ------
        ValueError
            Without any stopping rule, or ``target`` without test data.
        """
        check_is_fitted(self, "clients_")
        if until is not None:
            until = check_scalar(until, "until", "real")  # NaN: ValueError
            if rounds is None and not np.isfinite(until):
                raise ValueError(f"until={until!r} must be a finite simulated time when no rounds limit is given.")
        if rounds is None and until is None:
            raise ValueError("give rounds or until: a run needs an end.")
        if target is not None and self._test is None:
            raise ValueError(f"a target {self._metric} needs test_data.")
        stop_round = None if rounds is None else self.round_ + check_scalar(rounds, "rounds", "int", min_val=0)
        while stop_round is None or self.round_ < stop_round:
            if until is not None and self.next_time() > until:
                self.time_ = max(self.time_, float(until))
                break
            record = self.step()
            if target is not None and record.reached(target):
                break
        return self

    def time_to(self, target: float, *, after: float | None = None) -> float:
        """Simulated seconds at the first aggregation whose best cluster model reached ``target`` (NaN if none).

        Parameters
        ----------
        target : float
            Accuracy, or perplexity with ``metric="perplexity"``.
        after : float, optional
            Count only aggregations at or after this time (e.g. the unlearning request: the target must be
            reached by a model that never saw the forgotten data).

        Returns
        -------
        float
            Seconds since the start of the clock (not since ``after``).
        """
        check_is_fitted(self, "clients_")
        for record in self.history_:
            if (after is None or record.time >= after) and record.reached(target):
                return record.time
        return float("nan")

    # -- unlearning ---------------------------------------------------------------------------------------------------

    def _model_state(self) -> dict[str, np.ndarray]:
        check_is_fitted(self, "params_")
        return {"params": self.params_.copy()}

    def _held_clients(self) -> np.ndarray:
        return np.setdiff1d(np.arange(self.n_clients), self.unlearned_)

    def _held_samples(self) -> np.ndarray:
        held = self._held_clients()
        return np.sort(np.concatenate([self.clients_[k] for k in held])) if held.size else np.zeros(0, np.int64)

    def _stop_clients(self, ids: np.ndarray) -> None:
        """Never select ``ids`` again; their results in flight are dropped when they arrive.

        Raises :class:`~fedlib.exceptions.UnlearningRequestError`, changing nothing, if no client would remain.
        """
        if np.setdiff1d(self._held_clients(), ids).size == 0:
            raise UnlearningRequestError("cannot unlearn every client: no client would remain to train.")
        self.unlearned_.extend(ids.tolist())

    def _unlearn(self, samples: np.ndarray, clients: np.ndarray, *, rollback: bool = True) -> UnlearningReport:
        """Forget clients: roll back only their clusters to before they first took part; :meth:`run` retrains.

        A cluster rolls back to its checkpoint at the last round before the first
        round any of its forgotten clients was selected in; results in flight from
        its pre-rollback models are discarded when they arrive. Forgotten clients are
        never selected again. Clusters without a forgotten client are untouched.

        ``rollback=False`` only stops selecting the clients and drops their results in
        flight, leaving the models to a method that replaces them (:meth:`replace_model`);
        the report then says ``exact=False``.

        The report's ``details`` hold ``clusters`` (rolled back), ``rolled_back_to``
        (cluster → the checkpoint's round) and ``took_part`` (per forgotten client,
        whether it had been sent a model). ``clients_retrained`` is empty and
        ``rounds`` 0: retraining is the training that follows, on the same clock.

        ``exact=True`` means exact *given the clusters*: no rolled-back model holds anything of the
        forgotten clients' data. When the clusters were computed from the clients' data (KNOT's
        profiling round, :meth:`profile`, averages every client's update), the grouping of the others
        depends on the forgotten clients too, and KNOT run from scratch without them could group
        the others differently.
        """
        rollback = check_bool(rollback, "rollback")
        began = time.perf_counter()
        self._stop_clients(clients)
        took_part = clients[self.first_selected_[clients] > 0]
        rolled = np.unique(self.cluster_labels_[took_part]) if rollback else np.zeros(0, dtype=np.int64)
        versions = {}
        for n in rolled.tolist():
            first = int(self.first_selected_[took_part[self.cluster_labels_[took_part] == n]].min())
            version = max(v for v in self.checkpoints_[n] if v <= first - 1)
            self.params_[n] = self.checkpoints_[n][version].copy()
            self.checkpoints_[n] = {v: p for v, p in self.checkpoints_[n].items() if v <= version}
            self._epoch[n] += 1
            self._evaluate(n)
            versions[n] = version
        return UnlearningReport(
            forgotten_clients=tuple(clients.tolist()),
            server_refit=bool(rolled.size),
            server_seconds=time.perf_counter() - began,
            exact=bool(rollback),
            details={
                "clusters": tuple(rolled.tolist()),
                "rolled_back_to": versions,
                "took_part": tuple(bool(t) for t in self.first_selected_[clients] > 0),
            },
        )

    def replace_model(self, cluster: int, params, *, seconds: float = 0.0) -> AsyncRound:
        """Put a model computed outside the loop (e.g. by calibrated unlearning) in place of a cluster's.

        The clock moves on by ``seconds``, the time the computation took; results in flight
        from the replaced model are discarded when they arrive, as after a rollback. The
        change is recorded as an aggregation without clients.

        Parameters
        ----------
        cluster : int
            The cluster.
        params : array-like of float32, shape (d,)
            Its new model.
        seconds : float, default=0.0
            Simulated seconds the replacement took.

        Returns
        -------
        AsyncRound
            The record of the replacement.

        Raises
        ------
        ValueError
            For an unknown cluster, a vector of the wrong shape or negative seconds.
        """
        check_is_fitted(self, "clients_")
        n = check_scalar(cluster, "cluster", "int", min_val=0, max_val=self.n_clusters_ - 1)
        params = np.asarray(params, dtype=np.float32)
        if params.shape != self.params_[n].shape:
            raise ValueError(f"params must have shape {self.params_[n].shape}, got {params.shape}.")
        if not np.isfinite(params).all():
            raise ValueError("params must be finite: the new model holds NaN or infinity (or overflows float32).")
        began = time.perf_counter()
        self.time_ += check_scalar(seconds, "seconds", "real", min_val=0.0)
        self.params_[n] = params
        self._epoch[n] += 1
        self._evaluate(n)
        self.round_ += 1
        record = AsyncRound(
            round_index=self.round_,
            time=self.time_,
            clients=np.zeros(0, dtype=np.int64),
            staleness=np.zeros(0, dtype=np.int64),
            discarded=np.zeros(0, dtype=np.int64),
            clusters=np.array([n], dtype=np.int64),
            scores=self._scores.copy(),
            train_seconds=0.0,
            finish_times=np.zeros(0, dtype=np.float64),
            eval_seconds=0.0,
            step_seconds=time.perf_counter() - began,
            metric=self._metric,
        )
        self.history_.append(record)
        return record

    def local_updates(
        self,
        start,
        client_ids,
        *,
        local: LocalSGD | None = None,
        fraction: float = 1.0,
        round_index: int = 0,
        random_state: SeedLike = None,
    ) -> ClientUpdates:
        """Train some clients now, outside the loop, from a given model (e.g. FedEraser's calibration).

        The clock does not move: the caller charges the simulated time.

        Parameters
        ----------
        start : array-like of float32, shape (d,)
            The model they start from.
        client_ids : array-like of int
            The clients.
        local : LocalSGD, optional
            Local training; default the trainer's.
        fraction : float, default=1.0
            Each client trains on this fraction of its examples (at least one), drawn from its
            stream: a fractional number of epochs, e.g. FedEraser's ``r · E`` when it is below one.
        round_index : int, default=0
            Selects the example orders.
        random_state : int, numpy.random.SeedSequence or None, optional
            Root of the streams; default a stream of the trainer's own root kept apart from the loop's.

        Returns
        -------
        ClientUpdates
            As :func:`~fedlib.learn.train_clients`.

        Raises
        ------
        ValueError
            For unknown clients or a fraction outside (0, 1].
        """
        check_is_fitted(self, "clients_")
        ids = np.asarray(client_ids, dtype=np.int64).ravel()
        if ids.size == 0 or ids.min() < 0 or ids.max() >= self.n_clients:
            raise ValueError(f"client_ids must be clients 0..{self.n_clients - 1}, got {ids.tolist()}.")
        fraction = check_scalar(fraction, "fraction", "real", min_val=0.0, max_val=1.0, include_min=False)
        root = _child(self._root, _OUTSIDE) if random_state is None else root_sequence(random_state)
        rows = [self.clients_[k] for k in ids.tolist()]
        if fraction < 1.0:
            kept = [max(1, round(fraction * r.size)) for r in rows]
            rows = [
                np.sort(np.random.default_rng(_child(root, _FRACTION, round_index, k)).permutation(r)[:m])
                for k, r, m in zip(ids.tolist(), rows, kept, strict=True)
            ]
        return train_clients(
            self.model_,
            np.asarray(start, dtype=np.float32),
            self._X_device.get(),
            self._y_device.get(),
            rows,
            config=self._local if local is None else local,
            round_index=round_index,
            client_ids=ids,
            random_state=root,
            method=self._method,
            n_threads=self.n_threads,
            device=self.device_,
        )
