"""One round of SecAgg(+) driven end to end in one process: every party's real messages, dropouts, bytes and time."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

import numpy as np

from fedlib._random import spawn_key_sources
from fedlib._typing import SeedLike
from fedlib._validation import check_ids
from fedlib.secagg._secagg import (
    ID_BYTES,
    MaskedInput,
    PhaseClock,
    SecAggClient,
    SecAggConfig,
    SecAggServer,
    Stage,
)

PHASES = ("key agreement", "sharing", "masking", "unmasking")
"""The phases :attr:`SecAggResult.seconds` splits a round's compute time into."""


@dataclass(frozen=True)
class SecAggResult:
    """What one round produced and cost.

    Parameters
    ----------
    total : ndarray of uint32, shape (d,)
        ``Σ_{i ∈ U3} x_i`` in ``Z_{2^32}``.
    survivors : dict of Stage to frozenset of int
        ``U1``..``U4``: who sent a message at each stage.
    bytes_sent, bytes_received : ndarray of int, shape (n,)
        Per client, bytes uploaded to and downloaded from the server.
    seconds : dict of str to float
        Compute time of all parties together, per phase (:data:`PHASES`).
    server : SecAggServer
        The server after the round; :attr:`SecAggServer.view` holds every message it saw.
    late_inputs : list of MaskedInput
        Masked inputs that reached the server after it had asked for unmasking.
    clients : dict of int to SecAggClient
        The clients' end states, for privacy experiments (:meth:`SecAggClient.corrupt`).

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.secagg import PHASES, MaskingGraph, SecAggConfig, Stage, secure_aggregate
    >>> config = SecAggConfig(MaskingGraph.complete(4), threshold=2, vector_length=3)
    >>> x = np.arange(12, dtype=np.uint32).reshape(4, 3)
    >>> result = secure_aggregate(x, config, dropouts={"masked_input": [0]}, random_state=0)
    >>> result.total.tolist(), result.summed_clients.tolist()
    ([18, 21, 24], [1, 2, 3])
    >>> sorted(result.survivors[Stage.SHARE_KEYS]), result.bytes_sent.shape, tuple(result.seconds) == PHASES
    ([0, 1, 2, 3], (4,), True)
    """

    total: np.ndarray
    survivors: dict[Stage, frozenset[int]]
    bytes_sent: np.ndarray
    bytes_received: np.ndarray
    seconds: dict[str, float]
    server: SecAggServer
    late_inputs: list[MaskedInput]
    clients: dict[int, SecAggClient]

    @property
    def summed_clients(self) -> np.ndarray:
        """The clients whose inputs are in :attr:`total` (``U3``), sorted."""
        return np.array(sorted(self.survivors[Stage.MASKED_INPUT]), dtype=np.int64)


_DROPOUT_STAGES = tuple(stage for stage in Stage if stage != Stage.DONE)


def _dropout_stage(stage) -> Stage:
    """The :class:`Stage` a ``dropouts`` key names (a Stage, its value or its name in any case)."""
    valid = ", ".join(repr(s.name.lower()) for s in _DROPOUT_STAGES)
    try:
        if isinstance(stage, str):
            found = Stage[stage.upper()]
        elif isinstance(stage, Stage | int) and not isinstance(stage, bool):
            found = Stage(stage)
        else:
            found = None
    except (KeyError, ValueError):
        found = None
    if found is None or found == Stage.DONE:
        raise ValueError(
            f"dropouts: unknown stage {stage!r}; clients can drop before one of the stages {valid} "
            "(a Stage or its name)."
        )
    return found


def _client_ids(clients, n: int, name: str) -> frozenset[int]:
    ids = check_ids(clients if isinstance(clients, np.ndarray) else np.asarray(list(clients)), name)
    unknown = sorted({int(u) for u in ids if u < 0 or u >= n})
    if unknown:
        raise ValueError(f"{name} must be client ids in [0, {n}); unknown ids {unknown}.")
    return frozenset(int(u) for u in ids)


def _dropout_sets(dropouts, n: int) -> dict[Stage, frozenset[int]]:
    out = {stage: frozenset() for stage in _DROPOUT_STAGES}
    for stage, clients in (dropouts or {}).items():
        stage = _dropout_stage(stage)
        out[stage] = out[stage] | _client_ids(clients, n, f"dropouts[{stage.name.lower()!r}]")
    return out


