"""SecAgg and SecAgg+: secure aggregation with double masking, as explicit protocol stages.

The server learns the sum of the surviving clients' vectors and nothing else
(Bonawitz et al., CCS'17, Fig. 4, semi-honest setting), even when clients drop
out. SecAgg+ (Bell et al., CCS'20) masks only along the edges of a sparse
Harary graph, so each client does ``O(log n)`` work instead of ``O(n)``. Liu
et al. (TDSC 2025) run SecAgg+ inside each cluster of their federated
unlearning scheme.

Stages (Bonawitz et al. 2017, rounds 0-3; the consistency check of the
malicious setting is omitted, as the threat model is semi-honest):

0. ``ADVERTISE_KEYS``: client ``i`` sends two X25519 public keys, ``c_i^PK``
   (to encrypt shares) and ``s_i^PK`` (to agree on masks). Survivors ``U1``.
1. ``SHARE_KEYS``: client ``i`` draws a self-mask seed ``b_i`` and
   Shamir-shares ``b_i`` and ``s_i^SK`` with threshold ``t`` among its share
   holders ``S(i)``, itself included: it keeps one share pair, and each other
   share is sealed with AES-GCM under ``KA(c_i^SK, c_j^PK)`` and routed by the
   server, who cannot read it. Survivors ``U2``.
2. ``MASKED_INPUT``: ``y_i = x_i + PRG(b_i) + Σ_{j ∈ N(i)∩U2, i<j} PRG(s_ij)
   − Σ_{j ∈ N(i)∩U2, i>j} PRG(s_ij)`` in ``Z_{2^32}``, with
   ``s_ij = KA(s_i^SK, s_j^PK)``. Survivors ``U3``.
3. ``UNMASKING``: given ``U3``, client ``i`` reveals its share of ``b_j`` for
   ``j ∈ U3`` and of ``s_j^SK`` for ``j ∈ U2 \\ U3``, never both for one ``j``;
   its own share of ``b_i`` is among them. The server rebuilds the seeds and
   removes the masks: ``z = Σ_{U3} x_i``.

Share holders: ``S(i) = N(i) ∪ {i}`` in SecAgg+ (``share_holders="neighbors"``;
Flower's SecAgg+ likewise has each client keep one of its shares) or every
client in SecAgg (``"all"``), as in Bonawitz et al. 2017, Fig. 4: client ``u``
shares ``s_u^SK`` and ``b_u`` among all of ``U1``, ``u`` included, and keeps
``s_{u,u}`` and ``b_{u,u}``. A survivor's self-mask seed thus counts its own
share, and with ``"all"`` a round completes with ``t`` survivors, as Liu et
al.'s Requirement 2 ("at least ``t`` users alive") states. A dropped client's
own share is gone with it: its ``s^SK`` needs ``t`` of the *other* holders.

The double mask is what makes dropouts safe: if a client's ``y_j`` arrives after
the server has asked for ``s_j^SK``, the pairwise masks come off but
``PRG(b_j)`` stays, and ``y_j`` still looks uniform.
"""

from __future__ import annotations

import enum
import math
import time
from collections.abc import Collection, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from scipy.sparse import csr_array

from fedlib._random import check_key_source
from fedlib._typing import SeedLike
from fedlib._validation import check_bool, check_scalar
from fedlib.exceptions import (
    DecodingError,
    PrivacyViolationError,
    ProtocolStageError,
    SecAggAbort,
    TamperedMessageError,
    WireFormatError,
)
from fedlib.field import MERSENNE_521, Shamir
from fedlib.secagg._crypto import (
    KEY_BYTES,
    agree,
    generate_keypair,
    open_sealed,
    prg_words,
    private_bytes,
    random_bytes,
    seal,
)
from fedlib.secagg._graph import MaskingGraph, harary_graph
from fedlib.secagg._wire import SHARE_BYTES, Reader, Tag, Writer

ID_BYTES = 4
"""Bytes of a client id on the wire."""

_SEALED_SHARE_BYTES = 2 * ID_BYTES + 2 * SHARE_BYTES + 16
"""A sealed pair of shares: sender, recipient and the two shares, plus the 16-byte AES-GCM tag."""

_MASK, _ENC = b"fedlib secagg mask seed", b"fedlib secagg share encryption"


class Stage(enum.IntEnum):
    """The stages of a SecAgg round (Bonawitz et al. 2017, Fig. 4), in order.

    Examples
    --------
    >>> from fedlib.secagg import Stage
    >>> [stage.name for stage in Stage]
    ['ADVERTISE_KEYS', 'SHARE_KEYS', 'MASKED_INPUT', 'UNMASKING', 'DONE']
    >>> Stage.SHARE_KEYS < Stage.MASKED_INPUT
    True
    """

    ADVERTISE_KEYS = 0
    SHARE_KEYS = 1
    MASKED_INPUT = 2
    UNMASKING = 3
    DONE = 4


