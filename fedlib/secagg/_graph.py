"""Masking graphs of secure aggregation: the complete graph (SecAgg) and the Harary graph (SecAgg+).

In SecAgg (Bonawitz et al., CCS'17) every pair of clients shares a pairwise mask;
in SecAgg+ (Bell et al., CCS'20) only the pairs joined by an edge of a sparse
``m``-regular graph do. The graph matters for privacy as much as for cost: the
server can unmask the sum of every connected component of the graph restricted
to the clients it has not corrupted and who did not drop out, so a graph that
falls apart leaks partial sums (Liu et al., TDSC 2025, Fig. 3 and Requirement 3).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.sparse import csr_array
from scipy.sparse.csgraph import connected_components

from fedlib._random import check_random_state
from fedlib._typing import SeedLike
from fedlib._validation import check_bool, check_ids, check_scalar


@dataclass(frozen=True, eq=False)
class MaskingGraph:
    """An undirected graph on clients ``0..n-1``: who masks with whom.

    Parameters
    ----------
    neighbors : tuple of ndarray
        ``neighbors[i]``: the sorted neighbours of client ``i`` (never ``i`` itself); at least one client.
    allow_disconnected : bool, default=False
        A graph in several pieces is refused: even with every client alive, the
        server of a round on it learns the sum of each piece, not only the
        total. ``True`` accepts one, for experiments on what leaks.

    Attributes
    ----------
    n_clients : int
        ``n``.
    degree : int
        The largest number of neighbours of any client (``m`` for an ``m``-regular graph).
    n_edges : int
        Number of edges.

    Raises
    ------
    ValueError
        If there is no client, an id is not a whole number or not a client in
        ``[0, n)``, a client is its own neighbour, an edge goes one way only, or
        the graph is not connected (unless ``allow_disconnected``).
    TypeError
        If ids are not numbers.

    Examples
    --------
    >>> from fedlib.secagg import MaskingGraph
    >>> g = MaskingGraph.complete(4)
    >>> g.neighbors[2].tolist(), g.n_edges
    ([0, 1, 3], 6)
    """

    neighbors: tuple[np.ndarray, ...]
    allow_disconnected: bool = False
    _adjacency: csr_array = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        n = len(self.neighbors)
        if n < 1:
            raise ValueError(
                "a masking graph needs at least one client (neighbors has one entry per client), got 0 clients; "
                "secure aggregation itself needs at least 3."
            )
        neighbors = tuple(
            np.unique(check_ids(nb, f"the neighbour ids of client {i}")) for i, nb in enumerate(self.neighbors)
        )
        rows = np.repeat(np.arange(n), [nb.size for nb in neighbors])
        cols = np.concatenate(neighbors)
        if cols.size and (cols.min() < 0 or cols.max() >= n):
            raise ValueError(f"neighbours must be clients in [0, {n}).")
        if np.any(rows == cols):
            raise ValueError("a client cannot be its own neighbour.")
        adjacency = csr_array((np.ones(rows.size, dtype=np.int8), (rows, cols)), shape=(n, n))
        if (adjacency != adjacency.T).nnz:
            raise ValueError("the masking graph must be undirected: j in neighbors[i] iff i in neighbors[j].")
        object.__setattr__(self, "neighbors", neighbors)
        object.__setattr__(self, "_adjacency", adjacency)
        object.__setattr__(self, "allow_disconnected", check_bool(self.allow_disconnected, "allow_disconnected"))
        if not self.allow_disconnected:
            pieces = self.components()
            if len(pieces) > 1:
                raise ValueError(
                    f"the masking graph falls into {len(pieces)} components (the first: clients "
                    f"{pieces[0].tolist()[:10]}): the server of a round on it would learn the sum of each component, "
                    "not only the total. Connect it, or pass allow_disconnected=True for an experiment on what leaks."
                )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MaskingGraph):
            return NotImplemented
        return self.n_clients == other.n_clients and all(
            np.array_equal(a, b) for a, b in zip(self.neighbors, other.neighbors, strict=True)
        )

    __hash__ = None  # mutable-looking arrays inside: graphs compare by value, not by identity

    @classmethod
    def complete(cls, n_clients: int) -> MaskingGraph:
        """The complete graph of SecAgg (Bonawitz et al. 2017): every pair masks.

        Parameters
        ----------
        n_clients : int
            ``n`` >= 1.

        Returns
        -------
        MaskingGraph
            Every client's neighbours are all other clients.
        """
        n = check_scalar(n_clients, "n_clients", "int", min_val=1)
        everyone = np.arange(n)
        return cls(tuple(np.delete(everyone, i) for i in range(n)))

    @property
    def n_clients(self) -> int:
        """``n``."""
        return len(self.neighbors)

    @property
    def degree(self) -> int:
        """The largest degree."""
        return max((nb.size for nb in self.neighbors), default=0)

    @property
    def n_edges(self) -> int:
        """Number of (undirected) edges."""
        return sum(nb.size for nb in self.neighbors) // 2

    @property
    def adjacency(self) -> csr_array:
        """The symmetric ``n × n`` adjacency matrix (scipy sparse, int8)."""
        return self._adjacency

    def components(self, alive=None) -> list[np.ndarray]:
        """Connected components of the graph restricted to the ``alive`` clients.

        Parameters
        ----------
        alive : array-like of bool of shape (n_clients,) or of int, optional
            A boolean mask or a list of client ids; by default every client.

        Returns
        -------
        list of ndarray
            The components (sorted client ids), ordered by their smallest client.
            The server of a secure aggregation can learn the sum of each one
            (Liu et al. 2025, Fig. 3): one component means it learns only the total.
        """
        keep = self._alive_ids(alive)
        if keep.size == 0:
            return []
        sub = self._adjacency[keep][:, keep]
        _, labels = connected_components(sub, directed=False)
        order = np.unique(labels, return_index=True)[1]  # components by their smallest member
        return [keep[labels == labels[i]] for i in np.sort(order)]

    def is_connected(self, alive=None) -> bool:
        """Whether the ``alive`` clients form one connected component (Liu et al. 2025, Requirement 3).

        Parameters
        ----------
        alive : array-like of bool or int, optional
            As in :meth:`components`.

        Returns
        -------
        bool
            True for a single component (or no client at all).
        """
        return len(self.components(alive)) <= 1

    def connected_patterns(self, alive) -> np.ndarray:
        """For many sets of alive clients at once: whether each forms one connected component.

        Vectorised over the patterns (label propagation: each alive client takes
        the smallest label among its alive neighbours until nothing changes).

        Parameters
        ----------
        alive : array-like of bool, shape (n_patterns, n_clients)
            One set of alive clients per row.

        Returns
        -------
        ndarray of bool, shape (n_patterns,)
            True where the alive clients form one component (or there are none).

        Raises
        ------
        ValueError
            If a pattern does not have one entry per client.

        Examples
        --------
        >>> from fedlib.secagg import harary_graph
        >>> ring = harary_graph(6, 2, shuffle=False)
        >>> ring.connected_patterns([[1, 1, 1, 1, 1, 1], [1, 0, 1, 1, 0, 1], [1, 0, 1, 1, 1, 1]]).tolist()
        [True, False, True]
        """
        A = np.atleast_2d(np.asarray(alive, dtype=bool))
        n = self.n_clients
        if A.ndim != 2 or A.shape[1] != n:
            raise ValueError(f"alive patterns need shape (n_patterns, {n}), got {np.shape(alive)}.")
        widest = self.degree
        if widest == 0:
            return A.sum(axis=1) <= 1
        if self.n_edges == n * (n - 1) // 2:  # complete: any set of clients is connected
            return np.ones(A.shape[0], dtype=bool)
        # Neighbour table padded with a sentinel column n, whose label is always +inf.
        table = np.full((n, widest), n, dtype=np.int64)
        for i, nb in enumerate(self.neighbors):
            table[i, : nb.size] = nb
        chunk = max(1, 2**22 // (n * widest))  # bounds the (patterns, n, widest) gather
        return np.concatenate(
            [_connected(A[i : i + chunk], table) for i in range(0, A.shape[0], chunk)] or [np.ones(0, dtype=bool)]
        )

    def _alive_ids(self, alive) -> np.ndarray:
        n = self.n_clients
        if alive is None:
            return np.arange(n)
        alive = np.asarray(alive)
        if alive.dtype == bool:
            if alive.shape != (n,):
                raise ValueError(f"a boolean alive mask needs shape ({n},), got {alive.shape}.")
            return np.flatnonzero(alive)
        ids = np.unique(check_ids(alive, "alive"))
        if ids.size and (ids[0] < 0 or ids[-1] >= n):
            raise ValueError(f"alive clients must be ids in [0, {n}).")
        return ids


def _connected(A: np.ndarray, table: np.ndarray) -> np.ndarray:
    """:meth:`MaskingGraph.connected_patterns` for one chunk of patterns ``A`` and the padded neighbour table."""
    n = A.shape[1]
    dead = np.iinfo(np.int64).max
    labels = np.full((A.shape[0], n + 1), dead)
    labels[:, :n] = np.where(A, np.arange(n), dead)
    while True:
        spread = np.where(A, np.minimum(labels[:, :n], labels[:, table].min(axis=2)), dead)
        if np.array_equal(spread, labels[:, :n]):
            break
        labels[:, :n] = spread
    smallest = labels[:, :n].min(axis=1, keepdims=True)
    return np.all(~A | (labels[:, :n] == smallest), axis=1)


def harary_graph(n_clients: int, degree: int, *, shuffle: bool = True, random_state: SeedLike = None) -> MaskingGraph:
    """The Harary graph ``H(n, m)`` of SecAgg+ (Bell et al. 2020), with randomly permuted labels.

    The ``n`` clients sit on a circle in a random order; each is joined to its
    ``⌊m/2⌋`` nearest clients on either side and, for odd ``m``, to the client
    opposite. This is the ``m``-regular, ``m``-connected graph with the fewest
    edges (Harary 1962; Liu et al. 2025, Sec. II-D). A degree of ``n - 1`` or
    more gives the complete graph of SecAgg.

    Parameters
    ----------
    n_clients : int
        ``n`` >= 1.
    degree : int
        ``m`` >= 2 (a degree of 1 is a matching). Odd ``m`` needs even ``n`` (an ``m``-regular graph on ``n``
        vertices has ``n·m/2`` edges).
    shuffle : bool, default=True
        Seat the clients on the circle in a random order, as SecAgg+ does: the
        positions must be random for the connectivity argument (Liu et al.
        2025, Lemma 3). ``False`` seats client ``i`` at position ``i`` (figures).
    random_state : int, numpy.random.Generator or None, default=None
        Draws the seating order.

    Returns
    -------
    MaskingGraph
        Every client has ``min(m, n-1)`` neighbours.

    Raises
    ------
    ValueError
        If ``m`` is odd and ``n`` is odd (no ``m``-regular graph exists), or
        ``m = 1 < n - 1`` (a matching: disconnected).

    Examples
    --------
    >>> from fedlib.secagg import harary_graph
    >>> g = harary_graph(8, 2, random_state=0)  # a ring of 8 clients in a random order
    >>> g.degree, g.n_edges, g.is_connected()
    (2, 8, True)

    Liu et al.'s Fig. 3 graph is ``H(8, 3)`` in order: a ring plus diameters.
    Without clients 2, 4, 6, 8 (ids 1, 3, 5, 7) it falls into ``{u1, u5}`` and ``{u3, u7}``:

    >>> [c.tolist() for c in harary_graph(8, 3, shuffle=False).components([0, 2, 4, 6])]
    [[0, 4], [2, 6]]
    """
    n = check_scalar(n_clients, "n_clients", "int", min_val=1)
    m = check_scalar(degree, "degree (m)", "int", min_val=1)
    rng = check_random_state(random_state)
    if m >= n - 1:
        return MaskingGraph.complete(n)
    if m == 1:
        raise ValueError(f"degree 1 on {n} clients is a perfect matching, not a connected graph: use a degree >= 2.")
    if m % 2 and n % 2:
        raise ValueError(
            f"no {m}-regular graph on {n} clients exists (n·m/2 edges must be whole): use an even degree or an "
            "even number of clients."
        )
    offsets = list(range(1, m // 2 + 1)) + ([n // 2] if m % 2 else [])
    positions = np.arange(n)
    ring = [(positions + o) % n for o in offsets] + [(positions - o) % n for o in offsets]
    at_position = rng.permutation(n) if shuffle else np.arange(n)  # client sitting at each position
    position_of = np.argsort(at_position)
    neighbors = [at_position[np.array([r[position_of[u]] for r in ring])] for u in range(n)]
    return MaskingGraph(tuple(neighbors))
