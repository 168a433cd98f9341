"""Forgetting, compared — the clustering half: every federated clustering method that forgets, on the same data.

Each of MUFC's datasets (:func:`fedbook.mufc.prepare`) is split over its clients; one client, chosen by the seed,
is forgotten. It holds half of its own rows (the other half is held out, never trained on) and a few outlier
canaries (:func:`fedlib.audit.outlier_canaries`): small far-out groups that pull a K-means centre only if they were
in the data. Every system (:data:`SYSTEMS`) is fitted with all clients, forgets the client, and is set against a
model retrained from scratch without it:

1. **cost and quality**: the loss ratio (federated K-means loss over the best centralised loss of the same data,
   MUFC Eq. (2) over Eq. (1)) before forgetting, after, and retrained; the forgetting request's own report
   (seconds, bytes, clients retrained, rounds); a full retraining's seconds; a sequence of requests;
2. **exactness**, from :mod:`fedlib.audit`'s checks: bit for bit against the retraining a method is coupled to
   (``check_bitwise``), else a two-sample test in distribution (``exactness_test``);
3. **the canary attack**, before, after and retrained: the loss-threshold attack (Yeom et al., CSF 2018) and LiRA
   online and offline (Carlini et al., S&P 2022) on the canaries' distance to the nearest centre, with shadow
   models trained by each system's own procedure; a clustering holds only a few canaries (it has K centres),
   so several target runs, each with its own members and seed, are pooled into one ROC curve, as Carlini et al.
   do; the gap "after − retrained" with a paired bootstrap interval (``auc_gap``);
4. **the control without canaries**: the same attacks on the forgotten client's ordinary rows against its
   held-out rows, where a clustering that generalises shows nothing before forgetting as after.

:func:`compare_clustering` runs it all; every job draws from its own spawned seed, so the results (all but the
seconds) do not depend on ``n_jobs``.
"""

from __future__ import annotations

import copy
import time
import warnings
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd
from joblib import delayed
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import roc_curve

from fedbook.compared.summary import GAP_CONFIDENCE
from fedbook.mufc import prepare, problem_n_init
from fedbook.sweeps import run_jobs
from fedlib.audit import (
    AttackResult,
    Canaries,
    ShadowScores,
    auc_gap,
    check_bitwise,
    exactness_test,
    lira_attack,
    loss_attack,
    model_distance,
    nearest_center_distances,
    nearest_center_scores,
    outlier_canaries,
)
from fedlib.base import FederatedClusterer, UnlearningReport
from fedlib.cluster import KFED, KMeans, centralized_lloyd, cluster_sizes, cluster_sums, kmeans_objective
from fedlib.field import to_fixed_point
from fedlib.secagg import SECFC_PRIME, SecFC, data_radius, max_safe_scale
from fedlib.unlearn import MUFC, DCKMeans, KMeansPlusPlus, Retrain
from fedlib.utils import SeedLike, check_random_state, child_sequence, root_sequence

#: The datasets of the comparison, in the order of the tables (names of :data:`fedbook.mufc.SOURCES`).
DATASETS = ("Celltype", "Covtype", "FEMNIST")

#: The attacks, in the order of the tables.
ATTACKS = ("loss threshold", "LiRA online", "LiRA offline")

#: The stages at which a model is attacked.
STAGES = ("before", "after", "retrained")

#: Columns of :attr:`ClusteringComparison.systems` (the shared output schema of "Forgetting, compared").
SYSTEM_COLUMNS = (
    "domain", "dataset", "data", "system", "claim", "quality", "quality before", "quality after",
    "quality retrained", "forget seconds", "retrain seconds", "forget bytes", "clients retrained", "rounds",
    "sequence seconds", "n_sequence", "exactness",
)  # fmt: skip

#: Columns of :attr:`ClusteringComparison.attacks` (the shared output schema).
ATTACK_COLUMNS = (
    "domain", "dataset", "system", "attack", "stage", "canaries", "AUC", "AUC low", "AUC high",
    "TPR at 0.1% FPR", "TPR at 1.0% FPR", "members", "non-members", "gap", "gap low", "gap high",
)  # fmt: skip

#: p-value below which :func:`exactness_test` says "differs".
EXACTNESS_LEVEL = 0.05

#: SecFC's security setting here: ``t = 1`` colluder and the fewest responders, ``2ℓ + 2t − 1 = 3``. The
#: clustering does not depend on them (SecFC Theorem 1: Lloyd on the quantized data, exactly); the cost does.
SECFC_OPTIONS = {"n_colluders": 1, "n_responders": 3}


@dataclass(frozen=True)
class Scale:
    """How large a comparison is: rows per dataset, shadows, pooled target runs, canaries, requests.

    Parameters
    ----------
    rows : mapping of str to int
        Rows kept of each dataset (:func:`fedbook.mufc.prepare`'s ``max_samples``).
    femnist_pool : int, default=1
        FEMNIST's 28×28 images are average-pooled by this factor (4: 7×7 pixels), which only a budget forces.
    n_shadows : int, default=16
        Shadow models per system and dataset.
    n_targets : int, default=16
        Target runs pooled into one ROC curve, each with its own canaries and rows and its own seed.
    n_candidates : int, default=8
        Candidate canaries per dataset.
    canary_fraction : float, default=0.25
        Share of the candidates a run plants at the forgotten client (a target exactly, a shadow on average).
    canary_weight : float, default=0.02
        Points per canary, as a share of the dataset's rows (at least 3).
    canary_distance : float, default=5.0
        Distance of a canary from the data's mean, in root-mean-square radii of the data.
    n_sequence : int, default=3
        Clients forgotten one after another (the first is the audited client).
    n_exactness : int, default=12
        Pairs of models of ``exactness_test`` for methods without a bitwise coupling (0: not tested).
    n_init : int, default=3
        K-means restarts (server, root, reference loss), capped by the authors' count for FEMNIST.
    n_bootstrap : int, default=1000
        Bootstrap resamples of every interval.
    """

    rows: Mapping[str, int]
    femnist_pool: int = 1
    n_shadows: int = 16
    n_targets: int = 16
    n_candidates: int = 8
    canary_fraction: float = 0.25
    canary_weight: float = 0.02
    canary_distance: float = 5.0
    n_sequence: int = 3
    n_exactness: int = 12
    n_init: int = 3
    n_bootstrap: int = 1000