# ----------------------------------------------------------------------------------------------- configuration
@dataclass(frozen=True)
class SecAggConfig:
    """Public parameters of one secure aggregation round.

    Parameters
    ----------
    graph : MaskingGraph
        Who masks with whom: :meth:`MaskingGraph.complete` for SecAgg,
        :func:`harary_graph` for SecAgg+.
    threshold : int
        ``t``: shares needed to rebuild a secret; also the fewest survivors
        with which the round may complete. At most the number of holders.
    vector_length : int
        ``d``, the length of every input (``uint32`` words of ``Z_{2^32}``).
    share_holders : {"neighbors", "all"}, default="neighbors"
        Who holds client ``i``'s shares: its graph neighbours and itself
        (SecAgg+, Bell et al. 2020; ``m + 1`` holders) or every client, itself
        included (SecAgg, Bonawitz et al. 2017, Fig. 4; Liu et al.'s
        "t-out-of-k within each cluster" with a sparse masking graph). Client
        ``i`` keeps its own share: it is never sealed nor routed, and it
        answers with it in the unmasking stage if it survived.
    allow_partial_sums : bool, default=False
        ``False``: a round whose survivors ``U3`` do not form one connected
        component of the masking graph aborts, at the server and at every
        honest client, before any unmasking share is revealed: unmasking it
        would let the server compute the sum of each component, down to a
        single client's input (Liu et al. 2025, Fig. 3). Shares among all clients
        make such rounds completable, so this is what stops them. ``True``
        lets them complete: **insecure**, for experiments on what leaks.
    round_id : int, default=0
        Bound into every sealed share, so shares of one round are rejected in another.
    server_model : {"semi-honest", "malicious"}, default="semi-honest"
        The server the threshold must resist. Semi-honest (Liu et al.'s threat
        model): it follows the protocol, so ``t >= 2`` suffices against one
        corrupted client. Malicious: it may tell different holders different
        survivor lists, so ``t`` must exceed half of every client's holders (its
        own share included), or it could collect ``t`` shares of both ``b_j``
        and ``s_j^SK`` and unmask ``x_j`` (Bell et al. 2020 take ``t`` above
        half the neighbourhood for this reason).

    Raises
    ------
    TypeError
        If ``graph`` is not a :class:`MaskingGraph` (wrap a list of neighbour
        arrays in ``MaskingGraph(tuple(...))``).
    ValueError
        If some client has fewer than ``t`` share holders (its secrets could
        never be rebuilt), ``t = 1`` (every holder alone could rebuild its
        peers' secrets: no privacy against a single corrupted client), or
        ``t`` is too low for a malicious server.

    Examples
    --------
    >>> from fedlib.secagg import SecAggConfig, harary_graph
    >>> config = SecAggConfig(harary_graph(10, 4, random_state=0), threshold=3, vector_length=5)
    >>> config.holders(0).size  # its 4 neighbours and itself
    5
    """

    graph: MaskingGraph
    threshold: int
    vector_length: int
    share_holders: str = "neighbors"
    round_id: int = 0
    server_model: str = "semi-honest"
    allow_partial_sums: bool = False
    _holders: tuple[np.ndarray, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.graph, MaskingGraph):
            raise TypeError(
                f"graph must be a MaskingGraph (MaskingGraph.complete(n) for SecAgg, harary_graph(n, m) for "
                f"SecAgg+, or MaskingGraph(neighbors) for a list of neighbour arrays), got {type(self.graph).__name__}."
            )
        t = check_scalar(self.threshold, "threshold (t)", "int", min_val=1)
        d = check_scalar(self.vector_length, "vector_length (d)", "int", min_val=1)
        round_id = check_scalar(self.round_id, "round_id", "int", min_val=0, max_val=2**32 - 1)
        if self.share_holders not in ("neighbors", "all"):
            raise ValueError(f"share_holders must be 'neighbors' or 'all', got {self.share_holders!r}.")
        n = self.graph.n_clients
        # Every client holds one share of its own secrets (Bonawitz et al. 2017, Fig. 4; Flower's SecAgg+).
        if self.share_holders == "neighbors":
            holders = tuple(
                np.union1d(np.asarray(nb, dtype=np.int64), [i]).astype(np.int64)
                for i, nb in enumerate(self.graph.neighbors)
            )
        else:
            everyone = np.arange(n, dtype=np.int64)
            holders = tuple(everyone for _ in range(n))
        fewest = min(h.size for h in holders)
        most = max(h.size for h in holders)
        if fewest < t:
            raise ValueError(
                f"threshold t={t} exceeds the {fewest} share holders (itself included) of some client: its secrets "
                "could never be rebuilt. Use a denser graph or a lower threshold."
            )
        if self.server_model not in ("semi-honest", "malicious"):
            raise ValueError(f"server_model must be 'semi-honest' or 'malicious', got {self.server_model!r}.")
        if t < 2:
            raise ValueError(
                "threshold t=1 gives no privacy: any single share holder could rebuild its peers' secrets and, with "
                "the server, unmask their inputs. Use t >= 2."
            )
        if self.server_model == "malicious" and 2 * t <= most:
            raise ValueError(
                f"threshold t={t} is at most half of the {most} share holders (itself included) of some client: a "
                "malicious server that gives different holders different survivor lists could collect t shares of "
                f"both secrets of one client and unmask its input. Use t > {most // 2}."
            )
        allow = check_bool(self.allow_partial_sums, "allow_partial_sums")
        for name, value in (("threshold", t), ("vector_length", d), ("round_id", round_id), ("_holders", holders),
                            ("allow_partial_sums", allow)):  # fmt: skip
            object.__setattr__(self, name, value)

    @classmethod
    def for_cluster(
        cls,
        cluster_size: int,
        *,
        degree: int | None,
        threshold_rate: float,
        vector_length: int,
        share_holders: str = "neighbors",
        threshold: int | None = None,
        round_id: int = 0,
        random_state: SeedLike = None,
    ) -> SecAggConfig:
        """The configuration of one cluster of Liu et al. (2025): Harary degree ``m`` and ``t = ⌈ξ·h⌉``.

        ``h`` is the number of holders of a client's shares, itself included:
        ``m + 1`` in SecAgg+ (its ``m`` neighbours and itself), the cluster
        size ``k`` when shares go to the whole cluster (Liu et al.'s
        "t-out-of-k within each cluster": ``k`` holders, ``t = ⌈ξk⌉``). ``t``
        is at least 2 and at most ``h``.

        Parameters
        ----------
        cluster_size : int
            ``k``.
        degree : int or None
            ``m``; ``None`` or ``>= k − 1`` gives the complete graph (SecAgg).
            An odd ``m`` on an odd ``k`` (no such regular graph) is rounded up.
        threshold_rate : float
            ``ξ`` in ``(0, 1]``.
        vector_length : int
            ``d``.
        share_holders : {"neighbors", "all"}, default="neighbors"
            Who holds a client's shares.
        threshold : int, optional
            A fixed ``t`` instead of ``⌈ξ·h⌉``: Liu et al. keep the ``t`` of the
            cluster as it was formed after some of its clients are unlearned
            (Requirement 2 counts the survivors against it). It may be as large
            as ``h``.
        round_id : int, default=0
            Bound into sealed shares.
        random_state : int, numpy.random.Generator or None, default=None
            Seats the clients on the Harary circle.

        Returns
        -------
        SecAggConfig
            The configuration.

        Raises
        ------
        ValueError
            If the cluster is too small for any private setting (``k < 3``), or
            a fixed ``threshold`` exceeds the ``h`` share holders left in it.
        """
        k = check_scalar(cluster_size, "cluster_size (k)", "int", min_val=1)
        if k < 3:
            raise ValueError(
                f"a cluster of k={k} clients has no private setting: with two clients each learns the other's input "
                "from the sum."
            )
        rate = check_scalar(threshold_rate, "threshold_rate (ξ)", "real", min_val=0.0, max_val=1.0, include_min=False)
        if degree is None or degree >= k - 1:
            graph = MaskingGraph.complete(k)
        else:
            m = int(degree) + (int(degree) % 2 and k % 2)
            graph = harary_graph(k, m, random_state=random_state)
        holders = k if share_holders == "all" else graph.degree + 1  # h: a client holds a share of its own secrets
        if threshold is None:
            t = int(min(max(math.ceil(rate * holders - 1e-9), 2), holders))
        else:
            t = check_scalar(threshold, "threshold (t)", "int", min_val=2)
            if t > holders:
                raise ValueError(
                    f"the fixed threshold t={t} exceeds the {holders} share holders (itself included) of each of the "
                    f"{k} clients left: no secret could be rebuilt (Requirement 2: at least t clients alive; the "
                    "cluster lost too many clients)."
                )
        return cls(graph, threshold=t, vector_length=vector_length, share_holders=share_holders, round_id=round_id)

    @property
    def n_clients(self) -> int:
        """Number of clients ``n``."""
        return self.graph.n_clients

    def holders(self, client: int) -> np.ndarray:
        """The clients who hold shares of ``client``'s secrets, sorted; share ``r`` goes to ``holders(client)[r]``.

        ``client`` is among them (Bonawitz et al. 2017, Fig. 4): it keeps its own
        share, which is never sealed nor routed through the server.

        Parameters
        ----------
        client : int
            A client id.

        Returns
        -------
        ndarray of int
            Sorted client ids.
        """
        return self._holders[client]

    def holder_matrix(self):
        """The sparse ``n × n`` 0/1 matrix ``H[i, j] = 1`` iff ``j`` holds shares of ``i``'s secrets.

        The diagonal is all ones: every client holds a share of its own secrets.

        Returns
        -------
        scipy.sparse.csr_array of int32
            One row per owner.
        """
        rows = np.repeat(np.arange(self.n_clients), [h.size for h in self._holders])
        cols = np.concatenate(self._holders)
        return csr_array((np.ones(rows.size, dtype=np.int32), (rows, cols)), shape=(self.n_clients, self.n_clients))

    def completes_without(self, dropped) -> np.ndarray:
        """Whether a round completes when the clients in ``dropped`` go silent before masking, for many patterns.

        With every other client answering every stage, the server needs ``t``
        live holders for the self-mask seed of each survivor (the survivor
        itself counts: it reveals its own share) and for the mask key of each
        dropped client (whose own share is gone with it), and ``t`` survivors;
        and, unless ``allow_partial_sums``, survivors that form one connected
        component of the masking graph. With shares among all clients on the
        complete graph this is exactly "at least ``t`` survivors".

        Parameters
        ----------
        dropped : array-like of bool, shape (n,) or (n_patterns, n)
            Dropout patterns (True: dropped).

        Returns
        -------
        bool or ndarray of bool
            Per pattern, whether the round outputs the sum (False: it aborts).

        Raises
        ------
        ValueError
            If a pattern does not have one entry per client.
        """
        D = np.asarray(dropped, dtype=bool)
        single = D.ndim == 1
        D = np.atleast_2d(D)
        if D.shape[1] != self.n_clients:
            raise ValueError(f"dropout patterns need {self.n_clients} columns, got {D.shape[1]}.")
        alive = (~D).astype(np.int32)
        live_holders = (self.holder_matrix() @ alive.T).T  # (n_patterns, n): live holders of each owner
        ok = np.all(live_holders >= self.threshold, axis=1) & (alive.sum(axis=1) >= self.threshold)
        if not self.allow_partial_sums and ok.any():
            ok[ok] = self.graph.connected_patterns(~D[ok])
        return bool(ok[0]) if single else ok

    def check_survivors(self, survivors: Collection[int]) -> None:
        """Refuse to unmask a round whose survivors would reveal less than their whole sum.

        The server and every honest client call this on ``U3`` before anything
        is unmasked: if the survivors fall into several components of the
        masking graph, the server could compute the sum of each one from its
        own view (Liu et al. 2025, Fig. 3).

        Parameters
        ----------
        survivors : collection of int
            ``U3``, the clients whose masked inputs are to be summed.

        Raises
        ------
        SecAggAbort
            If the survivors are not one connected component (and not ``allow_partial_sums``).
        """
        if self.allow_partial_sums:
            return
        pieces = self.graph.components(sorted(int(u) for u in survivors))
        if len(pieces) > 1:
            sizes = sorted((p.size for p in pieces), reverse=True)
            raise SecAggAbort(
                f"the {sum(sizes)} survivors fall into {len(pieces)} components of the masking graph (sizes {sizes}): "
                "unmasking would let the server compute each component's sum"
                + (", one of them a single client's input" if sizes[-1] == 1 else "")
                + ", not only the total. The round aborts and outputs nothing."
            )

    def context(self, stage: Stage) -> bytes:
        """Associated data of a sealed message: protocol, round and stage.

        Parameters
        ----------
        stage : Stage
            The stage the message belongs to.

        Returns
        -------
        bytes
            The label.
        """
        return b"fedlib-secagg/" + self.round_id.to_bytes(4, "big") + bytes([int(stage)])

    def to_bytes(self) -> bytes:
        """These public parameters as bytes, for a server to send its clients before a round.

        The layout (version 1, little-endian): ``b"FLSA"``, the version, a
        type tag; the masking graph (a complete graph by its size alone, any
        other by its neighbour lists); ``t``, ``d``, the share holders,
        ``round_id``, the server model and ``allow_partial_sums``.
        :meth:`from_bytes` rebuilds an equal configuration.

        Returns
        -------
        bytes
            The encoding; the same configuration always gives the same bytes.

        Raises
        ------
        ValueError
            If the graph is complete on more than 4096 clients: decoding its
            few bytes would allocate ``n²`` ids, so the parser refuses such
            graphs and the writer does too.

        Examples
        --------
        >>> from fedlib.secagg import SecAggConfig, harary_graph
        >>> config = SecAggConfig(harary_graph(6, 2, random_state=0), threshold=2, vector_length=4)
        >>> SecAggConfig.from_bytes(config.to_bytes()) == config
        True
        """
        writer = Writer(Tag.CONFIG)
        _write_config(writer, self)
        return writer.bytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> SecAggConfig:
        """Rebuild the configuration :meth:`to_bytes` encoded, refusing anything else.

        The bytes come from the network: every field is checked before the
        configuration is built, and the configuration then checks itself as
        when built directly (a threshold above the share holders, an
        asymmetric graph and so on are refused).

        Parameters
        ----------
        data : bytes
            What :meth:`to_bytes` returned (bytes, bytearray or memoryview).

        Returns
        -------
        SecAggConfig
            The configuration.

        Raises
        ------
        fedlib.exceptions.WireFormatError
            If the bytes are not exactly a version-1 configuration: wrong
            magic, version or tag, truncated, followed by more bytes, a
            neighbour id outside ``[0, n)`` or out of order, a complete graph
            on more than 4096 clients, or fields that make no valid
            configuration (the message says which).
        TypeError
            If ``data`` is not bytes-like.
        """
        reader = Reader(data, Tag.CONFIG)
        config = _read_config(reader)
        reader.end()
        return config


