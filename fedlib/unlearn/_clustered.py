"""Clustered federated unlearning with secure aggregation inside each cluster (Liu et al., TDSC 2025).

The ``N`` users are split at random into ``s = ⌊N/k⌋`` clusters (Alg. 1 lines
2-3, :func:`assign_clusters`); each cluster trains its own model with FedAvg,
every round summed by SecAgg(+) among the cluster's users only
(:class:`fedlib.secagg.SecureAggregator`); a query is answered by the
majority vote of the cluster models (Fig. 1, :func:`majority_vote`). To
unlearn users, only their clusters are retrained, from a fresh initialisation
and without them, for as many rounds as the first training; the other
cluster models do not change by a single bit. This is SISA's exact
unlearning (Bourtoule et al. 2021) with one shard per cluster of users.

The paper leaves a few things open; the choices made here:

- retraining "from scratch" re-initialises the cluster model from a fresh
  seed (the cluster's generation counter) and runs the same number of rounds;
- the Shamir threshold of a cluster stays ``t = ⌈ξ k_i⌉`` of the cluster as it
  was formed, as Requirement 2 counts the survivors against it; the masking
  graph is rebuilt over the remaining users;
- Requirement 4 is enforced at run time: a request that would take a cluster
  past ``⌊ζ k_i⌋`` unlearned users, or the system past ``max_requests``, is
  refused before anything changes (:class:`UnlearningCapacityError`);
- vote ties are broken by summed probabilities, then the lowest label.

With ``cluster_size = N`` the same class is plain FedAvg over all users with
full retraining per request, the baseline Liu et al. do not run; with
``secure=False`` it is clustered unlearning without secure aggregation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from fedlib._typing import SeedLike
from fedlib._validation import check_option, check_scalar
from fedlib._validation import child_sequence as _child
from fedlib.exceptions import SecAggAbort, UnlearningCapacityError
from fedlib.learn import (
    FederatedTrainer,
    LocalSGD,
    PlainSum,
    make_model,
    predict_proba,
    root_sequence,
)
from fedlib.secagg import SecureAggregator
from fedlib.unlearn._pargen import LEFTOVERS, _ceil_times, _floor_times, assign_clusters
from fedlib.unlearn._voting import VoteResult, majority_vote


@dataclass(frozen=True)
class ClusteredUnlearningReport:
    """What one unlearning call (one batch, or one request of a sequence) cost.

    Parameters
    ----------
    requested : ndarray of int64
        The unlearned users.
    clusters : ndarray of int64
        The clusters retrained (each once).
    users_retrained : int
        Users who took part in retraining: the remaining members of those clusters.
    rounds : int
        FedAvg rounds run per retrained cluster.
    aborted_rounds : int
        Retraining rounds whose secure aggregation aborted (too many dropouts).
    train_seconds : float
        Local training in the retraining, all clusters.
    aggregate_seconds : float
        Aggregation in the retraining, all clusters (secure: every party's compute).
    bytes_sent : int
        Users' uploads during the aggregations of the retraining.
    accuracy : float or None
        Majority-vote test accuracy after the call, if there is test data.
    curve : list of dict
        Per retraining round (every ``eval_every``): ``round``, ``vote accuracy``,
        ``mean cluster accuracy``, ``tie rate`` (empty without test data).
    """

    requested: np.ndarray
    clusters: np.ndarray
    users_retrained: int
    rounds: int
    aborted_rounds: int
    train_seconds: float
    aggregate_seconds: float
    bytes_sent: int
    accuracy: float | None = None
    curve: list[dict] = field(default_factory=list)

    def as_row(self) -> dict:
        """The report as scalars for a table.

        Returns
        -------
        dict
            ``requests``, ``clusters retrained``, ``users retrained``, ``rounds``,
            ``aborted rounds``, ``train seconds``, ``aggregate seconds``,
            ``MB sent`` and ``accuracy`` (NaN without test data).
        """
        return {
            "requests": int(self.requested.size),
            "clusters retrained": int(self.clusters.size),
            "users retrained": self.users_retrained,
            "rounds": self.rounds,
            "aborted rounds": self.aborted_rounds,
            "train seconds": self.train_seconds,
            "aggregate seconds": self.aggregate_seconds,
            "MB sent": self.bytes_sent / 1e6,
            "accuracy": np.nan if self.accuracy is None else self.accuracy,
        }


#: Stream keys under the root seed: the clustering, and cluster i's model in generation g is (_CLUSTER, i, g).
_CLUSTERING, _CLUSTER = 0, 1


class ClusteredUnlearning:
    """Clustered federated learning and exact unlearning with secure aggregation per cluster (Liu et al. 2025).

    Parameters
    ----------
    model : str or torch.nn.Module
        A :data:`fedlib.learn.MODELS` name or an architecture without buffers.
    X : ndarray of float, shape (n_samples, ...)
        All users' examples.
    y : array-like of int, shape (n_samples,)
        Labels.
    users : sequence of array-like of int
        User ``u``'s rows of ``X`` (user ids are positions in this list).
    cluster_size : int
        ``k``; ``s = ⌊N/k⌋`` clusters (e.g. :func:`pargen`'s ``k``). ``k = N`` is one global model.
    rounds : int
        FedAvg rounds ``R`` of the first training and of every retraining.
    local : fedlib.learn.LocalSGD, optional
        Local training; default ``LocalSGD()``.
    secure : bool, default=True
        Sum each round with :class:`fedlib.secagg.SecureAggregator`; ``False``: in the clear.
    degree : int or None, default=None
        Harary degree ``m`` of the masking graphs (e.g. :func:`harary_degree`); ``None`` is the complete graph.
    threshold_rate : float, default=0.7
        ``ξ``.
    share_holders : {"all", "neighbors"}, default="all"
        ``"all"``: Liu et al.'s t-out-of-k sharing in the cluster, ``t = ⌈ξ k_i⌉``
        fixed at formation; ``"neighbors"``: SecAgg+ with ``t = ⌈ξ m⌉``.
    clip : float, default=1.0
        Updates are clipped to ``[-clip, clip]`` per coordinate before encoding (secure only).
    removal_rate : float or None, default=None
        ``ζ``: cluster ``i`` may lose at most ``⌊ζ k_i⌋`` users (Requirement 4); ``None``: no cap.
    max_requests : int or None, default=None
        Most users the system may unlearn in total (``τ``); ``None``: no cap.
    dropout : float, default=0.0
        Each user drops out of each round with this probability (``δ`` of the simulation).
    leftovers : {"random", "round_robin"}, default="random"
        How the ``N − sk`` leftover users join clusters (Alg. 1 line 3).
    test_data : (X_test, y_test), optional
        Evaluated every ``eval_every`` rounds of training and retraining.
    eval_every : int, default=1
        Rounds between evaluations.
    method : {"auto", "vmap", "loop"}, default="auto"
        Local-training path (:func:`fedlib.learn.train_clients`).
    random_state : int, numpy.random.SeedSequence or None, default=0
        Root seed: the clustering, every cluster's initial models, orders, dropouts and keys.

    Attributes
    ----------
    clusters_ : list of ndarray of int64
        The user ids of each cluster as formed.
    members_ : list of ndarray of int64
        The current (not unlearned) users of each cluster.
    trainers_ : list of fedlib.learn.FederatedTrainer
        One FedAvg trainer per cluster.
    generation_ : ndarray of int64
        How often each cluster model was (re)initialised: 0 before any unlearning.
    unlearned_ : list of int
        Unlearned users, in request order.
    history_ : list of dict
        Per evaluated round of the first training: ``round``, ``vote accuracy``,
        ``mean cluster accuracy``, ``min cluster accuracy``, ``max cluster accuracy``, ``tie rate``.
    round_ : int
        Rounds run by :meth:`run` (and :meth:`fit`) so far.

    Raises
    ------
    ValueError
        For bad options, or a cluster too small for secure aggregation (fewer than 3 users).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.random((120, 8), dtype=np.float32), rng.integers(0, 2, 120)
    >>> users = np.array_split(np.arange(120), 12)
    >>> fu = ClusteredUnlearning("softmax", X, y, users, cluster_size=6, rounds=2, threshold_rate=0.5).fit()
    >>> len(fu.clusters_), fu.thresholds, fu.generation_.tolist()
    (2, (3, 3), [0, 0])
    >>> report = fu.unlearn([5])
    >>> report.clusters.size, report.users_retrained, int(fu.generation_.sum())
    (1, 5, 1)
    """

    def __init__(
        self,
        model,
        X,
        y,
        users: Sequence,
        *,
        cluster_size: int,
        rounds: int,
        local: LocalSGD | None = None,
        secure: bool = True,
        degree: int | None = None,
        threshold_rate: float = 0.7,
        share_holders: str = "all",
        clip: float = 1.0,
        removal_rate: float | None = None,
        max_requests: int | None = None,
        dropout: float = 0.0,
        leftovers: str = "random",
        test_data: tuple | None = None,
        eval_every: int = 1,
        method: str = "auto",
        random_state: SeedLike = 0,
    ) -> None:
        self.users = [np.asarray(rows, dtype=np.int64).ravel() for rows in users]
        n_users = len(self.users)
        self.cluster_size = check_scalar(cluster_size, "cluster_size (k)", "int", min_val=1, max_val=max(n_users, 1))
        self.rounds = check_scalar(rounds, "rounds (R)", "int", min_val=1)
        self.secure = bool(secure)
        self.degree = None if degree is None else check_scalar(degree, "degree (m)", "int", min_val=2)
        self.threshold_rate = check_scalar(
            threshold_rate, "threshold_rate (ξ)", "real", min_val=0.0, max_val=1.0, include_min=False
        )
        self.share_holders = check_option(share_holders, "share_holders", ("all", "neighbors"))
        self.clip = check_scalar(clip, "clip", "real", min_val=0.0, include_min=False)
        self.removal_rate = (
            None
            if removal_rate is None
            else check_scalar(removal_rate, "removal_rate (ζ)", "real", min_val=0.0, max_val=1.0, include_max=False)
        )
        self.max_requests = (
            None if max_requests is None else check_scalar(max_requests, "max_requests", "int", min_val=0)
        )
        self.dropout = check_scalar(dropout, "dropout", "real", min_val=0.0, max_val=1.0, include_max=False)
        self.leftovers = check_option(leftovers, "leftovers", LEFTOVERS)
        self.eval_every = check_scalar(eval_every, "eval_every", "int", min_val=1)
        self._test = test_data
        self._root = root_sequence(random_state)
        self.clusters_ = assign_clusters(
            n_users, self.cluster_size, leftovers=self.leftovers,
            random_state=np.random.default_rng(_child(self._root, _CLUSTERING)),
        )  # fmt: skip
        if self.secure and min(c.size for c in self.clusters_) < 3:
            raise ValueError(
                f"secure aggregation needs at least 3 users per cluster; cluster_size={self.cluster_size} gives "
                f"a cluster of {min(c.size for c in self.clusters_)}."
            )
        self.members_ = [c.copy() for c in self.clusters_]
        self.generation_ = np.zeros(len(self.clusters_), dtype=np.int64)
        self.unlearned_: list[int] = []
        self._cluster_of = np.empty(n_users, dtype=np.int64)
        for i, members in enumerate(self.clusters_):
            self._cluster_of[members] = i
        local = LocalSGD() if local is None else local
        if isinstance(model, str):
            labels = [np.max(y)] if test_data is None else [np.max(y), np.max(test_data[1])]
            n_classes = max(int(max(labels)) + 1, 2)
            model = make_model(model, n_classes, seed=0, input_shape=tuple(np.shape(X)[1:]))
        self.model_ = model
        self._X, self._y, self._local, self._method = X, y, local, method
        self.trainers_ = [self.fresh_trainer(i) for i in range(self.n_clusters)]
        self.history_: list[dict] = []
        self.round_ = 0
        self._proba_cache: dict[int, tuple[tuple[int, int], np.ndarray]] = {}

    # -- configuration ------------------------------------------------------------------------------------------------

    @property
    def n_users(self) -> int:
        """``N``."""
        return len(self.users)

    @property
    def n_clusters(self) -> int:
        """``s = ⌊N/k⌋``."""
        return len(self.clusters_)

    @property
    def thresholds(self) -> tuple[int, ...]:
        """Each cluster's Shamir threshold with ``share_holders="all"``: ``t_i = ⌈ξ k_i⌉`` of the cluster as formed."""
        return tuple(max(2, _ceil_times(self.threshold_rate, c.size)) for c in self.clusters_)

    @property
    def caps(self) -> tuple[int, ...] | None:
        """``q_i = ⌊ζ k_i⌋``: the most users cluster ``i`` may lose (None without ``removal_rate``)."""
        if self.removal_rate is None:
            return None
        return tuple(_floor_times(self.removal_rate, c.size) for c in self.clusters_)

    def _aggregator(self, i: int):
        if not self.secure:
            return PlainSum()
        return SecureAggregator(
            degree=self.degree, threshold_rate=self.threshold_rate, clip=self.clip, share_holders=self.share_holders,
            threshold=self.thresholds[i] if self.share_holders == "all" else None,
        )  # fmt: skip

    def fresh_trainer(self, cluster: int, X=None) -> FederatedTrainer:
        """A new, untrained FedAvg trainer of one cluster: its current users, its current generation's seed.

        This is what "retraining from scratch" means here: after :meth:`unlearn`,
        ``fresh_trainer(i).run(rounds)`` reproduces ``trainers_[i]`` bit for bit.
        Passing an ``X`` whose unlearned users' rows are replaced (e.g. by NaN)
        checks that retraining never reads them.

        Parameters
        ----------
        cluster : int
            The cluster ``i``.
        X : ndarray of float, optional
            Examples to train on instead of the ones given at construction (same shape).

        Returns
        -------
        fedlib.learn.FederatedTrainer
            At round 0.
        """
        i = check_scalar(cluster, "cluster", "int", min_val=0, max_val=self.n_clusters - 1)
        members = self.members_[i]
        return FederatedTrainer(
            self.model_,
            self._X if X is None else X,
            self._y,
            [self.users[u] for u in members],
            local=self._local,
            aggregator=self._aggregator(i),
            dropout=self.dropout,
            client_ids=members,
            abort_on=(SecAggAbort,),
            method=self._method,
            random_state=_child(self._root, _CLUSTER, i, int(self.generation_[i])),
        )

    # -- training and evaluation --------------------------------------------------------------------------------------

    def fit(self) -> ClusteredUnlearning:
        """Train every cluster model until it has run ``rounds`` rounds, all clusters in step.

        Returns
        -------
        ClusteredUnlearning
            ``self``.
        """
        return self.run(self.rounds - min(t.round_ for t in self.trainers_))

    def run(self, n_rounds: int) -> ClusteredUnlearning:
        """Run ``n_rounds`` more rounds of every cluster that has not yet run ``rounds`` rounds.

        Training can be interleaved with unlearning: a cluster reset by
        ``unlearn(..., retrain=False)`` starts again from round 0 and catches up
        here while the others finish (users leaving during training).
        Evaluations go to :attr:`history_`, numbered by the system's round.

        Parameters
        ----------
        n_rounds : int
            Rounds to run (0 is allowed).

        Returns
        -------
        ClusteredUnlearning
            ``self``.
        """
        n_rounds = check_scalar(n_rounds, "n_rounds", "int", min_val=0)
        for _ in range(n_rounds):
            behind = [i for i, t in enumerate(self.trainers_) if t.round_ < self.rounds]
            if not behind:
                break
            for i in behind:
                self.trainers_[i].step()
            self.round_ += 1
            if self._test is not None and self.round_ % self.eval_every == 0:
                self.history_.append({"round": self.round_, **self.evaluate()})
        return self

    def _train(self, clusters) -> list[dict]:
        """Retrain some clusters from round 0 to ``rounds``, the others fixed; the evaluation curve."""
        clusters = list(clusters)
        curve = []
        for r in range(1, self.rounds + 1):
            for i in clusters:
                self.trainers_[i].step()
            if self._test is not None and r % self.eval_every == 0:
                curve.append({"round": r, **self.evaluate()})
        return curve

    def cluster_probabilities(self, X) -> np.ndarray:
        """Every cluster model's class probabilities on ``X``.

        Parameters
        ----------
        X : ndarray of float, shape (n, ...)
            Queries.

        Returns
        -------
        ndarray of float32, shape (n_clusters, n, n_classes)
            Softmax outputs.
        """
        stack = np.stack([t.params_ for t in self.trainers_])
        return predict_proba(self.model_, X, parameters=stack)

    def _test_probabilities(self) -> np.ndarray:
        """Test-set probabilities per cluster, recomputed only for clusters whose model changed."""
        X_test = self._test[0]
        out = []
        for i, trainer in enumerate(self.trainers_):
            key = (int(self.generation_[i]), trainer.round_)
            cached = self._proba_cache.get(i)
            if cached is None or cached[0] != key:
                cached = (key, predict_proba(self.model_, X_test, parameters=trainer.params_))
                self._proba_cache[i] = cached
            out.append(cached[1])
        return np.stack(out)

    def vote(self, X) -> VoteResult:
        """The majority vote of the cluster models on ``X`` (ties: summed probabilities, then lowest label).

        Parameters
        ----------
        X : ndarray of float, shape (n, ...)
            Queries.

        Returns
        -------
        VoteResult
            Labels, ties and vote counts.
        """
        return majority_vote(self.cluster_probabilities(X))

    def predict(self, X) -> np.ndarray:
        """Labels by majority vote.

        Parameters
        ----------
        X : ndarray of float, shape (n, ...)
            Queries.

        Returns
        -------
        ndarray of int64, shape (n,)
            Predicted labels.
        """
        return self.vote(X).labels

    def evaluate(self, X=None, y=None) -> dict[str, float]:
        """Test accuracy of the vote and of the single cluster models.

        Parameters
        ----------
        X : ndarray of float, optional
            Queries; default the test data given at construction.
        y : array-like of int, optional
            Labels, with ``X``.

        Returns
        -------
        dict of str to float
            ``vote accuracy``, ``mean cluster accuracy``, ``min cluster accuracy``,
            ``max cluster accuracy``, ``tie rate``.

        Raises
        ------
        ValueError
            Without data to evaluate on.
        """
        if X is None and y is None:
            if self._test is None:
                raise ValueError("no test data: pass X and y, or give test_data at construction.")
            P, y = self._test_probabilities(), self._test[1]
        elif X is None or y is None:
            raise ValueError("pass both X and y.")
        else:
            P = self.cluster_probabilities(X)
        y = np.asarray(y)
        result = majority_vote(P)
        single = (P.argmax(axis=2) == y[None, :]).mean(axis=1)
        return {
            "vote accuracy": float((result.labels == y).mean()),
            "mean cluster accuracy": float(single.mean()),
            "min cluster accuracy": float(single.min()),
            "max cluster accuracy": float(single.max()),
            "tie rate": result.tie_rate,
        }

    # -- unlearning ---------------------------------------------------------------------------------------------------

    def _check_request(self, user_ids) -> np.ndarray:
        ids = np.asarray(user_ids, dtype=np.int64).ravel()
        if ids.size == 0:
            raise ValueError("an unlearning request needs at least one user.")
        if np.unique(ids).size != ids.size:
            raise ValueError(f"users {ids.tolist()} are requested more than once.")
        unknown = ids[(ids < 0) | (ids >= self.n_users)]
        if unknown.size:
            raise ValueError(f"users {unknown.tolist()} are not users of this system (ids are 0..{self.n_users - 1}).")
        again = np.intersect1d(ids, self.unlearned_)
        if again.size:
            raise ValueError(f"users {again.tolist()} were already unlearned.")
        if self.max_requests is not None and len(self.unlearned_) + ids.size > self.max_requests:
            raise UnlearningCapacityError(
                f"unlearning {ids.size} more users would make {len(self.unlearned_) + ids.size} requests in total, "
                f"past the capacity tau = {self.max_requests} (Requirement 4)."
            )
        clusters, counts = np.unique(self._cluster_of[ids], return_counts=True)
        if self.secure and self.share_holders == "all":
            for i, count in zip(clusters.tolist(), counts.tolist(), strict=True):
                left = self.members_[i].size - count
                if left < self.thresholds[i]:
                    raise UnlearningCapacityError(
                        f"cluster {i} would keep {left} users (each holding a share of every secret), fewer than its "
                        f"fixed threshold t = {self.thresholds[i]}: no round could complete (Requirement 2)."
                    )
        caps = self.caps
        if caps is not None:
            for i, count in zip(clusters.tolist(), counts.tolist(), strict=True):
                lost = self.clusters_[i].size - self.members_[i].size
                if lost + count > caps[i]:
                    raise UnlearningCapacityError(
                        f"cluster {i} (k_i = {self.clusters_[i].size}) has lost {lost} users; unlearning {count} more "
                        f"exceeds its cap floor(zeta * k_i) = {caps[i]} (Requirement 4, zeta = {self.removal_rate})."
                    )
        return ids

    def unlearn(self, user_ids, *, retrain: bool = True) -> ClusteredUnlearningReport:
        """Unlearn users as one batch: remove them and retrain each affected cluster once, from a fresh seed.

        A sequence of single requests (the paper's sequential setting) is one
        call per user. Every check happens before anything changes.

        Parameters
        ----------
        user_ids : array-like of int
            The users to forget.
        retrain : bool, default=True
            Retrain the affected clusters for ``rounds`` rounds now. ``False``
            only removes the users and re-initialises their clusters, which
            then train in later :meth:`run` calls (a request during training).

        Returns
        -------
        ClusteredUnlearningReport
            Retrained clusters and users, time, bytes and accuracy after.

        Raises
        ------
        ValueError
            For an unknown user, one already unlearned, or a repeated id.
        UnlearningCapacityError
            If a cluster would lose more than ``⌊ζ k_i⌋`` users or the system
            more than ``max_requests`` (Requirement 4), or a cluster would keep
            too few users for its fixed threshold (Requirement 2).
        """
        ids = self._check_request(user_ids)
        affected = np.unique(self._cluster_of[ids])
        for i in affected:
            gone = ids[self._cluster_of[ids] == i]
            self.members_[i] = np.setdiff1d(self.members_[i], gone)
            self.generation_[i] += 1
            self.trainers_[i] = self.fresh_trainer(int(i))
        self.unlearned_.extend(ids.tolist())
        curve = self._train(affected) if retrain else []
        records = [record for i in affected for record in self.trainers_[i].history_]  # fresh trainers
        return ClusteredUnlearningReport(
            requested=ids,
            clusters=affected.astype(np.int64),
            users_retrained=int(sum(self.members_[i].size for i in affected)),
            rounds=self.rounds if retrain else 0,
            aborted_rounds=int(sum(r.aborted for r in records)),
            train_seconds=float(sum(r.train_seconds for r in records)),
            aggregate_seconds=float(sum(r.aggregate_seconds for r in records)),
            bytes_sent=int(sum(r.bytes_sent for r in records)),
            accuracy=self.evaluate()["vote accuracy"] if self._test is not None else None,
            curve=curve,
        )

    def aborted_rounds(self) -> int:
        """Rounds of the current cluster models whose secure aggregation aborted (the model stayed).

        Returns
        -------
        int
            Aborted rounds over all clusters since each cluster's last (re)initialisation.
        """
        return int(sum(r.aborted for t in self.trainers_ for r in t.history_))
