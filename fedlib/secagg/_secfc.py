"""SecFC: Lloyd's K-means run exactly on Lagrange-coded, secret-shared data (Li, Hou, Buyukates, Avestimehr 2022).

Phase 1 (SecFC Alg. 1, lines 1-4): every point is quantized into GF(q) and
LCC-shared among the ``n`` clients (:mod:`fedlib.secagg`). Phase 2 (lines
5-19): for the current clustering every client computes, on its shares alone,
coded centres ``μ̃_{h,j} = Σ_{i∈S_h} x̃_{i,j}`` and coded distances
``d̃_{i,h,j} = ||μ̃_{h,j} − |S_h| x̃_{i,j}||²`` — evaluations at ``α_j`` of a
polynomial of degree ``2(ℓ+t-1)`` — and the server interpolates it from any
``2ℓ+2t-1`` clients (Theorem 1) to get ``d'_{i,h}``, then assigns points.

Client work per round, with ``X̃_j`` the ``m × ⌈d/ℓ⌉`` share matrix:
``M̃ = onehot(S) X̃_j`` (the coded centre sums), then
``d̃ = ||μ̃_h||² − 2|S_h| x̃_i·μ̃_h + |S_h|² ||x̃_i||²`` as one product of
``[X̃_j | ||x̃_i||² | 1]`` (``||x̃_i||²`` computed once) with
``[−2|S_h| M̃ | |S_h|² | ||μ̃_h||²]ᵀ``: exact modular matrix products at BLAS
speed on the augmented share matrix, split into limbs once
(:class:`fedlib.field.LimbMatrix`). The server's decoding is one weighted sum
of the responses (precomputable Lagrange weights), ``O(k m R)`` per round.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable
from functools import partial

import numpy as np

from fedlib._random import check_random_state, spawn_generators
from fedlib._typing import NDArrayFloat, NDArrayInt, SeedLike
from fedlib._validation import check_bool, check_is_fitted, check_option, check_scalar
from fedlib.base import FederatedClusterer
from fedlib.cluster import (
    cluster_sizes,
    cluster_sums,
    distance_lloyd,
    kmeans_objective,
    membership_matrix,
    nearest_centre_labels,
)
from fedlib.field import (
    LagrangeCode,
    LimbMatrix,
    check_decoded,
    check_modulus,
    collapsed_features,
    mulmod,
    sum_mod,
    to_field,
    to_fixed_point,
)
from fedlib.secagg._lcc import share_all, share_every_index
from fedlib.secagg._overflow import SECFC_PRIME, check_radius, check_round, check_scale, data_radius, max_safe_scale

_FEATURE_SCALINGS = ("center", "standardize")


class CodedDistances:
    """SecFC Phase 2 as a distance oracle: clients compute on shares, the server decodes (Alg. 1, lines 8-16).

    Every call is one round. ``n_responders`` clients, chosen at random each
    round (``random_state``), compute and send their ``m × k`` coded distances; the
    server decodes from the first ``R = 2ℓ+2t-1`` and checks the others
    against the decoded polynomial, or, with ``correct_errors``, locates and
    drops up to ``⌊(n_responders − R)/2⌋`` corrupted responses
    (:meth:`fedlib.field.LagrangeCode.decode_correcting`). Per-round times are
    recorded per client and for the server.

    Parameters
    ----------
    code : LagrangeCode
        The public LCC parameters (its prime below 2**50).
    shares : ndarray of int64, shape (n_clients, m, ⌈d/ℓ⌉)
        ``shares[j]`` is client ``j``'s share of every point (Phase 1).
    n_responders : int
        Clients that answer each round.
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None, default=None
        Picks the responders (a Generator is used as is, so the caller's stream advances).
    round_check : callable or None, default=None
        Called with the public cluster sizes ``|S_h|`` before every round; it
        raises to refuse a round whose decoded distances are not certified to
        stay below ``q/2`` (:func:`fedlib.secagg.check_round`). ``None``: no
        check before the round (the caller has certified every round, e.g. by
        :func:`fedlib.secagg.check_scale`).
    correct_errors : bool, default=False
        Correct up to ``⌊(n_responders − R)/2⌋`` corrupted responses per round
        (Berlekamp-Welch) instead of raising at the first inconsistency.

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
    corrupted : list of list of int
        Per round, the clients whose responses were found corrupted and dropped
        (always empty without ``correct_errors``).

    Raises
    ------
    ValueError
        If the code's prime is not below 2**50.

    Examples
    --------
    Four clients hold LCC shares (``ℓ = t = 1``) of three integer points; any ``R = 3`` of them answer, and the
    server decodes ``d'_{i,h} = |S_h|² ||x_i − μ_h||²`` for the clustering ``{0, 1}``, ``{2}``:

    >>> import numpy as np
    >>> from fedlib.field import LagrangeCode
    >>> from fedlib.secagg import SECFC_PRIME, CodedDistances, share_all
    >>> code = LagrangeCode(n_clients=4, n_segments=1, n_masks=1, prime=SECFC_PRIME)
    >>> X = np.array([[0, 0], [2, 0], [10, 10]])
    >>> shares = share_all(code, X, [[0, 1], [2]], random_state=0)
    >>> oracle = CodedDistances(code, shares, n_responders=3, random_state=0)
    >>> oracle(np.array([0, 0, 1]), 2).tolist()
    [[4, 200], [4, 164], [724, 0]]
    >>> len(oracle.responders[0])
    3
    """

    def __init__(
        self,
        code: LagrangeCode,
        shares: NDArrayInt,
        *,
        n_responders: int,
        random_state: SeedLike = None,
        round_check: Callable[[NDArrayInt], object] | None = None,
        correct_errors: bool = False,
    ) -> None:
        self.code = code
        self.q = check_modulus(code.prime)
        self.shares = shares
        self.n_samples = shares.shape[1]
        self.n_responders = n_responders
        self.rng = check_random_state(random_state)
        self.round_check = round_check
        self.correct_errors = correct_errors
        self.share_sq = np.stack([sum_mod(mulmod(S, S, self.q), self.q) for S in shares])  # ||x̃_{i,j}||², once
        self._limbs: dict[int, LimbMatrix] = {}
        self.client_seconds: list[list[float]] = []
        self.server_seconds: list[float] = []
        self.responders: list[list[int]] = []
        self.corrupted: list[list[int]] = []

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
        X = self._augmented(j)  # [X̃_j | ||x̃_i||² | 1], split into limbs once, reused every round
        M = self._centre_sums(j, membership_matrix(labels, n_clusters), sizes)  # coded centres, k × ⌈d/ℓ⌉
        centre_sq = sum_mod(mulmod(M, M, q), q)
        # d̃_{i,h} = [x̃_i, ||x̃_i||², 1] · [−2|S_h| μ̃_h, |S_h|², ||μ̃_h||²]: one product, m × k
        W = np.column_stack([mulmod(M, np.mod(-2 * sizes, q)[:, None], q), np.mod(sizes * sizes, q), centre_sq])
        return X.left_mul_transposed(W).T

    def _centre_sums(self, j: int, onehot, sizes: NDArrayInt) -> NDArrayInt:
        """``onehot @ X̃_j mod q``: summed in int64 when no cluster sum of residues can reach 2**63, else on limbs."""
        if int(sizes.max(initial=0)) * (self.q - 1) < 2**63:
            return np.mod(onehot @ self.shares[j], self.q)
        return self._augmented(j).left_mul(onehot)[:, :-2]

    def _augmented(self, j: int) -> LimbMatrix:
        """Client ``j``'s ``[X̃_j | ||x̃_i||² | 1]`` (``m × (⌈d/ℓ⌉ + 2)``), split into limbs at its first round."""
        if j not in self._limbs:
            shares = self.shares[j]
            augmented = np.empty((shares.shape[0], shares.shape[1] + 2), dtype=np.int64)
            augmented[:, :-2] = shares
            augmented[:, -2] = self.share_sq[j]
            augmented[:, -1] = 1
            self._limbs[j] = LimbMatrix(augmented, self.q)
        return self._limbs[j]

    def __call__(self, labels: NDArrayInt, n_clusters: int) -> NDArrayInt:
        """One round: the responders' coded distances, decoded to ``d'`` (int64, shape ``(m, n_clusters)``)."""
        if self.round_check is not None:
            self.round_check(cluster_sizes(labels, n_clusters))  # before any client computes
        responders = [int(j) for j in self.rng.permutation(self.code.n_clients)[: self.n_responders]]
        responses = np.empty((len(responders), self.n_samples, n_clusters), dtype=np.int64)
        seconds = []
        for r, j in enumerate(responders):
            start = time.perf_counter()
            responses[r] = self.client_response(j, labels, n_clusters)
            seconds.append(time.perf_counter() - start)
        start = time.perf_counter()
        if self.correct_errors:  # the random combination of coordinates comes from OS entropy, not the seeded rng
            result = self.code.decode_correcting(responses, responders, 2, targets="sum")
            decoded, corrupted = result.values, result.corrupted
        else:
            decoded, corrupted = self.code.decode(responses, responders, 2, targets="sum"), []
        decoded = check_decoded(decoded, self.q)  # a sanity check only: it cannot see every wrap-around
        self.server_seconds.append(time.perf_counter() - start)
        self.client_seconds.append(seconds)
        self.responders.append(responders)
        self.corrupted.append(corrupted)
        return decoded


class SecFC(FederatedClusterer):
    """Secure federated clustering (SecFC Alg. 1) in a single-process simulation.

    Parameters
    ----------
    n_clusters : int, default=8
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
        safe value, :func:`fedlib.secagg.max_safe_scale` (``1`` when every
        point is 0, where any ``λ`` is safe).
    radius : float or None, default=None
        Public bound ``R`` on every point's Euclidean norm (after
        ``feature_scaling``), used by the overflow bounds; the data must
        respect it. ``None``: the largest norm in the data (a simulation
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
    correct_errors : bool, default=False
        Each round, locate and drop up to ``⌊(n_responders − 2ℓ−2t+1)/2⌋``
        corrupted responses (Reed-Solomon decoding, LCC's ``N ≥ R + 2A``; Yu
        et al. 2019, Theorem 1) instead of raising
        :class:`fedlib.exceptions.DecodingError`; who was dropped is in ``corrupted_``.
    membership_privacy : bool, default=False
        Share every index from every client (Sec. 6, Eqs. (4)-(6)) so that the
        ownership of indices stays private; the clustering is the same.
    check_overflow : {"bound", "runtime"}, default="bound"
        ``"bound"``: refuse, before the protocol starts, a ``scale`` whose
        public bound ``m²(2λR+√d)²`` reaches ``q/2``
        (:func:`fedlib.secagg.check_scale`); every round is then exact.
        ``"runtime"``: certify each round before it runs from the public
        cluster sizes, ``|S_h|²(2λR+√d)² < q/2`` for every ``h``
        (:func:`fedlib.secagg.check_round`), and refuse the first round that
        fails. Also sound, and it admits a ``λ`` larger by up to about
        ``m / max_h |S_h|``, but the run can stop midway. Neither mode ever
        uses a wrapped-around ``d'``; the check that every decoded value lies
        below ``q/2`` (:func:`fedlib.field.check_decoded`) runs in both as a
        sanity check, and alone it would not be sound (a true ``d'`` in
        ``[q, 1.5q)`` decodes to a plausible value).
    feature_scaling : {None, "center", "standardize"}, default=None
        Per-feature rescaling before quantization. ``None``: the data as
        given. ``"center"``: subtract each feature's mean; distances are
        unchanged (only the quantization grid moves), and a feature that is
        large only through an offset no longer inflates ``R`` and shrinks
        ``λ``. ``"standardize"``: also divide each feature by its standard
        deviation (features with none are left as they are): this **changes
        the metric**, the clustering is K-means on the standardized features.
        In deployment the pooled means and deviations take one secure
        aggregation of the clients' per-feature sums and sums of squares, and
        are then known to every party; the simulation computes them from
        ``X``. A warning suggests this option when the scale collapses
        features. Not part of SecFC, which quantizes the raw data (App. A).
    random_state : int, numpy.random.Generator or None, default=None
        An int gives the same initialisation as
        :func:`fedlib.cluster.centralized_lloyd` with that ``random_state``,
        and fixes which clients respond. It never seeds the shares' masks
        (see ``insecure_seeded_secrets``).
    insecure_seeded_secrets : bool, default=False
        ``False``: every client draws the ``t`` masks of its shares from the
        operating system's CSPRNG, whatever ``random_state``. ``True``: from
        streams seeded by ``random_state``, a reproducible simulation that is
        **insecure**: whoever knows the seed recomputes the masks and so every
        point from a single share. The clustering is the same either way (the
        decoding is exact).

    Attributes
    ----------
    n_features_in_ : int
        Features of the data given to ``fit``.
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
        ``R`` used by the overflow bound (of the rescaled data).
    feature_offset_ : ndarray of shape (n_features,)
        Subtracted from every feature before quantization (zeros unless ``feature_scaling``).
    feature_divisor_ : ndarray of shape (n_features,)
        Then divided by (ones unless ``feature_scaling="standardize"``).
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
    corrupted_ : list of list of int
        Per round, the responders whose corrupted responses were dropped.
    upload_elements_per_round_ : int
        Field elements each client sends per round: ``k m``.

    Notes
    -----
    The masks come from the operating system's CSPRNG unless
    ``insecure_seeded_secrets=True``; the initialisation and the responders
    come from ``random_state``, so a seed fixes every output bit. A fitted model
    keeps, of all the shares, only the coded centre sums of the final
    clustering at ``ℓ+t`` clients: what :meth:`reveal_centers` needs.
    Used in :doc:`/notebooks/secfc/secure_clustering`.

    References
    ----------
    S. Li, S. Hou, B. Buyukates, S. Avestimehr. "Secure Federated Clustering", 2022.

    Examples
    --------
    >>> from fedlib.secagg import SecFC
    >>> from fedlib.cluster import centralized_lloyd
    >>> from fedlib.data import iid_partition, make_gaussian_mixture
    >>> ds = make_gaussian_mixture(200, 5, 3, random_state=0)
    >>> model = SecFC(3, random_state=0).fit(ds.X, parts=iid_partition(200, 7, random_state=0))
    >>> plain = centralized_lloyd(ds.X, 3, scale=model.scale_, random_state=0)
    >>> bool((model.labels_ == plain.labels).all())  # SecFC Theorem 1: Lloyd on the quantized data, exactly
    True
    """

    _fitted_attribute = "labels_"

    def __init__(
        self,
        n_clusters: int = 8,
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
        correct_errors: bool = False,
        feature_scaling: str | None = None,
        random_state: SeedLike = None,
        insecure_seeded_secrets: bool = False,
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
        self.correct_errors = correct_errors
        self.feature_scaling = feature_scaling
        self.random_state = random_state
        self.insecure_seeded_secrets = insecure_seeded_secrets

    def fit(self, X, y=None, *, parts=None) -> SecFC:
        """Share the data of the clients ``parts`` (row indices of ``X``) and run coded Lloyd.

        Parameters
        ----------
        X : array-like of shape (m, d)
            All points, in a global row order.
        y : None
            Ignored; present for scikit-learn's ``fit(X, y)``.
        parts : list of array-like of int, optional
            Client ``j`` holds the rows ``X[parts[j]]``; they must partition the
            rows. ``None``: one client holds every row.

        Returns
        -------
        SecFC
            ``self``, fitted.

        Raises
        ------
        TypeError
            If ``X`` is not real (complex data is refused, not truncated).
        ValueError
            If ``n_clients < 2ℓ+2t-1`` or ``n_responders`` lies outside
            ``[2ℓ+2t-1, n_clients]`` (SecFC Theorem 1), if ``t = 0`` (no privacy) or ``t >= n_clients``,
            if ``parts`` does not partition the rows, if ``radius`` is infinite or
            below the largest norm of the data, or if that norm overflows float64.
        fedlib.exceptions.FieldOverflowError
            With ``check_overflow="bound"``, if ``scale`` can overflow GF(q);
            with ``"runtime"``, at the first round that the cluster sizes do
            not certify (:func:`fedlib.secagg.check_round`).

        Warns
        -----
        RuntimeWarning
            If the scale collapses features: a feature that varies but whose
            whole range is below one quantization step ``1/λ``
            (:func:`fedlib.field.collapsed_features`), typically because one
            large or offset feature sets ``R``; ``feature_scaling`` is the remedy.
        """
        X, parts, k = self._check_fit_data(X, y, parts)
        m, d = X.shape
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
        seeded = check_bool(self.insecure_seeded_secrets, "insecure_seeded_secrets")
        offset, divisor = feature_transform(X, self.feature_scaling)
        Z = (X - offset) / divisor if self.feature_scaling is not None else X
        norm = data_radius(Z)
        if self.radius is None:
            radius = norm
        else:
            radius = check_radius(self.radius)
            if norm > radius * (1 + 1e-12):  # each client can check its own points against the public R
                raise ValueError(
                    f"radius={self.radius!r} is below the largest norm of the data, {norm:.6g}: the overflow bound "
                    "m²(2λR+√d)² would not hold. radius must bound every point's Euclidean norm"
                    + (" after feature_scaling." if self.feature_scaling is not None else ".")
                )
        if self.scale is None:
            scale = max_safe_scale(m, d, radius, q)
            if math.isinf(scale):  # R = 0: every point is 0, and any λ quantizes it to 0
                scale = 1.0
        else:
            scale = check_scalar(
                self.scale, "scale", "real", min_val=0.0, include_min=False, max_val=math.inf, include_max=False
            )
        if self.check_overflow == "bound":
            check_scale(scale, m, d, radius, q)
            round_check = None  # implied: |S_h| <= m in every round
        else:
            round_check = partial(check_round, n_features=d, radius=radius, scale=scale, q=q)
        _warn_collapsed(Z, scale, radius)
        # Child 0 initialises, as in fedlib.cluster.centralized_lloyd (a spawned child does not depend on n).
        init_rng, share_rng, network_rng = spawn_generators(self.random_state, 3)

        start = time.perf_counter()
        X_field = to_field(to_fixed_point(Z, scale), q)
        share = share_every_index if self.membership_privacy else share_all
        shares = share(code, X_field, parts, random_state=share_rng if seeded else "secrets")
        self.sharing_seconds_ = time.perf_counter() - start

        oracle = CodedDistances(
            code, shares, n_responders=n_responders, random_state=network_rng, round_check=round_check,
            correct_errors=bool(self.correct_errors),
        )  # fmt: skip
        run = distance_lloyd(oracle, k, init=self.init, max_iter=self.max_iter, random_state=init_rng)
        self.code_ = code
        self.scale_ = scale
        self.radius_ = radius
        self.feature_offset_ = offset
        self.feature_divisor_ = divisor
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
        self.corrupted_ = oracle.corrupted
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
        ``λ |S_h|`` (in the reals) gives the centres, mapped back through
        ``feature_scaling`` to the units of the data. Not part of Alg. 1: the
        paper keeps centres secret unless the clients choose to reveal them.

        Returns
        -------
        ndarray of shape (n_clusters, n_features)
            The quantized means divided by ``λ`` (times ``feature_divisor_``,
            plus ``feature_offset_``); NaN rows for empty clusters.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            Before :meth:`fit`.
        """
        check_is_fitted(self, "labels_")
        return self._scaled_centers() * self.feature_divisor_ + self.feature_offset_

    def _scaled_centers(self) -> NDArrayFloat:
        """The revealed centres in the rescaled units the clustering used."""
        code = self.code_
        k = self._coded_sums.shape[1]
        segments = code.decode(self._coded_sums, self._reveal_clients, 1)  # (ℓ, k, width)
        sums = np.concatenate(list(segments), axis=1)[:, : self.n_features_in_]
        sizes = cluster_sizes(self.labels_, k).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            return code.field.signed(sums).astype(np.float64) / (self.scale_ * sizes[:, None])

    def predict(self, X) -> NDArrayInt:
        """Nearest revealed centre (:meth:`reveal_centers`) for each row of ``X``: this reveals the centres.

        Distances are measured after ``feature_scaling``, as in the clustering.

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
        X = self._check_predict_data(X)
        centers = self._scaled_centers()
        alive = np.flatnonzero(~np.isnan(centers).any(axis=1))  # an empty cluster is nobody's nearest centre
        if self.feature_scaling is not None:
            X = (X - self.feature_offset_) / self.feature_divisor_
        return alive[nearest_centre_labels(X, centers[alive])]

    @property
    def history_(self) -> list[NDArrayInt]:
        """Clusterings from the initial one to the last (``run_.history``)."""
        check_is_fitted(self, "run_")
        return self.run_.history


def feature_transform(X: NDArrayFloat, feature_scaling: str | None) -> tuple[NDArrayFloat, NDArrayFloat]:
    """Offset and divisor of SecFC's ``feature_scaling``: the data enter as ``(X − offset) / divisor``.

    Parameters
    ----------
    X : ndarray of shape (m, d)
        The pooled data (in deployment: per-feature sums and sums of squares,
        securely aggregated).
    feature_scaling : {None, "center", "standardize"}
        ``None``: zeros and ones. ``"center"``: the feature means and ones.
        ``"standardize"``: the means and the standard deviations (1 where a
        feature is constant).

    Returns
    -------
    offset, divisor : ndarray of shape (d,)
        What to subtract, then what to divide by.

    Raises
    ------
    ValueError
        For another ``feature_scaling``.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.secagg import feature_transform
    >>> offset, divisor = feature_transform(np.array([[0.0, 1.0], [2.0, 1.0]]), "standardize")
    >>> offset.tolist(), divisor.tolist()
    ([1.0, 1.0], [1.0, 1.0])
    """
    d = X.shape[1]
    if feature_scaling is None:
        return np.zeros(d), np.ones(d)
    check_option(feature_scaling, "feature_scaling", _FEATURE_SCALINGS)
    offset = X.mean(axis=0)
    if feature_scaling == "center":
        return offset, np.ones(d)
    std = X.std(axis=0)
    return offset, np.where(std > 0, std, 1.0)


def _warn_collapsed(Z: NDArrayFloat, scale: float, radius: float) -> None:
    """Warn when ``scale`` leaves some varying feature less than one quantization step of range (issue 11, item 8)."""
    lost = collapsed_features(Z, scale)
    if lost.size == 0:
        return
    spread = np.max(Z[:, lost], axis=0) - np.min(Z[:, lost], axis=0)
    worst = int(lost[np.argmax(spread)])
    warnings.warn(
        f"quantizing with scale λ={scale:.3g} collapses {lost.size} of {Z.shape[1]} features (e.g. feature {worst}, "
        f"range {float(spread.max()):.3g}): each one's whole range is below one quantization step 1/λ = "
        f"{1 / scale:.3g}, so floor(λx) keeps at most two levels of it and the clustering barely sees it. λ is "
        f"limited by the radius R = {radius:.3g} (the largest norm), which one large or offset feature can set. "
        "Pass feature_scaling='center' (subtracts the feature means; same distances) or "
        "feature_scaling='standardize' (unit variance per feature; changes the metric), or rescale the features.",
        RuntimeWarning,
        stacklevel=3,
    )


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
    >>> from fedlib.secagg import default_colluders
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