_SHARE_HOLDERS = ("neighbors", "all")
_SERVER_MODELS = ("semi-honest", "malicious")
_MAX_COMPLETE_CLIENTS = 4096
"""The largest complete graph the wire format carries: its decoding allocates ``n²`` neighbour ids from 6 bytes."""


def _write_config(writer: Writer, config: SecAggConfig) -> None:
    """Append ``config``'s fields (the layout of :meth:`SecAggConfig.to_bytes`)."""
    graph = config.graph
    n = graph.n_clients
    complete = graph.n_edges == n * (n - 1) // 2
    if complete and n > _MAX_COMPLETE_CLIENTS:
        raise ValueError(
            f"a complete masking graph on n={n} clients cannot be encoded: the wire format carries complete "
            f"graphs of at most {_MAX_COMPLETE_CLIENTS} clients (decoding allocates n² neighbour ids)."
        )
    writer.u8(complete, "the graph kind (1: complete, 0: neighbour lists)")
    writer.u8(graph.allow_disconnected, "allow_disconnected")
    writer.u32(n, "n_clients")
    if not complete:
        for i, neighbors in enumerate(graph.neighbors):
            writer.ids(neighbors, f"the neighbours of client {i}", n)
    writer.u32(config.threshold, "threshold")
    writer.u32(config.vector_length, "vector_length")
    writer.u8(_SHARE_HOLDERS.index(config.share_holders), "share_holders")
    writer.u32(config.round_id, "round_id")
    writer.u8(_SERVER_MODELS.index(config.server_model), "server_model")
    writer.u8(config.allow_partial_sums, "allow_partial_sums")


def _read_config(reader: Reader) -> SecAggConfig:
    """Read the fields :func:`_write_config` wrote and build the configuration (it checks itself)."""
    complete = reader.u8("the graph kind", most=1)
    allow_disconnected = bool(reader.u8("allow_disconnected", most=1))
    if complete:
        n = reader.u32("n_clients")
        if not 1 <= n <= _MAX_COMPLETE_CLIENTS:
            raise WireFormatError(
                f"a complete masking graph of n_clients={n}: the wire format carries complete graphs of 1 to "
                f"{_MAX_COMPLETE_CLIENTS} clients."
            )
        neighbors = None
    else:
        n = reader.count("clients of the masking graph", record_bytes=4)  # each one has at least a count
        neighbors = tuple(reader.ids(f"the neighbours of client {i}", n) for i in range(n))
    threshold = reader.u32("threshold")
    vector_length = reader.u32("vector_length")
    share_holders = _SHARE_HOLDERS[reader.u8("share_holders", most=len(_SHARE_HOLDERS) - 1)]
    round_id = reader.u32("round_id")
    server_model = _SERVER_MODELS[reader.u8("server_model", most=len(_SERVER_MODELS) - 1)]
    allow_partial_sums = bool(reader.u8("allow_partial_sums", most=1))
    try:
        if neighbors is None:
            graph = MaskingGraph.complete(n)
            if allow_disconnected:  # a complete graph is connected: the flag only round-trips
                graph = MaskingGraph(graph.neighbors, allow_disconnected=True)
        else:
            graph = MaskingGraph(neighbors, allow_disconnected=allow_disconnected)
    except (ValueError, TypeError) as error:
        raise WireFormatError(f"the bytes hold no valid masking graph: {error}") from None
    if neighbors is not None and graph.n_edges == n * (n - 1) // 2:
        raise WireFormatError(
            f"a complete graph on {n} clients written as neighbour lists: the wire format writes it by its size "
            "alone (one encoding per configuration)."
        )
    try:
        return SecAggConfig(
            graph,
            threshold=threshold,
            vector_length=vector_length,
            share_holders=share_holders,
            round_id=round_id,
            server_model=server_model,
            allow_partial_sums=allow_partial_sums,
        )
    except (ValueError, TypeError) as error:
        raise WireFormatError(f"the bytes hold no valid SecAggConfig: {error}") from None


@lru_cache(maxsize=256)
def _shamir(n_shares: int, threshold: int) -> Shamir:
    return Shamir(n_shares=n_shares, threshold=threshold, prime=MERSENNE_521)


class PhaseClock:
    """Wall time spent per phase of a round, accumulated across parties.

    Examples
    --------
    >>> from fedlib.secagg import PhaseClock
    >>> clock = PhaseClock()
    >>> with clock("masking"):
    ...     pass
    >>> list(clock.seconds)
    ['masking']
    """

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, phase: str):
        """Add the time spent in the ``with`` block to ``phase``.

        Parameters
        ----------
        phase : str
            Its name.

        Yields
        ------
        None
            Nothing.
        """
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[phase] = self.seconds.get(phase, 0.0) + time.perf_counter() - start


# ---------------------------------------------------------------------------------------------------- messages
@dataclass(frozen=True)
class KeyAdvertisement:
    """Stage 0, client to server: the two public keys of ``sender``.

    Parameters
    ----------
    sender : int
        The client.
    encryption_key : bytes
        ``c_i^PK``, 32 bytes: others seal their shares for it under ``KA(c_j^SK, c_i^PK)``.
    mask_key : bytes
        ``s_i^PK``, 32 bytes: pairwise mask seeds are ``KA(s_i^SK, s_j^PK)``.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.secagg import KeyAdvertisement, MaskingGraph, SecAggClient, SecAggConfig
    >>> config = SecAggConfig(MaskingGraph.complete(3), threshold=2, vector_length=2)
    >>> advert = SecAggClient(0, np.array([1, 2], dtype=np.uint32), config).advertise_keys()
    >>> advert.sender, len(advert.encryption_key), len(advert.mask_key), advert.nbytes
    (0, 32, 32, 68)
    >>> data = advert.to_bytes(config)
    >>> len(data), KeyAdvertisement.from_bytes(data, config) == advert
    (78, True)
    """

    sender: int
    encryption_key: bytes
    mask_key: bytes

    @property
    def nbytes(self) -> int:
        """Bytes of its fields, as :func:`secure_aggregate` counts them; :meth:`to_bytes` gives ``nbytes + 10``."""
        return ID_BYTES + len(self.encryption_key) + len(self.mask_key)

    def to_bytes(self, config: SecAggConfig) -> bytes:
        """This advertisement as bytes: header, ``round_id``, sender and the two 32-byte public keys.

        Parameters
        ----------
        config : SecAggConfig
            The round: its ``round_id`` is written, and the ids must be its clients'.

        Returns
        -------
        bytes
            The encoding, :attr:`nbytes` plus 10 bytes (magic, version, tag, round id).

        Raises
        ------
        ValueError
            If the sender is not a client of the round or a key does not have 32 bytes.
        """
        writer = _message_writer(Tag.KEY_ADVERTISEMENT, config, self.sender)
        writer.key(self.encryption_key, "encryption_key")
        writer.key(self.mask_key, "mask_key")
        return writer.bytes()

    @classmethod
    def from_bytes(cls, data: bytes, config: SecAggConfig) -> KeyAdvertisement:
        """Parse what :meth:`to_bytes` wrote, refusing anything else.

        Parameters
        ----------
        data : bytes
            What ``to_bytes`` returned (bytes, bytearray or memoryview).
        config : SecAggConfig
            The round the receiver is in: the message must carry its
            ``round_id``, and ids and lengths are checked against it.

        Returns
        -------
        KeyAdvertisement
            The advertisement.

        Raises
        ------
        fedlib.exceptions.WireFormatError
            If the bytes are not exactly a version-1 key advertisement of this
            round from one of its clients.
        TypeError
            If ``data`` is not bytes-like or ``config`` not a :class:`SecAggConfig`.
        """
        reader, sender = _message_reader(data, Tag.KEY_ADVERTISEMENT, config)
        encryption_key = reader.key("encryption_key")
        mask_key = reader.key("mask_key")
        reader.end()
        return cls(sender, encryption_key, mask_key)


