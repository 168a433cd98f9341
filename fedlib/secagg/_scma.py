"""SCMA: secure compressed multiset aggregation (MUFC Alg. 2).

Each client holds a sparse vector ``q^(l)`` of bin counts (at most K non-zeros
among ``B^d`` bins). It sends the first ``2T`` power sums of its non-zeros,
``S_i = sum_j q_j j^(i-1) mod p`` (the Reed-Solomon syndrome with the bin
indices as evaluation points), masked with a one-time key. Keys cancel in the
sum, power sums are linear, and the server decodes the exact sparse sum
``q = sum_l q^(l)`` from ``2T >= 2 |supp q|`` syndromes, learning nothing else.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fedlib._typing import SeedLike
from fedlib.field import check_prime, decode_power_sums, next_prime, power_sums
from fedlib.secagg._masks import zero_sum_masks


@dataclass(frozen=True)
class _SparseSumParams:
    """What every SCMA round is made for: its prime, ``2T`` syndromes, ``n``, ``B^d`` and ``K`` (both rounds)."""

    prime: int
    n_syndromes: int
    n_samples: int
    n_bins: int
    n_clusters: int

    @property
    def element_bits(self) -> int:
        """Bits to send one residue of the round's field: ``ceil(log2 p)``."""
        return (self.prime - 1).bit_length()


@dataclass(frozen=True)
class SCMAParams(_SparseSumParams):
    """Public parameters of one SCMA round (MUFC Alg. 2); build them with :func:`scma_params`.

    Parameters
    ----------
    prime : int
        ``p``, a prime > ``max(n, B^d)``.
    n_syndromes : int
        ``2T``; ``T = K L`` bounds the number of non-zeros of the sum.
    n_samples : int
        ``n``, the largest possible count.
    n_bins : int
        ``B^d``, the largest bin index (indices are ``1..B^d``).
    n_clusters : int
        ``K``, the most non-zeros one client may send.

    Examples
    --------
    >>> from fedlib.secagg import SCMAParams, scma_params
    >>> params = scma_params(n_samples=12, n_bins=4, n_clusters=2, n_clients=2)
    >>> isinstance(params, SCMAParams), params.prime, params.n_syndromes, params.message_bits
    (True, 13, 8, 32)
    """

    @property
    def message_bits(self) -> int:
        """Bits one client sends: 2KL ceil(log2 p) (MUFC App. C)."""
        return self.n_syndromes * self.element_bits


def scma_params(
    *, n_samples: int, n_bins: int, n_clusters: int, n_clients: int, prime: int | None = None
) -> SCMAParams:
    """Parameters for aggregating ``n_clients`` vectors with at most ``n_clusters`` non-zeros each.

    The prime must satisfy ``p > max(n, B^d)`` (MUFC Sec. 4.2 states ``>=``;
    strict is needed so that every count is non-zero mod p and every 1-based
    bin index is a distinct non-zero element).

    Parameters
    ----------
    n_samples : int
        ``n``, the total number of points (the largest possible count).
    n_bins : int
        ``B^d``, the number of quantization bins.
    n_clusters : int
        ``K``, the most non-zero bins one client may send.
    n_clients : int
        ``L``.
    prime : int or None, default=None
        ``p``; ``None`` takes the smallest prime above ``max(n, B^d)``
        (:func:`fedlib.field.next_prime`: a fraction of a second for the 3,053-bit
        bound of the FEMNIST sample's grid, seconds for ``100**784``).

    Returns
    -------
    SCMAParams
        With ``2T = 2KL`` syndromes.

    Raises
    ------
    ValueError
        If a count is below 1, or ``prime`` is not a prime above ``max(n, B^d)``.

    References
    ----------
    C. Pan, J. Sima, S. Prakash, V. Rana, O. Milenkovic. "Machine Unlearning of
    Federated Clusters", ICLR 2023, Sec. 4.1-4.2 and App. C.

    Examples
    --------
    MUFC's Fig. 2: ``K = 2``, ``L = 2``, ``B^d = 4``, ``n = 12``, ``p = 13``.

    >>> from fedlib.secagg import scma_params
    >>> params = scma_params(n_samples=12, n_bins=4, n_clusters=2, n_clients=2, prime=13)
    >>> params.n_syndromes, params.message_bits
    (8, 32)
    """
    _check_sizes(n_samples=n_samples, n_bins=n_bins, n_clusters=n_clusters, n_clients=n_clients)
    bound = max(int(n_samples), int(n_bins))
    prime = next_prime(bound) if prime is None else check_prime(prime)
    if prime <= bound:
        raise ValueError(
            f"SCMA needs a prime p > max(n, B^d) (MUFC Alg. 2); got p={prime} with n={n_samples}, B^d={n_bins}."
        )
    return SCMAParams(
        prime=prime,
        n_syndromes=2 * int(n_clusters) * int(n_clients),
        n_samples=int(n_samples),
        n_bins=int(n_bins),
        n_clusters=int(n_clusters),
    )


