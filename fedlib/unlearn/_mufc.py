"""MUFC: one-shot secure federated K-means++ with exact unlearning (MUFC Alg. 1 and Alg. 4)."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass

import numpy as np

from fedlib._typing import NDArrayFloat, NDArrayInt, SeedLike
from fedlib._validation import check_array, check_n_clusters, check_partition, spawn_generators
from fedlib.cluster._distance import assign_to_nearest
from fedlib.cluster._federated import local_clusters
from fedlib.cluster._kmeanspp import _kmeans_plusplus, draw_race_keys
from fedlib.cluster._lloyd import KMeans
from fedlib.cluster._quantize import UniformGrid
from fedlib.secagg import scma_params, secure_sparse_sum
from fedlib.unlearn._seeding import unlearn_kmeans_plusplus

_SERVER_DATA = ("uniform", "weighted_centers")
_INDUCED = ("bin_center", "own_sample")
_SERVER_UPDATE = ("lazy", "strict")
_AGGREGATION = ("scma", "plaintext")


@dataclass
class _ClientState:
    """What client l holds: its rows, their exponential-race keys, seeds and local clusters."""

    ids: NDArrayInt  # row ids in the X given to fit
    X: NDArrayFloat
    keys: NDArrayFloat
    seeds: NDArrayInt  # positions in X, draw order
    centers: NDArrayFloat
    labels: NDArrayInt  # local cluster of each row
    cells: NDArrayInt  # grid cell of each local centre
    bins: list[int]  # flat 1-based bin index of each local centre
    samples: NDArrayFloat  # server data generated for this client's rows ("uniform" mode)

    def counts(self) -> dict[int, int]:
        """q^(l): points per occupied bin (two centres in one bin add up; MUFC guide, ambiguity 19)."""
        per_centre = np.bincount(self.labels, minlength=len(self.bins))
        q: Counter[int] = Counter()
        for j, c in zip(self.bins, per_centre.tolist(), strict=True):
            if c:
                q[j] += c
        return dict(q)


@dataclass(frozen=True)
class RemovalReport:
    """What one unlearning request cost (MUFC Alg. 4)."""

    clients_reseeded: tuple[int, ...]  #: clients whose seeding had to be redrawn (Alg. 3 "retraining")
    server_refit: bool  #: whether the server clustered again
    client_seconds: float  #: slowest client (clients run in parallel)
    aggregation_seconds: float  #: SCMA or plaintext sum (excluded by the paper's timings)
    server_seconds: float

    @property
    def seconds(self) -> float:
        """Client plus server time, as the paper times a federated run (SCMA excluded)."""
        return self.client_seconds + self.server_seconds


class MUFC:
    """Machine Unlearning of Federated Clusters (Pan et al., ICLR 2023).

    Training is MUFC Alg. 1: each client seeds K centres with K-means++ (no
    Lloyd), quantizes them to a grid of step ``gamma`` and reports the number of
    its points per occupied bin; the bins are summed securely with SCMA (Alg. 2);
    the server generates data in the occupied bins and runs K-means++ and Lloyd.
    Unlearning is Alg. 4 with Alg. 3 at the client.

    Parameters
    ----------
    n_clusters : int
        K, at the clients and at the server (MUFC App. M.2).
    gamma : float or None
        Quantization step; ``None`` gives MUFC's default ``1 / sqrt(n)``.
    client_lloyd : bool, default=False
        Full client K-means (MUFC Table 2). Every removal then retrains the client.
    server_data : {"uniform", "weighted_centers"}
        "uniform" (MUFC's experiments): one point uniform in the bin per client
        point. "weighted_centers" (MUFC's theory): bin centres weighted by counts.
    induced : {"bin_center", "own_sample"}
        Induced global cluster of a point (MUFC Def. 3.1): the server cluster of
        its local centre's bin centre, or ("own_sample", the authors' code, uniform
        mode only) the server cluster of the sample generated for the point.
    server_update : {"lazy", "strict"}
        After a removal that re-seeds no client, "lazy" (the paper's Alg. 4 and
        its 84x) keeps the server centres and drops the removed points' samples;
        only the clients' models are then exactly unlearned. "strict" aggregates
        again and re-clusters whenever the aggregate changed: the whole model is
        exactly unlearned.
    aggregation : {"scma", "plaintext"}
        "scma" runs Alg. 2 for real (exact, slow for large d); "plaintext" sums
        the same vectors in the clear for fast experiments (identical result, tested).
    server_n_init : int, default=10
    random_state : int, Generator or None
        Pass an int for reproducible output across multiple function calls.

    Attributes
    ----------
    grid_ : UniformGrid
    server_centers_ : ndarray of shape (n_clusters, n_features)
    counts_ : dict
        The aggregate q, bin index -> points.
    scma_params_ : SCMAParams or None
    fit_report_ : RemovalReport
        Timing of training, in the same fields as a removal.
    """

    def __init__(
        self,
        n_clusters: int,
        *,
        gamma: float | None = None,
        client_lloyd: bool = False,
        server_data: str = "uniform",
        induced: str = "bin_center",
        server_update: str = "lazy",
        aggregation: str = "scma",
        server_n_init: int = 10,
        random_state: SeedLike = None,
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

    # ----------------------------------------------------------------- training
    def fit(self, X, parts) -> MUFC:
        """Train on ``X`` split over clients: ``parts[l]`` are the rows of client ``l``."""
        for name, value, allowed in (
            ("server_data", self.server_data, _SERVER_DATA),
            ("induced", self.induced, _INDUCED),
            ("server_update", self.server_update, _SERVER_UPDATE),
            ("aggregation", self.aggregation, _AGGREGATION),
        ):
            if value not in allowed:
                raise ValueError(f"{name}={value!r} should be one of {allowed}.")
        if self.induced == "own_sample" and self.server_data != "uniform":
            raise ValueError("induced='own_sample' needs server_data='uniform' (a sample per point).")
        X = check_array(X)
        n = X.shape[0]
        k = check_n_clusters(self.n_clusters, n)
        parts = check_partition(parts, n)
        gamma = 1.0 / np.sqrt(n) if self.gamma is None else float(self.gamma)
        self.grid_ = UniformGrid.from_data(X, gamma)
        streams = spawn_generators(self.random_state, len(parts) + 2)
        self._client_rngs = streams[: len(parts)]
        self._server_rng, self._mask_rng = streams[-2], streams[-1]
        self._k = k
        self._n_total = n
        self.scma_params_ = (
            scma_params(n_samples=n, n_bins=self.grid_.n_bins, n_clusters=k, n_clients=len(parts))
            if self.aggregation == "scma"
            else None
        )
        self._clients: list[_ClientState | None] = []
        client_seconds = 0.0
        for idx, rng in zip(parts, self._client_rngs, strict=True):
            start = time.perf_counter()
            Xl = X[idx]
            keys = draw_race_keys(idx.size, min(k, idx.size), random_state=rng)
            seeds = _kmeans_plusplus(Xl, min(k, idx.size), np.ones(idx.size), rng, race_keys=keys)
            state = self._client_model(idx.copy(), Xl, keys, seeds)
            client_seconds = max(client_seconds, time.perf_counter() - start)
            self._clients.append(state)
        for state in self._clients:
            self._generate_samples(state)
        aggregation_seconds = self._aggregate()
        server_seconds = self._fit_server()
        self.fit_report_ = RemovalReport((), True, client_seconds, aggregation_seconds, server_seconds)
        return self

    def _client_model(self, ids, Xl, keys, seeds) -> _ClientState:
        """Local centres (seeds, or Lloyd from them), local clusters, and their bins (Alg. 1 lines 1-3)."""
        centers, labels = local_clusters(Xl, seeds, lloyd=self.client_lloyd)
        cells = self.grid_.cells(np.clip(centers, *self._grid_box()))
        return _ClientState(ids, Xl, keys, seeds, centers, labels, cells, self.grid_.flat_index(cells), np.empty(0))

    def _grid_box(self) -> tuple[NDArrayFloat, NDArrayFloat]:
        """Bounds of the grid, for Lloyd centres (means stay inside the data's bounding box anyway)."""
        lo = (self.grid_.offset - 0.5) * self.grid_.gamma
        hi = (self.grid_.offset + np.asarray(self.grid_.shape) - 0.5) * self.grid_.gamma
        return lo, hi

    def _generate_samples(self, state: _ClientState) -> None:
        """Server data for this client's points (Alg. 1 line 5): one uniform point in its centre's bin."""
        if self.server_data == "uniform":
            state.samples = self.grid_.sample_uniform(state.cells[state.labels], self._server_rng)

    def _aggregate(self) -> float:
        """Secure sum of the q^(l) of the active clients (Alg. 1 line 4 / Alg. 4 line 7)."""
        start = time.perf_counter()
        vectors = [c.counts() for c in self._clients if c is not None]
        if self.aggregation == "scma":
            self.counts_ = secure_sparse_sum(vectors, self.scma_params_, random_state=self._mask_rng).total
        else:
            total: Counter[int] = Counter()
            for v in vectors:
                total.update(v)
            self.counts_ = dict(sorted(total.items()))
        return time.perf_counter() - start

    def _fit_server(self) -> float:
        """Server K-means++ and Lloyd on the generated data (Alg. 1 line 6)."""
        start = time.perf_counter()
        if self.server_data == "uniform":
            X_s = np.vstack([c.samples for c in self._clients if c is not None])
            weights = None
        else:
            bins = list(self.counts_)
            X_s = self.grid_.centers(self.grid_.cells_of(bins))
            weights = np.array([self.counts_[j] for j in bins], dtype=np.float64)
        k = min(self._k, X_s.shape[0])
        server = KMeans(k, n_init=self.server_n_init, random_state=self._server_rng).fit(X_s, sample_weight=weights)
        self.server_centers_ = server.cluster_centers_
        return time.perf_counter() - start

    # ------------------------------------------------------------- evaluation
    @property
    def n_clients(self) -> int:
        return len(self._clients)

    @property
    def client_centers_(self) -> list[NDArrayFloat | None]:
        return [None if c is None else c.centers for c in self._clients]

    def client_ids(self, client: int) -> NDArrayInt:
        """Row ids (in the X given to fit) that client ``client`` still holds."""
        state = self._clients[client]
        return np.empty(0, dtype=np.int64) if state is None else state.ids.copy()

    def induced_labels(self) -> tuple[NDArrayInt, NDArrayInt]:
        """``(ids, labels)``: every remaining point's induced global cluster (MUFC Def. 3.1)."""
        ids, labels = [], []
        for state in self._clients:
            if state is None:
                continue
            if self.induced == "own_sample":
                lab = assign_to_nearest(state.samples, self.server_centers_)[0]
            else:
                centre_labels = assign_to_nearest(self.grid_.centers(state.cells), self.server_centers_)[0]
                lab = centre_labels[state.labels]
            ids.append(state.ids)
            labels.append(lab)
        return np.concatenate(ids), np.concatenate(labels)

    def federated_loss(self) -> float:
        """phi_f of MUFC Eq. (2) on the remaining data: each point charged to its induced centre."""
        _, labels = self.induced_labels()
        _, X = self.remaining_data()  # same client order as induced_labels
        diff = X - self.server_centers_[labels]
        return float(np.einsum("ij,ij->", diff, diff))

    def remaining_data(self) -> tuple[NDArrayInt, NDArrayFloat]:
        """``(ids, X)`` of every point not yet removed, client by client."""
        active = [c for c in self._clients if c is not None]
        return np.concatenate([c.ids for c in active]), np.vstack([c.X for c in active])

    # -------------------------------------------------------------- unlearning
    def remove(self, client: int, ids) -> RemovalReport:
        """Forget rows ``ids`` (row ids of the X given to fit) held by ``client`` (MUFC Alg. 4, single client).

        Raises ``ValueError`` for an id the client never held or already removed.
        """
        state = self._active_client(client)
        ids = np.atleast_1d(np.asarray(ids, dtype=np.int64))
        if ids.size == 0:
            raise ValueError("nothing to remove: ids is empty.")
        if np.unique(ids).size != ids.size:
            raise ValueError("ids lists a point more than once.")
        position = {int(g): i for i, g in enumerate(state.ids.tolist())}
        unknown = [int(g) for g in ids if int(g) not in position]
        if unknown:
            raise ValueError(f"client {client} does not hold rows {unknown}: never assigned to it, or already removed.")
        rows = np.array([position[int(g)] for g in ids])
        start = time.perf_counter()
        keep = np.ones(len(state.ids), dtype=bool)
        keep[rows] = False
        if keep.sum() == 0:
            return self.remove_clients([client])
        k_l = len(state.seeds)
        if self.client_lloyd or keep.sum() < k_l:
            reseeded = True  # full client training: any removal retrains the client
            X_rest, keys_rest = state.X[keep], state.keys[keep]
            k_new = min(k_l, X_rest.shape[0])
            seeds = _kmeans_plusplus(
                X_rest, k_new, np.ones(len(X_rest)), self._client_rngs[client], race_keys=keys_rest[:, :k_new]
            )
        else:
            result = unlearn_kmeans_plusplus(state.X, state.seeds, rows, race_keys=state.keys)
            reseeded, seeds = result.reseeded, result.seed_indices
            X_rest, keys_rest = state.X[keep], state.keys[keep]
        old_samples = state.samples
        if reseeded:
            new_state = self._client_model(state.ids[keep], X_rest, keys_rest, seeds)
        else:  # seeds and local clusters of the remaining points are unchanged (Alg. 3 line 2)
            new_state = _ClientState(
                state.ids[keep],
                X_rest,
                keys_rest,
                seeds,
                state.centers,
                state.labels[keep],
                state.cells,
                state.bins,
                np.empty(0),
            )
        client_seconds = time.perf_counter() - start
        self._clients[client] = new_state
        aggregation_seconds = server_seconds = 0.0
        refit = reseeded or self.server_update == "strict"
        if reseeded:
            self._generate_samples(new_state)
        elif self.server_data == "uniform":
            new_state.samples = old_samples[keep]  # the code's lazy path: drop the removed points' samples
        if refit:
            old = self.counts_
            aggregation_seconds = self._aggregate()
            refit = self.counts_ != old
            if refit:
                server_seconds = self._fit_server()
        return RemovalReport((client,) if reseeded else (), refit, client_seconds, aggregation_seconds, server_seconds)

    def remove_clients(self, clients) -> RemovalReport:
        """Forget every point of the given clients (MUFC Alg. 4, multi-client removal: q^(l) <- 0)."""
        clients = sorted({int(c) for c in np.atleast_1d(clients)})
        for c in clients:
            self._active_client(c)
        if len([s for s in self._clients if s is not None]) <= len(clients):
            raise ValueError("cannot remove every client: the model would have no data.")
        for c in clients:
            self._clients[c] = None
        aggregation_seconds = self._aggregate()
        server_seconds = self._fit_server()
        return RemovalReport((), True, 0.0, aggregation_seconds, server_seconds)

    def _active_client(self, client: int) -> _ClientState:
        if not 0 <= int(client) < len(self._clients):
            raise ValueError(f"client={client} outside [0, {len(self._clients)}).")
        state = self._clients[int(client)]
        if state is None:
            raise ValueError(f"client {client} was already removed.")
        return state