@dataclass(frozen=True)
class EncryptedShare:
    """Stage 1, client to server to client: ``sender``'s shares for ``recipient``, sealed with AES-GCM.

    Parameters
    ----------
    sender, recipient : int
        The two clients.
    ciphertext : bytes
        AES-GCM of ``sender‖recipient‖share(s_sender^SK)‖share(b_sender)``.

    Examples
    --------
    Client 0 of three seals one pair of shares for each other client:

    >>> import numpy as np
    >>> from fedlib.secagg import EncryptedShare, MaskingGraph, SecAggClient, SecAggConfig, SecAggServer
    >>> config = SecAggConfig(MaskingGraph.complete(3), threshold=2, vector_length=2)
    >>> clients = [SecAggClient(i, np.zeros(2, dtype=np.uint32), config) for i in range(3)]
    >>> bundles = SecAggServer(config).collect_keys([c.advertise_keys() for c in clients])
    >>> sealed = clients[0].share_keys(bundles[0])
    >>> [(s.sender, s.recipient, len(s.ciphertext)) for s in sealed]
    [(0, 1, 156), (0, 2, 156)]
    >>> EncryptedShare.from_bytes(sealed[0].to_bytes(config), config) == sealed[0]
    True
    """

    sender: int
    recipient: int
    ciphertext: bytes

    @property
    def nbytes(self) -> int:
        """Bytes of its fields, as :func:`secure_aggregate` counts them; :meth:`to_bytes` gives ``nbytes + 14``."""
        return 2 * ID_BYTES + len(self.ciphertext)

    def to_bytes(self, config: SecAggConfig) -> bytes:
        """This sealed share as bytes: header, ``round_id``, sender, recipient, then the ciphertext with its length.

        Parameters
        ----------
        config : SecAggConfig
            The round: its ``round_id`` is written, and the ids must be its clients'.

        Returns
        -------
        bytes
            The encoding, :attr:`nbytes` plus 14 bytes (magic, version, tag, round id, ciphertext length).

        Raises
        ------
        ValueError
            If the sender or the recipient is not a client of the round.
        TypeError
            If the ciphertext is not bytes.
        """
        writer = _message_writer(Tag.ENCRYPTED_SHARE, config, self.sender)
        writer.client(self.recipient, "recipient", config.n_clients)
        writer.blob(self.ciphertext, "ciphertext")
        return writer.bytes()

    @classmethod
    def from_bytes(cls, data: bytes, config: SecAggConfig) -> EncryptedShare:
        """Parse what :meth:`to_bytes` wrote, refusing anything else.

        Besides the layout, the recipient must hold shares of the sender's
        secrets (:meth:`SecAggConfig.holders`) and be another client, and the
        ciphertext must have the length of one sealed pair of shares (156
        bytes); whether it is authentic is for the recipient to check
        (:meth:`SecAggClient.masked_input`).

        Parameters
        ----------
        data : bytes
            What ``to_bytes`` returned (bytes, bytearray or memoryview).
        config : SecAggConfig
            The round the receiver is in: the message must carry its
            ``round_id``, and ids and lengths are checked against it.

        Returns
        -------
        EncryptedShare
            The sealed share.

        Raises
        ------
        fedlib.exceptions.WireFormatError
            If the bytes are not exactly a version-1 sealed share of this
            round between a client and one of its share holders.
        TypeError
            If ``data`` is not bytes-like or ``config`` not a :class:`SecAggConfig`.
        """
        reader, sender = _message_reader(data, Tag.ENCRYPTED_SHARE, config)
        recipient = reader.client("recipient", config.n_clients)
        if recipient == sender or recipient not in config.holders(sender):
            raise WireFormatError(
                f"a share from client {sender} to client {recipient}: the recipient must be another holder of the "
                f"sender's shares, one of {[j for j in config.holders(sender).tolist() if j != sender][:20]}."
            )
        ciphertext = reader.blob("ciphertext", length=_SEALED_SHARE_BYTES)
        reader.end()
        return cls(sender, recipient, ciphertext)


@dataclass(frozen=True)
class MaskedInput:
    """Stage 2, client to server: ``y_i``, the input under its pairwise and self masks.

    Parameters
    ----------
    sender : int
        The client.
    vector : ndarray of uint32
        ``y_i``.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.secagg import MaskedInput, MaskingGraph, SecAggConfig
    >>> config = SecAggConfig(MaskingGraph.complete(3), threshold=2, vector_length=2)
    >>> message = MaskedInput(sender=1, vector=np.array([7, 4294967295], dtype=np.uint32))
    >>> data = message.to_bytes(config)
    >>> message.nbytes, len(data)
    (12, 26)
    >>> parsed = MaskedInput.from_bytes(data, config)
    >>> parsed.sender, parsed.vector.tolist()
    (1, [7, 4294967295])
    """

    sender: int
    vector: np.ndarray

    @property
    def nbytes(self) -> int:
        """Bytes of its fields, as :func:`secure_aggregate` counts them; :meth:`to_bytes` gives ``nbytes + 14``."""
        return ID_BYTES + self.vector.nbytes

    def to_bytes(self, config: SecAggConfig) -> bytes:
        """This masked input as bytes: header, ``round_id``, sender, then ``d`` and ``d`` little-endian ``uint32``.

        Parameters
        ----------
        config : SecAggConfig
            The round: its ``round_id`` is written, and the ids must be its clients'.

        Returns
        -------
        bytes
            The encoding, :attr:`nbytes` plus 14 bytes (magic, version, tag, round id, length).

        Raises
        ------
        ValueError
            If the sender is not a client of the round, or the vector is not a
            ``uint32`` vector of length ``vector_length``.
        """
        d = config.vector_length
        if np.shape(self.vector) != (d,):
            raise ValueError(
                f"the masked input of client {self.sender} has shape {np.shape(self.vector)}: it must be a vector of "
                f"vector_length d={d} words of Z_2^32."
            )
        writer = _message_writer(Tag.MASKED_INPUT, config, self.sender)
        writer.words(self.vector, "the masked input")
        return writer.bytes()

    @classmethod
    def from_bytes(cls, data: bytes, config: SecAggConfig) -> MaskedInput:
        """Parse what :meth:`to_bytes` wrote, refusing anything else.

        Parameters
        ----------
        data : bytes
            What ``to_bytes`` returned (bytes, bytearray or memoryview).
        config : SecAggConfig
            The round the receiver is in: the message must carry its
            ``round_id``, and ids and lengths are checked against it.

        Returns
        -------
        MaskedInput
            The masked input; its vector is a fresh, writeable ``uint32`` array.

        Raises
        ------
        fedlib.exceptions.WireFormatError
            If the bytes are not exactly a version-1 masked input of this round
            from one of its clients, of ``vector_length`` words.
        TypeError
            If ``data`` is not bytes-like or ``config`` not a :class:`SecAggConfig`.
        """
        reader, sender = _message_reader(data, Tag.MASKED_INPUT, config)
        vector = reader.words("the masked input", length=config.vector_length)
        reader.end()
        return cls(sender, vector)


@dataclass(frozen=True)
class UnmaskingResponse:
    """Stage 3, client to server: shares of ``s_j^SK`` of dropped ``j`` and of ``b_j`` of surviving ``j``.

    Parameters
    ----------
    sender : int
        The client.
    mask_key_shares : dict of int to int
        Its shares of ``s_j^SK``, per dropped peer ``j``.
    self_mask_shares : dict of int to int
        Its shares of ``b_j``, per surviving ``j``, its own ``b`` included.

    Examples
    --------
    Client 0 reveals its shares of the self-mask seeds of survivors 0 and 1 and of the mask key of dropped client 2:

    >>> from fedlib.secagg import MaskingGraph, SecAggConfig, UnmaskingResponse
    >>> config = SecAggConfig(MaskingGraph.complete(3), threshold=2, vector_length=2)
    >>> response = UnmaskingResponse(sender=0, mask_key_shares={2: 12345}, self_mask_shares={0: 6, 1: 789})
    >>> data = response.to_bytes(config)
    >>> response.nbytes, len(data)
    (214, 232)
    >>> UnmaskingResponse.from_bytes(data, config) == response
    True
    """

    sender: int
    mask_key_shares: dict[int, int]
    self_mask_shares: dict[int, int]

    @property
    def nbytes(self) -> int:
        """Bytes of its fields, as :func:`secure_aggregate` counts them; :meth:`to_bytes` gives ``nbytes + 18``."""
        return ID_BYTES + (ID_BYTES + SHARE_BYTES) * (len(self.mask_key_shares) + len(self.self_mask_shares))

    def to_bytes(self, config: SecAggConfig) -> bytes:
        """This response as bytes: header, ``round_id``, sender, then the two lists of ``(owner, share)``.

        Each list is its length, then per owner in increasing order its id
        and its share, 66 little-endian bytes: the integers of
        ``GF(2^521 - 1)`` round-trip exactly.

        Parameters
        ----------
        config : SecAggConfig
            The round: its ``round_id`` is written, and the ids must be its clients'.

        Returns
        -------
        bytes
            The encoding, :attr:`nbytes` plus 18 bytes (magic, version, tag, round id, two counts).

        Raises
        ------
        ValueError
            If an id is not a client of the round, or a share is not in ``[0, 2^521 - 1)``.
        """
        writer = _message_writer(Tag.UNMASKING_RESPONSE, config, self.sender)
        for what, shares in (("mask_key_shares", self.mask_key_shares), ("self_mask_shares", self.self_mask_shares)):
            _write_share_records(writer, what, {int(j): (v,) for j, v in shares.items()}, config.n_clients)
        return writer.bytes()

    @classmethod
    def from_bytes(cls, data: bytes, config: SecAggConfig) -> UnmaskingResponse:
        """Parse what :meth:`to_bytes` wrote, refusing anything else.

        Besides the layout, the sender must hold shares of every owner it
        names (:meth:`SecAggConfig.holders`), and no owner may be in both
        lists: an honest client reveals one secret per peer.

        Parameters
        ----------
        data : bytes
            What ``to_bytes`` returned (bytes, bytearray or memoryview).
        config : SecAggConfig
            The round the receiver is in: the message must carry its
            ``round_id``, and ids and lengths are checked against it.

        Returns
        -------
        UnmaskingResponse
            The response; its shares are Python ints.

        Raises
        ------
        fedlib.exceptions.WireFormatError
            If the bytes are not exactly a version-1 unmasking response of this
            round from one of its clients: owners out of range, out of order,
            repeated, in both lists or not held by the sender, or a share not
            below ``2^521 - 1``.
        TypeError
            If ``data`` is not bytes-like or ``config`` not a :class:`SecAggConfig`.
        """
        reader, sender = _message_reader(data, Tag.UNMASKING_RESPONSE, config)
        lists = []
        for what in ("mask_key_shares", "self_mask_shares"):
            records = _read_share_records(reader, what, config.n_clients, width=1)
            foreign = [j for j in records if sender not in config.holders(j)]
            if foreign:
                raise WireFormatError(
                    f"client {sender} sent {what} of clients {foreign[:20]}, whose shares it does not hold."
                )
            lists.append({j: values[0] for j, values in records.items()})
        reader.end()
        both = sorted(set(lists[0]) & set(lists[1]))
        if both:
            raise WireFormatError(
                f"client {sender} sent shares of both the mask key and the self-mask seed of clients {both[:20]}: an "
                "honest client reveals one of the two per peer."
            )
        return cls(sender, lists[0], lists[1])


