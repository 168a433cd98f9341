"""Primes and uniform random elements of a prime field GF(p), for any size of p."""

from __future__ import annotations

import secrets

import numpy as np
import sympy

from fedlib._typing import SeedLike
from fedlib._validation import check_random_state


def next_prime(n: int) -> int:
    """Smallest prime strictly greater than ``n`` (sympy's Miller-Rabin/BPSW search).

    Parameters
    ----------
    n : int
        Any integer; below 1 the answer is 2.

    Returns
    -------
    int
        The next prime.

    Examples
    --------
    >>> next_prime(10), next_prime(2**50 - 28)
    (11, 1125899906842597)
    """
    if n < 1:
        return 2
    return int(sympy.nextprime(int(n)))


def is_prime(n: int) -> bool:
    """Primality of ``n`` (deterministic below 2**64, BPSW above; no known counterexample).

    Parameters
    ----------
    n : int
        The integer to test.

    Returns
    -------
    bool
        Whether ``n`` is prime.

    Examples
    --------
    >>> is_prime(2**127 - 1), is_prime(2**50)
    (True, False)
    """
    return bool(sympy.isprime(int(n)))


def check_prime(p: int) -> int:
    """Return ``p`` as an int if it is a prime.

    Parameters
    ----------
    p : int
        A Python or numpy integer.

    Returns
    -------
    int
        ``p``.

    Raises
    ------
    TypeError
        If ``p`` is not an integer (or is a bool).
    ValueError
        If ``p`` is not a prime.
    """
    if not isinstance(p, (int, np.integer)) or isinstance(p, bool):
        raise TypeError(f"prime must be an int, not {type(p).__name__}.")
    p = int(p)
    if p < 2 or not is_prime(p):
        raise ValueError(f"prime={p} is not a prime.")
    return p


def random_field_elements(p: int, size: int, *, random_state: SeedLike | str = None) -> list[int]:
    """``size`` independent uniform elements of ``{0, ..., p-1}`` as Python ints.

    Rejection sampling on ``p.bit_length()`` random bits, so the draw is exactly
    uniform for any ``p``.

    Parameters
    ----------
    p : int
        The field size, >= 2 (any size).
    size : int
        Number of elements, >= 0.
    random_state : int, numpy.random.Generator, None or "secrets", default=None
        ``"secrets"`` draws from the operating system's CSPRNG (for real key
        material); an int or a Generator gives a reproducible simulation.

    Returns
    -------
    list of int
        The elements.

    Raises
    ------
    ValueError
        If ``p < 2``, ``size < 0``, or ``random_state`` is a string other than ``"secrets"``.

    Examples
    --------
    >>> values = random_field_elements(2**255 - 19, 3, random_state=0)
    >>> len(values), all(0 <= v < 2**255 - 19 for v in values)
    (3, True)
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
