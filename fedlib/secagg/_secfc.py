"""SecFC: Lloyd's K-means run exactly on Lagrange-coded, secret-shared data (Li, Hou, Buyukates, Avestimehr 2022).

Phase 1 (SecFC Alg. 1, lines 1-4): every point is quantized into GF(q) and
LCC-shared among the ``n`` clients (:mod:`fedlib.secagg`). Phase 2 (lines
5-19): for the current clustering every client computes, on its shares alone,
coded centres ``μ̃_{h,j} = Σ_{i∈S_h} x̃_{i,j}`` and coded distances
``d̃_{i,h,j} = ||μ̃_{h,j} − |S_h| x̃_{i,j}||²`` — evaluations at ``α_j`` of a
polynomial of degree ``2(ℓ+t-1)`` — and the server interpolates it from any
``2ℓ+2t-1`` clients (Theorem 1) to get ``d'_{i,h}``, then assigns points.

Client work per round, with ``X̃_j`` the ``m × ⌈d/ℓ⌉`` share matrix:
``M̃ = onehot(S) X̃_j`` and ``G = X̃_j M̃ᵀ`` (exact modular matrix products at
BLAS speed, :func:`fedlib.field.matmul_mod`), then
``d̃ = ||μ̃_h||² − 2|S_h| G + |S_h|² ||x̃_i||²`` with ``||x̃_i||²`` computed once.
The server's decoding is one weighted sum of the responses (precomputable
Lagrange weights), ``O(k m R)`` per round.
"""

from __future__ import annotations

import math
import time

import numpy as np

from fedlib._typing import NDArrayFloat, NDArrayInt, SeedLike
from fedlib._validation import (
    check_array,
    check_is_fitted,
    check_n_clusters,
    check_option,
    check_partition,
    check_scalar,
    spawn_generators,
)
from fedlib.cluster import (
    cluster_sizes,
    cluster_sums,
    distance_lloyd,
    kmeans_objective,
    membership_matrix,
    nearest_centre_labels,
)
from fedlib.cluster._distance_lloyd import N_STREAMS  # child 0 initialises, as in centralized_lloyd
from fedlib.field import LagrangeCode, LimbMatrix, check_decoded, check_modulus, mulmod, quantize, sum_mod, to_field
from fedlib.secagg._lcc import share_all, share_every_index
from fedlib.secagg._overflow import SECFC_PRIME, check_scale, max_safe_scale