#: The chapter's scales: "ci" runs in seconds, "default" in about a minute and a half on two cores, "paper" longer.
SCALES: dict[str, Scale] = {
    "ci": Scale(
        rows={"Celltype": 400, "Covtype": 400, "FEMNIST": 150}, femnist_pool=4, n_shadows=8, n_targets=6,
        n_sequence=2, n_exactness=6, n_init=1, n_bootstrap=200,
    ),
    "default": Scale(rows={"Celltype": 1000, "Covtype": 1000, "FEMNIST": 300}, femnist_pool=4),
    "paper": Scale(
        rows={"Celltype": 4000, "Covtype": 4000, "FEMNIST": 1000}, n_shadows=64, n_targets=32, n_candidates=16,
        n_sequence=5, n_exactness=50, n_init=10,
    ),
}  # fmt: skip


# -- the systems ---------------------------------------------------------------------------------------------------


class PlainSecFC(FederatedClusterer):
    """SecFC's clustering computed in the clear: the same labels and revealed centres, bit for bit, in milliseconds.

    SecFC (Li et al. 2022, Theorem 1) runs exact integer Lloyd on ``floor(λ x)`` under Lagrange coded computing,
    with its initialisation drawn as :func:`fedlib.cluster.centralized_lloyd` draws it; so the clustering is that of
    ``centralized_lloyd(X, k, scale=λ, random_state=seed)`` with SecFC's default ``λ``
    (:func:`fedlib.secagg.max_safe_scale`), whatever the partition. The audit trains SecFC's shadow and target
    models with this twin (the coded protocol costs seconds per model); :func:`compare_clustering` checks, on
    every dataset, that the twin and :class:`fedlib.secagg.SecFC` agree bit for bit.

    Parameters
    ----------
    n_clusters : int, default=8
        ``k``.
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None, default=None
        As SecFC's.

    Attributes
    ----------
    labels_ : ndarray of int64, shape (n_samples,)
        The clustering.
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
        ``Σ floor(λ x) / (λ |S_h|)`` per cluster, as :meth:`fedlib.secagg.SecFC.reveal_centers` (NaN if empty).
    federated_loss_ : float
        SecFC's ``federated_loss_``: each point charged to the mean of its cluster.
    scale_ : float
        ``λ``.

    Examples
    --------
    >>> X = np.array([[0.0, 0.0], [0.0, 0.1], [1.0, 1.0], [1.0, 1.1], [0.1, 0.0], [1.1, 1.0]])
    >>> parts = [[0, 1], [2, 3], [4, 5]]
    >>> twin = PlainSecFC(2, random_state=0).fit(X, parts=parts)
    >>> real = SecFC(2, random_state=0, **SECFC_OPTIONS).fit(X, parts=parts)
    >>> bool((twin.labels_ == real.labels_).all()), bool(np.array_equal(twin.cluster_centers_, real.reveal_centers()))
    (True, True)
    """

    _fitted_attribute = "labels_"

    def __init__(self, n_clusters: int = 8, *, random_state: SeedLike = None) -> None:
        self.n_clusters = n_clusters
        self.random_state = random_state

    def fit(self, X, y=None, *, parts=None) -> PlainSecFC:
        """Cluster ``X`` as SecFC would (``parts`` is checked, and does not change the clustering).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            All points.
        y : None
            Ignored.
        parts : list of array-like of int, optional
            The clients' rows.

        Returns
        -------
        PlainSecFC
            ``self``, fitted.
        """
        X, _, k = self._check_fit_data(X, y, parts)
        m, d = X.shape
        scale = max_safe_scale(m, d, data_radius(X), SECFC_PRIME)
        scale = 1.0 if np.isinf(scale) else scale  # every point 0, as SecFC
        self.labels_ = centralized_lloyd(X, k, scale=scale, random_state=self.random_state).labels
        sizes = cluster_sizes(self.labels_, k).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            sums = cluster_sums(to_fixed_point(X, scale), self.labels_, k).astype(np.float64)
            self.cluster_centers_ = sums / (scale * sizes[:, None])
            means = cluster_sums(X, self.labels_, k) / sizes[:, None]
        self.federated_loss_ = kmeans_objective(X, np.nan_to_num(means), labels=self.labels_)
        self.scale_ = scale
        return self


@dataclass(frozen=True)
class Settings:
    """The hyper-parameters a dataset fixes for every system.

    Parameters
    ----------
    n_clusters : int
        K.
    n_init : int
        K-means restarts (MUFC's server, DC-KM's root).
    gamma : float
        MUFC's grid step, fixed in advance: ``1 / sqrt(n)`` of the dataset's rows (a public bound on ``n``, as
        MUFC Thm 4.1 allows). With the default ``gamma=None`` MUFC takes the step from the rows at fit, which
        retraining on fewer rows would not, and its report says ``exact=False``.
    """

    n_clusters: int
    n_init: int
    gamma: float


def mufc(settings: Settings, random_state: SeedLike) -> MUFC:
    """MUFC (Pan et al. 2023) as audited: plaintext aggregation (the secure sum is exact, so the model is the same)."""
    return MUFC(
        settings.n_clusters, gamma=settings.gamma, aggregation="plaintext", server_n_init=settings.n_init,
        random_state=random_state,
    )  # fmt: skip


def dckm(settings: Settings, random_state: SeedLike) -> DCKMeans:
    """DC-KM (Ginart et al. 2019), the clients as leaves."""
    return DCKMeans(settings.n_clusters, root_n_init=settings.n_init, random_state=random_state)


def kfed(settings: Settings, random_state: SeedLike) -> KFED:
    """K-FED (Dennis et al. 2021) with fedlib's defaults (``k' = K``, as MUFC App. M.2)."""
    return KFED(settings.n_clusters, random_state=random_state)


