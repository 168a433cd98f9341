"""The learning half of "Forgetting, compared": six ways to forget a client, on the same images, attacked alike.

Every system trains on the same federated images (FEMNIST writers, Fashion-MNIST), the same clients, the same
canaries and the same test set; one client, fixed per dataset by the seed, asks to be forgotten. The systems:

- **retraining (FedAvg)**: FedAvg over every client, retrained from scratch without the client
  (:class:`fedlib.unlearn.ClusteredUnlearning` with ``cluster_size = N``, in the clear);
- **Liu et al. (clustered)**: Liu et al. (TDSC 2025): random clusters, FedAvg with SecAgg+ and dropouts inside
  each, retraining of the forgotten client's cluster (:class:`~fedlib.unlearn.ClusteredUnlearning`, ``secure``);
- **KNOT** (Su & Li, INFOCOM 2023): asynchronous FedBuff inside KNOT's clusters (profiling and the lexmin
  assignment, :func:`fedbook.knot.runs.knot_clusters`), forgetting by rolling the client's cluster back and
  training it again until it has made as many aggregations as before the request
  (:class:`fedlib.learn.AsyncFederatedTrainer`);
- **FedEraser** (Liu et al., IWQoS 2021): FedBuff whose server stored the clients' updates, rebuilt by calibrated
  replay (:class:`fedlib.unlearn.FedEraser`); the model right after the rebuild is the one judged;
- **rapid retraining** (Liu, Xu, Yuan, Wang and Li, INFOCOM 2022): FedAvg, retrained from the initial model with
  a diagonal-Fisher quasi-Newton step for fewer rounds (:class:`fedlib.unlearn.RapidRetraining`);
- **fine-tuning**: FedAvg, the client dropped and a few more rounds on the others (:class:`fedlib.unlearn.FineTuning`).

Forgetting is audited from the outside (:mod:`fedlib.audit`):

- **Canaries.** The forgotten client also holds mislabelled canaries (:func:`fedlib.audit.mislabeled_canaries`):
  the member half of a candidate pool of held-out images (never on any client, never in the test set), each
  ``repeats`` times. The loss-threshold attack and LiRA online and offline (:func:`fedlib.audit.logit_confidence`)
  score all candidates against the model before forgetting, after, and against the retrained reference; the
  ``gap`` is the AUC after minus the AUC of the reference, paired on the same candidates
  (:func:`fedlib.audit.auc_gap`).
- **Shadows** are trained by the target's own training procedure, on the same clients and the same data, with a
  balanced random half of the candidates at the forgotten client (:func:`fedlib.audit.run_shadows`). Retraining,
  rapid retraining and fine-tuning train by the same FedAvg before the request, so they share one set of shadows;
  Liu et al.'s clustered training, KNOT and FedEraser's FedBuff each have their own. For the clustered systems the
  attacked model is the forgotten client's cluster model (the model that trained on its data), and its shadows
  train that cluster alone, with the same members (Liu et al.) or the whole system with the same clusters (KNOT,
  whose clusters share one schedule): the attacker knows the clustering.
- **The control** without canaries: the loss attack on the forgotten client's training images (members) against
  the other half of its own images, which it never trains on (non-members: the same writer, so the test measures
  membership and not a change of writer), rows with ``canaries=False``.
- **Exactness**: :func:`fedlib.audit.check_bitwise` where the method promises the coupling (retraining, Liu et al.);
  :func:`fedlib.audit.exactness_test` in distribution for KNOT's rollback, with the canary signal of the rolled-back
  cluster model as the statistic, and the shift it could detect (its power is low with tens of runs: say so); the
  relative L2 distance of the parameters (:func:`fedlib.audit.model_distance`) to the retrained reference for the
  others, beside the distance between two retrainings with different seeds. Two MLPs trained from different initial
  models are far apart in parameters whatever they learnt, so the distance cannot tell an exact method from an
  approximate one here; the canary gap can. Rapid retraining claims exactness (it retrains from scratch) but with
  another optimiser than the training's, so it is measured by its distance to FedAvg's retraining.

The retrained reference of each system (``quality retrained``, the attacks' stage ``"retrained"``): for retraining
and Liu et al., the retraining their guarantee is coupled to, which is their own model after forgetting
(:func:`~fedlib.audit.check_bitwise` checks it), so their gap is zero by construction; for rapid retraining and
fine-tuning, the retraining system's model after forgetting (FedAvg from scratch without the client); for KNOT and
FedEraser, the same system trained from scratch on the remaining clients (KNOT with the same clusters) for as many
aggregations of the client's cluster as before the request.

Costs: ``forget seconds`` is the sum of the report's parts (client, aggregation and server seconds: secure
aggregation counts), plus, for KNOT, the wall clock of training the rolled-back cluster back (its report counts only
the rollback); ``retrain seconds`` the wall clock of training the same system from scratch on the remaining clients
in the same run (one FedAvg retraining, shared by the three FedAvg systems); ``forget bytes`` the report's
``bytes_sent``, which KNOT's rollback leaves at 0 (the uploads of the training that follows it are not counted).
A simulated clock gives every client the same local training time in every system
(:func:`fedlib.learn.pareto_training_times`, per local training, whatever the optimiser): a synchronous round lasts
as long as its slowest participant (a client that drops out is waited for until the deadline), clusters retrain in
parallel, KNOT's clock runs from the request until its cluster has caught up, and FedEraser's is the calibration's
(its report's ``simulated_seconds``). Aggregation and communication take no simulated time.
"""

from __future__ import annotations

import functools
import time
import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from joblib import delayed
from scipy.stats import norm

from fedbook.compared.summary import GAP_CONFIDENCE
from fedbook.knot.runs import knot_clusters
from fedbook.secagg_fu.learning import load_federated_images
from fedbook.sweeps import run_jobs
from fedlib.audit import (
    Canaries,
    ShadowScores,
    auc_gap,
    check_bitwise,
    cross_entropy,
    exactness_test,
    lira_attack,
    logit_confidence,
    loss_attack,
    mislabeled_canaries,
    model_distance,
    run_shadows,
)
from fedlib.base import UnlearningMixin, UnlearningReport
from fedlib.exceptions import UnlearningCapacityError
from fedlib.learn import (
    AsyncFederatedTrainer,
    LocalSGD,
    accuracy,
    make_model,
    pareto_training_times,
    predict_logits,
)
from fedlib.unlearn import ClusteredUnlearning, FedEraser, FineTuning, RapidRetraining
from fedlib.utils import SeedLike, child_sequence, root_sequence

__all__ = [
    "ATTACKS",
    "ATTACK_COLUMNS",
    "DATASETS",
    "PROCEDURES",
    "RETRAINING",
    "SCALES",
    "STAGES",
    "SYSTEMS",
    "SYSTEM_COLUMNS",
    "LearningComparison",
    "LearningScale",
    "LearningSystem",
    "LearningTask",
    "attack_table",
    "compare_learning",
    "default_systems",
    "prepare_task",
]

#: The data sets, in the order of the tables.
DATASETS = ("FEMNIST", "Fashion-MNIST")

#: Classes of each data set (the model's output units, whatever labels a small draw happens to hold).
N_CLASSES = {"FEMNIST": 62, "Fashion-MNIST": 10}

#: The systems' display names, in the order of the tables.
SYSTEMS = (
    "retraining (FedAvg)",
    "Liu et al. (clustered)",
    "KNOT",
    "FedEraser",
    "rapid retraining",
    "fine-tuning",
)