def secure_aggregate(
    inputs,
    config: SecAggConfig,
    *,
    dropouts: Mapping[Stage | str, Collection[int]] | None = None,
    late: Collection[int] = (),
    random_state: SeedLike | str = "secrets",
) -> SecAggResult:
    """Run one SecAgg(+) round among ``n`` clients and return the exact sum of the survivors' inputs.

    Parameters
    ----------
    inputs : array-like of uint32, shape (n, d)
        Client ``i``'s vector ``x_i`` in ``Z_{2^32}`` (:class:`FixedPoint` encodes floats).
    config : SecAggConfig
        Graph, threshold ``t`` and length ``d``.
    dropouts : mapping of Stage (or its name) to collection of int, optional
        ``dropouts[s]``: clients who go silent before sending their stage-``s``
        message, and stay silent. ``{Stage.MASKED_INPUT: {3}}`` is the classic
        dropout: client 3's keys and shares are out, its masked input never arrives.
    late : collection of int, default=()
        Clients whose masked input arrives only after the server asked for
        unmasking: the server treats them as dropped (and so rebuilds their
        mask keys), yet holds their ``y_i``; the self mask keeps it private.
    random_state : "secrets", int, numpy.random.Generator or None, default="secrets"
        ``"secrets"``: keys and seeds from the operating system. An int or a
        Generator: a reproducible simulation (one independent stream per client).

    Returns
    -------
    SecAggResult
        The sum, the survivor sets, bytes per client and time per phase.

    Raises
    ------
    SecAggAbort
        If fewer than ``t`` clients are left at a stage, or a secret the server
        needs has fewer than ``t`` shares (a survivor's own share counts for
        its ``b``; a dropped client's own share is gone): the round outputs nothing.
    ValueError
        If the inputs do not match the configuration; if ``dropouts`` names a
        stage other than ``"advertise_keys"``, ``"share_keys"``,
        ``"masked_input"`` or ``"unmasking"``; if ``dropouts`` or ``late``
        hold ids that are not whole numbers or not clients in ``[0, n)``; or if
        ``random_state`` is a string other than ``"secrets"``.

    Examples
    --------
    Six clients on a Harary graph of degree 4 (SecAgg+; 5 share holders each,
    the client itself included), threshold 3; client 5 drops before sending its
    masked input:

    >>> import numpy as np
    >>> from fedlib.secagg import SecAggConfig, harary_graph, secure_aggregate
    >>> x = np.arange(18, dtype=np.uint32).reshape(6, 3)
    >>> config = SecAggConfig(harary_graph(6, 4, random_state=0), threshold=3, vector_length=3)
    >>> result = secure_aggregate(x, config, dropouts={"masked_input": [5]}, random_state=0)
    >>> result.total.tolist(), x[:5].sum(axis=0).tolist()
    ([30, 35, 40], [30, 35, 40])
    """
    X = np.asarray(inputs)
    n = config.n_clients
    if X.shape != (n, config.vector_length):
        raise ValueError(f"inputs must have shape (n={n}, d={config.vector_length}), got {X.shape}.")
    drops = _dropout_sets(dropouts, n)
    late = _client_ids(late, n, "late")
    clock = PhaseClock()
    streams = spawn_key_sources(random_state, n)
    clients = {i: SecAggClient(i, X[i], config, random_state=streams[i], clock=clock) for i in range(n)}
    server = SecAggServer(config, clock=clock)
    sent = np.zeros(n, dtype=np.int64)
    received = np.zeros(n, dtype=np.int64)
    gone: set[int] = set()

    def speaking(stage: Stage) -> list[int]:
        gone.update(drops[stage])
        return [i for i in range(n) if i not in gone]

    # Stage 0: public keys.
    adverts = [clients[i].advertise_keys() for i in speaking(Stage.ADVERTISE_KEYS)]
    for a in adverts:
        sent[a.sender] += a.nbytes
    key_bundles = server.collect_keys(adverts)
    # Stage 1: sealed shares, routed by the server; each client keeps its own share (not sent, not counted).
    outboxes = {}
    for i in speaking(Stage.SHARE_KEYS):
        bundle = key_bundles[i]
        received[i] += sum(a.nbytes for a in bundle.values())
        outboxes[i] = clients[i].share_keys(bundle)
        sent[i] += sum(m.nbytes for m in outboxes[i])
    u2, deliveries = server.route_shares(outboxes)
    # Stage 2: masked inputs; late ones reach the server after the survivor list went out.
    masked, late_inputs = [], []
    for i in speaking(Stage.MASKED_INPUT):
        received[i] += ID_BYTES * len(u2) + sum(m.nbytes for m in deliveries[i])
        message = clients[i].masked_input(u2, deliveries[i])
        sent[i] += message.nbytes
        (late_inputs if i in late else masked).append(message)
    u3 = server.collect_masked_inputs(masked)
    # Stage 3: shares of self-mask seeds of survivors and of mask keys of the dropped.
    responses = []
    for i in speaking(Stage.UNMASKING):
        received[i] += ID_BYTES * len(u3)
        responses.append(clients[i].unmask(u3))
        sent[i] += responses[-1].nbytes
    total = server.unmask(responses)
    seconds = {phase: clock.seconds.get(phase, 0.0) for phase in PHASES}
    return SecAggResult(
        total=total,
        survivors=dict(server.survivors),
        bytes_sent=sent,
        bytes_received=received,
        seconds=seconds,
        server=server,
        late_inputs=late_inputs,
        clients=clients,
    )