def _check_round_config(config: SecAggConfig) -> None:
    if not isinstance(config, SecAggConfig):
        raise TypeError(f"config must be the round's SecAggConfig, got {type(config).__name__}.")


def _message_writer(tag: Tag, config: SecAggConfig, sender: int) -> Writer:
    """A writer of a message of ``config``'s round: header, ``round_id`` and sender written."""
    _check_round_config(config)
    writer = Writer(tag)
    writer.u32(config.round_id, "round_id")
    writer.client(sender, "sender", config.n_clients)
    return writer


def _message_reader(data, tag: Tag, config: SecAggConfig) -> tuple[Reader, int]:
    """A reader past the header, ``round_id`` (checked) and sender of a message of ``config``'s round."""
    _check_round_config(config)
    reader = Reader(data, tag)
    round_id = reader.u32("round_id")
    if round_id != config.round_id:
        raise WireFormatError(
            f"a {tag.name} message of round_id={round_id} arrived in round round_id={config.round_id}: a message of "
            "another round is refused."
        )
    return reader, reader.client("sender", config.n_clients)


def _write_share_records(writer: Writer, what: str, records: Mapping[int, tuple[int, ...]], n_clients: int) -> None:
    """Append ``count``, then per owner in increasing order its id and its shares (66 bytes each)."""
    writer.u32(len(records), f"the number of {what}")
    for j in sorted(records):
        writer.client(j, f"an owner of {what}", n_clients)
        for value in records[j]:
            writer.share(value, f"a share of {what}")


def _read_share_records(reader: Reader, what: str, n_clients: int, *, width: int) -> dict[int, tuple[int, ...]]:
    """Read what :func:`_write_share_records` wrote: owners in ``[0, n)``, strictly increasing."""
    count = reader.count(what, record_bytes=ID_BYTES + width * SHARE_BYTES, most=n_clients)
    records: dict[int, tuple[int, ...]] = {}
    previous = -1
    for _ in range(count):
        j = reader.client(f"an owner of {what}", n_clients)
        if j <= previous:
            raise WireFormatError(f"the owners of {what} must be strictly increasing, got {j} after {previous}.")
        records[j] = tuple(reader.share(f"the share of client {j} in {what}") for _ in range(width))
        previous = j
    return records


def _share_plaintext(sender: int, recipient: int, key_share: int, seed_share: int) -> bytes:
    return (
        sender.to_bytes(ID_BYTES, "big")
        + recipient.to_bytes(ID_BYTES, "big")
        + int(key_share).to_bytes(SHARE_BYTES, "big")
        + int(seed_share).to_bytes(SHARE_BYTES, "big")
    )


def _refuse_repeated_senders(messages: Sequence, what: str) -> None:
    """Refuse a second message of one stage from one sender: it must not silently replace the first."""
    seen: set[int] = set()
    for message in messages:
        if message.sender in seen:
            raise ValueError(
                f"client {message.sender} sent its {what} twice: each client sends one per stage, and a second one "
                "must not replace the first."
            )
        seen.add(message.sender)


def _pairwise_sign(i: int, j: int) -> int:
    """``+1`` if client ``i`` adds ``PRG(s_ij)`` (``i < j``), ``-1`` if it subtracts it."""
    return 1 if i < j else -1


@dataclass(frozen=True)
class CorruptedClientView:
    """Everything a client knows at the end of a round: what it hands over when it colludes with the server.

    Parameters
    ----------
    client_id : int
        The corrupted client.
    vector : ndarray of uint32
        Its own input ``x_i``.
    mask_private_key : bytes
        ``s_i^SK``, 32 bytes.
    self_mask_seed : bytes
        ``b_i``, 32 bytes.
    received_shares : dict of int to tuple of int
        Per owner ``j``: this client's shares of ``(s_j^SK, b_j)``, its own
        share of its own secrets included (under its own id).

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.secagg import CorruptedClientView, MaskingGraph, SecAggConfig, secure_aggregate
    >>> config = SecAggConfig(MaskingGraph.complete(4), threshold=2, vector_length=2)
    >>> x = np.array([[1, 2], [3, 4], [5, 6], [7, 8]], dtype=np.uint32)
    >>> result = secure_aggregate(x, config, random_state=0)
    >>> view = result.clients[1].corrupt()
    >>> isinstance(view, CorruptedClientView), view.client_id, view.vector.tolist()
    (True, 1, [3, 4])
    >>> sorted(view.received_shares), len(view.mask_private_key), len(view.self_mask_seed)
    ([0, 1, 2, 3], 32, 32)
    """

    client_id: int
    vector: np.ndarray
    mask_private_key: bytes
    self_mask_seed: bytes
    received_shares: dict[int, tuple[int, int]]


