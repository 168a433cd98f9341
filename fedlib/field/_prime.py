"""Primes and uniform random elements of a prime field GF(p), for any size of p."""

from __future__ import annotations

import secrets

import numpy as np
import sympy

from fedlib._typing import SeedLike
from fedlib._validation import check_random_state


def next_prime(n: int) -> int:
    """Smallest prime strictly greater than ``n`` (sympy's Miller-Rabin/BPSW search)."""
    if n < 1:
        return 2
    return int(sympy.nextprime(int(n)))


def is_prime(n: int) -> bool:
    """Primality of ``n`` (deterministic below 2**64, BPSW above; no known counterexample)."""
    return bool(sympy.isprime(int(n)))


def check_prime(p: int) -> int:
    """Return ``p`` as an int if it is a prime, else raise ``ValueError``."""
    if not isinstance(p, (int, np.integer)) or isinstance(p, bool):
        raise TypeError(f"prime must be an int, not {type(p).__name__}.")
    p = int(p)
    if p < 2 or not is_prime(p):
        raise ValueError(f"prime={p} is not a prime.")
    return p


def random_field_elements(p: int, size: int, *, random_state: SeedLike | str = None) -> list[int]:
    """``size`` independent uniform elements of ``{0, ..., p-1}`` as Python ints.

    Rejection sampling on ``p.bit_length()`` random bits, so the draw is exactly
    uniform for any ``p``. ``random_state="secrets"`` draws from the operating
    system's CSPRNG (for real key material); anything else is passed to
    :func:`fedlib._validation.check_random_state` (reproducible simulations).
    """
    p = int(p)
    if p < 2:
        raise ValueError(f"p={p} should be >= 2.")
    if size < 0:
        raise ValueError(f"size={size} should be >= 0.")
    bits = p.bit_length()
    if isinstance(random_state, str):
        if random_state != "secrets":
            raise ValueError(f"random_state={random_state!r}: the only string accepted is 'secrets'.")
        return [secrets.randbelow(p) for _ in range(size)]
    rng = check_random_state(random_state)
    n_bytes = (bits + 7) // 8
    excess = 8 * n_bytes - bits
    out: list[int] = []
    while len(out) < size:
        need = size - len(out)
        raw = rng.bytes(n_bytes * (need + need // 2 + 4))
        for k in range(0, len(raw), n_bytes):
            value = int.from_bytes(raw[k : k + n_bytes], "little") >> excess
            if value < p:
                out.append(value)
                if len(out) == size:
                    break
    return out