def _check_sizes(**sizes: int) -> None:
    """Every count a round is made for (``n``, ``B^d``, ``K``, ``L``) is at least 1 (both SCMA rounds)."""
    for name, value in sizes.items():
        if int(value) < 1:
            raise ValueError(f"{name}={value} should be >= 1.")


def plain_sparse_sum(client_counts: Sequence[Mapping[int, int]]) -> dict[int, int]:
    """``q = Σ_l q^(l)`` in the clear, sorted by bin: what every secure round must return (and MUFC's plaintext mode).

    Parameters
    ----------
    client_counts : sequence of mapping of int to int
        ``q^(l)`` of every client: bin index to count.

    Returns
    -------
    dict of int to int
        Bin index to total count, sorted by index.

    Examples
    --------
    >>> from fedlib.secagg import plain_sparse_sum
    >>> plain_sparse_sum([{1: 3, 2: 4}, {2: 1, 4: 4}])
    {1: 3, 2: 5, 4: 4}
    """
    total: dict[int, int] = {}
    for counts in client_counts:
        for j, q in counts.items():
            total[int(j)] = total.get(int(j), 0) + int(q)
    return dict(sorted(total.items()))


def _check_client(counts: Mapping[int, int], params: _SparseSumParams, who: str) -> None:
    """One client's vector: indices and counts in range, at most ``K`` non-zeros (both SCMA rounds)."""
    _check_counts(counts, params, who)
    if len(counts) > params.n_clusters:
        raise ValueError(
            f"{who}: a client may send at most K={params.n_clusters} non-zero bins, got {len(counts)}; "
            "more could make the sum undecodable from 2KL syndromes."
        )


def _check_held(client_counts: Sequence[Mapping[int, int]], params: _SparseSumParams) -> None:
    """The clients' points in all must fit the ``n`` the parameters were made for (both SCMA rounds)."""
    held = sum(int(v) for counts in client_counts for v in counts.values())
    if held > params.n_samples:
        raise ValueError(
            f"the clients hold {held} points in all, more than n_samples={params.n_samples} the parameters were "
            f"made for: the field (p = {params.prime}) cannot hold the sum, which would decode wrong. "
            "Make the parameters with the true total."
        )


def _check_counts(counts: Mapping[int, int], params: _SparseSumParams, who: str) -> None:
    for j, q in counts.items():
        if not 1 <= int(j) <= params.n_bins:
            raise ValueError(f"{who}: bin index j={j} outside [1, B^d={params.n_bins}] (indices are 1-based).")
        if not 1 <= int(q) <= params.n_samples:
            raise ValueError(f"{who}: count q_j={q} at bin {j} outside [1, n={params.n_samples}].")


def scma_encode(
    counts: Mapping[int, int], params: SCMAParams, mask: Sequence[int], *, backend: str = "auto"
) -> list[int]:
    """Client message ``S_i^(l) = Σ_j q_j^(l) j^(i-1) + z_i^(l) mod p``, i = 1..2T (MUFC Alg. 2, line 2).

    The ``2T`` power sums are the first coefficients of the series
    ``Σ_j q_j / (1 − j x)`` (:func:`fedlib.field.power_sums`): with FLINT, a
    product tree over the ``K`` bins and a blocked series expansion, about as
    much work as ``2T/K`` products of size ``K`` (at FEMNIST's ``K = 62``,
    ``2T = 12400`` and a 3,053-bit prime, 0.16 s per client instead of 28 s); in
    pure Python, ``2T`` multiplications per non-zero (powers built
    incrementally). Both give the same message.

    Parameters
    ----------
    counts : mapping of int to int
        ``q^(l)``: bin index (1-based) to count, at most ``K`` entries.
    params : SCMAParams
        The public parameters.
    mask : sequence of int
        The client's one-time key ``z^(l)``, of length ``2T``.
    backend : {"auto", "python", "flint"}, default="auto"
        The arithmetic; ``"auto"`` uses FLINT when python-flint is installed.

    Returns
    -------
    list of int
        The ``2T`` masked syndromes.

    Raises
    ------
    ValueError
        For more than ``K`` non-zeros, an index or a count out of range, a
        mask of the wrong length, or an unknown ``backend``.
    ImportError
        With ``backend="flint"`` when python-flint is not installed.

    References
    ----------
    C. Pan, J. Sima, S. Prakash, V. Rana, O. Milenkovic. "Machine Unlearning of
    Federated Clusters", ICLR 2023, Alg. 2.

    Examples
    --------
    MUFC's Fig. 2 by hand: each client masks its power sums, the server adds and decodes:

    >>> from fedlib.secagg import scma_aggregate, scma_decode, scma_encode, scma_params, zero_sum_masks
    >>> params = scma_params(n_samples=12, n_bins=4, n_clusters=2, n_clients=2, prime=13)
    >>> z1, z2 = zero_sum_masks(2, params.n_syndromes, params.prime, random_state=0)
    >>> m1, m2 = scma_encode({1: 3, 2: 4}, params, z1), scma_encode({2: 1, 4: 4}, params, z2)
    >>> len(m1), all(0 <= s < 13 for s in m1)
    (8, True)
    >>> scma_decode(scma_aggregate([m1, m2], params), params)
    {1: 3, 2: 5, 4: 4}
    """
    _check_client(counts, params, "scma_encode")
    if len(mask) != params.n_syndromes:
        raise ValueError(f"mask has length {len(mask)}, need 2T={params.n_syndromes}.")
    p = params.prime
    sums = power_sums(list(counts), list(counts.values()), params.n_syndromes, p, backend=backend)
    return [(s + int(z)) % p for s, z in zip(sums, mask, strict=True)]


