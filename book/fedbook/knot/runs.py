"""Runs of KNOT and its competitors on the simulated clock: build, train, erase, retrain, time to target.

Every method of Su & Li (INFOCOM 2023, Table II and Fig. 6) is one configuration of
:class:`fedlib.learn.AsyncFederatedTrainer` (FedEraser: of its subclass :class:`fedlib.unlearn.FedEraser`), and
every erasure is one ``unlearn(clients=...)``:

- **FedAvg**: synchronous (``M = P``), one model; an erasure rolls the model back to before the
  erasing client first took part (in practice the start) and everybody retrains;
- **FedBuff**: buffered asynchronous aggregation, one model, the same global rollback;
- **FedEraser** (Liu et al., IWQoS 2021): FedBuff whose server stored every second aggregation's
  client updates; an erasure rebuilds the model by calibrated replay (:class:`fedlib.unlearn.FedEraser`);
- **Random**: FedBuff with aggregation inside 5 clusters drawn uniformly at random (as in the
  authors' code); an erasure rolls back only the erasing client's cluster;
- **KNOT**: the same with the clusters of the lexicographic assignment on the clients' profiled
  training times and model disparities, the profiling round charged to the clock.

Within a seed every method sees the same data, the same client training times and the same
erasing clients, and the erasure comes at the same simulated time. The time to target counts from
the start of the clock and only aggregations after the erasure, so the model that reaches the target
never saw the erased data. A run that does not reach the target by its horizon has a time of NaN.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from joblib import delayed

from fedbook.knot.tasks import Task, TaskData
from fedbook.papers import knot as paper
from fedbook.sweeps import run_jobs
from fedlib.cluster import lexmin_assignment, match_ratings, round_ratings
from fedlib.learn import AsyncFederatedTrainer, make_model, pareto_training_times
from fedlib.unlearn import FedEraser

#: The methods of Table II, with synchronous FedAvg first (the baseline of the 54% and of Fig. 6c).
METHODS = ("FedAvg", "FedBuff", "FedEraser", "Random", "KNOT")

#: FedEraser's parameters (Liu et al. 2021): the calibration ratio r and the storage interval Δt.
FEDERASER_RATIO, FEDERASER_INTERVAL = 0.5, 2


@dataclass(frozen=True)
class Curve:
    """What a run's aggregations showed: time, best score and every cluster's score.

    Parameters
    ----------
    times : ndarray of float64, shape (R,)
        Simulated seconds of each aggregation.
    best : ndarray of float64, shape (R,)
        The best cluster model's score (the model the server would hand out).
    scores : ndarray of float64, shape (R, N)
        Every cluster model's score.
    """

    times: np.ndarray
    best: np.ndarray
    scores: np.ndarray


@dataclass(frozen=True)
class Run:
    """One run of one method on one task and seed, with its erasure.

    Parameters
    ----------
    task : str
        Task name.
    method : str
        One of :data:`METHODS`.
    seed : int
        The seed (data split, client times, erasing clients, training).
    n_erased : int
        Clients erased (0: a run without erasure).
    erased : tuple of int
        Their ids.
    erased_clusters : tuple of int
        Their clusters (all 0 with one model).
    took_part : tuple of bool
        Whether each had been sent a model before the erasure (if not, nothing is rolled back for it).
    rolled_back : tuple of int
        Clusters rolled back or rebuilt.
    cluster_sizes : tuple of int
        Clients per cluster.
    erase_time : float
        Simulated seconds of the erasure (NaN without one).
    time_to_target : float
        Simulated seconds from the start until a model after the erasure reached the target (NaN: not by the horizon).
    horizon : float
        Simulated seconds the run was allowed.
    profile_seconds : float
        Simulated seconds charged to KNOT's profiling round.
    unlearning_seconds : float
        Simulated seconds charged to FedEraser's calibration.
    curve : Curve
        The aggregations.
    wall_seconds, train_seconds, eval_seconds, overhead_seconds : float
        Wall-clock seconds of the run, of its local training, testing, and of the simulator itself.
    """

    task: str
    method: str
    seed: int
    n_erased: int
    erased: tuple
    erased_clusters: tuple
    took_part: tuple
    rolled_back: tuple
    cluster_sizes: tuple
    erase_time: float
    time_to_target: float
    horizon: float
    profile_seconds: float
    unlearning_seconds: float
    curve: Curve
    wall_seconds: float
    train_seconds: float
    eval_seconds: float
    overhead_seconds: float

    @property
    def reached(self) -> bool:
        """Whether the target was reached by the horizon."""
        return bool(np.isfinite(self.time_to_target))


def _model(task: Task, prepared: TaskData):
    """The task's architecture for its data (its initial parameters are the trainer's to draw)."""
    return make_model(task.model, prepared.n_classes, input_shape=prepared.input_shape, hidden=task.hidden)


def random_clusters(n_clients: int, n_clusters: int, random_state) -> np.ndarray:
    """Uniformly random cluster ids, as the authors' code draws them (sizes not balanced), renumbered 0..N'-1.

    Parameters
    ----------
    n_clients : int
        ``K``.
    n_clusters : int
        ``N``.
    random_state : int or numpy.random.Generator
        The draw.

    Returns
    -------
    ndarray of int64, shape (K,)
        Labels; a cluster nobody drew is dropped, so the labels are consecutive.
    """
    rng = np.random.default_rng(random_state)
    return np.unique(rng.integers(0, n_clusters, n_clients), return_inverse=True)[1].astype(np.int64)


def knot_clusters(trainer: AsyncFederatedTrainer, n_clusters: int, *, variant: str = "paper") -> np.ndarray:
    """KNOT's clusters (Sec. IV): profile the clients, rate them against the anchors, solve the lexmin exactly.

    The profiling round is charged to the trainer's clock.

    Parameters
    ----------
    trainer : AsyncFederatedTrainer
        Fitted, not started.
    n_clusters : int
        ``N``.
    variant : {"paper", "plato"}, default="paper"
        The disparity's definition (:func:`fedlib.learn.profile_clients`).

    Returns
    -------
    ndarray of int64, shape (K,)
        Each client's cluster.
    """
    profile = trainer.profile(variant=variant)
    D = round_ratings(match_ratings(profile.times, profile.disparity, n_clusters), paper.RATING_LEVELS)
    return lexmin_assignment(D).labels


def build(task: Task, prepared: TaskData, method: str, seed: int) -> AsyncFederatedTrainer:
    """The trainer of one method, clusters included (KNOT's profiling charged to its clock).

    Parameters
    ----------
    task : Task
        The task.
    prepared : TaskData
        Its data.
    method : str
        One of :data:`METHODS`.
    seed : int
        Seed of the training times (Plato's Pareto law), the clusters and the training.

    Returns
    -------
    AsyncFederatedTrainer
        Fitted, not started (:class:`fedlib.unlearn.FedEraser` for FedEraser).

    Raises
    ------
    ValueError
        For an unknown method.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}.")
    K = task.n_clients
    times = pareto_training_times(K, alpha=paper.PARETO_ALPHA, epochs=task.local.epochs, random_state=seed)
    model = _model(task, prepared)
    options = dict(
        local=task.local, metric=task.metric, random_state=seed, concurrency=task.concurrency, device=task.device
    )
    if method == "FedEraser":
        trainer = FedEraser(model, buffer=task.buffer, interval=FEDERASER_INTERVAL, ratio=FEDERASER_RATIO, **options)
    else:
        trainer = AsyncFederatedTrainer(
            model, buffer=task.concurrency if method == "FedAvg" else task.buffer, **options
        )
    trainer.fit(prepared.X, prepared.y, parts=prepared.clients, training_times=times,
                test_data=(prepared.X_test, prepared.y_test))  # fmt: skip
    if method == "Random":
        trainer.set_clusters(random_clusters(K, paper.N_CLUSTERS, np.random.SeedSequence([seed, 1])))
    elif method == "KNOT":
        trainer.set_clusters(knot_clusters(trainer, paper.N_CLUSTERS))
    return trainer


def erasing_clients(task: Task, seed: int) -> np.ndarray:
    """The clients that ask to be erased in a seed's runs, the same for every method (the first ``erased[0]`` in
    the main runs, all ``erased[1]`` in Fig. 6c's).

    Parameters
    ----------
    task : Task
        The task.
    seed : int
        The seed.

    Returns
    -------
    ndarray of int64
        ``task.erased[1]`` distinct client ids.
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, 2]))
    return rng.choice(task.n_clients, size=max(task.erased), replace=False).astype(np.int64)


def _record(task, method, seed, trainer, ids, took_part, rolled, erase_time, horizon, profile, unlearning, began):
    history = trainer.history_
    scores = np.array([r.scores for r in history]) if history else np.zeros((0, trainer.n_clusters_))
    after = None if erase_time is None or not np.isfinite(erase_time) else erase_time
    return Run(
        task=task.name,
        method=method,
        seed=seed,
        n_erased=len(ids),
        erased=tuple(int(k) for k in ids),
        erased_clusters=tuple(int(trainer.cluster_labels_[k]) for k in ids),
        took_part=tuple(bool(t) for t in took_part),
        rolled_back=tuple(int(n) for n in rolled),
        cluster_sizes=tuple(np.bincount(trainer.cluster_labels_, minlength=trainer.n_clusters_).tolist()),
        erase_time=float("nan") if after is None else float(after),
        time_to_target=trainer.time_to(task.target, after=after),
        horizon=float(horizon),
        profile_seconds=float(profile),
        unlearning_seconds=float(unlearning),
        curve=Curve(
            times=np.array([r.time for r in history]),
            best=np.array([r.best for r in history]),
            scores=scores,
        ),
        wall_seconds=time.perf_counter() - began,
        train_seconds=float(sum(r.train_seconds for r in history)),
        eval_seconds=float(sum(r.eval_seconds for r in history)),
        overhead_seconds=float(sum(r.overhead_seconds for r in history)),
    )


def run_without_erasure(task: Task, prepared: TaskData, method: str, seed: int, *, horizon: float) -> Run:
    """Train until the target or the horizon, with nobody erased (the pilot runs, and async against sync).

    Parameters
    ----------
    task : Task
        The task.
    prepared : TaskData
        Its data.
    method : str
        One of :data:`METHODS`.
    seed : int
        The seed.
    horizon : float
        Simulated seconds allowed.

    Returns
    -------
    Run
        With ``n_erased = 0``.
    """
    began = time.perf_counter()
    trainer = build(task, prepared, method, seed)
    profile = trainer.time_
    trainer.run(until=horizon, target=task.target)
    return _record(task, method, seed, trainer, (), (), (), None, horizon, profile, 0.0, began)


def runs_with_erasure(
    task: Task,
    prepared: TaskData,
    method: str,
    seed: int,
    *,
    erase_time: float,
    horizon: float,
    counts: Iterable[int] | None = None,
) -> list[Run]:
    """Train until ``erase_time``, erase, and retrain until the target or the horizon; once per erasure count.

    The training before the erasure is shared: the trainer is copied at ``erase_time`` for each
    count (e.g. one client for Table II and two for Fig. 6c).

    Parameters
    ----------
    task : Task
        The task.
    prepared : TaskData
        Its data.
    method : str
        One of :data:`METHODS`.
    seed : int
        The seed.
    erase_time : float
        Simulated seconds of the erasure request.
    horizon : float
        Simulated seconds allowed.
    counts : iterable of int, optional
        How many clients to erase, each a run; default ``task.erased``.

    Returns
    -------
    list of Run
        One per count.
    """
    counts = tuple(task.erased if counts is None else counts)
    return runs_with_erasures(task, prepared, method, seed, erasures=[(erase_time, horizon, counts)])[0]


def runs_with_erasures(
    task: Task,
    prepared: TaskData,
    method: str,
    seed: int,
    *,
    erasures: Sequence[tuple[float, float, Iterable[int]]],
) -> list[list[Run]]:
    """:func:`runs_with_erasure` at several erasure times, sharing one training up to each of them.

    The trainer trains once; at every erasure time (earliest first) it is copied for each count but the
    last erasure's last count, which continues with the trainer itself. Training to ``t_1`` and then on to
    ``t_2`` goes through the same aggregations as training to ``t_2`` at once (``run(until=t_1)`` only sets
    the clock to ``t_1`` between them, and the next aggregation sets it again), and every draw comes from the
    trainer's own seed, so each run equals the one :func:`runs_with_erasure` gives for its erasure alone, bit
    for bit (tested).

    Parameters
    ----------
    task : Task
        The task.
    prepared : TaskData
        Its data.
    method : str
        One of :data:`METHODS`.
    seed : int
        The seed.
    erasures : sequence of (float, float, iterable of int)
        Erasure time, horizon and erasure counts of each erasure, in any order.

    Returns
    -------
    list of list of Run
        For every erasure, in the order given, one run per count. A run's ``wall_seconds`` counts the
        training it shares with the others, as if it had run alone.
    """
    began = time.perf_counter()
    plans = [(float(t), float(h), tuple(c)) for t, h, c in erasures]
    trainer = build(task, prepared, method, seed)
    profile = trainer.time_
    victims = erasing_clients(task, seed)
    out: list[list[Run]] = [[] for _ in plans]
    order = sorted(range(len(plans)), key=lambda i: plans[i][0])
    for position, i in enumerate(order):
        erase_time, horizon, counts = plans[i]
        trainer.run(until=erase_time)
        shared = time.perf_counter() - began
        for j, count in enumerate(counts):
            last = position == len(order) - 1 and j == len(counts) - 1
            start = time.perf_counter() - shared
            run = trainer if last else copy.deepcopy(trainer)
            ids = victims[:count]
            took_part = run.first_selected_[ids] > 0
            report = run.unlearn(clients=ids)
            rolled = list(report.details["clusters"])
            unlearning = sum(report.details.get("simulated_seconds", {}).values())  # FedEraser's calibration
            run.run(until=horizon, target=task.target)
            out[i].append(
                _record(task, method, seed, run, ids, took_part, rolled, erase_time, horizon, profile, unlearning,
                        start)
            )  # fmt: skip
        began = time.perf_counter() - shared  # the copies' time does not count as shared training
    return out


def parallel_map(function: Callable, items: list, *, n_jobs: int = 1, keywords: dict | None = None) -> list:
    """``[function(*item, **keywords) for item in items]`` as jobs (:func:`fedbook.sweeps.run_jobs`), in order.

    The same bits for any ``n_jobs`` and on a Dask cluster; the tasks' data go to each worker once.

    Parameters
    ----------
    function : callable
        A module-level function (it is pickled).
    items : list of tuple
        Its positional arguments.
    n_jobs : int, default=1
        Local processes; 1 runs here (unless :func:`fedbook.sweeps.connect` named a Dask cluster).
    keywords : dict, optional
        Keyword arguments for every call.

    Returns
    -------
    list
        The results.
    """
    keywords = keywords or {}
    shared = list({id(arg): arg for item in items for arg in item if isinstance(arg, TaskData)}.values())
    return run_jobs([delayed(function)(*item, **keywords) for item in items], n_jobs=n_jobs, shared=shared)


def timeline(trainer: AsyncFederatedTrainer) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A trainer's history as events for a timeline figure: client trainings and aggregations.

    Parameters
    ----------
    trainer : AsyncFederatedTrainer
        A trainer that has run.

    Returns
    -------
    trainings : pandas.DataFrame
        One row per popped result: client, cluster, start, finish (simulated seconds), fate
        ("aggregated" or "discarded") and the staleness it arrived with.
    aggregations : pandas.DataFrame
        One row per aggregation and cluster it changed: time, cluster, round (global), replaced
        (a model put in place by unlearning rather than aggregated).
    """
    trainings, aggregations = [], []
    for record in trainer.history_:
        discarded = set(record.discarded.tolist())
        for k, finish, tau in zip(record.clients.tolist(), record.finish_times, record.staleness, strict=True):
            trainings.append(
                {
                    "client": k,
                    "cluster": int(trainer.cluster_labels_[k]),
                    "start": float(finish - trainer.training_times_[k]),
                    "finish": float(finish),
                    "fate": "discarded" if k in discarded else "aggregated",
                    "staleness": int(tau),
                }
            )
        for n in record.clusters.tolist():
            aggregations.append(
                {"time": record.time, "cluster": n, "round": record.round_index, "replaced": record.clients.size == 0}
            )
    return pd.DataFrame(trainings), pd.DataFrame(aggregations)


def timeline_demo(
    task: Task,
    prepared: TaskData,
    seed: int,
    *,
    n_clients: int = 10,
    concurrency: int = 6,
    buffer: int = 3,
    n_clusters: int = 2,
    before: int = 6,
    after: int = 8,
) -> tuple[AsyncFederatedTrainer, float, np.ndarray]:
    """A small clustered run for the protocol's timeline: ``before`` aggregations, an erasure, ``after`` more.

    The erased client is one of the first round's, so its cluster rolls back to the start.

    Parameters
    ----------
    task : Task
        Model and local training.
    prepared : TaskData
        Data; the first ``n_clients`` clients are used.
    seed : int
        Seed of times, clusters and training.
    n_clients, concurrency, buffer, n_clusters : int
        ``K``, ``P``, ``M``, ``N``.
    before, after : int
        Aggregations before and after the erasure.

    Returns
    -------
    trainer : AsyncFederatedTrainer
        After the run.
    erase_time : float
        Simulated seconds of the erasure.
    erased : ndarray of int64
        The erased client.
    """
    model = _model(task, prepared)
    labels = np.arange(n_clients) % n_clusters
    np.random.default_rng(seed).shuffle(labels)
    trainer = AsyncFederatedTrainer(
        model,
        concurrency=concurrency,
        buffer=buffer,
        local=task.local,
        metric=task.metric,
        random_state=seed,
        device=task.device,
    )
    trainer.fit(
        prepared.X,
        prepared.y,
        parts=prepared.clients[:n_clients],
        training_times=pareto_training_times(n_clients, epochs=task.local.epochs, random_state=seed),
        cluster_labels=labels,
        test_data=(prepared.X_test, prepared.y_test),
        rounds=before,
    )
    erase_time = trainer.time_
    erased = trainer.history_[0].clients[:1].copy()
    trainer.unlearn(clients=erased)
    trainer.run(rounds=after)
    return trainer, erase_time, erased


def isolation_check(task: Task, prepared: TaskData, seed: int, *, schedule: str, n_clusters: int = 3) -> dict:
    """Does an erasure in one cluster change the other clusters? Two runs, identical but for the erasure.

    Both runs train to the same simulated time; one erases a client of cluster 0 halfway. Under
    ``schedule="per_cluster"`` every cluster draws its own clients and aggregates on its own clock, so
    the other clusters must be bit-identical; under Plato's ``"global"`` schedule the clusters share one
    selection stream and one buffer, and the erased client's absence changes who is drawn next.

    Parameters
    ----------
    task : Task
        Model and local training.
    prepared : TaskData
        Data.
    seed : int
        Seed.
    schedule : {"global", "per_cluster"}
        The trainer's schedule.
    n_clusters : int, default=3
        Clusters (round-robin over the clients).

    Returns
    -------
    dict
        ``schedule``, ``erased`` client, ``rolled_back`` clusters, ``other_clusters_identical`` (bool),
        ``max_difference`` in the other clusters' parameters, ``rolled_back_equals_checkpoint`` (bool:
        right after the erasure, the erasing cluster holds the model it had before the client's first round, as
        recorded by the run without erasure).
    """
    labels = np.arange(task.n_clients) % n_clusters
    times = pareto_training_times(task.n_clients, epochs=task.local.epochs, random_state=seed)

    def make() -> AsyncFederatedTrainer:
        model = _model(task, prepared)
        trainer = AsyncFederatedTrainer(model, concurrency=task.concurrency, buffer=task.buffer, local=task.local,
                                        schedule=schedule, random_state=seed, device=task.device)  # fmt: skip
        return trainer.fit(prepared.X, prepared.y, parts=prepared.clients, training_times=times, cluster_labels=labels)

    plain, erased = make(), make()
    plain.run(rounds=4 * n_clusters)
    middle = plain.time_
    end = 2 * middle
    plain.run(until=end)
    erased.run(until=middle)
    took_part = np.flatnonzero((erased.first_selected_ > 0) & (labels == 0))
    victim = int(took_part[0])
    first = int(erased.first_selected_[victim])
    rolled = np.array(erased.unlearn(clients=[victim]).details["clusters"], dtype=np.int64)
    restored = erased.params_[0].copy()
    # the run without erasure went through the same states: its checkpoint before the client's first round
    expected = plain.checkpoints_[0][max(v for v in plain.checkpoints_[0] if v <= first - 1)]
    erased.run(until=end)
    others = np.arange(n_clusters) != 0
    difference = float(np.abs(plain.params_[others] - erased.params_[others]).max())
    return {
        "schedule": schedule,
        "erased": victim,
        "rolled_back": rolled.tolist(),
        "other_clusters_identical": difference == 0.0,
        "max_difference": difference,
        "rolled_back_equals_checkpoint": bool(np.array_equal(restored, expected)),
    }