#: The attacks on the canaries, in the order of the tables.
ATTACKS = ("loss threshold", "LiRA online", "LiRA offline")

#: The models attacked: before forgetting, after, and the retrained reference.
STAGES = ("before", "after", "retrained")

#: Shadow procedures: which training each system's shadows repeat.
PROCEDURES = ("FedAvg", "clustered", "KNOT", "FedBuff")

#: The system whose model after forgetting is the FedAvg reference of the systems that train by FedAvg.
RETRAINING = SYSTEMS[0]

#: FedEraser's parameters (Liu et al. 2021): the storage interval Δt and the calibration ratio r.
FEDERASER_INTERVAL, FEDERASER_RATIO = 2, 0.5

#: Level of the attack and gap intervals, and the exactness test's level for its verdict and its power.
CONFIDENCE, LEVEL, POWER = 0.95, 0.05, 0.8


@dataclass(frozen=True)
class LearningScale:
    """Sizes of one run of the comparison.

    Parameters
    ----------
    datasets : tuple of str
        Data sets (:data:`DATASETS`).
    n_clients : int
        ``N`` (FEMNIST: writers).
    per_client : int
        Training images per client (FEMNIST: at most, per writer).
    n_test : int
        Test images (FEMNIST: at most; its test images are the chosen writers' LEAF test parts).
    n_candidates : int
        Canary candidates; the forgotten client holds a random half.
    repeats : int
        Copies of each member canary at the forgotten client.
    hidden : int
        Hidden units of the MLP every system trains.
    rounds : int
        FedAvg rounds of training and of every retraining (``R``).
    local : fedlib.learn.LocalSGD
        Local training of every system.
    cluster_size : int
        Liu et al.'s ``k``.
    dropout : float
        Liu et al.'s per-round dropout rate ``δ``.
    threshold_rate : float
        Liu et al.'s Shamir threshold rate ``ξ``.
    knot_clusters : int
        KNOT's clusters ``N'``.
    concurrency : int
        Clients in flight ``P`` (KNOT, FedEraser).
    buffer : int
        Results per aggregation ``M`` (KNOT, FedEraser).
    async_rounds : int
        Aggregations of the forgotten client's cluster (KNOT) or of the one model (FedEraser) before the request,
        and of KNOT's rolled-back cluster after it.
    finetune_rounds : int
        Fine-tuning's rounds per request.
    rapid_rounds : int
        Rapid retraining's rounds per request.
    n_shadows : int
        Shadow models per training procedure.
    n_sequence : int
        Clients forgotten one after another for ``sequence seconds`` (the first is the forgotten client).
    exactness_runs : int
        Pairs of models of KNOT's exactness test.
    n_bootstrap : int
        Bootstrap resamples of every interval.
    device : str, default="cpu"
        Where every system trains (``device`` of :mod:`fedlib.learn`'s trainers): ``"cpu"``, or ``"auto"``
        (a GPU when torch sees one) at ``paper``. Every system of a run trains on the same device, so their
        seconds compare.
    """

    datasets: tuple[str, ...]
    n_clients: int
    per_client: int
    n_test: int
    n_candidates: int
    repeats: int
    hidden: int
    rounds: int
    local: LocalSGD
    cluster_size: int
    dropout: float
    threshold_rate: float
    knot_clusters: int
    concurrency: int
    buffer: int
    async_rounds: int
    finetune_rounds: int
    rapid_rounds: int
    n_shadows: int
    n_sequence: int
    exactness_runs: int
    n_bootstrap: int = 1000
    device: str = "cpu"


#: The book's scales: ``ci`` (the whole learning half in about 30 s), ``default`` (about 150 s on two cores with
#: ``n_jobs=2``) and ``paper`` (more clients, rounds and shadows).
SCALES: dict[str, LearningScale] = {
    "ci": LearningScale(
        datasets=DATASETS, n_clients=8, per_client=30, n_test=150, n_candidates=20, repeats=4, hidden=16, rounds=4,
        local=LocalSGD(lr=0.2, batch_size=16, epochs=2), cluster_size=4, dropout=0.1, threshold_rate=0.6,
        knot_clusters=2, concurrency=4, buffer=2, async_rounds=4, finetune_rounds=1, rapid_rounds=2, n_shadows=4,
        n_sequence=2, exactness_runs=3, n_bootstrap=200,
    ),
    "default": LearningScale(
        datasets=DATASETS, n_clients=20, per_client=60, n_test=500, n_candidates=60, repeats=4, hidden=32,
        rounds=10, local=LocalSGD(lr=0.2, batch_size=16, epochs=3), cluster_size=5, dropout=0.1,
        threshold_rate=0.6, knot_clusters=4, concurrency=10, buffer=5, async_rounds=10, finetune_rounds=2,
        rapid_rounds=5, n_shadows=16, n_sequence=2, exactness_runs=20,
    ),
    "paper": LearningScale(
        datasets=DATASETS, n_clients=50, per_client=100, n_test=1000, n_candidates=100, repeats=4, hidden=64,
        rounds=20, local=LocalSGD(lr=0.2, batch_size=16, epochs=3), cluster_size=10, dropout=0.1,
        threshold_rate=0.6, knot_clusters=5, concurrency=20, buffer=10, async_rounds=20, finetune_rounds=3,
        rapid_rounds=10, n_shadows=64, n_sequence=5, exactness_runs=40, device="auto",
    ),
}  # fmt: skip


@dataclass(frozen=True, eq=False)
class LearningTask:
    """One data set as every system sees it: clients, canaries at the forgotten client, test set, clock.

    Parameters
    ----------
    dataset : str
        Display name.
    data : str
        What the data really is (for the ``data`` column).
    scale : LearningScale
        The sizes.
    X : ndarray of float32, shape (n, 1, 28, 28)
        The clients' own images (no canary), and the forgotten client's held-out images (``control``).
    y : ndarray of int64, shape (n,)
        Their labels.
    parts : list of ndarray of int64
        Each client's rows of ``X``.
    control : ndarray of int64
        Rows of ``X`` the forgotten client owns but never trains on: the non-members of the control without
        canaries (the same writer's images, so that the control measures membership, not a change of writer).
    X_test, y_test : ndarray
        The test set.
    canaries : fedlib.audit.Canaries
        The candidates, ``repeats`` copies each.
    member : ndarray of bool, shape (n_candidates,)
        Candidates the forgotten client holds.
    forgotten : int
        The client asked to be forgotten.
    sequence : tuple of int
        Clients forgotten one after another (the forgotten client first).
    training_times : ndarray of float64, shape (N,)
        Simulated seconds of one local training of each client, the same in every system.
    n_classes : int
        Output units.
    clusters : dict
        Fixed clusterings the shadows and references reuse: ``"Liu members"`` (the forgotten client's cluster)
        and ``"KNOT labels"`` (KNOT's assignment).
    """

    dataset: str
    data: str
    scale: LearningScale
    X: np.ndarray
    y: np.ndarray
    parts: list
    X_test: np.ndarray
    y_test: np.ndarray
    canaries: Canaries
    member: np.ndarray
    forgotten: int
    control: np.ndarray
    sequence: tuple[int, ...]
    training_times: np.ndarray
    n_classes: int
    clusters: dict = field(default_factory=dict)

    @property
    def candidates(self) -> np.ndarray:
        """One image per candidate (the copies are identical)."""
        return self.canaries.X[self._first]

    @property
    def planted(self) -> np.ndarray:
        """The planted (wrong) label of each candidate."""
        return self.canaries.y[self._first]

    @property
    def _first(self) -> np.ndarray:
        group = self.canaries.group
        return np.flatnonzero(np.r_[True, group[1:] != group[:-1]])

    def model(self):
        """A fresh MLP of the task's shape (every system re-draws its parameters from its own seed)."""
        return make_model("mlp", self.n_classes, input_shape=self.X.shape[1:], hidden=self.scale.hidden)

    def with_canaries(self, mask) -> tuple[np.ndarray, np.ndarray, list]:
        """The clients' data with the candidates of ``mask`` appended to the forgotten client's rows."""
        rows = self.canaries.points(np.asarray(mask, dtype=bool))
        X = np.concatenate([self.X, self.canaries.X[rows]])
        y = np.concatenate([self.y, self.canaries.y[rows]])
        parts = [p.copy() for p in self.parts]
        parts[self.forgotten] = np.r_[parts[self.forgotten], len(self.X) + np.arange(rows.size)]
        return X, y, parts

    @property
    def test_data(self) -> tuple[np.ndarray, np.ndarray]:
        """``(X_test, y_test)``."""
        return self.X_test, self.y_test