def scma_aggregate(messages: Sequence[Sequence[int]], params: SCMAParams) -> list[int]:
    """Server: add the masked messages; the masks cancel, leaving the syndromes of ``q`` (MUFC Alg. 2, line 3).

    Parameters
    ----------
    messages : sequence of sequence of int
        One message of ``2T`` residues per client.
    params : SCMAParams
        The public parameters.

    Returns
    -------
    list of int
        ``S_i = Σ_l S_i^(l) mod p``.

    Raises
    ------
    ValueError
        If there are no messages or one has the wrong length.

    Examples
    --------
    The masks cancel: the sum of the masked messages is the unmasked message of the summed counts.

    >>> from fedlib.secagg import scma_aggregate, scma_encode, scma_params, zero_sum_masks
    >>> params = scma_params(n_samples=12, n_bins=4, n_clusters=3, n_clients=2, prime=13)
    >>> z1, z2 = zero_sum_masks(2, params.n_syndromes, params.prime, random_state=0)
    >>> messages = [scma_encode({1: 3, 2: 4}, params, z1), scma_encode({2: 1, 4: 4}, params, z2)]
    >>> scma_aggregate(messages, params) == scma_encode({1: 3, 2: 5, 4: 4}, params, [0] * params.n_syndromes)
    True
    """
    if not messages:
        raise ValueError("no messages to aggregate.")
    for k, m in enumerate(messages):
        if len(m) != params.n_syndromes:
            raise ValueError(f"message {k} has length {len(m)}, need 2T={params.n_syndromes}.")
    p = params.prime
    return [sum(column) % p for column in zip(*messages, strict=True)]


def scma_decode(syndromes: Sequence[int], params: SCMAParams, *, backend: str = "auto") -> dict[int, int]:
    """Server: the exact sparse sum ``{j: q_j}`` from the aggregated syndromes (MUFC Alg. 2, line 3).

    Parameters
    ----------
    syndromes : sequence of int
        ``S_1..S_2T`` from :func:`scma_aggregate`.
    params : SCMAParams
        The public parameters.
    backend : {"auto", "python", "flint"}, default="auto"
        The arithmetic of :func:`fedlib.field.decode_power_sums`: FLINT's
        Berlekamp-Massey, root finding and multipoint evaluation, or the
        pure-Python reference; both return the same sum.

    Returns
    -------
    dict of int to int
        ``q``: bin index to count, sorted by index.

    Raises
    ------
    fedlib.exceptions.DecodingError
        If the sum has more than ``T`` non-zeros or the messages were inconsistent.
    ValueError
        If a decoded index or count lies outside its range (which would mean p was too small).

    Notes
    -----
    With thousand-bit primes the time goes to root finding: splitting the
    degree-``m`` locator raises a polynomial to a power of about ``p`` modulo it,
    ``log2 p`` squarings of degree ``m``, at least once. For FEMNIST's full
    support (``m = KL = 6200``, a 3,053-bit prime) one such exponentiation alone
    takes about half an hour (measured: half a second per squaring), whatever the
    library; the rest of the decoding takes seconds, and 27 non-zeros on the
    same grid decode in about 4 s.

    Examples
    --------
    >>> from fedlib.secagg import scma_decode, scma_encode, scma_params
    >>> params = scma_params(n_samples=12, n_bins=4, n_clusters=2, n_clients=2, prime=13)
    >>> syndromes = scma_encode({1: 3, 2: 5}, params, [0] * params.n_syndromes)
    >>> scma_decode(syndromes, params)
    {1: 3, 2: 5}
    """
    result = decode_power_sums(syndromes, params.prime, backend=backend)
    _check_counts(result, params, "scma_decode")
    return dict(sorted(result.items()))


