"""What a curious server learns from a SecAgg(+) round it ran honestly, alone or with corrupted clients.

Two attacks that a correct protocol must resist only within its assumptions
(Liu et al., TDSC 2025, Requirements 1 and 3):

- a coalition holding ``t`` shares of a client's mask key, together with the
  server, unmasks that client's input (:func:`unmask_with_coalition`); with
  ``t − 1`` shares it learns nothing. Every client holds a share of its own
  secrets, so a corrupted client hands over its own share too; a surviving
  target reveals its own share of ``b`` but never of ``s^SK``, so ``t`` of
  its *other* holders are needed;
- when the masking graph restricted to the honest surviving clients falls into
  several components, the server learns the sum of each component instead of
  only the total (:func:`leaked_partial_sums`; Liu et al. 2025, Fig. 3).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fedlib.secagg._crypto import agree, prg_words
from fedlib.secagg._secagg import _MASK, CorruptedClientView, SecAggServer, Stage, _pairwise_sign, _shamir


def _masked_input(server: SecAggServer, client: int, late_inputs=()) -> np.ndarray:
    if client in server.masked_inputs:
        return server.masked_inputs[client]
    for message in late_inputs:
        if message.sender == client:
            return message.vector
    raise ValueError(f"the server never received a masked input from client {client}.")


def _pooled_secret(server: SecAggServer, coalition: Sequence[CorruptedClientView], target: int, which: int) -> bytes:
    """Rebuild secret ``which`` (0: ``s^SK``, 1: ``b``) of ``target`` from the server's and the coalition's shares."""
    holders = server.config.holders(target)
    position = {int(j): r for r, j in enumerate(holders)}
    pool: dict[int, int] = {}
    for response in server.view[Stage.UNMASKING]:
        shares = response.mask_key_shares if which == 0 else response.self_mask_shares
        if target in shares:
            pool[response.sender] = shares[target]
    for member in coalition:
        if target in member.received_shares:
            pool[member.client_id] = member.received_shares[target][which]
    t = server.config.threshold
    name = "mask key s^SK" if which == 0 else "self-mask seed b"
    if len(pool) < t:
        raise ValueError(
            f"the server and the coalition hold {len(pool)} shares of the {name} of client {target}, fewer than "
            f"t={t}: Shamir sharing hides it completely."
        )
    senders = sorted(pool)[:t]
    values = np.array([[pool[s]] for s in senders], dtype=object)
    return _shamir(holders.size, t).reconstruct_bytes(values, [position[s] for s in senders])[0]


def strip_pairwise_masks(
    target: int, server: SecAggServer, *, mask_key: bytes | None = None, late_inputs=()
) -> np.ndarray:
    """``y_target`` without its pairwise masks: ``x_target + PRG(b_target)``.

    The server can compute this alone for a client it treated as dropped (it
    rebuilt that client's ``s^SK``): if the client's masked input arrives late,
    the self mask ``PRG(b_target)`` is all that still hides ``x_target``
    (Bonawitz et al. 2017, the reason for double masking).

    Parameters
    ----------
    target : int
        The client.
    server : SecAggServer
        The server after a completed round.
    mask_key : bytes, optional
        ``s_target^SK``; by default the one the server rebuilt.
    late_inputs : sequence of MaskedInput, default=()
        Masked inputs that arrived late (:attr:`SecAggResult.late_inputs`).

    Returns
    -------
    ndarray of uint32
        ``x_target + PRG(b_target)`` in ``Z_{2^32}``.

    Raises
    ------
    ValueError
        If the server has no masked input of ``target``, or no mask key for it.

    Examples
    --------
    Client 3's masked input arrives late: the server, having rebuilt its mask key, strips the pairwise masks, but
    the self mask still hides ``x_3``; only client 3's own seed ``b_3`` would take it off.

    >>> import numpy as np
    >>> from fedlib.secagg import MaskingGraph, SecAggConfig, prg_words, secure_aggregate, strip_pairwise_masks
    >>> config = SecAggConfig(MaskingGraph.complete(4), threshold=2, vector_length=2)
    >>> x = np.array([[1, 2], [3, 4], [5, 6], [7, 8]], dtype=np.uint32)
    >>> result = secure_aggregate(x, config, late=[3], random_state=0)
    >>> result.total.tolist()  # clients 0, 1 and 2
    [9, 12]
    >>> y = strip_pairwise_masks(3, result.server, late_inputs=result.late_inputs)
    >>> bool(np.array_equal(y, x[3]))
    False
    >>> (y - prg_words(result.clients[3].corrupt().self_mask_seed, 2)).tolist()
    [7, 8]
    """
    target = int(target)
    y = _masked_input(server, target, late_inputs).copy()
    if mask_key is None:
        if target not in server.rebuilt_mask_keys:
            raise ValueError(f"the server did not rebuild the mask key of client {target}: it survived the round.")
        mask_key = server.rebuilt_mask_keys[target]
    d = server.config.vector_length
    u2 = server.survivors[Stage.SHARE_KEYS]
    for j in server.config.graph.neighbors[target]:
        j = int(j)
        if j not in u2:
            continue
        pairwise = prg_words(agree(mask_key, server.public_keys[j].mask_key, _MASK), d)
        if _pairwise_sign(target, j) > 0:
            y -= pairwise
        else:
            y += pairwise
    return y


def unmask_with_coalition(
    target: int, coalition: Sequence[CorruptedClientView], server: SecAggServer, *, late_inputs=()
) -> np.ndarray:
    """The input ``x_target`` of one client, recovered by the server with the help of corrupted clients.

    The server holds ``y_target`` and, from the unmasking stage, shares of
    one of the client's two secrets (a surviving target's own share of
    ``b_target`` among them); the coalition adds the shares it holds. With
    ``t`` shares of both ``b_target`` and ``s_target^SK`` every mask can be
    recomputed and removed: for a survivor, ``t`` holders other than itself.

    Parameters
    ----------
    target : int
        The victim.
    coalition : sequence of CorruptedClientView
        What the corrupted clients hand over (:meth:`SecAggClient.corrupt`),
        each one's own share of its own secrets included.
    server : SecAggServer
        The server after a completed round.
    late_inputs : sequence of MaskedInput, default=()
        Masked inputs that arrived late (:attr:`SecAggResult.late_inputs`).

    Returns
    -------
    ndarray of uint32
        ``x_target``.

    Raises
    ------
    ValueError
        If fewer than ``t`` shares of either secret are pooled: then the
        coalition learns nothing about ``x_target``.

    Examples
    --------
    With ``t = 2``, the server and one corrupted client hold too few shares of client 0's mask key; two
    corrupted clients unmask its input:

    >>> import numpy as np
    >>> from fedlib.secagg import MaskingGraph, SecAggConfig, secure_aggregate, unmask_with_coalition
    >>> config = SecAggConfig(MaskingGraph.complete(4), threshold=2, vector_length=2)
    >>> x = np.array([[1, 2], [3, 4], [5, 6], [7, 8]], dtype=np.uint32)
    >>> result = secure_aggregate(x, config, random_state=0)
    >>> coalition = [result.clients[1].corrupt(), result.clients[2].corrupt()]
    >>> unmask_with_coalition(0, coalition, result.server).tolist()
    [1, 2]
    >>> try:
    ...     unmask_with_coalition(0, coalition[:1], result.server)
    ... except ValueError:
    ...     print("one share of the mask key: nothing learned")
    one share of the mask key: nothing learned
    """
    target = int(target)
    _masked_input(server, target, late_inputs)
    mask_key = _pooled_secret(server, coalition, target, 0)
    seed = _pooled_secret(server, coalition, target, 1)
    y = strip_pairwise_masks(target, server, mask_key=mask_key, late_inputs=late_inputs)
    return y - prg_words(seed, server.config.vector_length)


def leaked_partial_sums(
    server: SecAggServer, coalition: Sequence[CorruptedClientView] = ()
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Sum of the inputs of every connected component of honest survivors, as the server computes it.

    After a completed round the server has rebuilt ``b_i`` for every survivor
    and ``s_j^SK`` for every dropped client; corrupted clients give it their own
    ``s_i^SK``. Summing ``y_i − PRG(b_i)`` over a component ``C`` of the
    masking graph restricted to honest survivors cancels the masks inside
    ``C``; the masks on edges leaving ``C`` go to dropped or corrupted clients,
    whose keys the server has. So it learns ``Σ_{i ∈ C} x_i`` for every ``C``:
    only the total when the graph stays connected (Liu et al. 2025, Requirement 3).

    Parameters
    ----------
    server : SecAggServer
        The server after a completed round.
    coalition : sequence of CorruptedClientView, default=()
        Corrupted clients who share their secrets with the server.

    Returns
    -------
    list of (ndarray of int, ndarray of uint32)
        ``(members, Σ_{members} x_i)`` per component, ordered by smallest member.

    Raises
    ------
    ValueError
        If the round has not completed.

    Examples
    --------
    Liu et al.'s Fig. 3: on ``H(8, 3)`` without clients 1, 3, 5 and 7, the survivors fall into ``{0, 4}``
    and ``{2, 6}``; a round allowed to complete (insecure, ``allow_partial_sums=True``) leaks both sums:

    >>> import numpy as np
    >>> from fedlib.secagg import SecAggConfig, harary_graph, leaked_partial_sums, secure_aggregate
    >>> graph = harary_graph(8, 3, shuffle=False)
    >>> config = SecAggConfig(graph, threshold=2, vector_length=1, allow_partial_sums=True)
    >>> x = np.arange(1, 9, dtype=np.uint32).reshape(8, 1)
    >>> result = secure_aggregate(x, config, dropouts={"masked_input": [1, 3, 5, 7]}, random_state=0)
    >>> [(members.tolist(), total.tolist()) for members, total in leaked_partial_sums(result.server)]
    [([0, 4], [6]), ([2, 6], [10])]
    """
    if server.stage != Stage.DONE:
        raise ValueError("the server has not completed the round: nothing to exploit yet.")
    corrupted = {view.client_id: view for view in coalition}
    u3 = server.survivors[Stage.MASKED_INPUT]
    honest = np.array(sorted(u3 - set(corrupted)), dtype=np.int64)
    keys = dict(server.rebuilt_mask_keys) | {i: v.mask_private_key for i, v in corrupted.items()}
    graph, d = server.config.graph, server.config.vector_length
    out = []
    for members in graph.components(honest) if honest.size else []:
        inside = set(members.tolist())
        total = np.zeros(d, dtype=np.uint32)
        for i in members:
            i = int(i)
            total += server.masked_inputs[i]
            total -= prg_words(server.rebuilt_seeds[i], d)
            for j in graph.neighbors[i]:
                j = int(j)
                if j in inside or j not in keys or j not in server.survivors[Stage.SHARE_KEYS]:
                    continue
                pairwise = prg_words(agree(keys[j], server.public_keys[i].mask_key, _MASK), d)
                if _pairwise_sign(i, j) > 0:
                    total -= pairwise
                else:
                    total += pairwise
        out.append((members, total))
    return out
