"""Clustered federated unlearning with secure aggregation inside each cluster (Liu et al., TDSC 2025).

The ``N`` clients are split at random into ``s = ⌊N/k⌋`` clusters (Alg. 1 lines
2-3, :func:`assign_clusters`); each cluster trains its own model with FedAvg,
every round summed by SecAgg(+) among the cluster's clients only
(:class:`fedlib.secagg.SecureAggregator`); a query is answered by the
majority vote of the cluster models (Fig. 1, :func:`majority_vote`). To
unlearn clients, only their clusters are retrained, from a fresh initialisation
and without them, for as many rounds as the first training; the other
cluster models do not change by a single bit. This is SISA's exact
unlearning (Bourtoule et al. 2021) with one shard per cluster of clients.

The class follows fedlib's contract (:mod:`fedlib.base`): hyper-parameters in
the constructor, the clients' data in ``fit(X, y, parts=...)``, and
``unlearn(clients=...)`` to forget clients.

The paper leaves a few things open; the choices made here:

- retraining "from scratch" re-initialises the cluster model from a fresh
  seed (the cluster's generation counter) and runs the same number of rounds;
- the Shamir threshold of a cluster stays ``t = ⌈ξ k_i⌉`` of the cluster as it
  was formed, as Requirement 2 counts the survivors against it; the masking
  graph is rebuilt over the remaining clients;
- Requirement 4 is enforced at run time: a request that would take a cluster
  past ``⌊ζ k_i⌋`` unlearned clients, or the system past ``max_requests``, is
  refused before anything changes (:class:`UnlearningCapacityError`), and so is
  a request that would leave a cluster without clients;
- vote ties are broken by summed probabilities, then the lowest label.

With ``cluster_size = N`` the same class is plain FedAvg over all clients with
full retraining per request, the baseline Liu et al. do not run; with
``secure=False`` it is clustered unlearning without secure aggregation.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator

from fedlib._random import child_sequence as _child
from fedlib._random import root_sequence
from fedlib._typing import NDArrayInt, SeedLike
from fedlib._validation import check_bool, check_is_fitted, check_option, check_scalar
from fedlib.base import UnlearningMixin, UnlearningReport
from fedlib.exceptions import SecAggAbort, UnlearningCapacityError, UnlearningRequestError
from fedlib.learn import (
    DeviceData,
    FederatedTrainer,
    Federation,
    LocalSGD,
    PlainSum,
    check_queries,
    check_training_data,
    make_model,
    predict_proba,
    resolve_device,
)
from fedlib.secagg import SecureAggregator
from fedlib.unlearn._pargen import LEFTOVERS, _ceil_times, _floor_times, assign_clusters
from fedlib.unlearn._voting import VoteResult, majority_vote

if TYPE_CHECKING:  # torch comes with fedlib.learn (imported above), whose missing-torch error names the extra
    import torch

#: Stream keys under the root seed: the clustering, and cluster i's model in generation g is (_CLUSTER, i, g).
_CLUSTERING, _CLUSTER = 0, 1


def _check_federation(federation: Federation, y, parts) -> int:
    """The number of clients of a federation a ClusteredUnlearning trains (ids ``0..N-1``, the paper's users)."""
    if y is not None or parts is not None:
        raise ValueError("a Federation holds the clients' examples and labels: fit(federation) takes no y or parts.")
    ids = np.asarray(federation.client_ids, dtype=np.int64).ravel()
    if not np.array_equal(np.sort(ids), np.arange(ids.size)):
        raise ValueError(
            f"ClusteredUnlearning numbers its clients 0..N-1; the federation's client ids are {ids.tolist()}."
        )
    return int(ids.size)


class ClusteredUnlearning(UnlearningMixin, BaseEstimator):
    """Clustered federated learning and exact unlearning with secure aggregation per cluster (Liu et al. 2025).

    The clients of the contract (:mod:`fedlib.base`) are the paper's users:
    ``fit(X, y, parts=...)`` gives client ``u`` the rows ``X[parts[u]]``, and
    ``unlearn(clients=[...])`` forgets whole clients; single rows cannot be
    forgotten (:attr:`unlearns`).

    Parameters
    ----------
    model : str or torch.nn.Module, default="softmax"
        A :data:`fedlib.learn.MODELS` name or an architecture without buffers.
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
        ``ζ``: cluster ``i`` may lose at most ``⌊ζ k_i⌋`` clients (Requirement 4); ``None``: no cap.
    max_requests : int or None, default=None
        Most clients the system may unlearn in total (``τ``); ``None``: no cap.
    dropout : float, default=0.0
        Each client drops out of each round with this probability (``δ`` of the simulation).
    leftovers : {"random", "round_robin"}, default="random"
        How the ``N − sk`` leftover clients join clusters (Alg. 1 line 3).
    eval_every : int, default=1
        Rounds between evaluations on the ``test_data`` given to :meth:`fit`.
    method : {"auto", "vmap", "loop"}, default="auto"
        Local-training path (:func:`fedlib.learn.train_clients`).
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None, default=None
        Root seed: the clustering, every cluster's initial models, orders, dropouts and masking
        graphs. It never seeds the secure aggregation's keys (see ``insecure_seeded_secrets``).
    insecure_seeded_secrets : bool, default=False
        ``False``: every round's X25519 keys, self-mask seeds and Shamir coefficients come
        from the operating system's CSPRNG, whatever ``random_state``. ``True``: from the
        round's seeded stream, a reproducible simulation that is **insecure**: whoever knows
        the seed recomputes every mask and so every client's update. The models are the same
        either way (:class:`fedlib.secagg.SecureAggregator`).
    device : str or torch.device, default="cpu"
        Where the cluster models train and vote: ``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"auto"``
        (a GPU when torch sees one; :func:`fedlib.learn.resolve_device`). The examples and the test
        set go there once and are shared by every cluster's trainer; the cluster models, secure
        aggregation and the unlearning bookkeeping stay on the host. On the CPU the bits are those
        of a run without the option (and a retrained cluster equals its fresh training bit for bit
        on any one device).

    Attributes
    ----------
    parts_ : list of ndarray of int64 or None
        Client ``u``'s rows of the ``X`` given to :meth:`fit` (client ids are positions in this list);
        ``None`` when fitted on a federation.
    model_ : torch.nn.Module
        The architecture of every cluster model.
    clusters_ : list of ndarray of int64
        The client ids of each cluster as formed.
    members_ : list of ndarray of int64
        The current (not unlearned) clients of each cluster.
    trainers_ : list of fedlib.learn.FederatedTrainer
        One FedAvg trainer per cluster.
    generation_ : ndarray of int64
        How often each cluster model was (re)initialised: 0 before any unlearning.
    unlearned_ : list of int
        Unlearned clients, in request order (sorted within one request).
    history_ : list of dict
        Per evaluated round of the first training: ``round``, ``vote accuracy``,
        ``mean cluster accuracy``, ``min cluster accuracy``, ``max cluster accuracy``, ``tie rate``.
    round_ : int
        Rounds run by :meth:`fit` and :meth:`run` so far.
    n_features_in_ : int
        Features per example (the product of ``X.shape[1:]``).
    device_ : torch.device
        The device the cluster models train on (``device`` resolved).
    fit_report_ : UnlearningReport
        The training run by :meth:`fit`: every client as retrained, ``rounds`` the
        rounds run, ``client_seconds`` local training and ``aggregation_seconds``
        aggregation (all clusters, summed), ``bytes_sent`` the clients' uploads;
        ``details`` holds ``clusters`` and ``aborted_rounds``.

    Notes
    -----
    ``unlearn(clients=clients)`` removes the clients as one batch and retrains each
    affected cluster once, from a fresh seed, for ``rounds`` rounds; a sequence
    of single requests (the paper's sequential setting) is one call per client.
    Its option ``retrain=False`` only removes the clients and re-initialises
    their clusters, which then train in later :meth:`run` calls (a request
    during training). After the checks of :meth:`unlearn`, and before anything
    changes, a request raises :class:`~fedlib.exceptions.UnlearningCapacityError`
    if a cluster would lose more than ``⌊ζ k_i⌋`` clients or the system more than
    ``max_requests`` (Requirement 4), or a cluster would keep too few clients for
    its fixed threshold (Requirement 2), and
    :class:`~fedlib.exceptions.UnlearningRequestError` if a cluster would keep
    no client.

    A request's report says what retraining the affected clusters cost:
    ``forgotten_clients`` are the clients, ``clients_retrained`` the remaining
    members of the retrained clusters, ``rounds`` the rounds run per retrained
    cluster, ``client_seconds`` local training and ``aggregation_seconds``
    aggregation (secure: every party's compute), summed over the retrained
    clusters, ``bytes_sent`` the clients' uploads, and ``exact`` is ``True``: a
    retrained cluster is the model its remaining clients train from scratch
    (:meth:`fresh_trainer`), and the other cluster models do not change.
    ``server_refit`` says whether the affected clusters were retrained now.
    ``details`` holds ``clusters`` (the retrained clusters), ``n_clients_retrained``,
    ``aborted_rounds`` (retraining rounds whose secure aggregation aborted),
    ``accuracy`` (majority-vote test accuracy after the request, ``None``
    without test data), ``curve`` (per retraining round, every ``eval_every``:
    ``round``, ``vote accuracy``, ``mean cluster accuracy``, ``min cluster
    accuracy``, ``max cluster accuracy``, ``tie rate``; empty without test data
    or retraining) and ``retrain``; with ``retrain=False`` also a ``note`` that
    retraining is deferred.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.unlearn import ClusteredUnlearning
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.random((120, 8), dtype=np.float32), rng.integers(0, 2, 120)
    >>> clients = np.array_split(np.arange(120), 12)
    >>> fu = ClusteredUnlearning("softmax", cluster_size=6, rounds=2, threshold_rate=0.5).fit(X, y, parts=clients)
    >>> len(fu.clusters_), fu.thresholds, fu.generation_.tolist()
    (2, (3, 3), [0, 0])
    >>> report = fu.unlearn(clients=[5])
    >>> len(report.details["clusters"]), len(report.clients_retrained), int(fu.generation_.sum())
    (1, 5, 1)
    """

    _fitted_attribute = "trainers_"

    unlearns = frozenset({"clients"})

    def __init__(
        self,
        model="softmax",
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
        eval_every: int = 1,
        method: str = "auto",
        random_state: SeedLike = None,
        insecure_seeded_secrets: bool = False,
        device: str | torch.device = "cpu",
    ) -> None:
        self.model = model
        self.cluster_size = cluster_size
        self.rounds = rounds
        self.local = local
        self.secure = secure
        self.degree = degree
        self.threshold_rate = threshold_rate
        self.share_holders = share_holders
        self.clip = clip
        self.removal_rate = removal_rate
        self.max_requests = max_requests
        self.dropout = dropout
        self.leftovers = leftovers
        self.eval_every = eval_every
        self.method = method
        self.random_state = random_state
        self.insecure_seeded_secrets = insecure_seeded_secrets
        self.device = device

    def fit(
        self, X, y=None, *, parts=None, test_data: tuple | None = None, n_rounds: int | None = None
    ) -> ClusteredUnlearning:
        """Form the clusters (Alg. 1 lines 2-3) and train every cluster model, all clusters in step.

        Parameters
        ----------
        X : ndarray of float, shape (n_samples, ...), or fedlib.learn.Federation
            All clients' examples; or a federation whose clients ``0..N-1`` keep their examples
            and train on their own nodes (e.g. :class:`fedlib.flower.FlowerFederation`), with
            ``y`` and ``parts`` left out. Each round of a cluster is then one round trip to its
            clients, and with ``secure=True`` its sum is a SecAgg(+) round between them.
        y : array-like of int, shape (n_samples,)
            Labels (not with a federation).
        parts : sequence of array-like of int, optional
            Client ``u``'s rows of ``X`` (client ids are positions in this list); default one client
            holding every row.
        test_data : (X_test, y_test), optional
            Evaluated every ``eval_every`` rounds of training and retraining.
        n_rounds : int, optional
            Train only this many rounds; continue with :meth:`run` (clients may
            leave in between, :meth:`unlearn` with ``retrain=False``). Default:
            train until every cluster has run ``rounds`` rounds.

        Returns
        -------
        ClusteredUnlearning
            ``self``, fitted.

        Raises
        ------
        ValueError
            For bad options, or a cluster too small for secure aggregation (fewer than 3 clients).
        fedlib.exceptions.DeviceUnavailableError
            For a CUDA ``device`` on a machine without one (before any data is read).
        """
        device = resolve_device(self.device)
        if isinstance(X, Federation):
            federation, n_clients = X, _check_federation(X, y, parts)
            input_shape, max_label = tuple(int(k) for k in X.input_shape), int(X.n_classes) - 1
        else:
            if y is None:
                raise ValueError(
                    "ClusteredUnlearning requires y to be passed, but the target y is None (only a Federation, "
                    "whose clients hold their labels, is fitted without y)."
                )
            federation = None
            X, y, parts = check_training_data(X, y, parts)
            n_clients = len(parts)
            input_shape, max_label = tuple(np.shape(X)[1:]), int(y.max())
        self._k = check_scalar(self.cluster_size, "cluster_size (k)", "int", min_val=1, max_val=max(n_clients, 1))
        self._rounds = check_scalar(self.rounds, "rounds (R)", "int", min_val=1)
        self._secure = check_bool(self.secure, "secure")
        self._seeded_secrets = check_bool(self.insecure_seeded_secrets, "insecure_seeded_secrets")
        self._degree = None if self.degree is None else check_scalar(self.degree, "degree (m)", "int", min_val=2)
        self._threshold_rate = check_scalar(
            self.threshold_rate, "threshold_rate (ξ)", "real", min_val=0.0, max_val=1.0, include_min=False
        )
        self._share_holders = check_option(self.share_holders, "share_holders", ("all", "neighbors"))
        self._clip = check_scalar(self.clip, "clip", "real", min_val=0.0, include_min=False)
        self._removal_rate = (
            None
            if self.removal_rate is None
            else check_scalar(
                self.removal_rate, "removal_rate (ζ)", "real", min_val=0.0, max_val=1.0, include_max=False
            )
        )
        self._max_requests = (
            None if self.max_requests is None else check_scalar(self.max_requests, "max_requests", "int", min_val=0)
        )
        self._dropout = check_scalar(self.dropout, "dropout", "real", min_val=0.0, max_val=1.0, include_max=False)
        self._leftovers = check_option(self.leftovers, "leftovers", LEFTOVERS)
        self._eval_every = check_scalar(self.eval_every, "eval_every", "int", min_val=1)
        if n_rounds is not None:
            n_rounds = check_scalar(n_rounds, "n_rounds", "int", min_val=0)
        # the test examples as one float32 tensor (what every evaluation converted them to), kept on the device too
        self._test_device = None if test_data is None else DeviceData.reuse(test_data[0], device)
        self._test = None if test_data is None else (self._test_device.host, test_data[1])
        self._root = root_sequence(self.random_state)
        clusters = assign_clusters(
            n_clients, self._k, leftovers=self._leftovers,
            random_state=np.random.default_rng(_child(self._root, _CLUSTERING)),
        )  # fmt: skip
        if self._secure and min(c.size for c in clusters) < 3:
            raise ValueError(
                f"secure aggregation needs at least 3 clients per cluster; cluster_size={self._k} gives "
                f"a cluster of {min(c.size for c in clusters)}."
            )
        self.parts_ = parts
        self._federation, self._n_clients = federation, n_clients
        self.n_features_in_ = int(np.prod(input_shape, dtype=np.int64))
        self.clusters_ = clusters
        self.members_ = [c.copy() for c in self.clusters_]
        self.generation_ = np.zeros(len(self.clusters_), dtype=np.int64)
        self.unlearned_: list[int] = []
        self._cluster_of = np.empty(n_clients, dtype=np.int64)
        for i, members in enumerate(self.clusters_):
            self._cluster_of[members] = i
        self._local = LocalSGD() if self.local is None else self.local
        model = self.model
        if isinstance(model, str):
            labels = [max_label] if test_data is None else [max_label, np.max(test_data[1])]
            n_classes = max(int(max(labels)) + 1, 2)
            model = make_model(model, n_classes, random_state=0, input_shape=input_shape)
        self.model_ = model
        self._X, self._y, self._method = X, y, self.method
        # moved to the device once and shared by every cluster's trainer (on the CPU: the tensors themselves)
        self.device_ = device
        if federation is None:
            self._X_device, self._y_device = DeviceData.reuse(X, device), DeviceData.reuse(y, device)
        self.trainers_ = [self.fresh_trainer(i) for i in range(self.n_clusters)]
        self.history_: list[dict] = []
        self.round_ = 0
        self._proba_cache: dict[int, tuple[tuple[int, int], np.ndarray]] = {}
        self.run(self._rounds if n_rounds is None else n_rounds)
        records = [r for t in self.trainers_ for r in t.history_]
        self.fit_report_ = UnlearningReport(
            clients_retrained=tuple(range(n_clients)),
            server_refit=True,
            rounds=self.round_,
            client_seconds=float(sum(r.train_seconds for r in records)),
            aggregation_seconds=float(sum(r.aggregate_seconds for r in records)),
            bytes_sent=int(sum(r.bytes_sent for r in records)),
            details={"clusters": tuple(range(self.n_clusters)), "aborted_rounds": int(sum(r.aborted for r in records))},
        )
        return self

    # -- configuration ------------------------------------------------------------------------------------------------

    @property
    def n_clients(self) -> int:
        """``N``: the clients given to :meth:`fit`, unlearned ones included."""
        check_is_fitted(self, "parts_")
        return self._n_clients

    @property
    def n_clusters(self) -> int:
        """``s = ⌊N/k⌋``."""
        check_is_fitted(self, "clusters_")
        return len(self.clusters_)

    @property
    def thresholds(self) -> tuple[int, ...]:
        """Each cluster's Shamir threshold with ``share_holders="all"``: ``t_i = ⌈ξ k_i⌉`` of the cluster as formed."""
        check_is_fitted(self, "clusters_")
        return tuple(max(2, _ceil_times(self._threshold_rate, c.size)) for c in self.clusters_)

    @property
    def caps(self) -> tuple[int, ...] | None:
        """``q_i = ⌊ζ k_i⌋``: the most clients cluster ``i`` may lose (None without ``removal_rate``)."""
        check_is_fitted(self, "clusters_")
        if self._removal_rate is None:
            return None
        return tuple(_floor_times(self._removal_rate, c.size) for c in self.clusters_)

    def _aggregator(self, i: int):
        if not self._secure:
            return PlainSum()
        return SecureAggregator(
            degree=self._degree, threshold_rate=self._threshold_rate, clip=self._clip,
            share_holders=self._share_holders, threshold=self.thresholds[i] if self._share_holders == "all" else None,
            insecure_seeded_secrets=self._seeded_secrets,
        )  # fmt: skip

    def fresh_trainer(self, cluster: int, X=None) -> FederatedTrainer:
        """A new, untrained FedAvg trainer of one cluster: its current clients, its current generation's seed.

        This is what "retraining from scratch" means here: after :meth:`unlearn`,
        ``fresh_trainer(i).run(rounds)`` reproduces ``trainers_[i]`` bit for bit.
        Passing an ``X`` whose unlearned clients' rows are replaced (e.g. by NaN)
        checks that retraining never reads them.

        Parameters
        ----------
        cluster : int
            The cluster ``i``.
        X : ndarray of float, optional
            Examples to train on instead of the ones given to :meth:`fit` (same shape).

        Returns
        -------
        fedlib.learn.FederatedTrainer
            Fitted on the cluster's clients (``fit(..., n_rounds=0)``), at round 0:
            its initial model, ready for :meth:`~fedlib.learn.FederatedTrainer.run`.
        """
        i = check_scalar(cluster, "cluster", "int", min_val=0, max_val=self.n_clusters - 1)
        members = self.members_[i]
        if self._federation is not None and X is not None:
            raise ValueError("fitted on a Federation: its clients hold the examples, fresh_trainer takes no X.")
        trainer = FederatedTrainer(
            self.model_,
            local=self._local,
            aggregator=self._aggregator(i),
            dropout=self._dropout,
            abort_on=(SecAggAbort,),
            method=self._method,
            random_state=_child(self._root, _CLUSTER, i, int(self.generation_[i])),
            device=self.device_,
        )
        if self._federation is not None:  # the cluster's clients train on their own nodes
            return trainer._fit(self._federation, None, parts=None, client_ids=members, test_data=None, n_rounds=0)
        return trainer._fit(  # fit, reusing this system's device copies of the examples (another X: its own)
            self._X if X is None else X,
            self._y,
            parts=[self.parts_[u] for u in members],
            client_ids=members,
            test_data=None,
            n_rounds=0,
            shared=(self._X_device, self._y_device),
        )

    # -- training and evaluation --------------------------------------------------------------------------------------

    def run(self, n_rounds: int) -> ClusteredUnlearning:
        """Run ``n_rounds`` more rounds of every cluster that has not yet run ``rounds`` rounds.

        Training can be interleaved with unlearning: a cluster reset by
        ``unlearn(clients=..., retrain=False)`` starts again from round 0 and
        catches up here while the others finish (clients leaving during training,
        after ``fit(..., n_rounds=...)``). Evaluations go to :attr:`history_`,
        numbered by the system's round.

        Parameters
        ----------
        n_rounds : int
            Rounds to run (0 is allowed).

        Returns
        -------
        ClusteredUnlearning
            ``self``.
        """
        check_is_fitted(self, "trainers_")
        n_rounds = check_scalar(n_rounds, "n_rounds", "int", min_val=0)
        for _ in range(n_rounds):
            behind = [i for i, t in enumerate(self.trainers_) if t.round_ < self._rounds]
            if not behind:
                break
            for i in behind:
                self.trainers_[i].step()
            self.round_ += 1
            if self._test is not None and self.round_ % self._eval_every == 0:
                self.history_.append({"round": self.round_, **self.evaluate()})
        return self

    def _train(self, clusters) -> list[dict]:
        """Retrain some clusters from round 0 to ``rounds``, the others fixed; the evaluation curve."""
        clusters = list(clusters)
        curve = []
        for r in range(1, self._rounds + 1):
            for i in clusters:
                self.trainers_[i].step()
            if self._test is not None and r % self._eval_every == 0:
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
        check_is_fitted(self, "trainers_")
        X = check_queries(X, self.n_features_in_, type(self).__name__)
        stack = np.stack([t.params_ for t in self.trainers_])
        return predict_proba(self.model_, X, parameters=stack, device=self.device_)

    def _test_probabilities(self) -> np.ndarray:
        """Test-set probabilities per cluster, recomputed only for clusters whose model changed."""
        X_test = self._test_device.get()
        out = []
        for i, trainer in enumerate(self.trainers_):
            key = (int(self.generation_[i]), trainer.round_)
            cached = self._proba_cache.get(i)
            if cached is None or cached[0] != key:
                cached = (key, predict_proba(self.model_, X_test, parameters=trainer.params_, device=self.device_))
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
            Queries; default the ``test_data`` given to :meth:`fit`.
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
        check_is_fitted(self, "trainers_")
        if X is None and y is None:
            if self._test is None:
                raise ValueError("no test data: pass X and y, or give test_data to fit.")
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

    def _model_state(self) -> dict[str, np.ndarray]:
        check_is_fitted(self, "trainers_")
        return {f"cluster {i}": t.params_.copy() for i, t in enumerate(self.trainers_)}

    def _retrained_state(self) -> dict[str, np.ndarray]:
        """Every cluster trained from scratch (:meth:`fresh_trainer`) for the rounds its model has run.

        A retrained cluster must equal it bit for bit (its current clients, its generation's seed), and so must
        every other cluster (its first training): SISA's exact unlearning, checked on the whole vote.
        """
        check_is_fitted(self, "trainers_")
        return {f"cluster {i}": self.fresh_trainer(i).run(t.round_).params_ for i, t in enumerate(self.trainers_)}

    def _held_clients(self) -> NDArrayInt:
        return np.setdiff1d(np.arange(self.n_clients, dtype=np.int64), np.asarray(self.unlearned_, dtype=np.int64))

    def _held_samples(self) -> NDArrayInt:
        if self.parts_ is None:  # fitted on a Federation: the rows are the clients' own
            return np.empty(0, dtype=np.int64)
        held = [self.parts_[u] for u in self._held_clients()]
        return np.unique(np.concatenate(held)) if held else np.empty(0, dtype=np.int64)

    def _check_capacity(self, ids: NDArrayInt) -> None:
        """Requirements 4 and 2, and a cluster left empty: refuse the request before anything changes."""
        if self._max_requests is not None and len(self.unlearned_) + ids.size > self._max_requests:
            raise UnlearningCapacityError(
                f"unlearning {ids.size} more clients would make {len(self.unlearned_) + ids.size} requests in total, "
                f"past the capacity tau = {self._max_requests} (Requirement 4)."
            )
        clusters, counts = np.unique(self._cluster_of[ids], return_counts=True)
        if self._secure and self._share_holders == "all":
            for i, count in zip(clusters.tolist(), counts.tolist(), strict=True):
                left = self.members_[i].size - count
                if left < self.thresholds[i]:
                    raise UnlearningCapacityError(
                        f"cluster {i} would keep {left} clients (each holding a share of every secret), fewer than its "
                        f"fixed threshold t = {self.thresholds[i]}: no round could complete (Requirement 2)."
                    )
        caps = self.caps
        if caps is not None:
            for i, count in zip(clusters.tolist(), counts.tolist(), strict=True):
                lost = self.clusters_[i].size - self.members_[i].size
                if lost + count > caps[i]:
                    raise UnlearningCapacityError(
                        f"cluster {i} (k_i = {self.clusters_[i].size}) has lost {lost} clients; unlearning {count} "
                        f"more exceeds its cap floor(zeta * k_i) = {caps[i]} (Requirement 4, "
                        f"zeta = {self._removal_rate})."
                    )
        for i, count in zip(clusters.tolist(), counts.tolist(), strict=True):
            if self.members_[i].size == count:
                raise UnlearningRequestError(
                    f"cannot unlearn every client of cluster {i}: no client would remain to retrain its model."
                )

    def _unlearn(self, samples: NDArrayInt, clients: NDArrayInt, *, retrain: bool = True) -> UnlearningReport:
        """Unlearn clients as one batch: remove them and retrain each affected cluster once (class Notes)."""
        ids = clients
        self._check_capacity(ids)
        retrain = bool(retrain)
        affected = np.unique(self._cluster_of[ids])
        for i in affected:
            gone = ids[self._cluster_of[ids] == i]
            self.members_[i] = np.setdiff1d(self.members_[i], gone)
            self.generation_[i] += 1
            self.trainers_[i] = self.fresh_trainer(int(i))
        self.unlearned_.extend(ids.tolist())
        curve = self._train(affected) if retrain else []
        records = [record for i in affected for record in self.trainers_[i].history_]  # fresh trainers
        retrained = np.sort(np.concatenate([self.members_[i] for i in affected]))
        details = {
            "clusters": tuple(int(i) for i in affected),
            "n_clients_retrained": int(sum(self.members_[i].size for i in affected)),
            "aborted_rounds": int(sum(r.aborted for r in records)),
            "accuracy": self.evaluate()["vote accuracy"] if self._test is not None else None,
            "curve": curve,
            "retrain": retrain,
        }
        if not retrain:
            details["note"] = (
                "retraining deferred: the affected clusters were re-initialised and retrain in later run() calls."
            )
        return UnlearningReport(
            forgotten_clients=tuple(ids.tolist()),
            clients_retrained=tuple(int(u) for u in retrained),
            server_refit=retrain,
            rounds=self._rounds if retrain else 0,
            client_seconds=float(sum(r.train_seconds for r in records)),
            aggregation_seconds=float(sum(r.aggregate_seconds for r in records)),
            bytes_sent=int(sum(r.bytes_sent for r in records)),
            exact=True,
            details=details,
        )

    def aborted_rounds(self) -> int:
        """Rounds of the current cluster models whose secure aggregation aborted (the model stayed).

        Returns
        -------
        int
            Aborted rounds over all clusters since each cluster's last (re)initialisation.
        """
        check_is_fitted(self, "trainers_")
        return int(sum(r.aborted for t in self.trainers_ for r in t.history_))
