"""One-time additive masks that cancel across clients (the "offline keys" of MUFC Alg. 2)."""

from __future__ import annotations

from fedlib._typing import SeedLike
from fedlib.field import random_field_elements


def zero_sum_masks(n_clients: int, length: int, prime: int, *, random_state: SeedLike | str = None) -> list[list[int]]:
    """Masks ``z^(l)`` uniform on GF(p)^length with ``sum_l z^(l) = 0 mod p`` (trusted dealer).

    The first ``L - 1`` masks are uniform and independent; the last is minus
    their sum, so any ``L - 1`` of them are jointly uniform and reveal nothing.
    Masks must be fresh for every aggregation: reusing them across rounds leaks
    the difference of a client's inputs (MUFC guide, ambiguity 10).
    ``random_state="secrets"`` draws from the OS CSPRNG.
    """
    if n_clients < 1:
        raise ValueError(f"n_clients={n_clients} should be >= 1.")
    masks = [random_field_elements(prime, length, random_state=random_state) for _ in range(n_clients - 1)]
    last = [(-sum(column)) % prime for column in zip(*masks, strict=True)] if masks else [0] * length
    masks.append(last)
    return masks