class CodedDistances:
    """SecFC Phase 2 as a distance oracle: clients compute on shares, the server decodes (Alg. 1, lines 8-16).

    Every call is one round. ``n_responders`` clients, chosen at random each
    round (``rng``), compute and send their ``m × k`` coded distances; the
    server decodes from the first ``R = 2ℓ+2t-1`` and checks the others
    against the decoded polynomial. Per-round times are recorded per client
    and for the server.

    Parameters
    ----------
    code : LagrangeCode
        The public LCC parameters (its prime below 2**50).
    shares : ndarray of int64, shape (n_clients, m, ⌈d/ℓ⌉)
        ``shares[j]`` is client ``j``'s share of every point (Phase 1).
    n_responders : int
        Clients that answer each round.
    rng : numpy.random.Generator
        Picks the responders.

    Attributes
    ----------
    n_samples : int
        ``m``.
    client_seconds : list of list of float
        Per round, each responder's compute time.
    server_seconds : list of float
        Per round, the server's decoding time.
    responders : list of list of int
        The clients that answered each round.

    Raises
    ------
    ValueError
        If the code's prime is not below 2**50.
    """

    def __init__(self, code: LagrangeCode, shares: NDArrayInt, *, n_responders: int, rng: np.random.Generator) -> None:
        self.code = code
        self.q = check_modulus(code.prime)
        self.shares = shares
        self.n_samples = shares.shape[1]
        self.n_responders = n_responders
        self.rng = rng
        self.share_sq = np.stack([sum_mod(mulmod(S, S, self.q), self.q) for S in shares])  # ||x̃_{i,j}||², once
        self._limbs: dict[int, LimbMatrix] = {}
        self.client_seconds: list[list[float]] = []
        self.server_seconds: list[float] = []
        self.responders: list[list[int]] = []

    def client_response(self, j: int, labels: NDArrayInt, n_clusters: int) -> NDArrayInt:
        """Client ``j``'s message: ``d̃_{i,h,j}`` for all ``(i, h)`` (SecFC Alg. 1, lines 9-11).

        Parameters
        ----------
        j : int
            The client (0-based).
        labels : ndarray of int of shape (m,)
            The current clustering, public (-1: in no cluster).
        n_clusters : int
            ``k``.

        Returns
        -------
        ndarray of int64, shape (m, n_clusters)
            ``d̃_{i,h,j} = ||μ̃_{h,j} − |S_h| x̃_{i,j}||² mod q``, computed on shares alone.
        """
        q = self.q
        sizes = cluster_sizes(labels, n_clusters)
        if j not in self._limbs:  # split once, reused every round
            self._limbs[j] = LimbMatrix(self.shares[j], q)
        X = self._limbs[j]
        M = X.left_mul(membership_matrix(labels, n_clusters).toarray())  # coded (unnormalised) centres, k × ⌈d/ℓ⌉
        G = X.left_mul_transposed(M).T  # m × k
        centre_sq = sum_mod(mulmod(M, M, q), q)
        twice = np.mod(2 * sizes, q)[None, :]
        size_sq = np.mod(sizes * sizes, q)[None, :]
        return np.mod(centre_sq[None, :] - mulmod(G, twice, q) + mulmod(self.share_sq[j][:, None], size_sq, q), q)

    def __call__(self, labels: NDArrayInt, n_clusters: int) -> NDArrayInt:
        """One round: the responders' coded distances, decoded to ``d'`` (int64, shape ``(m, n_clusters)``)."""
        responders = [int(j) for j in self.rng.permutation(self.code.n_clients)[: self.n_responders]]
        responses = np.empty((len(responders), self.n_samples, n_clusters), dtype=np.int64)
        seconds = []
        for r, j in enumerate(responders):
            start = time.perf_counter()
            responses[r] = self.client_response(j, labels, n_clusters)
            seconds.append(time.perf_counter() - start)
        start = time.perf_counter()
        decoded = self.code.decode(responses, responders, 2, targets="sum")
        decoded = check_decoded(decoded, self.q)
        self.server_seconds.append(time.perf_counter() - start)
        self.client_seconds.append(seconds)
        self.responders.append(responders)
        return decoded