# ------------------------------------------------------------------------------------------------------- clients
class SecAggClient:
    """One honest client of a SecAgg(+) round: a state machine over :class:`Stage`.

    Parameters
    ----------
    client_id : int
        Its id in ``[0, n)``.
    vector : array-like of uint32, shape (d,)
        Its input ``x_i`` in ``Z_{2^32}`` (see :class:`FixedPoint`).
    config : SecAggConfig
        The round's public parameters.
    random_state : "secrets", int, numpy.random.Generator or None, default="secrets"
        Source of its keys, self-mask seed and Shamir masks.
    clock : PhaseClock, optional
        Accumulates its compute time per phase.

    Attributes
    ----------
    stage : Stage
        The next stage it expects.

    Raises
    ------
    ValueError
        If the input does not have length ``d`` or is not ``uint32``, or
        ``random_state`` is a string other than ``"secrets"``.
    TypeError
        If ``random_state`` is of another type.

    Examples
    --------
    Three clients and a server run the four stages by hand (:func:`secure_aggregate` does this in one call):

    >>> import numpy as np
    >>> from fedlib.secagg import MaskingGraph, SecAggClient, SecAggConfig, SecAggServer, Stage
    >>> config = SecAggConfig(MaskingGraph.complete(3), threshold=2, vector_length=2)
    >>> x = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.uint32)
    >>> clients = [SecAggClient(i, x[i], config) for i in range(3)]  # keys from the OS
    >>> server = SecAggServer(config)
    >>> bundles = server.collect_keys([c.advertise_keys() for c in clients])
    >>> u2, deliveries = server.route_shares({i: c.share_keys(bundles[i]) for i, c in enumerate(clients)})
    >>> u3 = server.collect_masked_inputs([c.masked_input(u2, deliveries[i]) for i, c in enumerate(clients)])
    >>> clients[0].stage == Stage.UNMASKING
    True
    >>> server.unmask([c.unmask(u3) for c in clients]).tolist()
    [9, 12]
    """

    def __init__(
        self,
        client_id: int,
        vector,
        config: SecAggConfig,
        *,
        random_state: SeedLike | str = "secrets",
        clock: PhaseClock | None = None,
    ) -> None:
        self.client_id = check_scalar(client_id, "client_id", "int", min_val=0, max_val=config.n_clients - 1)
        x = np.asarray(vector)
        if x.dtype != np.uint32 or x.shape != (config.vector_length,):
            raise ValueError(
                f"client {client_id}'s input must be a uint32 vector of length d={config.vector_length}, "
                f"got dtype {x.dtype} and shape {x.shape}; encode floats with FixedPoint first."
            )
        self.config = config
        self.stage = Stage.ADVERTISE_KEYS
        self._x = x
        # One stream for keys, seeds and Shamir masks: a Generator advances, "secrets" reads the OS.
        self._random_state = check_key_source(random_state)
        self._clock = clock or PhaseClock()
        self._neighbors = config.graph.neighbors[self.client_id]
        self._holders = config.holders(self.client_id)

    def _expect(self, stage: Stage) -> None:
        if self.stage != stage:
            raise ProtocolStageError(
                f"client {self.client_id} is at stage {self.stage.name} and received a {stage.name} message."
            )

    def advertise_keys(self) -> KeyAdvertisement:
        """Stage 0: draw the two key pairs and send their public halves.

        Returns
        -------
        KeyAdvertisement
            ``(c_i^PK, s_i^PK)``.

        Raises
        ------
        ProtocolStageError
            If called at another stage.
        """
        self._expect(Stage.ADVERTISE_KEYS)
        with self._clock("key agreement"):
            self._c_sk, c_pk = generate_keypair(self._random_state)
            self._s_sk, s_pk = generate_keypair(self._random_state)
        self.stage = Stage.SHARE_KEYS
        return KeyAdvertisement(self.client_id, c_pk, s_pk)

    def share_keys(self, public_keys: Mapping[int, KeyAdvertisement]) -> list[EncryptedShare]:
        """Stage 1: Shamir-share ``s_i^SK`` and a fresh self-mask seed ``b_i``, keep one share, seal the others.

        The client is one of its own share holders (Bonawitz et al. 2017,
        Fig. 4): it keeps its share pair locally, unsealed; every other
        surviving holder gets its pair sealed, routed by the server.

        Parameters
        ----------
        public_keys : mapping of int to KeyAdvertisement
            The advertisements the server forwarded: those of this client's
            neighbours and share holders that survived stage 0 (not its own).

        Returns
        -------
        list of EncryptedShare
            One per other surviving holder, for the server to route.

        Raises
        ------
        ProtocolStageError
            If called at another stage.
        SecAggAbort
            If fewer than ``t`` of its share holders (itself included) survived stage 0.
        """
        self._expect(Stage.SHARE_KEYS)
        t = self.config.threshold
        for j, advert in public_keys.items():
            if advert.sender != j:
                raise ValueError(f"the key advertisement filed under client {j} was sent by client {advert.sender}.")
        if self.client_id in public_keys:
            raise ValueError(
                f"client {self.client_id} was forwarded its own key advertisement: it keeps its own share."
            )
        self._public_keys = dict(public_keys)
        self._enc_keys: dict[int, bytes] = {}
        alive_holders = [int(j) for j in self._holders if int(j) == self.client_id or int(j) in public_keys]
        if len(alive_holders) < t:
            raise SecAggAbort(
                f"client {self.client_id}: only {len(alive_holders)} of its share holders (itself included) are left "
                f"after key advertisement, fewer than the threshold t={t}."
            )
        with self._clock("sharing"):
            self._b = random_bytes(KEY_BYTES, self._random_state)
            shamir = _shamir(self._holders.size, t)
            shares = shamir.share_bytes([private_bytes(self._s_sk), self._b], random_state=self._random_state)
            position = {int(j): r for r, j in enumerate(self._holders)}
        messages = []
        for j in alive_holders:
            if j == self.client_id:  # its own share stays here: never sealed, never routed, never on the wire
                r = position[j]
                self._own_share = (int(shares[r, 0]), int(shares[r, 1]))
                continue
            with self._clock("key agreement"):
                key = self._encryption_key(j)
            with self._clock("sharing"):
                r = position[j]
                plaintext = _share_plaintext(self.client_id, j, shares[r, 0], shares[r, 1])
                ciphertext = seal(
                    key, plaintext, sender=self.client_id, recipient=j, context=self.config.context(Stage.SHARE_KEYS)
                )
            messages.append(EncryptedShare(self.client_id, j, ciphertext))
        self.stage = Stage.MASKED_INPUT
        return messages

    def _encryption_key(self, peer: int) -> bytes:
        # One AES-GCM key per pair and round, for the shares both ways (the nonces differ by direction).
        if peer not in self._enc_keys:
            self._enc_keys[peer] = agree(self._c_sk, self._public_keys[peer].encryption_key, _ENC)
        return self._enc_keys[peer]

    def masked_input(self, survivors: Collection[int], shares: Sequence[EncryptedShare]) -> MaskedInput:
        """Stage 2: open the shares received, then send ``y_i`` masked towards the surviving neighbours.

        Parameters
        ----------
        survivors : collection of int
            ``U2``, the clients whose shares the server routed (announced by the server).
        shares : sequence of EncryptedShare
            The sealed shares addressed to this client.

        Returns
        -------
        MaskedInput
            ``y_i`` in ``Z_{2^32}``.

        Raises
        ------
        ProtocolStageError
            If called at another stage.
        fedlib.exceptions.TamperedMessageError
            If a share fails authentication, or is addressed to another client.
        SecAggAbort
            If fewer than ``t`` clients survived stage 1.
        """
        self._expect(Stage.MASKED_INPUT)
        u2 = {int(j) for j in survivors}
        if len(u2) < self.config.threshold:
            raise SecAggAbort(
                f"client {self.client_id}: {len(u2)} clients survived share distribution, fewer than "
                f"t={self.config.threshold}."
            )
        self._received: dict[int, tuple[int, int]] = {}
        context = self.config.context(Stage.SHARE_KEYS)
        for message in shares:
            if message.sender == self.client_id:
                raise TamperedMessageError(
                    f"client {self.client_id} received a sealed share from itself: it never sends its own share."
                )
            self._received[message.sender] = self._open(message, context)
        self._received[self.client_id] = self._own_share
        self._u2 = u2
        with self._clock("masking"):
            y = self._x + prg_words(self._b, self.config.vector_length)
        for j in self._neighbors:
            j = int(j)
            if j not in u2 or j not in self._public_keys:
                continue
            with self._clock("key agreement"):
                seed = agree(self._s_sk, self._public_keys[j].mask_key, _MASK)
            with self._clock("masking"):
                if _pairwise_sign(self.client_id, j) > 0:
                    y += prg_words(seed, self.config.vector_length)
                else:
                    y -= prg_words(seed, self.config.vector_length)
        self.stage = Stage.UNMASKING
        return MaskedInput(self.client_id, y)

    def _open(self, message: EncryptedShare, context: bytes) -> tuple[int, int]:
        if message.recipient != self.client_id:
            raise TamperedMessageError(
                f"client {self.client_id} received a share addressed to client {message.recipient} (from client "
                f"{message.sender}): the server misrouted it."
            )
        sender = message.sender
        if sender not in self._public_keys:
            raise TamperedMessageError(
                f"client {self.client_id} received a share from client {sender}, who has no key."
            )
        with self._clock("key agreement"):
            key = self._encryption_key(sender)
        with self._clock("sharing"):
            plaintext = open_sealed(key, message.ciphertext, sender=sender, recipient=self.client_id, context=context)
        claimed_sender = int.from_bytes(plaintext[:ID_BYTES], "big")
        claimed_recipient = int.from_bytes(plaintext[ID_BYTES : 2 * ID_BYTES], "big")
        if (claimed_sender, claimed_recipient) != (sender, self.client_id):
            raise TamperedMessageError(
                f"a share sealed as {claimed_sender} -> {claimed_recipient} arrived as {sender} -> {self.client_id}."
            )
        body = plaintext[2 * ID_BYTES :]
        return int.from_bytes(body[:SHARE_BYTES], "big"), int.from_bytes(body[SHARE_BYTES:], "big")

    def corrupt(self) -> CorruptedClientView:
        """Hand everything this client knows to a coalition (a corrupted client; for privacy experiments).

        Returns
        -------
        CorruptedClientView
            Its input, secrets and the shares it received.

        Raises
        ------
        ProtocolStageError
            Before it has masked its input (it holds no shares yet).
        """
        if self.stage < Stage.UNMASKING:
            raise ProtocolStageError(
                f"client {self.client_id} has not received its shares yet (stage {self.stage.name})."
            )
        return CorruptedClientView(
            client_id=self.client_id,
            vector=self._x.copy(),
            mask_private_key=private_bytes(self._s_sk),
            self_mask_seed=self._b,
            received_shares=dict(self._received),
        )

    def unmask(self, survivors: Collection[int]) -> UnmaskingResponse:
        """Stage 3: reveal shares of ``b_j`` for surviving ``j`` and of ``s_j^SK`` for dropped ``j``.

        Its own share counts like the others: a survivor reveals its share of
        its own ``b_i`` (Bonawitz et al. 2017, Fig. 4: ``b_{v,u}`` for every
        ``v ∈ U3``, ``u`` itself included). A client the server declared dropped
        although it is still speaking (its masked input came late) reveals
        its share of its own ``s_i^SK``, never of ``b_i``.

        Parameters
        ----------
        survivors : collection of int
            ``U3``, the clients whose masked input the server received.

        Returns
        -------
        UnmaskingResponse
            The shares this client holds, one kind per owner, its own included.

        Raises
        ------
        ProtocolStageError
            If called at another stage, in particular a second time: a client
            answers one survivor list per round, so a server cannot ask for
            ``b_j`` and later for ``s_j^SK`` of the same ``j``.
        PrivacyViolationError
            If the list names clients that never sent shares (``U3 ⊄ U2``), or
            clients that fall into several components of the masking graph
            (:meth:`SecAggConfig.check_survivors`): an honest server would have
            aborted, and answering would let it compute partial sums.
        SecAggAbort
            If fewer than ``t`` clients survived stage 2.
        """
        self._expect(Stage.UNMASKING)
        u3 = {int(j) for j in survivors}
        if not u3 <= self._u2:
            raise PrivacyViolationError(
                f"client {self.client_id} was told that clients {sorted(u3 - self._u2)} sent masked inputs, but they "
                "never sent shares: revealing anything for them could unmask an individual input."
            )
        if len(u3) < self.config.threshold:
            raise SecAggAbort(
                f"client {self.client_id}: {len(u3)} masked inputs arrived, fewer than t={self.config.threshold}."
            )
        try:
            self.config.check_survivors(u3)
        except SecAggAbort as error:
            raise PrivacyViolationError(f"client {self.client_id} refuses to unmask: {error}") from None
        key_shares, seed_shares = {}, {}
        for j, (key_share, seed_share) in self._received.items():
            if j in u3:
                seed_shares[j] = seed_share
            elif j in self._u2:
                key_shares[j] = key_share
        self.stage = Stage.DONE
        return UnmaskingResponse(self.client_id, key_shares, seed_shares)

    def to_bytes(self) -> bytes:
        """This client's whole state as bytes, to rebuild it with :meth:`from_bytes` at its next stage.

        A party that keeps no Python object between the messages of a round
        (a Flower ClientApp, which keeps only its ``context.state``) stores
        these bytes after each stage and rebuilds the client from them at the
        next one. They hold what the stages to come need: the configuration,
        the id, the stage, the input ``x_i``, the source of randomness, and,
        once drawn or received, the X25519 private keys ``c_i^SK`` and
        ``s_i^SK``, the self-mask seed ``b_i``, its own share pair, the
        public keys the server forwarded, ``U2`` and the shares received
        (layout in ``fedlib/secagg/_wire.py``). The AES-GCM keys of its pairs
        are not stored: the rebuilt client derives them again.

        **The bytes are the client's private material**: whoever reads them
        learns its input and, with the server, every mask. They are for the
        client's own storage only, never to be sent to the server or to any
        other party.

        The source of randomness: ``"secrets"`` is stored as such, and the
        rebuilt client draws from the operating system. A seeded PCG64
        Generator (``numpy.random.default_rng``, which fedlib's seeded rounds
        use) is stored with its bit generator's state: the rebuilt client
        draws exactly what this one would draw next, from its own copy of the
        stream (no longer shared with any other user of the Generator).

        Returns
        -------
        bytes
            The state; the same state always gives the same bytes.

        Raises
        ------
        ValueError
            If its source of randomness is a Generator on a bit generator
            other than PCG64, or the survivor list ``U2`` it was given names
            ids outside ``[0, n)``.

        Examples
        --------
        >>> import numpy as np
        >>> from fedlib.secagg import MaskingGraph, SecAggClient, SecAggConfig
        >>> config = SecAggConfig(MaskingGraph.complete(3), threshold=2, vector_length=2)
        >>> client = SecAggClient(0, np.array([1, 2], dtype=np.uint32), config, random_state=0)
        >>> restored = SecAggClient.from_bytes(client.to_bytes())
        >>> restored.advertise_keys() == client.advertise_keys()
        True
        """
        n = self.config.n_clients
        writer = Writer(Tag.CLIENT_STATE)
        _write_config(writer, self.config)
        writer.client(self.client_id, "client_id", n)
        writer.u8(self.stage, "stage")
        writer.words(self._x, "the input vector")
        _write_key_source(writer, self._random_state)
        if self.stage >= Stage.SHARE_KEYS:
            writer.key(private_bytes(self._c_sk), "the encryption private key")
            writer.key(private_bytes(self._s_sk), "the mask private key")
        if self.stage >= Stage.MASKED_INPUT:
            writer.key(self._b, "the self-mask seed")
            for value in self._own_share:
                writer.share(value, "its own share")
            writer.u32(len(self._public_keys), "the number of public keys")
            for j in sorted(self._public_keys):
                writer.client(j, "the owner of a public key", n)
                writer.key(self._public_keys[j].encryption_key, f"the encryption key of client {j}")
                writer.key(self._public_keys[j].mask_key, f"the mask key of client {j}")
        if self.stage >= Stage.UNMASKING:
            writer.ids(sorted(self._u2), "U2, the survivors of share distribution", n)
            received = {j: pair for j, pair in self._received.items() if j != self.client_id}
            _write_share_records(writer, "the shares received", received, n)
        return writer.bytes()

    @classmethod
    def from_bytes(cls, data: bytes, *, clock: PhaseClock | None = None) -> SecAggClient:
        """Rebuild the client whose state :meth:`to_bytes` returned; it then behaves exactly as that client would.

        Every later stage gives the same messages and the same errors as the
        original client would have (with a seeded Generator, the same bytes;
        with ``"secrets"``, fresh draws from the operating system), and a
        message for a stage it is not at is refused as the original refuses it.

        Parameters
        ----------
        data : bytes
            What :meth:`to_bytes` returned (bytes, bytearray or memoryview),
            read back from the client's own storage.
        clock : PhaseClock, optional
            Accumulates its compute time from now on (the original's clock is not stored).

        Returns
        -------
        SecAggClient
            The client, at the stage it was saved at.

        Raises
        ------
        fedlib.exceptions.WireFormatError
            If the bytes are not exactly a version-1 client state: wrong
            magic, version or tag, truncated, followed by more bytes, an input
            of a length other than ``vector_length``, ids outside ``[0, n)``
            or out of order, a share not below ``2^521 - 1``, or an unknown
            stage or source of randomness.
        TypeError
            If ``data`` is not bytes-like.
        """
        reader = Reader(data, Tag.CLIENT_STATE)
        config = _read_config(reader)
        n = config.n_clients
        client_id = reader.client("client_id", n)
        stage = Stage(reader.u8("stage", most=int(max(Stage))))
        x = reader.words("the input vector", length=config.vector_length)
        source = _read_key_source(reader)
        state: dict = {}
        if stage >= Stage.SHARE_KEYS:
            state["_c_sk"] = X25519PrivateKey.from_private_bytes(reader.key("the encryption private key"))
            state["_s_sk"] = X25519PrivateKey.from_private_bytes(reader.key("the mask private key"))
        if stage >= Stage.MASKED_INPUT:
            state["_b"] = reader.key("the self-mask seed")
            state["_own_share"] = (reader.share("its own share"), reader.share("its own share"))
            count = reader.count("public keys", record_bytes=ID_BYTES + 2 * KEY_BYTES, most=n)
            public_keys: dict[int, KeyAdvertisement] = {}
            previous = -1
            for _ in range(count):
                j = reader.client("the owner of a public key", n)
                if j == client_id or j <= previous:
                    raise WireFormatError(
                        f"the public keys stored by client {client_id} must be other clients' in increasing order, "
                        f"got client {j} after client {previous}."
                    )
                encryption_key = reader.key(f"the encryption key of client {j}")
                public_keys[j] = KeyAdvertisement(j, encryption_key, reader.key(f"the mask key of client {j}"))
                previous = j
            state["_public_keys"], state["_enc_keys"] = public_keys, {}
        if stage >= Stage.UNMASKING:
            state["_u2"] = {int(j) for j in reader.ids("U2, the survivors of share distribution", n)}
            received = _read_share_records(reader, "the shares received", n, width=2)
            if client_id in received:
                raise WireFormatError(f"client {client_id}'s stored shares list its own share among those received.")
            state["_received"] = {**received, client_id: state["_own_share"]}
        reader.end()
        client = cls(client_id, x, config, random_state=source, clock=clock)
        client.stage = stage
        for name, value in state.items():
            setattr(client, name, value)
        return client


