"""MUFC: one-shot secure federated K-means++ with exact unlearning (MUFC Alg. 1 and Alg. 4)."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass

import numpy as np

from fedlib._random import spawn_generators
from fedlib._typing import NDArrayFloat, NDArrayInt, SeedLike
from fedlib._validation import check_bool, check_is_fitted, check_option, check_scalar, warn_small_clients
from fedlib.base import FederatedClusterer, UnlearningMixin, UnlearningReport
from fedlib.cluster import (
    FederatedClusteringMixin,
    KMeans,
    UniformGrid,
    assign_to_nearest,
    draw_race_keys,
    kmeans_objective,
    kmeans_plusplus_indices,
    local_clusters,
)
from fedlib.exceptions import UnlearningRequestError
from fedlib.secagg import (
    hashed_scma_params,
    plain_sparse_sum,
    scma_params,
    secure_hashed_sparse_sum,
    secure_sparse_sum,
)
from fedlib.unlearn._ids import IdIndex
from fedlib.unlearn._seeding import _unlearn_seeding

_SERVER_DATA = ("uniform", "weighted_centers")
_INDUCED = ("bin_center", "own_sample")
_SERVER_UPDATE = ("lazy", "strict")
_AGGREGATION = ("scma", "scma-hashed", "plaintext")


@dataclass
class _ClientState:
    """What client l holds. Rows are never copied on a removal: a mask marks the ones still held.

    A removal that re-seeds no client only flips ``alive`` (``O(R)``); a
    re-seeding builds a new, compact state (``O(n K d)`` anyway).
    """

    ids: NDArrayInt  # row ids in the X given to fit, client row order
    index: IdIndex  # id -> row, by binary search
    X: NDArrayFloat
    keys: NDArrayFloat  # exponential-race keys, one row per point for the life of the model
    alive: np.ndarray  # bool: rows still held
    n_alive: int
    seeds: NDArrayInt  # rows of X, draw order (always alive)
    centers: NDArrayFloat
    labels: NDArrayInt  # local cluster of each row
    cells: NDArrayInt  # grid cell of each local centre
    bins: list[int]  # flat 1-based bin index of each local centre
    samples: NDArrayFloat  # server data generated for this client's rows ("uniform" mode)

    def counts(self) -> dict[int, int]:
        """q^(l): points per occupied bin (two centres in one bin add up)."""
        per_centre = np.bincount(self.labels[self.alive], minlength=len(self.bins))
        q: Counter[int] = Counter()
        for j, c in zip(self.bins, per_centre.tolist(), strict=True):
            if c:
                q[j] += c
        return dict(q)


class MUFC(UnlearningMixin, FederatedClusteringMixin, FederatedClusterer):
    """Machine Unlearning of Federated Clusters (Pan et al., ICLR 2023).

    Training is MUFC Alg. 1: each client seeds K centres with K-means++ (no
    Lloyd), quantizes them to a grid of step ``gamma`` and reports the number of
    its points per occupied bin; the bins are summed securely with SCMA (Alg. 2);
    the server generates data in the occupied bins and runs K-means++ and Lloyd.
    Unlearning is Alg. 4 with Alg. 3 at the client: :meth:`unlearn` forgets
    rows (by their index in the ``X`` given to ``fit``) or whole clients.

    Parameters
    ----------
    n_clusters : int, default=8
        K, at the clients and at the server (MUFC App. M.2). A client with
        fewer than K points seeds all of them, and ``fit`` warns.
    gamma : float or None, default=None
        Quantization step γ; ``None`` gives MUFC's default ``1 / sqrt(n)`` (MUFC Fig. 3), computed from the
        ``n`` rows given to :meth:`fit`. Forgetting keeps the grid, so with ``None`` the model after a request
        is not the one retraining gives (retraining on fewer rows takes a larger step) and the report says
        ``exact=False``; pass a fixed γ (e.g. ``1 / sqrt(n)`` of a public bound on ``n``, which MUFC Thm 4.1
        allows) for exact unlearning.
    client_lloyd : bool, default=False
        Full client K-means (MUFC Table 2). Every removal then retrains the client.
    server_data : {"uniform", "weighted_centers"}, default="uniform"
        "uniform" (MUFC's experiments, App. H): one point uniform in the bin per
        client point. "weighted_centers" (MUFC Sec. 4): bin centres weighted by counts.
    induced : {"bin_center", "own_sample"}, default="bin_center"
        Induced global cluster of a point (MUFC Def. 3.1): the server cluster of
        its local centre's bin centre, or ("own_sample", the authors' code, uniform
        mode only) the server cluster of the sample generated for the point.
    server_update : {"lazy", "strict"}, default="lazy"
        After a removal that re-seeds no client, "lazy" (the paper's Alg. 4 and
        its 84x) keeps the server centres and drops the removed points' samples;
        only the clients' models are then exactly unlearned. "strict" aggregates
        again and re-clusters whenever the aggregate changed: the whole model is
        exactly unlearned.
    aggregation : {"scma", "scma-hashed", "plaintext"}, default="scma"
        "scma" runs Alg. 2 for real (exact; its prime exceeds ``B^d``, and for
        grids of thousands of bits with thousands of non-zeros, FEMNIST's, root
        finding modulo it takes hours); "scma-hashed" runs the same algebra over
        hashed bin indices in a 62-bit field, with the indices carried in a
        table (:func:`fedlib.secagg.secure_hashed_sparse_sum`: the same sum, the
        server learns the same, seconds on FEMNIST); "plaintext" sums the same
        vectors in the clear for fast experiments (identical result, tested).
    server_n_init : int, default=10
        K-means restarts at the server.
    random_state : int, numpy.random.Generator or None, default=None
        Pass an int for reproducible output across multiple function calls.
        It never seeds SCMA's masks (see ``insecure_seeded_secrets``).
    insecure_seeded_secrets : bool, default=False
        ``False``: SCMA's zero-sum masks (and the hashed round's keys) come from
        the operating system's CSPRNG, whatever ``random_state``. ``True``: from
        a stream seeded by ``random_state``, a reproducible simulation that is
        **insecure**: whoever knows the seed recomputes the masks and reads every
        client's counts in its message. The model is the same either way (the
        secure sum is exact); only ``scma_attempts_`` of a hashed round can
        differ, when a fresh key makes bins collide.

    Attributes
    ----------
    grid_ : UniformGrid
        The quantization grid.
    server_centers_ : ndarray of shape (n_clusters, n_features)
        The server's centres.
    counts_ : dict
        The aggregate q, bin index -> points.
    scma_params_ : SCMAParams, HashedSCMAParams or None
        SCMA's public parameters (``aggregation="scma"`` or ``"scma-hashed"``), else ``None``.
    scma_attempts_ : int
        Rounds the last secure aggregation ran: 1, more when a hashed round's
        key made bins collide and it was rerun, 0 for plaintext.
    client_centers_ : list of ndarray or None
        Each client's local centres (``None`` for a removed client).
    client_counts_ : list of dict
        ``q^(l)`` of every active client, bin index -> points (what SCMA adds).
    fit_report_ : UnlearningReport
        Timing of training, in the same fields as a request to unlearn.
    n_features_in_ : int
        Features of the data given to ``fit``.
    n_clients_ : int
        Clients at fit time (removed ones included).
    federated_loss_ : float
        phi_f of MUFC Eq. (2) on the remaining data (recomputed after every request).

    Notes
    -----
    A removal that hits no seed costs ``O(R log n + R K)`` at the client, as
    MUFC Theorem 5.4 states: ids are found by binary search and removed rows
    are only masked. The clients' models equal bit for bit K-means++ rerun on
    the remaining rows with their race keys (``fedlib.audit.check_bitwise``), and
    so does the aggregate q when the last request aggregated and ``gamma`` is
    given: the default ``1 / sqrt(n)`` was computed with the forgotten rows, and
    retraining on fewer rows quantizes with a larger step (the server model then
    differs from retraining's even in distribution). The server's centres equal
    retraining in distribution only. Used in
    :doc:`/notebooks/mufc/training` and :doc:`/notebooks/mufc/unlearning`.

    References
    ----------
    C. Pan, J. Sima, S. Prakash, V. Rana, O. Milenkovic. "Machine Unlearning of
    Federated Clusters", ICLR 2023.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.data import make_blobs
    >>> from fedlib.unlearn import MUFC
    >>> X, _ = make_blobs((40, 40), 2, cluster_std=0.05, random_state=0)
    >>> parts = [np.arange(0, 40), np.arange(40, 80)]
    >>> model = MUFC(2, random_state=0).fit(X, parts=parts)
    >>> report = model.unlearn([5])  # row 5 of X, held by client 0
    >>> model.client_size(0), report.clients_retrained, report.server_refit, report.exact
    (39, (), False, False)

    Row 5 was not one of client 0's seeds: no client re-seeds (Alg. 3, line 2),
    and with ``server_update="lazy"`` the server keeps its centres, so the server
    model is not the one retraining would give (``exact`` is ``False``).

    >>> model.unlearn(clients=[1]).forgotten_clients, model.client_size(1)
    ((1,), 0)
    """

    def __init__(
        self,
        n_clusters: int = 8,
        *,
        gamma: float | None = None,
        client_lloyd: bool = False,
        server_data: str = "uniform",
        induced: str = "bin_center",
        server_update: str = "lazy",
        aggregation: str = "scma",
        server_n_init: int = 10,
        random_state: SeedLike = None,
        insecure_seeded_secrets: bool = False,
    ) -> None:
        self.n_clusters = n_clusters
        self.gamma = gamma
        self.client_lloyd = client_lloyd
        self.server_data = server_data
        self.induced = induced
        self.server_update = server_update
        self.aggregation = aggregation
        self.server_n_init = server_n_init
        self.random_state = random_state
        self.insecure_seeded_secrets = insecure_seeded_secrets

    # ----------------------------------------------------------------- training
    def fit(self, X, y=None, *, parts=None) -> MUFC:
        """Train on ``X`` split over clients (MUFC Alg. 1).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            All points, in a global row order.
        y : None
            Ignored; present for scikit-learn's ``fit(X, y)``.
        parts : list of array-like of int, optional
            Client ``l`` holds the rows ``X[parts[l]]``; they must partition the
            rows. ``None``: one client holds every row.

        Returns
        -------
        MUFC
            ``self``, fitted.

        Raises
        ------
        ValueError
            For an unknown option, ``induced="own_sample"`` without
            ``server_data="uniform"``, a non-positive ``gamma``, or ``parts``
            that do not partition the rows.

        Warns
        -----
        UserWarning
            Once per call, when some clients hold fewer points than
            ``n_clusters``: the message gives how many; each of them seeds all
            its points as centres (fewer than K).
        """
        check_option(self.server_data, "server_data", _SERVER_DATA)
        check_option(self.induced, "induced", _INDUCED)
        check_option(self.server_update, "server_update", _SERVER_UPDATE)
        check_option(self.aggregation, "aggregation", _AGGREGATION)
        if self.induced == "own_sample" and self.server_data != "uniform":
            raise ValueError("induced='own_sample' needs server_data='uniform' (a sample per point).")
        self._server_n_init = check_scalar(self.server_n_init, "server_n_init", "int", min_val=1)
        X, parts, k = self._check_fit_data(X, y, parts)
        n = X.shape[0]
        warn_small_clients([idx.size for idx in parts], k, "MUFC")
        if self.gamma is None:
            gamma = 1.0 / np.sqrt(n)
        else:
            gamma = check_scalar(self.gamma, "gamma", "real", min_val=0.0, include_min=False)
        self.grid_ = UniformGrid.from_data(X, gamma)
        streams = spawn_generators(self.random_state, len(parts) + 2)
        self._client_rngs = streams[: len(parts)]
        self._server_rng = streams[-2]
        seeded = check_bool(self.insecure_seeded_secrets, "insecure_seeded_secrets")
        self._mask_rng = streams[-1] if seeded else "secrets"
        self._k = k
        self.n_clients_ = len(parts)
        shape = dict(n_samples=n, n_bins=self.grid_.n_bins, n_clusters=k, n_clients=len(parts))
        make_params = {"scma": scma_params, "scma-hashed": hashed_scma_params}.get(self.aggregation)
        self.scma_params_ = None if make_params is None else make_params(**shape)
        self._clients: list[_ClientState | None] = []
        client_seconds = 0.0
        for idx, rng in zip(parts, self._client_rngs, strict=True):
            start = time.perf_counter()
            Xl = X[idx]
            keys = draw_race_keys(idx.size, min(k, idx.size), random_state=rng)
            seeds = kmeans_plusplus_indices(Xl, min(k, idx.size), np.ones(idx.size), rng, race_keys=keys)
            state = self._client_model(idx.copy(), Xl, keys, seeds)
            client_seconds = max(client_seconds, time.perf_counter() - start)
            self._clients.append(state)
        for state in self._clients:
            self._generate_samples(state)
        aggregation_seconds = self._aggregate()
        server_seconds = self._fit_server()
        self.fit_report_ = UnlearningReport(
            server_refit=True,
            rounds=1,
            client_seconds=client_seconds,
            aggregation_seconds=aggregation_seconds,
            server_seconds=server_seconds,
            bytes_sent=self._round_bytes(),
        )
        return self

    def _client_model(self, ids, Xl, keys, seeds, grid: UniformGrid | None = None) -> _ClientState:
        """Local centres (seeds, or Lloyd from them), local clusters, and their bins (Alg. 1, lines 2-4)."""
        grid = self.grid_ if grid is None else grid
        centers, labels = local_clusters(Xl, seeds, lloyd=bool(self.client_lloyd))
        cells = grid.cells(np.clip(centers, *self._grid_box(grid)))
        return _ClientState(
            ids=ids,
            index=IdIndex(ids),
            X=Xl,
            keys=keys,
            alive=np.ones(len(ids), dtype=bool),
            n_alive=len(ids),
            seeds=seeds,
            centers=centers,
            labels=labels,
            cells=cells,
            bins=grid.flat_index(cells),
            samples=np.empty(0),
        )

    def _grid_box(self, grid: UniformGrid | None = None) -> tuple[NDArrayFloat, NDArrayFloat]:
        """Bounds of the grid, for Lloyd centres (means stay inside the data's bounding box anyway)."""
        grid = self.grid_ if grid is None else grid
        lo = (grid.offset - 0.5) * grid.gamma
        hi = (grid.offset + np.asarray(grid.shape) - 0.5) * grid.gamma
        return lo, hi

    def _generate_samples(self, state: _ClientState) -> None:
        """Server data for this client's points (Alg. 1, line 6): one uniform point in its centre's bin."""
        if self.server_data == "uniform":
            state.samples = self.grid_.sample_uniform(state.cells[state.labels], self._server_rng)

    def _aggregate(self) -> float:
        """Secure sum of the q^(l) of the active clients (Alg. 1, line 5; Alg. 4, line 7)."""
        start = time.perf_counter()
        vectors = [c.counts() for c in self._clients if c is not None]  # client_counts_, before fitting ends
        if self.aggregation == "scma":
            self.counts_ = secure_sparse_sum(vectors, self.scma_params_, random_state=self._mask_rng).total
            self.scma_attempts_ = 1
        elif self.aggregation == "scma-hashed":
            result = secure_hashed_sparse_sum(vectors, self.scma_params_, random_state=self._mask_rng)
            self.counts_, self.scma_attempts_ = result.total, result.attempts
        else:
            self.scma_attempts_ = 0
            self.counts_ = plain_sparse_sum(vectors)
        return time.perf_counter() - start

    def _fit_server(self) -> float:
        """Server K-means++ and Lloyd on the generated data (Alg. 1, line 7)."""
        start = time.perf_counter()
        if self.server_data == "uniform":
            X_s = np.vstack([c.samples[c.alive] for c in self._clients if c is not None])
            weights = None
        else:
            bins = list(self.counts_)
            X_s = self.grid_.centers(self.grid_.cells_of(bins))
            weights = np.array([self.counts_[j] for j in bins], dtype=np.float64)
        k = min(self._k, X_s.shape[0])
        server = KMeans(k, n_init=self._server_n_init, random_state=self._server_rng)
        self.server_centers_ = server.fit(X_s, sample_weight=weights).cluster_centers_
        return time.perf_counter() - start

    # ------------------------------------------------------------- evaluation
    @property
    def client_centers_(self) -> list[NDArrayFloat | None]:
        """Each client's local centres ``C^(l)`` (``None`` for a removed client)."""
        check_is_fitted(self, "server_centers_")
        return [None if c is None else c.centers for c in self._clients]

    @property
    def client_counts_(self) -> list[dict[int, int]]:
        """``q^(l)`` of every active client now: bin index to points, the vectors SCMA adds (Alg. 1, line 4)."""
        check_is_fitted(self, "server_centers_")
        return [c.counts() for c in self._clients if c is not None]

    def client_ids(self, client: int) -> NDArrayInt:
        """Row ids (in the X given to fit) that client ``client`` still holds, in its row order.

        Parameters
        ----------
        client : int
            The client (0-based).

        Returns
        -------
        ndarray of int64
            The ids; empty for a removed client.

        Raises
        ------
        ValueError
            If ``client`` is out of range.
        """
        state = self._client_state(client)
        return np.empty(0, dtype=np.int64) if state is None else state.ids[state.alive]

    def client_size(self, client: int) -> int:
        """How many rows client ``client`` still holds (``O(1)``).

        Parameters
        ----------
        client : int
            The client (0-based).

        Returns
        -------
        int
            ``n^(l)`` after the removals so far; 0 for a removed client.

        Raises
        ------
        ValueError
            If ``client`` is out of range.
        """
        state = self._client_state(client)
        return 0 if state is None else state.n_alive

    def induced_labels(self) -> tuple[NDArrayInt, NDArrayInt]:
        """``(ids, labels)``: every remaining point's induced global cluster (MUFC Def. 3.1).

        Returns
        -------
        ids : ndarray of int64
            Row ids of the remaining points, client by client.
        labels : ndarray of int64
            Their induced global clusters, in the same order.
        """
        check_is_fitted(self, "server_centers_")
        ids, labels = [], []
        for state in self._clients:
            if state is None:
                continue
            if self.induced == "own_sample":
                lab = assign_to_nearest(state.samples[state.alive], self.server_centers_)[0]
            else:
                centre_labels = assign_to_nearest(self.grid_.centers(state.cells), self.server_centers_)[0]
                lab = centre_labels[state.labels[state.alive]]
            ids.append(state.ids[state.alive])
            labels.append(lab)
        return np.concatenate(ids), np.concatenate(labels)

    def remaining_data(self) -> tuple[NDArrayInt, NDArrayFloat]:
        """``(ids, X)`` of every point not yet removed, client by client (the order of :meth:`induced_labels`).

        Returns
        -------
        ids : ndarray of int64
            Row ids of the remaining points.
        X : ndarray of shape (len(ids), n_features)
            The points themselves.
        """
        check_is_fitted(self, "server_centers_")
        active = [c for c in self._clients if c is not None]
        return np.concatenate([c.ids[c.alive] for c in active]), np.vstack([c.X[c.alive] for c in active])

    @property
    def federated_loss_(self) -> float:
        """The loss phi_f of MUFC Eq. (2) on the remaining data: each point charged to its induced centre."""
        _, labels = self.induced_labels()
        _, X = self.remaining_data()
        return kmeans_objective(X, self.server_centers_, labels=labels)

    # -------------------------------------------------------------- unlearning
    def _model_state(self) -> dict[str, np.ndarray]:
        check_is_fitted(self, "server_centers_")
        state = {}
        for client, c in enumerate(self._clients):
            if c is not None:
                state[f"client {client} seeds"] = c.ids[c.seeds]
                state[f"client {client} centers"] = c.centers.copy()
        state.update(_aggregate_arrays(self.counts_, self.grid_))
        state["server centers"] = self.server_centers_.copy()
        return state

    def _retrained_state(self) -> dict[str, np.ndarray]:
        """MUFC Alg. 1 on the remaining rows, up to the server: each client's race keys, a grid of their own.

        Each client's K-means++ is rerun on its remaining rows with their race keys (MUFC Alg. 3 and Lemma
        5.1 make its model after removals equal this bit for bit), and the aggregate q is counted on the grid
        retraining builds: ``gamma`` (``1 / sqrt(n)`` of the remaining ``n`` when ``None``) over their range,
        cells given as absolute coordinates ``rint(x / gamma)``. The server's centres are left out: its refits
        draw from its stream as earlier refits left it (and the uniform samples of clients not re-seeded were
        drawn before), so they can equal retraining in distribution only.
        """
        check_is_fitted(self, "server_centers_")
        active = [(client, c) for client, c in enumerate(self._clients) if c is not None]
        X_all = np.vstack([c.X[c.alive] for _, c in active])
        if self.gamma is None:
            gamma = 1.0 / np.sqrt(X_all.shape[0])
        else:
            gamma = check_scalar(self.gamma, "gamma", "real", min_val=0.0, include_min=False)
        grid = UniformGrid.from_data(X_all, gamma)
        state, total = {}, Counter()
        for client, c in active:
            X_rest, keys_rest = c.X[c.alive], c.keys[c.alive]
            k = min(self._k, X_rest.shape[0])
            seeds = kmeans_plusplus_indices(X_rest, k, np.ones(len(X_rest)), 0, race_keys=keys_rest[:, :k])
            model = self._client_model(c.ids[c.alive], X_rest, keys_rest, seeds, grid)
            state[f"client {client} seeds"] = model.ids[seeds]
            state[f"client {client} centers"] = model.centers
            total.update(model.counts())
        state.update(_aggregate_arrays(dict(total), grid))
        return state

    def _held_samples(self) -> NDArrayInt:
        return np.concatenate([c.ids[c.alive] for c in self._clients if c is not None])

    def _held_clients(self) -> NDArrayInt:
        return np.array([c for c, state in enumerate(self._clients) if state is not None], dtype=np.int64)

    def _unlearn(self, samples: NDArrayInt, clients: NDArrayInt) -> UnlearningReport:
        """MUFC Alg. 4: each affected client unlearns its rows (Alg. 3), then one aggregation and server refit.

        A client that loses every remaining row is removed (``q^(l) <- 0``), as a
        client request. A request that re-seeds no client aggregates again only
        with ``server_update="strict"``; the server refits when the aggregate
        changed, and always when a client left.
        """
        gone = set(clients.tolist())
        by_client: dict[int, NDArrayInt] = {}
        for client, state in enumerate(self._clients):
            if state is None or client in gone:
                continue
            mine = samples[state.index.positions(samples) >= 0]
            if mine.size:
                by_client[client] = mine
        if len(gone) + sum(self._clients[c].n_alive == ids.size for c, ids in by_client.items()) >= len(
            self._held_clients()
        ):
            raise UnlearningRequestError("cannot unlearn every client: the model would have no data.")
        reseeded, client_seconds = [], 0.0
        for client, ids in by_client.items():
            state = self._clients[client]
            if state.n_alive == ids.size:  # the client's last rows: the client leaves
                gone.add(client)
                continue
            start = time.perf_counter()
            rows = state.index.positions(ids)
            k_l = len(state.seeds)
            hit = bool(np.isin(state.seeds, rows).any())  # O(R K): MUFC Alg. 3, line 2
            if hit or bool(self.client_lloyd) or state.n_alive - ids.size < k_l:
                new_state = self._reseed(client, state, rows)
                client_seconds = max(client_seconds, time.perf_counter() - start)
                self._clients[client] = new_state
                self._generate_samples(new_state)
                reseeded.append(client)
            else:  # seeds and local clusters of the remaining points are unchanged
                state.alive[rows] = False
                state.n_alive -= ids.size
                client_seconds = max(client_seconds, time.perf_counter() - start)
        for client in gone:
            self._clients[client] = None
        aggregation_seconds = server_seconds = 0.0
        aggregated = refit = bool(gone) or bool(reseeded) or self.server_update == "strict"
        if aggregated:
            old = self.counts_
            aggregation_seconds = self._aggregate()
            refit = bool(gone) or self.counts_ != old
            if refit:
                server_seconds = self._fit_server()
        if gone and not reseeded:
            client_seconds = 0.0  # a client that leaves computes nothing
        return UnlearningReport(
            forgotten_samples=tuple(samples.tolist()),
            forgotten_clients=tuple(sorted(set(clients.tolist()))),
            clients_retrained=tuple(reseeded),
            server_refit=refit,
            rounds=int(aggregated),
            client_seconds=client_seconds,
            aggregation_seconds=aggregation_seconds,
            server_seconds=server_seconds,
            bytes_sent=self._round_bytes() if aggregated else 0,
            exact=aggregated and self.gamma is not None,
            details={"left": tuple(sorted(gone - set(clients.tolist()))), **self._step_note()},
        )

    def _step_note(self) -> dict[str, str]:
        """Why a request is not exact when the grid step came from the data (``gamma=None``)."""
        if self.gamma is not None:
            return {}
        return {
            "note": f"the grid step 1/sqrt(n) = {self.grid_.gamma:.6g} was fixed at fit from every row; retraining "
            "on the remaining rows would take a larger step, so the model is not exactly retraining's: pass gamma"
        }

    def _round_bytes(self) -> int:
        """Bytes the active clients upload in one aggregation.

        SCMA: every client's message of ``message_bits``. Plaintext: every client's nonzero bins, each an index
        below ``grid_.n_bins`` in the fewest whole bytes and a 64-bit count.
        """
        if self.scma_params_ is None:
            index_bytes = -(-max(int(self.grid_.n_bins) - 1, 1).bit_length() // 8)
            return sum(len(c.counts()) * (index_bytes + 8) for c in self._clients if c is not None)
        active = sum(state is not None for state in self._clients)
        return active * -(-self.scma_params_.message_bits // 8)

    def _reseed(self, client: int, state: _ClientState, rows: NDArrayInt) -> _ClientState:
        """A compact new client model after removing ``rows``: Alg. 3 (or full retraining with client Lloyd)."""
        alive = state.alive.copy()
        alive[rows] = False
        X_rest, keys_rest, ids_rest = state.X[alive], state.keys[alive], state.ids[alive]
        k_l = len(state.seeds)
        if self.client_lloyd or len(ids_rest) < k_l:
            k_new = min(k_l, X_rest.shape[0])
            seeds = kmeans_plusplus_indices(
                X_rest, k_new, np.ones(len(X_rest)), self._client_rngs[client], race_keys=keys_rest[:, :k_new]
            )
        else:
            # Alg. 3 on the rows held before this request; earlier removals are already masked out.
            held = np.flatnonzero(state.alive)
            position = np.cumsum(state.alive) - 1
            result = _unlearn_seeding(
                state.X[held],
                position[state.seeds],
                position[rows],
                np.ones(held.size),
                state.keys[held],
                self._client_rngs[client],
            )
            seeds = result.seed_indices
        return self._client_model(ids_rest, X_rest, keys_rest, seeds)

    def _client_state(self, client: int) -> _ClientState | None:
        check_is_fitted(self, "server_centers_")
        client = check_scalar(client, "client", "int")
        if not 0 <= client < len(self._clients):
            raise ValueError(f"client={client} outside [0, {len(self._clients)}).")
        return self._clients[client]

    def _active_client(self, client: int) -> _ClientState:
        state = self._client_state(client)
        if state is None:
            raise ValueError(f"client {client} was already removed.")
        return state


def _aggregate_arrays(counts: dict[int, int], grid: UniformGrid) -> dict[str, np.ndarray]:
    """The aggregate q as arrays: the grid step γ, the occupied cells as absolute coordinates ``rint(x / γ)``,
    sorted, and their counts (cells and counts alone can coincide on grids of different steps)."""
    bins = list(counts)
    cells = grid.cells_of(bins) + grid.offset
    order = np.lexsort(cells.T[::-1])
    values = np.array([counts[j] for j in bins], dtype=np.int64)
    return {
        "grid step": np.array([grid.gamma], dtype=np.float64),
        "aggregate cells": cells[order],
        "aggregate counts": values[order],
    }