class SecFC:
    """Secure federated clustering (SecFC Alg. 1) in a single-process simulation.

    Parameters
    ----------
    n_clusters : int
        ``k``.
    n_segments : int, default=1
        ``ℓ``: each point is split into ``ℓ`` segments; larger ``ℓ`` means less
        client work and communication, but a higher recovery threshold.
    n_colluders : int or None, default=None
        ``t``: any ``t`` colluding clients learn nothing about a point.
        ``None``: ``⌈n/3⌉``, the paper's timing setting (Sec. 5), lowered to
        the largest ``t`` with ``2ℓ+2t-1 ≤ n`` if that is smaller.
    scale : float or None, default=None
        ``λ`` of the quantization ``floor(λx)`` (App. A). ``None``: the largest
        safe value, :func:`fedlib.secagg.max_safe_scale`.
    radius : float or None, default=None
        Public bound ``R`` on every point's Euclidean norm, used by the
        overflow bound. ``None``: the largest norm in the data (a simulation
        shortcut: in deployment it must be agreed in advance).
    prime : int, default=SECFC_PRIME
        ``q``, a prime below 2**50 (``2**50 - 27`` by default).
    init : {"kmeans++", "random_assignment"} or array-like of int, default="kmeans++"
        See :func:`fedlib.cluster.distance_lloyd`.
    max_iter : int, default=100
        Most Lloyd rounds.
    n_responders : int or None, default=None
        Clients that answer each round (a random subset each time, as with
        stragglers); ``None``: all ``n``. Decoding uses ``2ℓ+2t-1`` of them;
        the rest are checked for consistency.
    membership_privacy : bool, default=False
        Share every index from every client (Sec. 6, Eqs. (4)-(6)) so that the
        ownership of indices stays private; the clustering is the same.
    check_overflow : {"bound", "runtime"}, default="bound"
        ``"bound"``: refuse a ``scale`` whose public bound ``m²(2λR+√d)²``
        reaches ``q/2``. ``"runtime"``: skip that check and rely on the
        detector that every decoded value is below ``q/2``.
    random_state : int, numpy.random.Generator or None, default=None
        An int gives the same initialisation as
        :func:`fedlib.cluster.centralized_lloyd` with that ``random_state``.

    Attributes
    ----------
    labels_ : ndarray of shape (m,)
        Final clustering.
    run_ : LloydResult
        Labels after every round (``history``), seeds, last decoded ``d'``.
    n_iter_ : int
        Lloyd rounds run.
    code_ : LagrangeCode
        The LCC parameters used.
    scale_ : float
        ``λ`` used.
    radius_ : float
        ``R`` used by the overflow bound.
    federated_loss_ : float
        K-means objective of the final clustering on the raw data, each point
        charged to the mean of its cluster; an evaluation the simulation can
        make, not a quantity any party learns.
    sharing_seconds_ : float
        Phase 1 for all clients together.
    client_seconds_ : list of list of float
        Per round, each responding client's compute time.
    server_seconds_ : list of float
        Per round, decoding plus assignment.
    n_seed_rounds_ : int
        Rounds spent on K-means++ seeds (0 for other inits).
    responders_ : list of list of int
        The clients that answered each round.
    upload_elements_per_round_ : int
        Field elements each client sends per round: ``k m``.

    Notes
    -----
    Noise comes from seeded PCG64 streams, which is right for a reproducible
    simulation and wrong for deployment (use a CSPRNG there). A fitted model
    keeps, of all the shares, only the coded centre sums of the final
    clustering at ``ℓ+t`` clients: what :meth:`reveal_centers` needs.
    Used in :doc:`/notebooks/secfc/secure_clustering`.

    References
    ----------
    S. Li, S. Hou, B. Buyukates, S. Avestimehr. "Secure Federated Clustering", 2022.

    Examples
    --------
    >>> from fedlib.cluster import centralized_lloyd
    >>> from fedlib.data import iid_partition, make_gaussian_mixture
    >>> ds = make_gaussian_mixture(200, 5, 3, random_state=0)
    >>> model = SecFC(3, random_state=0).fit(ds.X, iid_partition(200, 7, random_state=0))
    >>> plain = centralized_lloyd(ds.X, 3, scale=model.scale_, random_state=0)
    >>> bool((model.labels_ == plain.labels).all())  # SecFC Theorem 1: Lloyd on the quantized data, exactly
    True
    """

    def __init__(
        self,
        n_clusters: int,
        *,
        n_segments: int = 1,
        n_colluders: int | None = None,
        scale: float | None = None,
        radius: float | None = None,
        prime: int = SECFC_PRIME,
        init="kmeans++",
        max_iter: int = 100,
        n_responders: int | None = None,
        membership_privacy: bool = False,
        check_overflow: str = "bound",
        random_state: SeedLike = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.n_segments = n_segments
        self.n_colluders = n_colluders
        self.scale = scale
        self.radius = radius
        self.prime = prime
        self.init = init
        self.max_iter = max_iter
        self.n_responders = n_responders
        self.membership_privacy = membership_privacy
        self.check_overflow = check_overflow
        self.random_state = random_state

    def fit(self, X, parts) -> SecFC:
        """Share the data of the clients ``parts`` (row indices of ``X``) and run coded Lloyd.

        Parameters
        ----------
        X : array-like of shape (m, d)
            All points, in a global row order.
        parts : list of array-like of int
            Client ``j`` holds the rows ``X[parts[j]]``; they must partition the rows.

        Returns
        -------
        SecFC
            ``self``, fitted.

        Raises
        ------
        ValueError
            If ``n_clients < 2ℓ+2t-1`` or ``n_responders`` lies outside
            ``[2ℓ+2t-1, n_clients]`` (SecFC Theorem 1), if ``t = 0`` (no privacy) or ``t >= n_clients``,
            or if ``parts`` does not partition the rows.
        fedlib.field.FieldOverflowError
            With ``check_overflow="bound"``, if ``scale`` can overflow GF(q);
            with ``"runtime"``, if a decoded distance did.
        """
        X = check_array(X)
        m, d = X.shape
        k = check_n_clusters(self.n_clusters, m)
        parts = check_partition(parts, m)
        n = len(parts)
        q = check_modulus(self.prime)
        ell = check_scalar(self.n_segments, "n_segments", "int", min_val=1)
        t = default_colluders(n, ell) if self.n_colluders is None else self.n_colluders
        t = check_scalar(t, "n_colluders", "int")
        if t < 1:
            raise ValueError(
                f"n_colluders={t}: with t = 0 there are no random masks, so every share is a plain segment of a "
                "client's data and the other clients read it in the clear: t = 0 gives no privacy. Use t >= 1."
            )
        code = LagrangeCode(n_clients=n, n_segments=ell, n_masks=t, prime=q)
        threshold = code.recovery_threshold(2)
        if n < threshold:
            raise ValueError(
                f"SecFC decodes exactly only if n_clients >= 2*n_segments + 2*t - 1 (SecFC Theorem 1); "
                f"got n_clients={n}, n_segments={ell}, t={t}, so need n_clients >= {threshold}."
            )
        n_responders = n if self.n_responders is None else check_scalar(self.n_responders, "n_responders", "int")
        if not threshold <= n_responders <= n:
            raise ValueError(
                f"n_responders={n_responders} must lie between the recovery threshold 2ℓ+2t-1 = {threshold} "
                f"(SecFC Theorem 1) and n_clients={n}."
            )
        check_option(self.check_overflow, "check_overflow", ("bound", "runtime"))
        if self.radius is None:
            radius = float(np.sqrt(np.max(np.einsum("ij,ij->i", X, X))))
        else:
            radius = check_scalar(self.radius, "radius", "real", min_val=0.0)
        if self.scale is None:
            scale = max_safe_scale(m, d, radius, q)
        else:
            scale = check_scalar(self.scale, "scale", "real", min_val=0.0, include_min=False)
        if self.check_overflow == "bound":
            check_scale(scale, m, d, radius, q)
        init_rng, share_rng, network_rng = spawn_generators(self.random_state, N_STREAMS)

        start = time.perf_counter()
        X_field = to_field(quantize(X, scale), q)
        share = share_every_index if self.membership_privacy else share_all
        shares = share(code, X_field, parts, random_state=share_rng)
        self.sharing_seconds_ = time.perf_counter() - start

        oracle = CodedDistances(code, shares, n_responders=n_responders, rng=network_rng)
        run = distance_lloyd(oracle, k, init=self.init, max_iter=self.max_iter, random_state=init_rng)
        self.code_ = code
        self.n_features_in_ = d
        self.scale_ = scale
        self.radius_ = radius
        self.run_ = run
        self.labels_ = run.labels
        self.n_iter_ = run.n_iter
        self.client_seconds_ = oracle.client_seconds
        # Decoding happens in the oracle; the argmin in the driver. Seed rounds have no argmin.
        n_seed_rounds = len(oracle.server_seconds) - len(run.assign_seconds)
        self.server_seconds_ = oracle.server_seconds[:n_seed_rounds] + [
            s + a for s, a in zip(oracle.server_seconds[n_seed_rounds:], run.assign_seconds, strict=True)
        ]
        self.n_seed_rounds_ = n_seed_rounds
        self.responders_ = oracle.responders
        self.upload_elements_per_round_ = k * m
        # What revealing the centres needs (SecFC Sec. 7): the coded sums of the final clusters at ℓ+t clients.
        onehot = membership_matrix(run.labels, k).toarray()
        self._reveal_clients = list(range(code.recovery_threshold(1)))
        self._coded_sums = np.stack([code.field.matmul(onehot, shares[j]) for j in self._reveal_clients])
        sizes = cluster_sizes(run.labels, k).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            means = cluster_sums(X, run.labels, k) / sizes[:, None]
        self.federated_loss_ = kmeans_objective(X, np.nan_to_num(means), labels=run.labels)
        return self

    def reveal_centers(self) -> NDArrayFloat:
        """Centres of the final clustering, revealed by ``ℓ+t`` clients (SecFC Sec. 7).

        ``Σ_{i∈S_h} f_i`` has degree ``ℓ+t-1``, so the coded centres
        ``μ̃_{h,j}`` of ``ℓ+t`` clients determine it; its values at
        ``β_1..β_ℓ`` are the segments of ``Σ_{i∈S_h} x̄_i``. Dividing by
        ``λ |S_h|`` (in the reals) gives the centres. Not part of Alg. 1: the
        paper keeps centres secret unless the clients choose to reveal them.

        Returns
        -------
        ndarray of shape (n_clusters, n_features)
            The quantized means divided by ``λ``; NaN rows for empty clusters.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before :meth:`fit`.
        """
        check_is_fitted(self, "labels_")
        code = self.code_
        k = self._coded_sums.shape[1]
        segments = code.decode(self._coded_sums, self._reveal_clients, 1)  # (ℓ, k, width)
        sums = np.concatenate(list(segments), axis=1)[:, : self.n_features_in_]
        sizes = cluster_sizes(self.labels_, k).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            return code.field.signed(sums).astype(np.float64) / (self.scale_ * sizes[:, None])

    def predict(self, X) -> NDArrayInt:
        """Nearest revealed centre (:meth:`reveal_centers`) for each row of ``X``: this reveals the centres.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points to assign.

        Returns
        -------
        ndarray of int64, shape (n_samples,)
            Index of the nearest non-empty cluster.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before :meth:`fit`.
        ValueError
            If ``X`` has a different number of features than the fitted data.
        """
        check_is_fitted(self, "labels_")
        centers = self.reveal_centers()
        alive = np.flatnonzero(~np.isnan(centers).any(axis=1))  # an empty cluster is nobody's nearest centre
        return alive[nearest_centre_labels(X, centers[alive])]

    @property
    def history_(self) -> list[NDArrayInt]:
        """Clusterings from the initial one to the last (``run_.history``)."""
        check_is_fitted(self, "run_")
        return self.run_.history


def default_colluders(n_clients: int, n_segments: int = 1) -> int:
    """``t = ⌈n/3⌉`` (SecFC Sec. 5), capped so that ``2ℓ+2t-1 ≤ n`` (Theorem 1); at least 1.

    Parameters
    ----------
    n_clients : int
        ``n``.
    n_segments : int, default=1
        ``ℓ``.

    Returns
    -------
    int
        ``t``.

    Raises
    ------
    ValueError
        If no ``t >= 1`` satisfies ``2ℓ+2t-1 <= n``.

    Examples
    --------
    >>> default_colluders(10), default_colluders(16), default_colluders(4)
    (4, 6, 1)
    """
    n_clients = check_scalar(n_clients, "n_clients", "int", min_val=1)
    n_segments = check_scalar(n_segments, "n_segments", "int", min_val=1)
    t = math.ceil(n_clients / 3)
    cap = (n_clients + 1 - 2 * n_segments) // 2
    if cap < 1:
        raise ValueError(
            f"no t >= 1 satisfies 2ℓ+2t-1 <= n (SecFC Theorem 1) for n_clients={n_clients}, n_segments={n_segments}."
        )
    return max(1, min(t, cap))