_PCG64_STATE_BYTES = 16
"""Each of the two 128-bit words of a PCG64 state (``state`` and ``inc``)."""


def _write_key_source(writer: Writer, source) -> None:
    """``0`` for ``"secrets"``; ``1`` and the bit generator's state for a PCG64 Generator."""
    if isinstance(source, str):
        writer.u8(0, "the source of randomness")
        return
    state = source.bit_generator.state
    if state.get("bit_generator") != "PCG64":
        raise ValueError(
            f"a client drawing from a Generator on {state.get('bit_generator')} cannot be saved: its state is stored "
            "for PCG64 (numpy.random.default_rng) only. Use random_state='secrets' or an int seed."
        )
    writer.u8(1, "the source of randomness")
    writer.uint(state["state"]["state"], _PCG64_STATE_BYTES, "the PCG64 state")
    writer.uint(state["state"]["inc"], _PCG64_STATE_BYTES, "the PCG64 increment")
    writer.u8(state["has_uint32"], "the PCG64 has_uint32 flag")
    writer.u32(state["uinteger"], "the PCG64 buffered word")


def _read_key_source(reader: Reader) -> np.random.Generator | str:
    """What :func:`_write_key_source` wrote: ``"secrets"``, or a fresh Generator in the stored state."""
    if reader.u8("the source of randomness", most=1) == 0:
        return "secrets"
    bit_generator = np.random.PCG64(0)
    bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {
            "state": reader.uint(_PCG64_STATE_BYTES, "the PCG64 state"),
            "inc": reader.uint(_PCG64_STATE_BYTES, "the PCG64 increment"),
        },
        "has_uint32": reader.u8("the PCG64 has_uint32 flag", most=1),
        "uinteger": reader.u32("the PCG64 buffered word"),
    }
    return np.random.Generator(bit_generator)