def secfc(settings: Settings, random_state: SeedLike) -> SecFC:
    """SecFC (Li et al. 2022) with :data:`SECFC_OPTIONS`."""
    return SecFC(settings.n_clusters, random_state=random_state, **SECFC_OPTIONS)


def plain_secfc(settings: Settings, random_state: SeedLike) -> PlainSecFC:
    """SecFC's plaintext twin (:class:`PlainSecFC`)."""
    return PlainSecFC(settings.n_clusters, random_state=random_state)


def kmeans_plusplus(settings: Settings, random_state: SeedLike) -> KMeansPlusPlus:
    """K-means++ seeding that unlearns exactly (MUFC Alg. 3), on the pooled rows, with race keys."""
    return KMeansPlusPlus(settings.n_clusters, random_state=random_state)


@dataclass(frozen=True)
class System:
    """A method that forgets, as the comparison runs it.

    Parameters
    ----------
    name : str
        Display name.
    base : callable
        ``(settings, random_state) -> estimator``, unfitted (:class:`Settings`); picklable when ``n_jobs`` is not 1.
    retrain : bool, default=False
        Forget by :class:`fedlib.unlearn.Retrain` of ``base`` (the model is refitted on what remains).
    federated : bool, default=True
        Fit on the clients' partition and forget the client; ``False``: fit on all rows (no clients) and forget
        the client's rows as samples.
    audit_base : callable, optional
        A twin of ``base`` that gives the same model bit for bit, faster, for the shadow and target runs of the
        attack (checked against ``base`` on every dataset); ``None``: ``base`` itself.
    procedure : str, optional
        How the system trains: systems with the same procedure (e.g. MUFC and its retraining) train the same
        model, and share shadow models, the models before forgetting and the retrained references. Default: ``name``.
    """

    name: str
    base: Callable
    retrain: bool = False
    federated: bool = True
    audit_base: Callable | None = None
    procedure: str = ""

    @property
    def training(self) -> str:
        """The training procedure's name (``procedure``, else ``name``)."""
        return self.procedure or self.name

    def estimator(self, settings: Settings, random_state: SeedLike, *, audit: bool = False):
        """The system's estimator, unfitted (``Retrain`` of the base when ``retrain``); the twin when ``audit``."""
        make = self.audit_base if audit and self.audit_base is not None else self.base
        model = make(settings, random_state)
        return Retrain(model) if self.retrain else model

    def retraining(self, settings: Settings, random_state: SeedLike, *, audit: bool = False) -> Retrain:
        """Retraining from scratch of the system's training procedure (what every reference is)."""
        make = self.audit_base if audit and self.audit_base is not None else self.base
        return Retrain(make(settings, random_state))


#: The systems, in the order of the tables.
SYSTEMS: tuple[System, ...] = (
    System("MUFC", mufc, procedure="MUFC"),
    System("DC-KM", dckm),
    System("K-FED retrained", kfed, retrain=True, procedure="K-FED"),
    System("SecFC retrained", secfc, retrain=True, audit_base=plain_secfc, procedure="SecFC"),
    System("K-means++ seeding", kmeans_plusplus, federated=False),
    System("MUFC retrained", mufc, retrain=True, procedure="MUFC"),
)

#: What each system's cost columns count (the report's fields, or what stands in for them).
COST_NOTES = {
    "MUFC": "report.seconds: slowest client plus server refit (aggregation excluded, as MUFC times it); bytes: "
    "the clients' nonzero bins in the clear (index and 64-bit count each), not SCMA's messages",
    "DC-KM": "report.seconds: slowest leaf plus root; bytes not counted (0)",
    "K-FED retrained": "wall time of the refit (K-FED keeps no report), as server seconds; bytes not counted (0)",
    "SecFC retrained": "wall time of the refit (SecFC keeps no report), as server seconds, with t = 1 and 3 "
    "responders; bytes not counted (0)",
    "K-means++ seeding": "report.seconds: the seeding's own time (not federated: no clients, no bytes)",
    "MUFC retrained": "report.seconds of the refit: slowest client plus server; bytes of its plaintext round",
}


# -- the data ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AuditData:
    """One dataset as the audit uses it: the other clients, the forgotten client's rows, the candidate canaries.

    Parameters
    ----------
    name : str
        MUFC's name of the dataset.
    data : str
        What the data really is (the ``data`` column).
    X_rest : ndarray of shape (n_rest, n_features)
        The rows of every client but the forgotten one, in row order: what remains after forgetting.
    parts_rest : list of ndarray of int64
        Their clients' rows in ``X_rest``, in client order (the forgotten client left out).
    X_client : ndarray of shape (n_client, n_features)
        The forgotten client's own rows; a run trains on a random half of them and holds the rest out.
    client : int
        The forgotten client's position among the clients.
    sequence : tuple of int
        Clients forgotten one after another (``client`` first), positions in the full partition.
    n_clusters : int
        K.
    n_init : int
        K-means restarts.
    canaries : Canaries
        The candidate canaries.
    """

    name: str
    data: str
    X_rest: np.ndarray
    parts_rest: list
    X_client: np.ndarray
    client: int
    sequence: tuple[int, ...]
    n_clusters: int
    n_init: int
    canaries: Canaries

    @property
    def n_clients(self) -> int:
        """Clients, the forgotten one included."""
        return len(self.parts_rest) + 1

    @property
    def settings(self) -> Settings:
        """K, the restarts, and MUFC's step ``1 / sqrt(n)`` of the dataset's rows (canaries aside), fixed in advance."""
        return Settings(self.n_clusters, self.n_init, 1.0 / np.sqrt(len(self.X_rest) + len(self.X_client)))

    def run(self, canary_mask, row_mask) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
        """The data of one run: the other clients, then the forgotten client's chosen rows and canaries.

        Parameters
        ----------
        canary_mask : array-like of bool, shape (n_canaries,)
            The canaries planted at the forgotten client.
        row_mask : array-like of bool, shape (n_client,)
            The forgotten client's own rows trained on.

        Returns
        -------
        X : ndarray
            ``X_rest``, then the client's rows, then the canaries' points.
        parts : list of ndarray of int64
            Every client's rows of ``X``, the forgotten client at its position.
        tail : ndarray of int64
            The forgotten client's rows of ``X``.
        """
        planted = self.canaries.X[self.canaries.points(np.asarray(canary_mask, dtype=bool))]
        X = np.vstack([self.X_rest, self.X_client[np.asarray(row_mask, dtype=bool)], planted])
        tail = np.arange(len(self.X_rest), len(X))
        parts = [*self.parts_rest[: self.client], tail, *self.parts_rest[self.client :]]
        return X, parts, tail


