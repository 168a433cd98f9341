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
from fedlib.field import check_prime, decode_power_sums, next_prime
from fedlib.secagg._masks import zero_sum_masks


@dataclass(frozen=True)
class SCMAParams:
    """Public parameters of one SCMA round."""

    prime: int  #: p, a prime > max(n, B^d)
    n_syndromes: int  #: 2T; T = K L bounds the number of non-zeros of the sum
    n_samples: int  #: n, the largest possible count
    n_bins: int  #: B^d, the largest bin index (indices are 1..B^d)
    n_clusters: int  #: K, the most non-zeros one client may send

    @property
    def element_bits(self) -> int:
        """Bits to send one field element: ceil(log2 p)."""
        return (self.prime - 1).bit_length()

    @property
    def message_bits(self) -> int:
        """Bits one client sends: 2KL ceil(log2 p) (MUFC App. C)."""
        return self.n_syndromes * self.element_bits


def scma_params(
    *, n_samples: int, n_bins: int, n_clusters: int, n_clients: int, prime: int | None = None
) -> SCMAParams:
    """Parameters for aggregating ``n_clients`` vectors with at most ``n_clusters`` non-zeros each.

    The prime must satisfy ``p > max(n, B^d)`` (MUFC Alg. 2 states ``>=``; strict
    is needed so that every count is non-zero mod p and every 1-based bin index
    is a distinct non-zero element). With ``prime=None`` the smallest such prime
    is used.
    """
    for name, value in (
        ("n_samples", n_samples),
        ("n_bins", n_bins),
        ("n_clusters", n_clusters),
        ("n_clients", n_clients),
    ):
        if int(value) < 1:
            raise ValueError(f"{name}={value} should be >= 1.")
    bound = max(int(n_samples), int(n_bins))
    if prime is None:
        prime = next_prime(bound)
    prime = check_prime(prime)
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


def _check_counts(counts: Mapping[int, int], params: SCMAParams, who: str) -> None:
    for j, q in counts.items():
        if not 1 <= int(j) <= params.n_bins:
            raise ValueError(f"{who}: bin index j={j} outside [1, B^d={params.n_bins}] (indices are 1-based).")
        if not 1 <= int(q) <= params.n_samples:
            raise ValueError(f"{who}: count q_j={q} at bin {j} outside [1, n={params.n_samples}].")


def scma_encode(counts: Mapping[int, int], params: SCMAParams, mask: Sequence[int]) -> list[int]:
    """Client message ``S_i^(l) = sum_j q_j^(l) j^(i-1) + z_i^(l) mod p``, i = 1..2T (MUFC Alg. 2).

    Costs ``2T`` multiplications per non-zero (powers are built incrementally).
    """
    _check_counts(counts, params, "scma_encode")
    if len(counts) > params.n_clusters:
        raise ValueError(
            f"scma_encode: a client may send at most K={params.n_clusters} non-zero bins, got {len(counts)}; "
            "more could make the sum undecodable from 2KL syndromes."
        )
    if len(mask) != params.n_syndromes:
        raise ValueError(f"mask has length {len(mask)}, need 2T={params.n_syndromes}.")
    p = params.prime
    message = [int(z) % p for z in mask]
    terms = [(int(j), int(q)) for j, q in counts.items()]
    powers = [q % p for _, q in terms]
    for i in range(params.n_syndromes):
        message[i] = (message[i] + sum(powers)) % p
        powers = [v * j % p for v, (j, _) in zip(powers, terms, strict=True)]
    return message


def scma_aggregate(messages: Sequence[Sequence[int]], params: SCMAParams) -> list[int]:
    """Server: add the masked messages; the masks cancel, leaving the syndromes of ``q``."""
    if not messages:
        raise ValueError("no messages to aggregate.")
    for k, m in enumerate(messages):
        if len(m) != params.n_syndromes:
            raise ValueError(f"message {k} has length {len(m)}, need 2T={params.n_syndromes}.")
    p = params.prime
    return [sum(column) % p for column in zip(*messages, strict=True)]


def scma_decode(syndromes: Sequence[int], params: SCMAParams, *, backend: str = "auto") -> dict[int, int]:
    """Server: the exact sparse sum ``{j: q_j}`` from the aggregated syndromes.

    Raises :class:`fedlib.field.DecodingError` if the sum has more than ``T``
    non-zeros or the messages were inconsistent, and ``ValueError`` if a decoded
    index or count lies outside its range (which would mean p was too small).
    """
    result = decode_power_sums(syndromes, params.prime, backend=backend)
    _check_counts(result, params, "scma_decode")
    return dict(sorted(result.items()))


@dataclass(frozen=True)
class SCMAResult:
    """Outcome of :func:`secure_sparse_sum`."""

    total: dict[int, int]  #: q = sum_l q^(l), bin index -> count
    params: SCMAParams
    messages: list[list[int]]  #: what each client sent (masked syndromes)


def secure_sparse_sum(
    client_counts: Sequence[Mapping[int, int]],
    params: SCMAParams,
    *,
    random_state: SeedLike | str = None,
    backend: str = "auto",
) -> SCMAResult:
    """Run one SCMA round: fresh zero-sum masks, client encoding, aggregation, decoding."""
    masks = zero_sum_masks(len(client_counts), params.n_syndromes, params.prime, random_state=random_state)
    messages = [scma_encode(c, params, z) for c, z in zip(client_counts, masks, strict=True)]
    total = scma_decode(scma_aggregate(messages, params), params, backend=backend)
    return SCMAResult(total=total, params=params, messages=messages)


def dense_secure_sum_bits(params: SCMAParams) -> int:
    """Bits per client for masked *dense* aggregation of the same vector: B^d elements of ceil(log2(n+1)) bits."""
    return params.n_bins * math.ceil(math.log2(params.n_samples + 1))
