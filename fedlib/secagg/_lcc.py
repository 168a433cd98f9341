"""SecFC Phase 1: secret-sharing data points with Lagrange coded computing (SecFC Sec. 4.1 and Appendix B).

Two ways to share:

* :func:`share_points` (SecFC Alg. 1, lines 1-4): the owner of point ``i``
  encodes it and sends share ``j`` to client ``j``. Who owns which index is
  public: the owner is whoever sends.
* :func:`share_every_index` (the membership-privacy extension, SecFC Sec. 6,
  Eqs. (4)-(6)): after a private set union fixes the index set ``[m]``, every
  client encodes *every* index, its own points and zeros elsewhere, each with
  fresh masks; client ``j`` adds the ``n`` shares it receives per index. One
  owner per index means the sum encodes the point, under masks that are sums
  of uniform masks, hence uniform. The union itself is simulated: the
  simulation knows the partition and hands out indices (an oracle for PSU).
"""

from __future__ import annotations

import numpy as np

from fedlib._random import spawn_key_sources
from fedlib._typing import NDArrayInt, SeedLike
from fedlib._validation import check_scalar
from fedlib.field import LagrangeCode


def split_segments(X_field, n_segments: int) -> NDArrayInt:
    """Rows of ``X_field`` cut into ``ℓ`` equal segments, zero-padded at the end: shape ``(m, ℓ, ⌈d/ℓ⌉)``.

    SecFC Sec. 4.1 splits each point into ``ℓ`` segments of ``d/ℓ``
    coordinates. Padding zeros add nothing to any squared norm, so an ``ℓ``
    that does not divide ``d`` gives the same distances.

    Parameters
    ----------
    X_field : array-like of int of shape (m, d)
        Points as residues of GF(q).
    n_segments : int
        ``ℓ``, between 1 and ``d``.

    Returns
    -------
    ndarray of shape (m, ℓ, ⌈d/ℓ⌉)
        The segments, of the dtype of ``X_field``.

    Raises
    ------
    ValueError
        If ``ℓ > d``.

    Examples
    --------
    >>> from fedlib.secagg import split_segments
    >>> split_segments([[1, 2, 3]], 2).tolist()
    [[[1, 2], [3, 0]]]
    """
    X_field = np.asarray(X_field)
    m, d = X_field.shape
    n_segments = check_scalar(n_segments, "n_segments (ℓ)", "int", min_val=1)
    if n_segments > d:
        raise ValueError(f"n_segments (ℓ) = {n_segments} exceeds n_features d = {d}.")
    width = -(-d // n_segments)
    padded = np.zeros((m, n_segments * width), dtype=X_field.dtype)
    padded[:, :d] = X_field
    return padded.reshape(m, n_segments, width)


def share_points(code: LagrangeCode, X_field, *, random_state: SeedLike | str = "secrets") -> NDArrayInt:
    """One client's Phase 1: LCC shares of its own points (SecFC Alg. 1, lines 2-4).

    Parameters
    ----------
    code : LagrangeCode
        The public LCC parameters: ``n``, ``ℓ``, ``t`` and ``q``.
    X_field : array-like of shape (m_j, d)
        The client's quantized points as residues of GF(q).
    random_state : "secrets", int, numpy.random.Generator or None, default="secrets"
        Draws the ``t`` masks of every point: by default the operating system's
        CSPRNG; a seed is a reproducible simulation, insecure (whoever knows it
        recomputes the masks and so the points from one share).

    Returns
    -------
    ndarray of shape (n_clients, m_j, ⌈d/ℓ⌉)
        Row block ``j`` is what client ``j`` receives.

    References
    ----------
    S. Li, S. Hou, B. Buyukates, S. Avestimehr. "Secure Federated Clustering", 2022.

    Examples
    --------
    Three clients, ``t = 1``: any two shares give the points back (Shamir's
    threshold), one share alone is uniform.

    >>> from fedlib.secagg import share_points
    >>> from fedlib.field import LagrangeCode
    >>> code = LagrangeCode(n_clients=3, n_segments=1, n_masks=1, prime=101)
    >>> shares = share_points(code, [[5, 7], [1, 100]], random_state=0)
    >>> shares.shape
    (3, 2, 2)
    >>> code.decode(shares[[0, 2]], [0, 2], 1)[0].tolist()
    [[5, 7], [1, 100]]
    """
    X_field = code.field.asarray(X_field)
    return code.encode(split_segments(X_field, code.n_segments), random_state=random_state)


def share_all(code: LagrangeCode, X_field, parts, *, random_state: SeedLike | str = "secrets") -> NDArrayInt:
    """Phase 1 for all clients: ``shares[j]`` is client ``j``'s ``(m, ⌈d/ℓ⌉)`` share of every point.

    Client ``c`` encodes the rows ``parts[c]`` with its own generator (spawned
    from ``random_state``); the returned matrix is in the global row order.

    Parameters
    ----------
    code : LagrangeCode
        The public LCC parameters.
    X_field : array-like of int of shape (m, d)
        All points as residues of GF(q), in a global row order.
    parts : list of array-like of int
        Client ``c`` owns the rows ``parts[c]``.
    random_state : "secrets", int, numpy.random.Generator or None, default="secrets"
        The clients' mask streams: by default each draws from the operating
        system's CSPRNG; a seed is a reproducible simulation, insecure.

    Returns
    -------
    ndarray of shape (n_clients, m, ⌈d/ℓ⌉)
        Every client's share of every point.

    Examples
    --------
    Two clients own the rows ``[0, 2]`` and ``[1]``; any two of the three shares give every point back:

    >>> from fedlib.field import LagrangeCode
    >>> from fedlib.secagg import share_all
    >>> code = LagrangeCode(n_clients=3, n_segments=1, n_masks=1, prime=101)
    >>> X = [[5, 7], [1, 100], [0, 3]]
    >>> shares = share_all(code, X, [[0, 2], [1]], random_state=0)
    >>> shares.shape
    (3, 3, 2)
    >>> code.decode(shares[[1, 2]], [1, 2], 1)[0].tolist()
    [[5, 7], [1, 100], [0, 3]]
    """
    X_field = code.field.asarray(X_field)
    m, d = X_field.shape
    width = -(-d // code.n_segments)
    shares = np.empty((code.n_clients, m, width), dtype=code.field.dtype)
    for idx, rng in zip(parts, spawn_key_sources(random_state, len(parts)), strict=True):
        shares[:, idx] = share_points(code, X_field[idx], random_state=rng)
    return shares


def share_every_index(code: LagrangeCode, X_field, parts, *, random_state: SeedLike | str = "secrets") -> NDArrayInt:
    """Phase 1 with membership privacy (SecFC Sec. 6, Eqs. (4)-(6)).

    Every client ``c`` builds ``x̄_i^{(c)} = x_i`` if it owns ``i`` and ``0``
    otherwise (Eq. (4)), LCC-encodes all ``m`` rows with fresh masks (Eq. (5)),
    and every client sums the ``n`` shares it receives per index (Eq. (6)).
    Costs ``n`` times the encoding work of :func:`share_all`: each client encodes
    ``m`` rows instead of ``m_c``.

    Parameters
    ----------
    code : LagrangeCode
        The public LCC parameters.
    X_field : array-like of int of shape (m, d)
        All points as residues of GF(q), in the order fixed by the private set union.
    parts : list of array-like of int
        Client ``c`` owns the rows ``parts[c]`` (known to the simulation only).
    random_state : "secrets", int, numpy.random.Generator or None, default="secrets"
        The clients' mask streams: by default each draws from the operating
        system's CSPRNG; a seed is a reproducible simulation, insecure.

    Returns
    -------
    ndarray of shape (n_clients, m, ⌈d/ℓ⌉)
        Shares of every point under summed masks; they decode to the same points
        as :func:`share_all`.

    Examples
    --------
    Every client encodes all three rows (zeros where it owns none); the summed shares decode to the points:

    >>> import numpy as np
    >>> from fedlib.field import LagrangeCode
    >>> from fedlib.secagg import share_every_index
    >>> code = LagrangeCode(n_clients=3, n_segments=1, n_masks=1, prime=101)
    >>> X = [[5, 7], [1, 100], [0, 3]]
    >>> shares = share_every_index(code, X, [[0, 2], [1]], random_state=0)
    >>> shares.shape
    (3, 3, 2)
    >>> code.decode(shares[[0, 1]], [0, 1], 1)[0].tolist()
    [[5, 7], [1, 100], [0, 3]]
    """
    X_field = code.field.asarray(X_field)
    m, d = X_field.shape
    width = -(-d // code.n_segments)
    total = np.zeros((code.n_clients, m, width), dtype=code.field.dtype)
    for idx, rng in zip(parts, spawn_key_sources(random_state, len(parts)), strict=True):
        own = np.zeros_like(X_field)
        own[idx] = X_field[idx]
        total = np.mod(total + share_points(code, own, random_state=rng), code.prime)
    return total