# ------------------------------------------------------------------------------------------------------ server
class SecAggServer:
    """The server of a SecAgg(+) round: routes messages, then removes the masks from the sum.

    It sees only what clients send it; :attr:`view` keeps every message, so a
    chapter or a test can inspect exactly what a curious server holds.

    Parameters
    ----------
    config : SecAggConfig
        The round's public parameters.
    clock : PhaseClock, optional
        Accumulates its compute time (phase ``"unmasking"``).

    Attributes
    ----------
    survivors : dict of Stage to frozenset of int
        ``U1``, ``U2``, ``U3``, ``U4``: who sent a message at each stage.
    view : dict of Stage to list
        Every message received, per stage.
    public_keys : dict of int to KeyAdvertisement
        The advertisements of ``U1`` (after stage 0).
    masked_inputs : dict of int to ndarray
        The masked inputs ``y_i`` received in time (after stage 2).
    rebuilt_seeds, rebuilt_mask_keys : dict of int to bytes
        ``b_i`` of ``U3`` and ``s_j^SK`` of ``U2 \\ U3``, as rebuilt (after stage 3).

    Examples
    --------
    Client 2 goes silent after sharing its keys: the server rebuilds its mask key from the others' shares and
    removes its pairwise masks, so the sum of the two survivors comes out exact.

    >>> import numpy as np
    >>> from fedlib.secagg import MaskingGraph, SecAggClient, SecAggConfig, SecAggServer
    >>> config = SecAggConfig(MaskingGraph.complete(3), threshold=2, vector_length=2)
    >>> x = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.uint32)
    >>> clients = [SecAggClient(i, x[i], config) for i in range(3)]
    >>> server = SecAggServer(config)
    >>> bundles = server.collect_keys([c.advertise_keys() for c in clients])
    >>> u2, deliveries = server.route_shares({i: c.share_keys(bundles[i]) for i, c in enumerate(clients)})
    >>> u3 = server.collect_masked_inputs([clients[i].masked_input(u2, deliveries[i]) for i in (0, 1)])
    >>> sorted(u3)
    [0, 1]
    >>> server.unmask([clients[i].unmask(u3) for i in (0, 1)]).tolist()
    [4, 6]
    >>> sorted(server.rebuilt_mask_keys), sorted(server.rebuilt_seeds)
    ([2], [0, 1])
    """

    def __init__(self, config: SecAggConfig, *, clock: PhaseClock | None = None) -> None:
        self.config = config
        self.stage = Stage.ADVERTISE_KEYS
        self.survivors: dict[Stage, frozenset[int]] = {}
        self.view: dict[Stage, list] = {s: [] for s in Stage if s != Stage.DONE}
        self._clock = clock or PhaseClock()

    def _expect(self, stage: Stage) -> None:
        if self.stage != stage:
            raise ProtocolStageError(f"the server is at stage {self.stage.name} and received {stage.name} messages.")

    def _check_quorum(self, stage: Stage, alive: frozenset[int]) -> None:
        t = self.config.threshold
        if len(alive) < t:
            raise SecAggAbort(
                f"only {len(alive)} clients sent their {stage.name} message, fewer than the threshold t={t}: the "
                "round aborts and outputs nothing."
            )

    def collect_keys(self, adverts: Sequence[KeyAdvertisement]) -> dict[int, dict[int, KeyAdvertisement]]:
        """Stage 0: record ``U1`` and forward to each client the keys of its neighbours and holders.

        Parameters
        ----------
        adverts : sequence of KeyAdvertisement
            What arrived.

        Returns
        -------
        dict of int to dict of int to KeyAdvertisement
            Per client of ``U1``: the advertisements it needs.

        Raises
        ------
        ProtocolStageError
            If called at another stage.
        ValueError
            If one client sent two advertisements (the second would silently replace the first).
        SecAggAbort
            If ``|U1| < t``.
        """
        self._expect(Stage.ADVERTISE_KEYS)
        _refuse_repeated_senders(adverts, "key advertisement")
        self.view[Stage.ADVERTISE_KEYS].extend(adverts)
        by_client = {a.sender: a for a in adverts}
        u1 = frozenset(by_client)
        self.survivors[Stage.ADVERTISE_KEYS] = u1
        self._check_quorum(Stage.ADVERTISE_KEYS, u1)
        self.public_keys = by_client
        out = {}
        for i in u1:
            wanted = set(self.config.graph.neighbors[i].tolist()) | set(self.config.holders(i).tolist())
            out[i] = {j: by_client[j] for j in sorted(wanted - {i}) if j in u1}
        self.stage = Stage.SHARE_KEYS
        return out

    def route_shares(self, outboxes: Mapping[int, Sequence[EncryptedShare]]) -> tuple[frozenset[int], dict]:
        """Stage 1: record ``U2`` and deliver each sealed share to its recipient.

        Parameters
        ----------
        outboxes : mapping of int to sequence of EncryptedShare
            Per sending client, its sealed shares.

        Returns
        -------
        survivors : frozenset of int
            ``U2``.
        deliveries : dict of int to list of EncryptedShare
            Per client of ``U2``: the shares addressed to it.

        Raises
        ------
        ProtocolStageError
            If called at another stage.
        SecAggAbort
            If ``|U2| < t``.
        """
        self._expect(Stage.SHARE_KEYS)
        u2 = frozenset(int(i) for i in outboxes)
        self.survivors[Stage.SHARE_KEYS] = u2
        self._check_quorum(Stage.SHARE_KEYS, u2)
        deliveries: dict[int, list[EncryptedShare]] = {i: [] for i in u2}
        for sender, messages in outboxes.items():
            for message in messages:
                if message.sender != sender:
                    raise TamperedMessageError(f"client {sender} sent a share claiming to come from {message.sender}.")
                self.view[Stage.SHARE_KEYS].append(message)
                if message.recipient in deliveries:
                    deliveries[message.recipient].append(message)
        self.stage = Stage.MASKED_INPUT
        return u2, deliveries

    def collect_masked_inputs(self, inputs: Sequence[MaskedInput]) -> frozenset[int]:
        """Stage 2: record ``U3``, the clients whose ``y_i`` arrived in time.

        Parameters
        ----------
        inputs : sequence of MaskedInput
            What arrived.

        Returns
        -------
        frozenset of int
            ``U3``, to be sent to the clients.

        Raises
        ------
        ProtocolStageError
            If called at another stage.
        ValueError
            If one client sent two masked inputs (a second must not replace the
            first), or an input is not of length ``vector_length``.
        SecAggAbort
            If ``|U3| < t``, or ``U3`` falls into several components of the
            masking graph (:meth:`SecAggConfig.check_survivors`).
        """
        self._expect(Stage.MASKED_INPUT)
        _refuse_repeated_senders(inputs, "masked input")
        d = self.config.vector_length
        for m in inputs:
            shape = np.shape(m.vector)
            if shape != (d,):
                raise ValueError(
                    f"the masked input of client {m.sender} has shape {shape}: every masked input must be a vector "
                    f"of vector_length d={d} words of Z_2^32."
                )
        self.view[Stage.MASKED_INPUT].extend(inputs)
        self.masked_inputs = {m.sender: m.vector for m in inputs}
        u3 = frozenset(self.masked_inputs) & self.survivors[Stage.SHARE_KEYS]
        self.survivors[Stage.MASKED_INPUT] = u3
        self._check_quorum(Stage.MASKED_INPUT, u3)
        self.config.check_survivors(u3)
        self.stage = Stage.UNMASKING
        return u3

    def unmask(self, responses: Sequence[UnmaskingResponse]) -> np.ndarray:
        """Stage 3: rebuild the seeds and return ``Σ_{i ∈ U3} x_i`` in ``Z_{2^32}``.

        Parameters
        ----------
        responses : sequence of UnmaskingResponse
            What arrived.

        Returns
        -------
        ndarray of uint32, shape (d,)
            The exact sum of the inputs of ``U3``.

        Raises
        ------
        ProtocolStageError
            If called at another stage.
        ValueError
            If one client sent two responses.
        SecAggAbort
            If some secret the server needs has fewer than ``t`` shares among
            the responses: the round outputs nothing.
        """
        self._expect(Stage.UNMASKING)
        _refuse_repeated_senders(responses, "unmasking response")
        self.view[Stage.UNMASKING].extend(responses)
        u4 = frozenset(r.sender for r in responses)
        self.survivors[Stage.UNMASKING] = u4
        u2, u3 = self.survivors[Stage.SHARE_KEYS], self.survivors[Stage.MASKED_INPUT]
        dropped = sorted(u2 - u3)
        d = self.config.vector_length
        with self._clock("unmasking"):
            key_shares = {j: {} for j in dropped}
            seed_shares = {i: {} for i in u3}
            for response in responses:
                for j, share in response.mask_key_shares.items():
                    if j in key_shares:
                        key_shares[j][response.sender] = share
                for i, share in response.self_mask_shares.items():
                    if i in seed_shares:
                        seed_shares[i][response.sender] = share
            seeds = self._rebuild(seed_shares, "self-mask seed b")
            mask_keys = self._rebuild(key_shares, "mask key s^SK")
            total = np.sum(np.stack([self.masked_inputs[i] for i in sorted(u3)]), axis=0, dtype=np.uint32)
            for i in sorted(u3):
                total -= prg_words(seeds[i], d)
            for j in dropped:
                for i in self.config.graph.neighbors[j]:
                    i = int(i)
                    if i not in u3:
                        continue
                    seed = agree(mask_keys[j], self.public_keys[i].mask_key, _MASK)
                    # y_i carries sign(i, j)·PRG(s_ij); take it off.
                    if _pairwise_sign(i, j) > 0:
                        total -= prg_words(seed, d)
                    else:
                        total += prg_words(seed, d)
        self.rebuilt_seeds, self.rebuilt_mask_keys = seeds, mask_keys
        self.stage = Stage.DONE
        return total

    def _rebuild(self, shares: dict[int, dict[int, int]], what: str) -> dict[int, bytes]:
        """Every owner's secret from all the shares that arrived for it, the extra ones checked.

        Owners whose shares came from the same holder positions are rebuilt in
        one Shamir decoding. Beyond the first ``t``, every share must lie on the
        polynomial the first ``t`` define (the Reed-Solomon check of
        :meth:`fedlib.field.Shamir.reconstruct`): a holder that sends a wrong
        share is detected whenever more than ``t`` shares arrive, instead of
        silently giving a wrong sum.
        """
        t = self.config.threshold
        groups: dict[tuple[int, ...], list[int]] = {}
        for owner in sorted(shares):
            if len(shares[owner]) < t:
                raise SecAggAbort(
                    f"the {what} of client {owner} has {len(shares[owner])} shares among the responses, fewer than "
                    f"t={t}: the round aborts and outputs nothing."
                )
            position = {int(j): r for r, j in enumerate(self.config.holders(owner))}
            groups.setdefault(tuple(position[s] for s in sorted(shares[owner])), []).append(owner)
        out: dict[int, bytes] = {}
        for positions, owners in groups.items():
            n_holders = self.config.holders(owners[0]).size
            # Holders are sorted, so each owner's shares in sender order sit at the group's positions in order.
            values = np.array([[shares[o][s] for s in sorted(shares[o])] for o in owners], dtype=object).T
            try:
                secrets = _shamir(n_holders, t).reconstruct_bytes(values, list(positions), KEY_BYTES)
            except (DecodingError, ValueError) as error:
                raise TamperedMessageError(
                    f"the {len(positions)} shares of the {what} of clients {owners} do not lie on one polynomial of "
                    f"degree t - 1 = {t - 1}: some holder sent a wrong share. The round aborts rather than output a "
                    f"wrong sum ({error})"
                ) from None
            out.update(zip(owners, secrets, strict=True))
        return out