def _pool_images(X: np.ndarray, factor: int) -> np.ndarray:
    """Average-pool square images stored as rows (28×28 → (28/factor)², factor 1 leaves them)."""
    if factor == 1:
        return X
    side = round(float(np.sqrt(X.shape[1])))
    small = side // factor
    return X.reshape(len(X), small, factor, small, factor).mean(axis=(2, 4)).reshape(len(X), -1)


def audit_data(name: str, scale: Scale, *, random_state: SeedLike = None) -> AuditData:
    """Prepare a dataset for the audit: MUFC's split (:func:`fedbook.mufc.prepare`), a client, its canaries.

    The forgotten client is drawn among the quarter of the clients holding the most rows (so that the halves of
    its rows, members and held out, are not tiny); the clients forgotten after it in a sequence are drawn among
    the others.

    Parameters
    ----------
    name : str
        One of :data:`DATASETS` (or another of MUFC's).
    scale : Scale
        Rows, FEMNIST's pooling, canaries.
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None, default=None
        Draws the subsample, the split, the client and the canaries.

    Returns
    -------
    AuditData
    """
    root = root_sequence(random_state)
    n_init = problem_n_init(name, scale.n_init)
    problem = prepare(name, max_samples=scale.rows[name], n_init=n_init, random_state=child_sequence(root, 0))
    X = problem.X
    pooled = name == "FEMNIST" and scale.femnist_pool > 1 and X.shape[1] == 784
    if pooled:
        X = _pool_images(X, scale.femnist_pool)
    rng = np.random.default_rng(child_sequence(root, 1))
    sizes = np.array([len(p) for p in problem.parts])
    eligible = np.flatnonzero((sizes >= np.quantile(sizes, 0.75)) & (sizes >= 2))
    client = int(rng.choice(eligible))
    others = np.delete(np.arange(len(sizes)), client)
    later = rng.choice(others, min(scale.n_sequence - 1, others.size - 2), replace=False)
    keep = np.ones(len(X), dtype=bool)
    keep[problem.parts[client]] = False
    position = np.cumsum(keep) - 1
    parts_rest = [position[p] for c, p in enumerate(problem.parts) if c != client]
    group_size = max(3, round(scale.canary_weight * len(X)))
    canaries = outlier_canaries(
        X, scale.n_candidates, group_size=group_size, distance=scale.canary_distance,
        random_state=np.random.default_rng(child_sequence(root, 2)),
    )  # fmt: skip
    return AuditData(
        name=name,
        data=_describe(problem, X, pooled),
        X_rest=X[keep],
        parts_rest=parts_rest,
        X_client=X[problem.parts[client]],
        client=client,
        sequence=(client, *(int(c) for c in later)),
        n_clusters=problem.n_clusters,
        n_init=n_init,
        canaries=canaries,
    )


def _describe(problem, X: np.ndarray, pooled: bool) -> str:
    """The ``data`` column: what the rows are, how many, and what was done to them."""
    kind = {"partial real": "real (a sample)"}.get(problem.kind, problem.kind)
    if problem.dataset.is_standin:
        kind = "stand-in (generated)"
    available = problem.dataset.n_samples
    text = kind + (f", subsampled to {len(X):,} rows" if len(X) < available else f", {len(X):,} rows")
    if pooled:
        text += ", images pooled to 7×7"
    return text + f", {len(problem.parts)} clients"


# -- one model's statistics ----------------------------------------------------------------------------------------


