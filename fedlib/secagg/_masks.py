"""One-time additive masks that cancel across clients (the "offline keys" of MUFC Alg. 2).

As lists of Python ints for any prime (:func:`zero_sum_masks`), or as ``uint64`` arrays, one client
at a time, for primes below 2**62 (:func:`zero_sum_mask_arrays`).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from fedlib._random import check_key_source
from fedlib._typing import SeedLike
from fedlib._validation import check_scalar
from fedlib.field import random_field_elements, secret_residues


def zero_sum_masks(
    n_clients: int, length: int, prime: int, *, random_state: SeedLike | str = "secrets"
) -> list[list[int]]:
    """Masks ``z^(l)`` uniform on GF(p)^length with ``Σ_l z^(l) = 0 mod p`` (MUFC Alg. 2, line 2).

    The first ``L - 1`` masks are uniform and independent; the last is minus
    their sum, so any ``L - 1`` of them are jointly uniform and reveal nothing.
    This is a trusted dealer: MUFC only asks that the keys be "generated
    offline using standard secure model aggregation".

    Parameters
    ----------
    n_clients : int
        ``L``, >= 1.
    length : int
        Elements per mask (``2KL`` for SCMA).
    prime : int
        ``p``.
    random_state : "secrets", int, numpy.random.Generator or None, default="secrets"
        ``"secrets"`` draws from the operating system's CSPRNG; an int or a
        Generator gives a reproducible simulation, insecure (whoever knows the
        seed recomputes the masks).

    Returns
    -------
    list of list of int
        ``L`` masks of ``length`` residues each.

    Raises
    ------
    ValueError
        If ``n_clients < 1``.
    TypeError
        If ``n_clients`` is not an int.

    Notes
    -----
    Masks must be fresh for every aggregation. If a client masked two inputs
    ``q`` and ``q'`` with the same ``z``, the difference of its two messages
    would be ``q − q'`` in the clear.

    Examples
    --------
    >>> from fedlib.secagg import zero_sum_masks
    >>> masks = zero_sum_masks(3, 4, 13, random_state=0)
    >>> [sum(column) % 13 for column in zip(*masks)]
    [0, 0, 0, 0]
    """
    n_clients = check_scalar(n_clients, "n_clients", "int", min_val=1)
    # One stream for all masks: an int seed made afresh per mask would give L - 1 identical masks, and the
    # difference of two clients' messages would show the difference of their vectors in the clear.
    stream = check_key_source(random_state)
    masks = [random_field_elements(prime, length, random_state=stream) for _ in range(n_clients - 1)]
    last = [(-sum(column)) % prime for column in zip(*masks, strict=True)] if masks else [0] * length
    masks.append(last)
    return masks


#: Largest modulus of :func:`zero_sum_mask_arrays`: two residues add without leaving ``uint64``.
MAX_ARRAY_MODULUS = 2**62


def _uniform_words(prime: int, length: int, stream) -> np.ndarray:
    """``length`` uniform residues mod ``prime`` (uint64): numpy's unbiased draw, or the OS CSPRNG with rejection."""
    if not isinstance(stream, str):
        return stream.integers(0, prime, size=length, dtype=np.uint64)
    return secret_residues(prime, length).astype(np.uint64)


def zero_sum_mask_arrays(
    n_clients: int, length: int, prime: int, *, random_state: SeedLike | str = "secrets"
) -> Iterator[np.ndarray]:
    """The masks of :func:`zero_sum_masks` as ``uint64`` arrays, one client at a time, for a prime below 2**62.

    For long messages over a word-sized field (the hashed SCMA round sends
    hundreds of thousands of residues per client): the first ``L - 1`` masks
    are uniform and independent, the last is minus their sum, made while the
    others are handed out, so only two masks are held at once.

    Parameters
    ----------
    n_clients : int
        ``L``, >= 1.
    length : int
        Residues per mask.
    prime : int
        ``p < 2**62``.
    random_state : "secrets", int, numpy.random.Generator or None, default="secrets"
        ``"secrets"`` draws from the operating system's CSPRNG; a seed is an insecure simulation.

    Yields
    ------
    ndarray of uint64, shape (length,)
        The mask of client 1, 2, ..., L.

    Raises
    ------
    ValueError
        If ``prime`` is not below 2**62, or ``random_state`` is a string other than ``"secrets"``.

    Examples
    --------
    >>> from fedlib.secagg import zero_sum_mask_arrays
    >>> masks = list(zero_sum_mask_arrays(3, 4, 13, random_state=0))
    >>> [int(v) for v in sum(m.astype(object) for m in masks) % 13]
    [0, 0, 0, 0]
    """
    n_clients = check_scalar(n_clients, "n_clients", "int", min_val=1)
    length = check_scalar(length, "length", "int", min_val=0)
    prime = int(prime)
    if not 2 <= prime < MAX_ARRAY_MODULUS:
        raise ValueError(
            f"zero_sum_mask_arrays needs 2 <= p < 2**62 (sums of two residues stay in uint64), got {prime}."
        )
    stream = check_key_source(random_state)
    p = np.uint64(prime)
    total = np.zeros(length, dtype=np.uint64)
    for _ in range(n_clients - 1):
        mask = _uniform_words(prime, length, stream)
        total += mask
        total %= p
        yield mask
    yield (p - total) % p