def prepare_task(dataset: str, scale: LearningScale, random_state: SeedLike = 0) -> LearningTask:
    """Load a data set, deal it to clients, draw the canaries and the client that will ask to be forgotten.

    The test images are split in two: ``n_candidates`` of them become the canary pool (never on a client, never
    tested on), the rest the test set. FEMNIST's LEAF pixels are inverted (ink 1, paper 0), as MNIST's are, so
    that small models train on them. The forgotten client is drawn among the clients holding at least the median
    number of images and training no slower than the median client on the simulated clock, so that it takes part
    in the asynchronous systems before its request (a straggler's update may not have arrived yet: there would be
    little to forget).

    Parameters
    ----------
    dataset : {"FEMNIST", "Fashion-MNIST"}
        The data set.
    scale : LearningScale
        Sizes.
    random_state : int, numpy.random.SeedSequence or None, default=0
        Root of the deal, the canaries, the member half, the forgotten client and the clock.

    Returns
    -------
    LearningTask
        The task (its ``clusters`` still empty: :func:`compare_learning` fills them).

    Raises
    ------
    ValueError
        If the test images do not leave a test set beside the canary pool.
    """
    root = root_sequence(random_state)
    images = load_federated_images(
        dataset, n_clients=scale.n_clients, per_client=scale.per_client, n_test=scale.n_test + scale.n_candidates,
        random_state=np.random.default_rng(child_sequence(root, 0)),
    )  # fmt: skip
    rng = np.random.default_rng(child_sequence(root, 1))
    X, X_held = images.X, images.X_test
    if dataset == "FEMNIST" and not images.is_standin:
        X, X_held = 1.0 - X, 1.0 - X_held
    order = rng.permutation(len(X_held))
    pool, test = order[: scale.n_candidates], np.sort(order[scale.n_candidates :])
    if test.size < 20:
        raise ValueError(
            f"{dataset}: {len(X_held)} held-out images leave {test.size} test images beside {scale.n_candidates} "
            "canary candidates; take more clients or fewer candidates."
        )
    n_classes = N_CLASSES[dataset]
    canaries = mislabeled_canaries(
        X_held[pool], images.y_test[pool], scale.n_candidates, n_classes=n_classes, repeats=scale.repeats,
        random_state=rng,
    )  # fmt: skip
    member = rng.permutation(scale.n_candidates) < scale.n_candidates // 2
    times = pareto_training_times(images.n_clients, epochs=scale.local.epochs, random_state=rng)
    sizes = np.array([len(p) for p in images.clients])
    eligible = np.flatnonzero((sizes >= np.median(sizes)) & (times <= np.median(times)))
    forgotten = int(rng.choice(eligible if eligible.size else np.flatnonzero(sizes >= np.median(sizes))))
    own = rng.permutation(images.clients[forgotten])
    clients = list(images.clients)
    clients[forgotten], control = np.sort(own[own.size // 2 :]), np.sort(own[: own.size // 2])
    others = rng.permutation(np.setdiff1d(np.arange(images.n_clients), [forgotten]))
    sequence = (forgotten, *(int(c) for c in others[: scale.n_sequence - 1]))
    if images.is_standin:
        data = "stand-in (generated)"
    elif dataset == "FEMNIST":
        data = (f"real (LEAF sample: {images.n_clients} writers as clients, at most {scale.per_client} images each, "
                "pixels inverted)")  # fmt: skip
    else:
        data = f"real, subsampled to {len(X):,} training images ({images.n_clients} clients)"
    return LearningTask(
        dataset=dataset, data=data, scale=scale, X=np.ascontiguousarray(X, dtype=np.float32), y=images.y,
        parts=clients, X_test=np.ascontiguousarray(X_held[test], dtype=np.float32),
        y_test=images.y_test[test], canaries=canaries, member=member, forgotten=forgotten, control=control,
        sequence=sequence,
        training_times=times, n_classes=n_classes,
    )  # fmt: skip


# -- the systems --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LearningSystem:
    """One way to forget: how to build it, whose shadows attack it, what its reference is, how it is checked.

    Parameters
    ----------
    name : str
        Display name.
    build : callable
        ``(task, seed) -> estimator``, unfitted, a method of the contract (:mod:`fedlib.base`); module-level
        (pickled for ``n_jobs > 1``).
    kind : {"synchronous", "asynchronous"}
        Synchronous: ``fit(X, y, parts=..., test_data=...)`` trains; asynchronous: an
        :class:`~fedlib.learn.AsyncFederatedTrainer` run until the forgotten client's cluster has made
        ``async_rounds`` aggregations.
    procedure : str
        Its training procedure, whose shadows attack it (:data:`PROCEDURES`).
    reference : {"own", "FedAvg", "fresh"}
        The retrained reference: its own model after forgetting (bitwise coupled), the retraining system's
        (FedAvg from scratch), or the same system trained from scratch on the remaining clients.
    exactness : {"bitwise", "distribution", "distance"}
        Its exactness check.
    clustered : bool, default=False
        Asynchronous only: KNOT's clusters (else one model).
    catch_up : bool, default=False
        Asynchronous only: after the rollback, train the client's cluster back to its aggregations.
    """

    name: str
    build: Callable
    kind: str
    procedure: str
    reference: str
    exactness: str
    clustered: bool = False
    catch_up: bool = False


def _retraining(task: LearningTask, seed) -> ClusteredUnlearning:
    s = task.scale
    return ClusteredUnlearning(
        task.model(), cluster_size=len(task.parts), rounds=s.rounds, local=s.local, secure=False, random_state=seed,
        device=s.device,
    )  # fmt: skip


def _liu(task: LearningTask, seed, *, cluster_size: int | None = None) -> ClusteredUnlearning:
    s = task.scale
    return ClusteredUnlearning(
        task.model(), cluster_size=s.cluster_size if cluster_size is None else cluster_size, rounds=s.rounds,
        local=s.local, secure=True, threshold_rate=s.threshold_rate, share_holders="all", dropout=s.dropout,
        random_state=seed, device=s.device,
    )  # fmt: skip


def _knot(task: LearningTask, seed) -> AsyncFederatedTrainer:
    s = task.scale
    return AsyncFederatedTrainer(
        task.model(), concurrency=s.concurrency, buffer=s.buffer, local=s.local, random_state=seed, device=s.device
    )


def _federaser(task: LearningTask, seed) -> FedEraser:
    s = task.scale
    return FedEraser(
        task.model(), concurrency=s.concurrency, buffer=s.buffer, interval=FEDERASER_INTERVAL,
        ratio=FEDERASER_RATIO, local=s.local, random_state=seed, device=s.device,
    )  # fmt: skip


def _rapid(task: LearningTask, seed) -> RapidRetraining:
    s = task.scale
    return RapidRetraining(
        task.model(), rounds=s.rounds, unlearning_rounds=s.rapid_rounds, local=s.local, random_state=seed,
        device=s.device,
    )  # fmt: skip


def _finetuning(task: LearningTask, seed) -> FineTuning:
    s = task.scale
    return FineTuning(
        task.model(), rounds=s.rounds, unlearning_rounds=s.finetune_rounds, local=s.local, random_state=seed,
        device=s.device,
    )  # fmt: skip


def default_systems() -> dict[str, LearningSystem]:
    """The six systems of :data:`SYSTEMS`, by name.

    Returns
    -------
    dict of str to LearningSystem
        In the order of :data:`SYSTEMS`.

    Examples
    --------
    >>> systems = default_systems()
    >>> [(s.procedure, s.reference, s.exactness) for s in systems.values()][:3]
    [('FedAvg', 'own', 'bitwise'), ('clustered', 'own', 'bitwise'), ('KNOT', 'fresh', 'distribution')]
    >>> sorted({s.procedure for s in systems.values()})  # one set of shadows each
    ['FedAvg', 'FedBuff', 'KNOT', 'clustered']
    """
    systems = [
        LearningSystem(SYSTEMS[0], _retraining, "synchronous", "FedAvg", "own", "bitwise"),
        LearningSystem(SYSTEMS[1], _liu, "synchronous", "clustered", "own", "bitwise"),
        LearningSystem(SYSTEMS[2], _knot, "asynchronous", "KNOT", "fresh", "distribution", clustered=True,
                       catch_up=True),
        LearningSystem(SYSTEMS[3], _federaser, "asynchronous", "FedBuff", "fresh", "distance"),
        LearningSystem(SYSTEMS[4], _rapid, "synchronous", "FedAvg", "FedAvg", "distance"),
        LearningSystem(SYSTEMS[5], _finetuning, "synchronous", "FedAvg", "FedAvg", "distance"),
    ]  # fmt: skip
    return {system.name: system for system in systems}


# -- what an attacker reads from a model ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Stats:
    """What the audit reads from one model: test accuracy, the canaries' statistics, the control's losses."""

    accuracy: float
    confidence: np.ndarray
    loss: np.ndarray
    control_members: np.ndarray
    control_nonmembers: np.ndarray
    params: np.ndarray


def _read(task: LearningTask, model, params: np.ndarray, quality: float | None = None) -> _Stats:
    """Every statistic of one model (``params`` of the architecture ``model``)."""
    logits = predict_logits(model, task.candidates, parameters=params)
    own = task.parts[task.forgotten]
    members = cross_entropy(predict_logits(model, task.X[own], parameters=params), task.y[own])
    others = cross_entropy(predict_logits(model, task.X[task.control], parameters=params), task.y[task.control])
    if quality is None:
        quality = float(accuracy(model, task.X_test, task.y_test, parameters=params))
    return _Stats(
        accuracy=float(quality),
        confidence=logit_confidence(logits, task.planted),
        loss=cross_entropy(logits, task.planted),
        control_members=members,
        control_nonmembers=others,
        params=np.array(params, dtype=np.float32),
    )


def _cluster_of(system, client: int) -> int:
    """The cluster (model) that trains on ``client``'s data, in any system of this module."""
    if hasattr(system, "clusters_"):
        return int(np.flatnonzero([client in c for c in system.clusters_])[0])
    if hasattr(system, "cluster_labels_"):
        return int(system.cluster_labels_[client])
    return 0


def _attacked(system, client: int) -> np.ndarray:
    """The parameters of the model that trained on ``client``'s data."""
    if hasattr(system, "trainers_"):
        return system.trainers_[_cluster_of(system, client)].params_
    params = np.asarray(system.params_)
    return params[_cluster_of(system, client)] if params.ndim == 2 else params


def _quality(system, task: LearningTask, client: int) -> float:
    """Test accuracy: the vote (Liu et al.), the global model, or the client's cluster model (KNOT, FedBuff)."""
    if hasattr(system, "trainers_"):
        return float(system.evaluate()["vote accuracy"])
    return float(accuracy(system.model_, task.X_test, task.y_test, parameters=_attacked(system, client)))


# -- running one system -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Outcome:
    """What one system's job returns to the parent."""

    name: str
    row: dict
    before: _Stats
    after: _Stats
    reference: _Stats | None
    baseline: np.ndarray | None
    curve: list


def _client_updates(system, client: int) -> int:
    """How many aggregations so far summed ``client``'s update into the model that trains on its data."""
    if hasattr(system, "trainers_"):
        return sum(int(client in r.summed) for r in system.trainers_[_cluster_of(system, client)].history_)
    if hasattr(system, "trainer_"):
        return sum(int(client in r.summed) for r in system.trainer_.history_)
    return sum(int(client in r.clients and client not in r.discarded) for r in system.history_)


def _report_seconds(report: UnlearningReport) -> float:
    return float(report.client_seconds + report.aggregation_seconds + report.server_seconds)


def _synchronous_clock(task: LearningTask, histories: list[list]) -> float:
    """Simulated seconds of retraining: each round lasts its slowest participant; clusters run in parallel."""
    times = task.training_times
    per_cluster = [sum(float(times[r.participants].max()) for r in h if r.participants.size) for h in histories]
    return max(per_cluster, default=0.0)


def _synchronous_histories(system, report: UnlearningReport) -> list[list]:
    if hasattr(system, "trainers_"):
        return [system.trainers_[i].history_ for i in report.details.get("clusters", ())]
    return [system.trainer_.history_]


def _synchronous_curve(task: LearningTask, system, report: UnlearningReport) -> list[dict]:
    """Test accuracy per retraining round of the request, with the simulated clock since the request."""
    histories = _synchronous_histories(system, report)
    times = task.training_times
    rounds = max((len(h) for h in histories), default=0)
    clock = np.zeros(rounds + 1)
    for h in histories:  # clusters in parallel: round r ends when the slowest cluster's round r ends
        ends = np.cumsum([float(times[r.participants].max()) if r.participants.size else 0.0 for r in h])
        clock[1 : len(ends) + 1] = np.maximum(clock[1 : len(ends) + 1], ends)
    out = []
    for point in report.details.get("curve", []):
        value = point.get("vote accuracy", point.get("accuracy"))
        r = int(point["round"])
        out.append({"round": r, "simulated seconds": float(clock[min(r, rounds)]), "accuracy": float(value)})
    return out


def _fit_synchronous(system, task: LearningTask, mask) -> float:
    X, y, parts = task.with_canaries(mask)
    began = time.perf_counter()
    system.fit(X, y, parts=parts, test_data=task.test_data)
    return time.perf_counter() - began


def _without(task: LearningTask, client: int) -> tuple[np.ndarray, np.ndarray, list]:
    """The target's data without ``client`` (its rows, canaries included, dropped; clients renumbered)."""
    X, y, parts = task.with_canaries(task.member)
    keep = np.ones(len(X), dtype=bool)
    keep[parts[client]] = False
    position = np.cumsum(keep) - 1
    return X[keep], y[keep], [position[p] for c, p in enumerate(parts) if c != client]


def _run_synchronous(spec: LearningSystem, task: LearningTask, seed: np.random.SeedSequence) -> _Outcome:
    f = task.forgotten
    system = spec.build(task, child_sequence(seed, 0))
    _fit_synchronous(system, task, task.member)
    before = _read(task, system.model_, _attacked(system, f), _quality(system, task, f))
    updates = _client_updates(system, f)
    report = system.unlearn(clients=[f])
    after = _read(task, system.model_, _attacked(system, f), _quality(system, task, f))
    row = {
        "claim": "exact" if report.exact else "approximate",
        "forget seconds": _report_seconds(report),
        "forget bytes": int(report.bytes_sent),
        "clients retrained": len(report.clients_retrained),
        "rounds": int(report.rounds),
        "simulated seconds": _synchronous_clock(task, _synchronous_histories(system, report)),
        "client updates before": updates,
    }
    curve = _synchronous_curve(task, system, report)
    if spec.exactness == "bitwise":
        row["exactness"] = _bitwise_word(system, [task.forgotten])
    sequence, refused = row["forget seconds"], 0
    for client in task.sequence[1:]:
        try:
            sequence += _report_seconds(system.unlearn(clients=[client]))
        except UnlearningCapacityError:
            refused += 1
    row.update({"sequence seconds": sequence, "n_sequence": len(task.sequence), "sequence refused": refused})
    reference = baseline = None
    if spec.reference != "FedAvg":  # train the same system from scratch on the remaining clients: its cost
        fresh = spec.build(task, child_sequence(seed, 1))
        X, y, parts = _without(task, f)
        if isinstance(fresh, ClusteredUnlearning) and fresh.cluster_size > len(parts):
            fresh.set_params(cluster_size=len(parts))  # FedAvg over all the remaining clients
        began = time.perf_counter()
        fresh.fit(X, y, parts=parts, test_data=task.test_data)
        row["retrain seconds"] = time.perf_counter() - began
        if spec.procedure == "FedAvg":  # another FedAvg retraining: how far two retrainings land from each other
            baseline = _attacked(fresh, 0).copy()
    if spec.reference == "own":
        reference = after
    return _Outcome(spec.name, row, before, after, reference, baseline, curve)


def _bitwise_word(system, forgotten) -> str:
    try:
        check = check_bitwise(system, clients=forgotten)
    except NotImplementedError:
        return "not checked: no bitwise coupling"
    if check.identical:
        return "bit-identical"
    return f"differs bitwise (max |difference| {check.max_abs_difference:.2g})"


def _cluster_aggregations(trainer: AsyncFederatedTrainer, cluster: int) -> int:
    """Aggregations of a cluster on its current path (a rollback drops those after its checkpoint)."""
    return len(trainer.checkpoints_[cluster]) - 1


def _run_to(trainer: AsyncFederatedTrainer, cluster: int, count: int) -> list:
    """Aggregate until ``cluster`` has made ``count`` aggregations; the records."""
    records = []
    limit = 1000 * max(count, 1) + len(trainer.history_)
    members = np.flatnonzero(trainer.cluster_labels_ == cluster)
    if np.setdiff1d(members, trainer.unlearned_).size == 0:
        return records  # nobody left to train the cluster
    while _cluster_aggregations(trainer, cluster) < count:
        if trainer.round_ > limit:
            raise RuntimeError(f"cluster {cluster} did not reach {count} aggregations in {limit} rounds.")
        records.append(trainer.step())
    return records


def _async_system(spec: LearningSystem, task: LearningTask, seed, X, y, parts, times, labels, *, profile=False):
    """An asynchronous system fitted, not started, with the given clusters (KNOT) or one model.

    With ``profile``, KNOT's profiling round runs and is charged to the clock, as the chapter's KNOT does; it
    changes no model (every finish time moves by the same amount), so shadows and references skip it.
    """
    trainer = spec.build(task, seed)
    trainer.fit(X, y, parts=parts, training_times=times, test_data=task.test_data)
    if spec.clustered:
        if profile:
            trainer.profile()
        trainer.set_clusters(labels)
    return trainer


def _remaining_labels(labels: np.ndarray, client: int) -> tuple[np.ndarray, int]:
    """Cluster labels without ``client``, renumbered without gaps; the new label of the client's cluster (or -1)."""
    kept = np.delete(labels, client)
    values, relabelled = np.unique(kept, return_inverse=True)
    where = np.flatnonzero(values == labels[client])
    return relabelled.astype(np.int64), int(where[0]) if where.size else -1


def _run_asynchronous(spec: LearningSystem, task: LearningTask, seed: np.random.SeedSequence) -> _Outcome:
    f, count = task.forgotten, task.scale.async_rounds
    labels = task.clusters["KNOT labels"] if spec.clustered else np.zeros(len(task.parts), dtype=np.int64)
    X, y, parts = task.with_canaries(task.member)
    trainer = _async_system(spec, task, child_sequence(seed, 0), X, y, parts, task.training_times, labels, profile=True)
    cluster = int(labels[f])
    _run_to(trainer, cluster, count)
    before = _read(task, trainer.model_, trainer.params_[cluster])
    updates = _client_updates(trainer, f)
    asked = trainer.time_
    report = trainer.unlearn(clients=[f])
    records = _run_to(trainer, cluster, count) if spec.catch_up else []
    after = _read(task, trainer.model_, trainer.params_[cluster])
    rolled = [int(n) for n in report.details.get("clusters", ())]
    if spec.catch_up:
        members = np.flatnonzero(np.isin(trainer.cluster_labels_, rolled))
        retrained = np.setdiff1d(members, trainer.unlearned_).size
        rounds = sum(int(np.isin(rolled, r.clusters).any()) for r in records)
        seconds = _report_seconds(report) + sum(r.step_seconds for r in records)
        simulated = trainer.time_ - asked
        changed = [r for r in records if cluster in r.clusters]  # the rolled-back cluster's own aggregations
        curve = [
            {"round": i + 1, "simulated seconds": float(r.time - asked), "accuracy": float(r.scores[cluster])}
            for i, r in enumerate(changed)
        ]
    else:
        retrained = _calibrating_clients(trainer, report)
        rounds = int(report.rounds)
        seconds = _report_seconds(report)
        simulated = float(sum(report.details.get("simulated_seconds", {}).values()))
        curve = [{"round": rounds, "simulated seconds": simulated, "accuracy": after.accuracy}]
    row = {
        "claim": "exact" if report.exact else "approximate",
        "forget seconds": seconds,
        "forget bytes": int(report.bytes_sent),
        "clients retrained": int(retrained),
        "rounds": rounds,
        "simulated seconds": float(simulated),
        "client updates before": updates,
    }
    sequence, refused = seconds, 0
    for client in task.sequence[1:]:
        began = time.perf_counter()
        extra = trainer.unlearn(clients=[client])
        if spec.catch_up:
            for n in extra.details.get("clusters", ()):
                _run_to(trainer, int(n), count)
        sequence += _report_seconds(extra) if not spec.catch_up else time.perf_counter() - began
    row.update({"sequence seconds": sequence, "n_sequence": len(task.sequence), "sequence refused": refused})
    # the reference: the same system from scratch on the remaining clients, the same clusters, as many aggregations
    X_rest, y_rest, parts_rest = _without(task, f)
    times_rest = np.delete(task.training_times, f)
    labels_rest, cluster_rest = _remaining_labels(labels, f)
    began = time.perf_counter()
    fresh = _async_system(spec, task, child_sequence(seed, 1), X_rest, y_rest, parts_rest, times_rest, labels_rest)
    if cluster_rest >= 0:
        _run_to(fresh, cluster_rest, count)
    row["retrain seconds"] = time.perf_counter() - began
    reference = _read(task, fresh.model_, fresh.params_[max(cluster_rest, 0)])
    baseline = None
    if spec.exactness == "distance":  # a second retraining with another seed: the distance between retrainings
        again = _async_system(spec, task, child_sequence(seed, 2), X_rest, y_rest, parts_rest, times_rest, labels_rest)
        if cluster_rest >= 0:
            _run_to(again, cluster_rest, count)
        baseline = again.params_[max(cluster_rest, 0)].copy()
    return _Outcome(spec.name, row, before, after, reference, baseline, curve)


def _calibrating_clients(trainer: FedEraser, report: UnlearningReport) -> int:
    """Distinct clients that trained for FedEraser's calibration (every replayed round after the first)."""
    forgotten = np.asarray(trainer.unlearned_, dtype=np.int64)
    clients: set[int] = set()
    for n, rounds in report.details.get("replayed", {}).items():
        for stored in trainer.stored_updates_:
            if stored.cluster == n and stored.round_index in rounds[1:]:
                clients.update(np.setdiff1d(stored.clients, forgotten).tolist())
    return len(clients)


def _run_system(spec: LearningSystem, task: LearningTask, seed: np.random.SeedSequence) -> _Outcome:
    """One system on one task: train, forget, read every model, check, retrain from scratch; in one process."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        if spec.kind == "synchronous":
            return _run_synchronous(spec, task, seed)
        return _run_asynchronous(spec, task, seed)


# -- shadows ------------------------------------------------------------------------------------------------------


def _shadow(task: LearningTask, procedure: str, mask: np.ndarray, seed: np.random.SeedSequence) -> np.ndarray:
    """Train one shadow model by ``procedure`` with the candidates of ``mask``; LiRA's statistic of every one."""
    X, y, parts = task.with_canaries(mask)
    f = task.forgotten
    if procedure == "FedAvg":
        system = _retraining(task, seed).fit(X, y, parts=parts)
        params, model = system.trainers_[0].params_, system.model_
    elif procedure == "clustered":  # the forgotten client's cluster alone, with its members
        members = task.clusters["Liu members"]
        system = _liu(task, seed, cluster_size=len(members)).fit(X, y, parts=[parts[u] for u in members])
        params, model = system.trainers_[0].params_, system.model_
    else:
        spec = default_systems()["KNOT" if procedure == "KNOT" else "FedEraser"]
        labels = task.clusters["KNOT labels"] if spec.clustered else np.zeros(len(parts), dtype=np.int64)
        trainer = _async_system(spec, task, seed, X, y, parts, task.training_times, labels)
        _run_to(trainer, int(labels[f]), task.scale.async_rounds)
        params, model = trainer.params_[int(labels[f])], trainer.model_
    return logit_confidence(predict_logits(model, task.candidates, parameters=params), task.planted)


# -- KNOT's exactness in distribution -------------------------------------------------------------------------------


class _KnotRun(UnlearningMixin):
    """KNOT with the task's clusters as one method of the contract, for :func:`fedlib.audit.exactness_test`.

    ``fit`` trains until the forgotten client's cluster has made ``async_rounds`` aggregations; ``unlearn`` rolls it
    back and trains it back to as many. Fitted on the remaining clients (one fewer), it drops the forgotten
    client's training time and label: the same clusters, without it.
    """

    _fitted_attribute = "trainer_"
    unlearns = frozenset({"clients"})

    def __init__(self, random_state=None, *, task: LearningTask | None = None) -> None:
        self.random_state = random_state
        self.task = task

    def fit(self, X, y, *, parts):
        task = self.task
        labels, times = task.clusters["KNOT labels"], task.training_times
        self.cluster_ = int(labels[task.forgotten])
        if len(parts) == len(labels) - 1:
            labels, self.cluster_ = _remaining_labels(labels, task.forgotten)
            times = np.delete(times, task.forgotten)
        spec = default_systems()["KNOT"]
        self.trainer_ = _async_system(spec, task, self.random_state, X, y, parts, times, labels)
        if self.cluster_ >= 0:
            _run_to(self.trainer_, self.cluster_, task.scale.async_rounds)
        return self

    def _held_clients(self) -> np.ndarray:
        return np.setdiff1d(np.arange(self.trainer_.n_clients), self.trainer_.unlearned_)

    def _held_samples(self) -> np.ndarray:
        return np.zeros(0, dtype=np.int64)

    def _unlearn(self, samples, clients) -> UnlearningReport:
        report = self.trainer_.unlearn(clients=clients)
        _run_to(self.trainer_, self.cluster_, self.task.scale.async_rounds)
        return report


def _canary_signal(run: _KnotRun) -> float:
    """The exactness statistic: mean scaled logit of the member canaries minus that of the others (cluster model)."""
    task = run.task
    params = run.trainer_.params_[max(run.cluster_, 0)]
    confidence = logit_confidence(predict_logits(run.trainer_.model_, task.candidates, parameters=params), task.planted)
    return float(confidence[task.member].mean() - confidence[~task.member].mean())


def _detectable_shift(n_runs: int) -> float:
    """Shift (in standard deviations) a two-sample test of ``n_runs`` each detects with power 0.8 at level 0.05."""
    return float((norm.ppf(1 - LEVEL / 2) + norm.ppf(POWER)) * np.sqrt(2.0 / n_runs))


def _distribution_word(pvalue: float) -> str:
    if pvalue < 0.001:
        return "differs (p < 0.001)"
    if pvalue < LEVEL:
        return f"differs (p = {pvalue:.3f})"
    return f"same distribution (p = {pvalue:.2f})"


# -- the comparison -------------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class LearningComparison:
    """Every system on every data set: costs and checks, attacks, and what the chapter draws.

    Parameters
    ----------
    systems : pandas.DataFrame
        One row per (dataset, system), the shared schema's columns, then ``client updates before`` (aggregations
        that summed the forgotten client's update into its model before the request), ``sequence refused``
        (requests of the sequence a system refused) and ``procedure`` (whose shadows attacked it).
    attacks : pandas.DataFrame
        One row per (dataset, system, attack, stage, canaries), the shared schema's columns.
    curves : pandas.DataFrame
        Test accuracy while forgetting: ``dataset``, ``system``, ``round`` (of the request's retraining),
        ``simulated seconds`` (since the request), ``accuracy``.
    exactness : pandas.DataFrame
        One row per (dataset, system): ``check``, ``exactness`` and the numbers behind it (``p-value``, ``runs``,
        ``detectable shift (sd)``, ``statistic sd``, ``distance``, ``distance between retrainings``).
    results : dict
        ``(dataset, system, attack, stage, canaries) -> fedlib.audit.AttackResult``, with the raw scores (members
        first) for ROC curves.
    shadows : dict
        ``(dataset, procedure) -> fedlib.audit.ShadowScores``.
    tasks : pandas.DataFrame
        One row per data set: ``dataset``, ``data``, ``clients``, ``training images``, ``test images``,
        ``candidates``, ``repeats``, ``forgotten client``, its ``client images``, ``sequence``, ``shadows``.
    scale : LearningScale
        The sizes.
    seconds : float
        Wall clock of the whole comparison.
    phase_seconds : dict of str to float
        Wall clock of its phases: ``data``, ``systems``, ``shadows``, ``exactness``, ``attacks``.
    """

    systems: pd.DataFrame
    attacks: pd.DataFrame
    curves: pd.DataFrame
    exactness: pd.DataFrame
    results: dict
    shadows: dict
    tasks: pd.DataFrame
    scale: LearningScale
    seconds: float
    phase_seconds: dict


#: The shared schema's columns of ``systems``, in order.
SYSTEM_COLUMNS = (
    "domain", "dataset", "data", "system", "claim", "quality", "quality before", "quality after",
    "quality retrained", "forget seconds", "retrain seconds", "forget bytes", "clients retrained", "rounds",
    "simulated seconds", "sequence seconds", "n_sequence", "exactness",
)  # fmt: skip

#: The shared schema's columns of ``attacks``, in order.
ATTACK_COLUMNS = (
    "domain", "dataset", "system", "attack", "stage", "canaries", "AUC", "AUC low", "AUC high", "TPR at 0.1% FPR",
    "TPR at 1.0% FPR", "members", "non-members", "gap", "gap low", "gap high",
)  # fmt: skip


def _key(name: str) -> int:
    """A stable integer stream key for a name (systems and procedures keep their seeds whatever else runs)."""
    return zlib.crc32(name.encode())


def _fix_clusters(task: LearningTask, systems: dict, root: np.random.SeedSequence, d: int) -> LearningTask:
    """The clusterings the shadows and references reuse, computed as the target systems compute them."""
    clusters = {}
    X, y, parts = task.with_canaries(task.member)
    for spec in systems.values():
        seed = child_sequence(child_sequence(root, d, 1, _key(spec.name)), 0)
        if spec.procedure == "clustered" and "Liu members" not in clusters:
            formed = spec.build(task, seed).fit(X, y, parts=parts, n_rounds=0)
            clusters["Liu members"] = formed.clusters_[_cluster_of(formed, task.forgotten)].copy()
        if spec.procedure == "KNOT" and "KNOT labels" not in clusters:
            trainer = spec.build(task, seed).fit(X, y, parts=parts, training_times=task.training_times)
            clusters["KNOT labels"] = knot_clusters(trainer, task.scale.knot_clusters)
    return replace(task, clusters=clusters)


def _resolve_scale(scale: str | LearningScale) -> LearningScale:
    if isinstance(scale, LearningScale):
        return scale
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {tuple(SCALES)} or a LearningScale, got {scale!r}.")
    return SCALES[scale]


def compare_learning(
    scale: str | LearningScale,
    seed: int,
    *,
    n_jobs: int = 1,
    systems: dict[str, LearningSystem] | None = None,
) -> LearningComparison:
    """Run every system on every data set, attack every model, check exactness: the learning half's frames.

    Three parallel phases over joblib processes, each job seeded by its own child of ``seed`` (named by the data
    set, the system or procedure, and the job), so every number but the seconds is the same for any ``n_jobs``:
    the systems (train, forget, the sequence, the references, the bitwise checks), the shadows of each procedure
    (:func:`fedlib.audit.run_shadows`), and KNOT's exactness test (:func:`fedlib.audit.exactness_test`).

    Parameters
    ----------
    scale : {"ci", "default", "paper"} or LearningScale
        Sizes (:data:`SCALES`).
    seed : int
        Root seed of the data, the canaries, every system, shadow and bootstrap.
    n_jobs : int, default=1
        joblib processes.
    systems : dict of str to LearningSystem, optional
        The systems to run; default :func:`default_systems`. A system whose reference is ``"FedAvg"`` needs
        :data:`RETRAINING`, which is then added.

    Returns
    -------
    LearningComparison
        The frames and what the chapter draws.

    Raises
    ------
    ValueError
        For an unknown scale.
    """
    began = time.perf_counter()
    scale = _resolve_scale(scale)
    systems = dict(default_systems() if systems is None else systems)
    if any(s.reference == "FedAvg" for s in systems.values()) and RETRAINING not in systems:
        systems = {RETRAINING: default_systems()[RETRAINING], **systems}
    root = root_sequence(seed)
    phases, clock = {}, time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        phases[name], clock = now - clock, now

    tasks = {}
    for dataset in scale.datasets:
        task = prepare_task(dataset, scale, child_sequence(root, _key(dataset), 0))
        tasks[dataset] = _fix_clusters(task, systems, root, _key(dataset))
    lap("data")
    jobs = [(dataset, spec) for dataset in tasks for spec in systems.values()]
    order = sorted(range(len(jobs)), key=lambda i: jobs[i][1].kind != "asynchronous")  # long jobs first
    outcomes = run_jobs(
        [delayed(_run_system)(jobs[i][1], tasks[jobs[i][0]],
                              child_sequence(root, _key(jobs[i][0]), 1, _key(jobs[i][1].name))) for i in order],
        n_jobs=n_jobs,
        desc="systems",
    )  # fmt: skip
    outcome = {(jobs[i][0], jobs[i][1].name): o for i, o in zip(order, outcomes, strict=True)}
    lap("systems")
    shadows = {}
    for dataset, task in tasks.items():
        for procedure in dict.fromkeys(s.procedure for s in systems.values()):
            shadows[dataset, procedure] = run_shadows(
                functools.partial(_shadow, task, procedure), scale.n_candidates, scale.n_shadows,
                random_state=child_sequence(root, _key(dataset), 2, _key(procedure)), n_jobs=n_jobs,
            )  # fmt: skip
    lap("shadows")
    tests = {}
    for dataset, task in tasks.items():
        for spec in systems.values():
            if spec.exactness == "distribution":
                X, y, parts = task.with_canaries(task.member)
                tests[dataset, spec.name] = exactness_test(
                    functools.partial(_KnotRun, task=task), X, y, parts=parts, clients=[task.forgotten],
                    statistic=_canary_signal, n_runs=scale.exactness_runs,
                    random_state=child_sequence(root, _key(dataset), 3, _key(spec.name)), n_jobs=n_jobs,
                )  # fmt: skip
    lap("exactness")
    frames = _assemble(tasks, systems, outcome, shadows, tests, root)
    lap("attacks")
    return LearningComparison(
        **frames, shadows=shadows, scale=scale, seconds=time.perf_counter() - began, phase_seconds=phases
    )


def _reference(outcome: dict, dataset: str, spec: LearningSystem) -> _Stats:
    if spec.reference == "FedAvg":
        return outcome[dataset, RETRAINING].after
    return outcome[dataset, spec.name].reference


def _assemble(tasks, systems, outcome, shadows, tests, root) -> dict:
    system_rows, attack_rows, curve_rows, exact_rows, results = [], [], [], [], {}
    task_rows = []
    for dataset, task in tasks.items():
        task_rows.append({
            "dataset": dataset, "data": task.data, "clients": len(task.parts), "training images": len(task.X),
            "test images": len(task.X_test), "candidates": task.canaries.n_canaries, "repeats": task.scale.repeats,
            "forgotten client": task.forgotten, "client images": len(task.parts[task.forgotten]),
            "sequence": task.sequence, "shadows": task.scale.n_shadows,
        })  # fmt: skip
        fedavg_retrain = outcome[dataset, RETRAINING].row.get("retrain seconds") if RETRAINING in systems else None
        for spec in systems.values():
            got = outcome[dataset, spec.name]
            reference = _reference(outcome, dataset, spec)
            row = dict(got.row)
            if "retrain seconds" not in row:
                row["retrain seconds"] = fedavg_retrain
            check = _exactness_row(spec, got, reference, outcome, dataset, tests)
            row["exactness"] = check["exactness"]
            system_rows.append({
                "domain": "learning", "dataset": dataset, "data": task.data, "system": spec.name,
                "quality": "test accuracy", "quality before": got.before.accuracy, "quality after": got.after.accuracy,
                "quality retrained": reference.accuracy, **row, "procedure": spec.procedure,
            })  # fmt: skip
            exact_rows.append({"dataset": dataset, "system": spec.name, **check})
            curve_rows.extend({"dataset": dataset, "system": spec.name, **point} for point in got.curve)
            stages = {"before": got.before, "after": got.after, "retrained": reference}
            seed = child_sequence(root, _key(dataset), 4, _key(spec.name))
            for row_, key, result in _attack_rows(task, stages, shadows[dataset, spec.procedure], seed):
                results[(dataset, spec.name, *key)] = result
                attack_rows.append({"domain": "learning", "dataset": dataset, "system": spec.name, **row_})
    systems_frame = pd.DataFrame(system_rows)
    extra = [c for c in systems_frame.columns if c not in SYSTEM_COLUMNS]
    systems_frame = systems_frame[list(SYSTEM_COLUMNS) + extra]
    attacks_frame = pd.DataFrame(attack_rows).reindex(columns=list(ATTACK_COLUMNS))
    curves = pd.DataFrame(curve_rows, columns=["dataset", "system", "round", "simulated seconds", "accuracy"])
    return {
        "systems": systems_frame,
        "attacks": attacks_frame,
        "curves": curves,
        "exactness": pd.DataFrame(exact_rows),
        "results": results,
        "tasks": pd.DataFrame(task_rows),
    }


def _exactness_row(spec, got: _Outcome, reference: _Stats, outcome: dict, dataset: str, tests: dict) -> dict:
    """The exactness word and the numbers behind it."""
    row = {"check": spec.exactness, "p-value": np.nan, "runs": np.nan, "detectable shift (sd)": np.nan,
           "statistic sd": np.nan, "distance": np.nan, "distance between retrainings": np.nan}  # fmt: skip
    if spec.exactness == "bitwise":
        row["check"] = "check_bitwise"
        row["exactness"] = got.row["exactness"]
    elif spec.exactness == "distribution":
        test = tests[dataset, spec.name]
        pooled = np.concatenate([np.ravel(test.unlearned), np.ravel(test.retrained)])
        row.update({
            "check": f"exactness_test ({test.test}, canary signal)", "p-value": test.pvalue, "runs": test.n_runs,
            "detectable shift (sd)": _detectable_shift(test.n_runs), "statistic sd": float(np.std(pooled, ddof=1)),
            "exactness": _distribution_word(test.pvalue),
        })  # fmt: skip
    else:
        baseline = got.baseline if got.baseline is not None else outcome[dataset, RETRAINING].baseline
        distance = model_distance({"params": got.after.params}, {"params": reference.params})
        between = np.nan
        if baseline is not None:
            between = model_distance({"params": baseline}, {"params": reference.params})
        row.update({"check": "model_distance", "distance": distance, "distance between retrainings": between})
        claimed_exact = got.row.get("claim") == "exact"
        # rapid retraining retrains from scratch (it never uses the data again) with another optimiser: exact in
        # what it uses, not in distribution against FedAvg's retraining, which is what the distance compares with
        word = (f"from scratch, another optimiser: {distance:.2f} from FedAvg's retraining" if claimed_exact
                else f"approximate: {distance:.2f} from retrained")  # fmt: skip
        row["exactness"] = word if np.isnan(between) else f"{word} (two retrainings: {between:.2f})"
    return row


def _attack_rows(task: LearningTask, stages: dict, shadows: ShadowScores, seed) -> list:
    """Every attack at every stage, with the gap of ``after`` against ``retrained``; rows, keys and results."""
    n = task.scale.n_bootstrap
    member = task.member
    out, by_stage = [], {}
    for s, stage in enumerate(STAGES):
        stats = stages[stage]
        metrics = {"n_bootstrap": n, "confidence": CONFIDENCE}
        attacks = {
            "loss threshold": loss_attack(stats.loss, member, random_state=child_sequence(seed, s, 0), **metrics),
            "LiRA online": lira_attack(stats.confidence, shadows, member, online=True,
                                       random_state=child_sequence(seed, s, 1), **metrics),
            "LiRA offline": lira_attack(stats.confidence, shadows, member, online=False,
                                        random_state=child_sequence(seed, s, 2), **metrics),
        }  # fmt: skip
        control_member = np.r_[np.ones(stats.control_members.size, bool), np.zeros(stats.control_nonmembers.size, bool)]
        control = loss_attack(
            np.r_[stats.control_members, stats.control_nonmembers], control_member,
            random_state=child_sequence(seed, s, 3), **metrics,
        )  # fmt: skip
        by_stage[stage] = {**{(a, True): r for a, r in attacks.items()}, ("loss threshold", False): control}
    for stage in STAGES:
        for (attack, canaries), result in by_stage[stage].items():
            row = {**result.as_row(), "stage": stage, "canaries": canaries}
            if stage == "after":
                gap = auc_gap(
                    result, by_stage["retrained"][attack, canaries], n_bootstrap=max(n, 1), confidence=GAP_CONFIDENCE,
                    random_state=child_sequence(seed, 9, ATTACKS.index(attack), int(canaries)),
                )  # fmt: skip
                row.update({"gap": gap.gap, "gap low": gap.interval[0], "gap high": gap.interval[1]})
            out.append((row, (attack, stage, canaries), result))
    return out


def attack_table(comparison: LearningComparison, *, canaries: bool = True) -> pd.DataFrame:
    """AUCs before, after and of the retrained reference side by side, one row per (dataset, system, attack).

    Parameters
    ----------
    comparison : LearningComparison
        From :func:`compare_learning`.
    canaries : bool, default=True
        The canary attacks, or the control on ordinary data.

    Returns
    -------
    pandas.DataFrame
        Indexed by (``dataset``, ``system``, ``attack``): ``before``, ``after``, ``retrained``, ``gap``,
        ``gap low``, ``gap high``.
    """
    attacks = comparison.attacks[comparison.attacks["canaries"] == canaries]
    table = attacks.pivot_table(index=["dataset", "system", "attack"], columns="stage", values="AUC", sort=False)
    gaps = attacks[attacks["stage"] == "after"].set_index(["dataset", "system", "attack"])
    gaps = gaps[["gap", "gap low", "gap high"]]
    return table[list(STAGES)].join(gaps)