def _quiet(fit: Callable):
    """Run ``fit`` without the warnings small clients and duplicate points raise (FEMNIST's writers), expected here."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*clients hold fewer points than", category=UserWarning)
        warnings.filterwarnings("ignore", message="X has fewer distinct", category=RuntimeWarning)
        return fit()


def _fit(model, X: np.ndarray, parts, federated: bool):
    return _quiet(lambda: model.fit(X, parts=parts) if federated else model.fit(X))


def _forget(model, system: System, parts: list[np.ndarray], client: int) -> UnlearningReport:
    """Forget ``client``: as a client, or (a system without clients) its rows as samples."""
    if system.federated:
        return _quiet(lambda: model.unlearn(clients=[client]))
    return _quiet(lambda: model.unlearn(parts[client]))


def centres(model) -> np.ndarray:
    """The centres a fitted clustering publishes (a retraining's current model; empty clusters dropped).

    Parameters
    ----------
    model : estimator
        MUFC, DC-KM, K-FED (``server_centers_``), K-means++ seeding, :class:`PlainSecFC` (``cluster_centers_``),
        SecFC (``reveal_centers()``), or a :class:`fedlib.unlearn.Retrain` of one.

    Returns
    -------
    ndarray of shape (n_centres, n_features)
    """
    if isinstance(model, Retrain):
        model = model.estimator_
    if hasattr(model, "server_centers_"):
        C = model.server_centers_
    elif hasattr(model, "cluster_centers_"):
        C = model.cluster_centers_
    elif isinstance(model, SecFC):
        C = model.reveal_centers()
    else:
        raise TypeError(f"no centres in {type(model).__name__}.")
    return C[~np.isnan(C).any(axis=1)]


def _loss(model, X: np.ndarray) -> float:
    """The model's loss on the data it holds: ``federated_loss_`` (MUFC Eq. (2)), else each point at its nearest."""
    inner = model.estimator_ if isinstance(model, Retrain) else model
    if hasattr(inner, "federated_loss_"):
        return float(inner.federated_loss_)
    return kmeans_objective(X, centres(model))


def _statistics(model, X: np.ndarray, audit: AuditData) -> dict[str, np.ndarray | float]:
    """What the attacks read from a model: each canary's and each client row's distance and LiRA statistic."""
    C = centres(model)
    groups = audit.canaries.group
    return {
        "canary distances": nearest_center_distances(audit.canaries.X, C, groups=groups),
        "canary scores": nearest_center_scores(audit.canaries.X, C, groups=groups),
        "row distances": nearest_center_distances(audit.X_client, C),
        "row scores": nearest_center_scores(audit.X_client, C),
        "loss": _loss(model, X),
    }


def _canary_statistic(canaries: Canaries, model) -> np.ndarray:
    """``exactness_test``'s statistic: every canary's LiRA statistic (a centre-order-free view of the model)."""
    return nearest_center_scores(canaries.X, centres(model), groups=canaries.group)


def _seed(sequence: np.random.SeedSequence) -> int:
    """An estimator's ``random_state`` from a stream: an int, so that clones and refits draw the same bits."""
    return int(sequence.generate_state(1)[0])


def _rng(root: np.random.SeedSequence, *key: int) -> np.random.Generator:
    return np.random.default_rng(child_sequence(root, *key))


# -- the jobs ------------------------------------------------------------------------------------------------------


def _shadow_job(audit: AuditData, system: System, canary_mask, row_mask, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """One shadow model, trained by the system's procedure: the canaries' and the client rows' statistics."""
    X, parts, _ = audit.run(canary_mask, row_mask)
    model = _fit(system.retraining(audit.settings, seed, audit=True), X, parts, system.federated)
    stats = _statistics(model, X, audit)
    return stats["canary scores"], stats["row scores"]


def _target_job(audit: AuditData, systems: tuple[System, ...], canary_mask, row_mask, seed: int, reference: int):
    """One target run of a training procedure: the model before, each system's model after, the retrained one.

    The model before forgetting is fitted once, as a :class:`fedlib.unlearn.Retrain`: its current model is what
    the procedure trains; a system that forgets by itself gets a copy of that model, a retraining a copy of the
    ``Retrain``, and each forgets through its own ``unlearn``.
    """
    first = systems[0]
    X, parts, _ = audit.run(canary_mask, row_mask)
    settings = audit.settings
    fitted = _fit(first.retraining(settings, seed, audit=True), X, parts, first.federated)
    out = {"before": _statistics(fitted, X, audit), "after": {}}
    for system in systems:
        model = copy.deepcopy(fitted if system.retrain else fitted.estimator_)
        _forget(model, system, parts, audit.client)
        out["after"][system.name] = _statistics(model, audit.X_rest, audit)
    retraining = first.retraining(settings, reference, audit=True)
    retrained = _fit(retraining, audit.X_rest, audit.parts_rest, first.federated)
    out["retrained"] = _statistics(retrained, audit.X_rest, audit)
    return out


def _phi_job(X: np.ndarray, settings: Settings, seed: int) -> float:
    """The best centralised K-means loss of ``X`` (MUFC Eq. (1)): the loss ratio's denominator."""
    model = KMeans(settings.n_clusters, n_init=settings.n_init, random_state=seed)
    return float(_quiet(lambda: model.fit(X).inertia_))


#: Times of forgetting and of retraining are medians of this many runs: at these sizes both take milliseconds.
TIMING_REPEATS = 3


def _cost_job(audit: AuditData, system: System, canary_mask, row_mask, seed: int, n_exactness: int, test_seed: int):
    """The real system, once: forget the client (report, exactness check, twin check), a sequence, a retraining."""
    X, parts, tail = audit.run(canary_mask, row_mask)
    settings = audit.settings
    model = _fit(system.estimator(settings, seed), X, parts, system.federated)
    spares = [copy.deepcopy(model) for _ in range(TIMING_REPEATS - 1)]  # the fitted model, to time forgetting again
    report = _forget(model, system, parts, audit.client)
    exactness = _exactness(model, report, system, audit, X, parts, tail, seed, n_exactness, test_seed)
    twin = None
    if system.audit_base is not None:
        twin_model = _fit(system.estimator(settings, seed, audit=True), X, parts, system.federated)
        _forget(twin_model, system, parts, audit.client)
        twin = _same_clustering(model, twin_model)
    sequence = report.seconds + sum(_forget(model, system, parts, c).seconds for c in audit.sequence[1:])
    forget_seconds = [report.seconds] + [_forget(spare, system, parts, audit.client).seconds for spare in spares]
    retrain_seconds = []
    for _ in range(TIMING_REPEATS):
        start = time.perf_counter()
        retraining = _fit(system.retraining(settings, seed), audit.X_rest, audit.parts_rest, system.federated)
        wall = time.perf_counter() - start
        retrain_seconds.append(retraining.fit_report_.seconds if retraining.fit_report_.seconds > 0 else wall)
    return {
        "claim": "exact" if report.exact else "approximate",
        "forget seconds": float(np.median(forget_seconds)),
        "retrain seconds": float(np.median(retrain_seconds)),
        "forget bytes": int(report.bytes_sent),
        "clients retrained": len(report.clients_retrained),
        "rounds": int(report.rounds),
        "sequence seconds": sequence,
        "n_sequence": len(audit.sequence),
        "exactness": exactness,
        "twin": twin,
    }


def _same_clustering(a, b) -> bool:
    """Whether two fitted clusterings publish the same centres (and labels, where they have them), bit for bit."""
    inner_a = a.estimator_ if isinstance(a, Retrain) else a
    inner_b = b.estimator_ if isinstance(b, Retrain) else b
    same = np.array_equal(centres(a), centres(b))
    if hasattr(inner_a, "labels_") and hasattr(inner_b, "labels_"):
        same = same and np.array_equal(inner_a.labels_, inner_b.labels_)
    return bool(same)


def _centre_distance(a, b) -> float:
    """``model_distance`` of two clusterings' centres, matched one to one (a clustering's centres have no order)."""
    A, B = centres(a), centres(b)
    if A.shape != B.shape:
        return np.inf
    rows, cols = linear_sum_assignment(((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=2))
    return model_distance({"centres": A[rows]}, {"centres": B[cols]})


def _pvalue(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.2f}" if p >= 0.01 else f"p = {p:.3f}"


def _distribution_word(p: float) -> str:
    return f"same distribution ({_pvalue(p)})" if p >= EXACTNESS_LEVEL else f"differs ({_pvalue(p)})"


def _exactness(model, report, system, audit, X, parts, tail, seed, n_exactness: int, test_seed: int) -> str:
    """The ``exactness`` word: ``check_bitwise`` where the method couples to retraining, else ``exactness_test``.

    An approximate report is measured by its relative distance to the retraining with the same seed
    (``model_distance``). Arrays a bitwise check leaves out (MUFC's server centres) are tested in distribution.
    """
    settings = audit.settings
    if not report.exact:
        reference = _fit(system.retraining(settings, seed), audit.X_rest, audit.parts_rest, system.federated)
        return f"approximate: {_centre_distance(model, reference):.2g} from retrained"
    request = {"clients": [audit.client]} if system.federated else {"samples": tail}
    try:
        check = _quiet(lambda: check_bitwise(model, **request))
    except NotImplementedError:
        check = None
    if check is not None and not check.identical:
        return f"differs bit for bit ({', '.join(check.differing)})"
    if check is not None and not check.unchecked:
        return "bit-identical"
    if n_exactness < 2:
        return "bit-identical (" + ", ".join(check.unchecked) + " not tested)" if check is not None else "not tested"
    test = _quiet(
        lambda: exactness_test(
            partial(system.estimator, settings), X, parts=parts if system.federated else None, **request,
            statistic=partial(_canary_statistic, audit.canaries), n_runs=n_exactness, random_state=test_seed, n_jobs=1,
        )
    )  # fmt: skip
    word = _distribution_word(test.pvalue)
    return word if check is None else f"bit-identical; {', '.join(check.unchecked)}: {word}"


# -- the comparison ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClusteringComparison:
    """Every clustering system on every dataset: costs, exactness, and the attacks before, after and retrained.

    Attributes
    ----------
    scale : str
        The scale's name (or "custom").
    seed : int
        The seed everything derives from.
    systems : pandas.DataFrame
        One row per (dataset, system), columns :data:`SYSTEM_COLUMNS`. The loss ratios are means over the target
        runs, each on the data its model holds: before forgetting, the other clients, the forgotten client's half
        and its canaries (a method whose centres do not follow the canaries pays for them here); after and
        retrained, the other clients. The costs and the exactness come from one run of the real system.
    attacks : pandas.DataFrame
        One row per (dataset, system, attack, stage, canaries), columns :data:`ATTACK_COLUMNS`.
    results : dict
        ``(dataset, system, attack, stage, canaries) -> AttackResult``: the scores behind every row (ROC curves).
    datasets : pandas.DataFrame
        Per dataset: rows, clients, K, the forgotten client and its rows, canaries and their points.
    checks : pandas.DataFrame
        Per (dataset, system) with a twin: whether the twin and the real system agreed bit for bit.
    notes : pandas.DataFrame
        Per system: what its seconds and bytes count.
    seconds : float
        Wall time of the whole comparison.
    """

    scale: str
    seed: int
    systems: pd.DataFrame
    attacks: pd.DataFrame
    results: dict
    datasets: pd.DataFrame
    checks: pd.DataFrame
    notes: pd.DataFrame
    seconds: float

    def roc(self, dataset: str, system: str, attack: str = "LiRA online", *, canaries: bool = True) -> pd.DataFrame:
        """ROC curves of one attack at every stage, long form (``stage``, ``FPR``, ``TPR``), for a figure.

        Parameters
        ----------
        dataset, system, attack : str
            As in :attr:`attacks`.
        canaries : bool, default=True
            The canary attack, or the control on ordinary rows.

        Returns
        -------
        pandas.DataFrame
        """
        frames = []
        for stage in STAGES:
            result: AttackResult = self.results[(dataset, system, attack, stage, canaries)]
            truth = np.arange(result.scores.size) < result.n_members
            fpr, tpr, _ = roc_curve(truth, result.scores)
            frames.append(pd.DataFrame({"stage": stage, "FPR": fpr, "TPR": tpr}))
        return pd.concat(frames, ignore_index=True)


def compare_clustering(
    scale: str | Scale = "default",
    seed: int = 0,
    *,
    n_jobs: int = 1,
    datasets=DATASETS,
    systems: tuple[System, ...] = SYSTEMS,
) -> ClusteringComparison:
    """Run the clustering half of "Forgetting, compared": every system on every dataset, audited from the outside.

    Per dataset (:func:`audit_data`): shadow models of every training procedure (``n_shadows``, each planting a
    balanced random share of the candidate canaries and half of the client's rows), ``n_targets`` target runs (each
    with its own canaries, rows and seed: the model before forgetting, each system's model after, and a model
    retrained from scratch without the client with an independent seed), and, once per system, the real system's
    costs and exactness. Then the attacks (:data:`ATTACKS`) on the canaries and, as a control, on the client's
    rows, pooled over the target runs, and the gap "after − retrained" of each.

    Parameters
    ----------
    scale : str or Scale, default="default"
        A key of :data:`SCALES`, or a :class:`Scale`.
    seed : int, default=0
        Everything derives from it (``child_sequence`` per job).
    n_jobs : int, default=1
        joblib workers; the results (all but the seconds) do not depend on it.
    datasets : sequence of str, default=DATASETS
        Datasets to run.
    systems : tuple of System, default=SYSTEMS
        Systems to compare.

    Returns
    -------
    ClusteringComparison
    """
    start = time.perf_counter()
    name, scale = (scale, SCALES[scale]) if isinstance(scale, str) else ("custom", scale)
    root = root_sequence(seed)
    datasets = list(datasets)
    audits = [audit_data(d, scale, random_state=child_sequence(root, 0, i)) for i, d in enumerate(datasets)]
    procedures: dict[str, tuple[System, ...]] = {}
    for system in systems:
        procedures[system.training] = (*procedures.get(system.training, ()), system)
    plans = [_plan(audit, scale, child_sequence(root, 1, i)) for i, audit in enumerate(audits)]
    jobs, keys, shadow_masks = [], [], {}
    for i, (audit, plan) in enumerate(zip(audits, plans, strict=True)):
        for training, members in procedures.items():
            key = zlib.crc32(training.encode())
            shadow_root = child_sequence(root, 2, i, key)
            masks = shadow_masks[(i, training)] = _shadow_masks(audit, scale, shadow_root)
            for j, (canary_mask, row_mask) in enumerate(zip(*masks, strict=True)):
                seed_j = _seed(child_sequence(shadow_root, 1, j))
                jobs.append(delayed(_shadow_job)(audit, members[0], canary_mask, row_mask, seed_j))
                keys.append(("shadow", i, training, j))
            for t in range(scale.n_targets):
                jobs.append(
                    delayed(_target_job)(
                        audit, members, plan["canaries"][t], plan["rows"][t], plan["seeds"][t], plan["references"][t]
                    )
                )
                keys.append(("target", i, training, t))
        for t in range(scale.n_targets):
            X, _, _ = audit.run(plan["canaries"][t], plan["rows"][t])
            jobs.append(delayed(_phi_job)(X, audit.settings, plan["phi seeds"][t]))
            keys.append(("phi", i, t))
        jobs.append(delayed(_phi_job)(audit.X_rest, audit.settings, plan["phi seeds"][-1]))
        keys.append(("phi rest", i))
        for system in systems:
            cost_root = child_sequence(root, 3, i, zlib.crc32(system.name.encode()))
            jobs.append(
                delayed(_cost_job)(
                    audit, system, plan["canaries"][0], plan["rows"][0], _seed(child_sequence(cost_root, 0)),
                    scale.n_exactness, _seed(child_sequence(cost_root, 1)),
                )
            )  # fmt: skip
            keys.append(("cost", i, system.name))
    outputs = dict(zip(keys, run_jobs(jobs, n_jobs=n_jobs), strict=True))
    system_rows, attack_rows, results, dataset_rows, checks = [], [], {}, [], []
    for i, (audit, plan) in enumerate(zip(audits, plans, strict=True)):
        phi = np.array([outputs[("phi", i, t)] for t in range(scale.n_targets)])
        phi_rest = outputs[("phi rest", i)]
        boot_root = child_sequence(root, 4, i)
        for training, members in procedures.items():
            masks = shadow_masks[(i, training)]
            shadows = [outputs[("shadow", i, training, j)] for j in range(scale.n_shadows)]
            canary_shadows = ShadowScores(np.array([s[0] for s in shadows]), masks[0])
            row_shadows = ShadowScores(np.array([s[1] for s in shadows]), masks[1])
            targets = [outputs[("target", i, training, t)] for t in range(scale.n_targets)]
            for system in members:
                stages = {
                    "before": [t["before"] for t in targets],
                    "after": [t["after"][system.name] for t in targets],
                    "retrained": [t["retrained"] for t in targets],
                }
                cost = outputs[("cost", i, system.name)]
                system_rows.append(_system_row(audit, system, stages, phi, phi_rest, cost))
                if cost["twin"] is not None:
                    check = "the audit's twin gives the real system's model, bit for bit"
                    checks.append({"dataset": audit.name, "system": system.name, "check": check,
                                   "passed": cost["twin"]})  # fmt: skip
                for canaries, shadow_scores, member in (
                    (True, canary_shadows, plan["canaries"]),
                    (False, row_shadows, plan["rows"]),
                ):
                    rows, found = _attack_rows(audit, system, stages, shadow_scores, member, canaries, scale, boot_root)
                    attack_rows.extend(rows)
                    results.update(found)
        dataset_rows.append(
            {
                "dataset": audit.name,
                "data": audit.data,
                "rows": len(audit.X_rest) + len(audit.X_client),
                "features": audit.X_rest.shape[1],
                "clients": audit.n_clients,
                "K": audit.n_clusters,
                "forgotten client": audit.client,
                "its rows": len(audit.X_client),
                "rows trained on per run": int(plan["rows"][0].sum()),
                "candidate canaries": audit.canaries.n_canaries,
                "canaries per run": int(plan["canaries"][0].sum()),
                "points per canary": int(np.bincount(audit.canaries.group)[0]),
                "sequence": audit.sequence,
            }
        )
    order = {system.name: rank for rank, system in enumerate(systems)}
    system_rows.sort(key=lambda row: (datasets.index(row["dataset"]), order[row["system"]]))
    attack_rows.sort(key=lambda row: (datasets.index(row["dataset"]), order[row["system"]], not row["canaries"]))
    notes = pd.DataFrame(
        [{"system": s.name, "cost": COST_NOTES.get(s.name, "the report's fields")} for s in systems]
    ).set_index("system")
    return ClusteringComparison(
        scale=name,
        seed=seed,
        systems=pd.DataFrame(system_rows, columns=list(SYSTEM_COLUMNS)),
        attacks=pd.DataFrame(attack_rows, columns=list(ATTACK_COLUMNS)),
        results=results,
        datasets=pd.DataFrame(dataset_rows).set_index("dataset"),
        checks=pd.DataFrame(checks, columns=["dataset", "system", "check", "passed"]),
        notes=notes,
        seconds=time.perf_counter() - start,
    )


def balanced_design(n_runs: int, n_candidates: int, fraction: float, *, random_state: SeedLike = None) -> np.ndarray:
    """Which candidates each target run holds: the same number in every run, and each candidate in as many runs.

    Pooling runs into one ROC curve (Carlini et al. 2022) compares members with non-members across candidates;
    if some candidate, easier to spot than the others, were a member more often, the pooled AUC would move
    without any memorisation. Run ``r`` holds the ``m = ⌊fraction · n_candidates⌋`` candidates of a window
    starting at offset ``⌊r · n_candidates / n_runs⌋`` of a random circular order, the runs shuffled: every run
    holds ``m``, and each candidate lies in ``m · n_runs / n_candidates`` runs (within one when that is not whole).

    Parameters
    ----------
    n_runs : int
        Target runs.
    n_candidates : int
        Candidates.
    fraction : float
        Share of the candidates a run holds; ``m`` must lie in ``[1, n_candidates − 1]``.
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None, default=None
        Draws the order of the candidates and of the runs.

    Returns
    -------
    ndarray of bool, shape (n_runs, n_candidates)

    Raises
    ------
    ValueError
        If a run would hold no candidate, or all of them.

    Examples
    --------
    >>> design = balanced_design(16, 8, 0.25, random_state=0)
    >>> design.sum(axis=1).tolist() == [2] * 16, design.sum(axis=0).tolist() == [4] * 8
    (True, True)
    """
    m = int(np.floor(fraction * n_candidates + 1e-9))
    if not 1 <= m <= n_candidates - 1:
        raise ValueError(f"fraction={fraction} of {n_candidates} candidates gives {m} per run; need 1 to n - 1.")
    rng = check_random_state(random_state)
    order = rng.permutation(n_candidates)
    offsets = np.arange(n_runs) * n_candidates // n_runs
    windows = (offsets[:, None] + np.arange(m)[None, :]) % n_candidates
    design = np.zeros((n_runs, n_candidates), dtype=bool)
    np.put_along_axis(design, order[windows], True, axis=1)
    return design[rng.permutation(n_runs)]


def _plan(audit: AuditData, scale: Scale, root: np.random.SeedSequence) -> dict:
    """The target runs of a dataset, the same for every system: canaries and rows each trains on, and seeds.

    A target plants ``canary_fraction`` of the candidates and trains on half of the client's rows
    (:func:`balanced_design`), and has its own seed.
    """
    T = scale.n_targets
    n_canaries = audit.canaries.n_canaries
    canaries = balanced_design(T, n_canaries, scale.canary_fraction, random_state=_rng(root, 0))
    rows = balanced_design(T, len(audit.X_client), 0.5, random_state=_rng(root, 1))
    return {
        "canaries": canaries,
        "rows": rows,
        "seeds": [_seed(child_sequence(root, 2, t)) for t in range(T)],
        "references": [_seed(child_sequence(root, 3, t)) for t in range(T)],
        "phi seeds": [_seed(child_sequence(root, 4, t)) for t in range(T + 1)],
    }


def _shadow_masks(audit: AuditData, scale: Scale, root: np.random.SeedSequence) -> tuple[np.ndarray, np.ndarray]:
    """Which canaries and client rows each shadow trains on: as many as a target, each candidate in as many shadows.

    Like :func:`fedlib.audit.balanced_masks` (every candidate in about ``fraction`` of the shadows, which LiRA's
    per-candidate Gaussians need), and every shadow holds exactly as many as a target (:func:`balanced_design`), so
    that the forgotten client is never empty.
    """
    S = scale.n_shadows
    canaries = balanced_design(S, audit.canaries.n_canaries, scale.canary_fraction, random_state=_rng(root, 0))
    rows = balanced_design(S, len(audit.X_client), 0.5, random_state=_rng(root, 2))
    return canaries, rows


def _system_row(audit: AuditData, system: System, stages: dict, phi: np.ndarray, phi_rest: float, cost: dict) -> dict:
    """One row of :attr:`ClusteringComparison.systems`: loss ratios averaged over the target runs, then the costs."""
    before = np.mean(np.array([s["loss"] for s in stages["before"]]) / phi)
    return {
        "domain": "clustering",
        "dataset": audit.name,
        "data": audit.data,
        "system": system.name,
        "claim": cost["claim"],
        "quality": "loss ratio",
        "quality before": float(before),
        "quality after": float(np.mean([s["loss"] for s in stages["after"]]) / phi_rest),
        "quality retrained": float(np.mean([s["loss"] for s in stages["retrained"]]) / phi_rest),
        **{column: cost[column] for column in SYSTEM_COLUMNS[9:]},
    }


def _attack_rows(audit, system, stages, shadows, member, canaries: bool, scale: Scale, root) -> tuple[list, dict]:
    """The three attacks at the three stages, pooled over the target runs, and the gap after − retrained."""
    kind = "canary" if canaries else "row"
    member = np.asarray(member)
    runs = np.broadcast_to(np.arange(member.shape[0])[:, None], member.shape) if member.ndim == 2 else None
    rows, found = [], {}
    for a, attack in enumerate(ATTACKS):
        by_stage = {}
        for stage in STAGES:
            distances = np.array([s[f"{kind} distances"] for s in stages[stage]])
            scores = np.array([s[f"{kind} scores"] for s in stages[stage]])
            options = {
                "n_bootstrap": scale.n_bootstrap, "random_state": child_sequence(root, int(canaries), a, 0),
                "groups": runs,  # resample whole target runs: the intervals cover run-to-run variation
            }  # fmt: skip
            if attack == "loss threshold":
                result = loss_attack(distances, member, **options)
            else:
                result = lira_attack(scores, shadows, member, online=attack == "LiRA online", **options)
            by_stage[stage] = result
            found[(audit.name, system.name, attack, stage, canaries)] = result
        gap = auc_gap(
            by_stage["after"], by_stage["retrained"], n_bootstrap=scale.n_bootstrap, confidence=GAP_CONFIDENCE,
            random_state=child_sequence(root, int(canaries), a, 1),
        )  # fmt: skip
        for stage in STAGES:
            row = {"domain": "clustering", "dataset": audit.name, "system": system.name, **by_stage[stage].as_row()}
            row.update({"stage": stage, "canaries": canaries})
            is_after = stage == "after"
            row.update(
                {
                    "gap": gap.gap if is_after else np.nan,
                    "gap low": gap.interval[0] if is_after else np.nan,
                    "gap high": gap.interval[1] if is_after else np.nan,
                }
            )
            rows.append(row)
    return rows, found