@dataclass(frozen=True)
class SCMAResult:
    """Outcome of :func:`secure_sparse_sum`.

    Parameters
    ----------
    total : dict of int to int
        ``q = Σ_l q^(l)``: bin index to count.
    params : SCMAParams
        The public parameters of the round.
    messages : list of list of int
        What each client sent (masked syndromes).

    Examples
    --------
    >>> from fedlib.secagg import SCMAResult, scma_params, secure_sparse_sum
    >>> params = scma_params(n_samples=12, n_bins=4, n_clusters=2, n_clients=2, prime=13)
    >>> result = secure_sparse_sum([{1: 3, 2: 4}, {2: 1, 4: 4}], params, random_state=0)
    >>> isinstance(result, SCMAResult), result.total, [len(m) for m in result.messages]
    (True, {1: 3, 2: 5, 4: 4}, [8, 8])
    """

    total: dict[int, int]
    params: SCMAParams
    messages: list[list[int]]


def secure_sparse_sum(
    client_counts: Sequence[Mapping[int, int]],
    params: SCMAParams,
    *,
    random_state: SeedLike | str = "secrets",
    backend: str = "auto",
) -> SCMAResult:
    """Run one SCMA round: fresh zero-sum masks, client encoding, aggregation, decoding (MUFC Alg. 2).

    Parameters
    ----------
    client_counts : sequence of mapping of int to int
        ``q^(l)`` of every client: bin index (1-based) to count.
    params : SCMAParams
        The public parameters, for ``L = len(client_counts)`` clients.
    random_state : "secrets", int, numpy.random.Generator or None, default="secrets"
        Draws the masks (:func:`zero_sum_masks`): by default the operating system's
        CSPRNG; a seed is a reproducible simulation, insecure (whoever knows it
        recomputes the masks and so every client's vector).
    backend : {"auto", "python", "flint"}, default="auto"
        The arithmetic of encoding and decoding (:func:`scma_encode`, :func:`scma_decode`).

    Returns
    -------
    SCMAResult
        The exact sum, the parameters and the clients' messages.

    Raises
    ------
    ValueError
        If a client's vector breaks the parameters (see :func:`scma_encode`), or the clients hold more
        points in all than ``params.n_samples`` (the field would be too small for the sum).
    fedlib.exceptions.DecodingError
        If the sum cannot be decoded.

    Notes
    -----
    The server learns ``q`` and nothing else about the ``q^(l)``: any
    ``L − 1`` masks are jointly uniform (MUFC App. J).
    Used in :doc:`/notebooks/mufc/training`.

    Examples
    --------
    MUFC's Fig. 2 setting; the two clients share bin 2:

    >>> from fedlib.secagg import scma_params, secure_sparse_sum
    >>> params = scma_params(n_samples=12, n_bins=4, n_clusters=2, n_clients=2, prime=13)
    >>> secure_sparse_sum([{1: 3, 2: 4}, {2: 1, 4: 4}], params, random_state=0).total
    {1: 3, 2: 5, 4: 4}
    """
    _check_held(client_counts, params)
    masks = zero_sum_masks(len(client_counts), params.n_syndromes, params.prime, random_state=random_state)
    messages = [scma_encode(c, params, z, backend=backend) for c, z in zip(client_counts, masks, strict=True)]
    total = scma_decode(scma_aggregate(messages, params), params, backend=backend)
    return SCMAResult(total=total, params=params, messages=messages)


def dense_secure_sum_bits(params: SCMAParams) -> int:
    """Bits per client for masked *dense* aggregation of the same vector: B^d elements of ceil(log2(n+1)) bits.

    The comparison point of MUFC Sec. 4.2: securely summing the whole
    length-``B^d`` vector costs exponentially many bits in ``d``.

    Parameters
    ----------
    params : SCMAParams
        The parameters of the sparse round.

    Returns
    -------
    int
        ``B^d · ceil(log2(n + 1))``.

    Examples
    --------
    >>> from fedlib.secagg import dense_secure_sum_bits, scma_params
    >>> dense_secure_sum_bits(scma_params(n_samples=12, n_bins=4, n_clusters=2, n_clients=2))
    16
    """
    return params.n_bins * math.ceil(math.log2(params.n_samples + 1))
