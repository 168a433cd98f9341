"""One-time additive masks that cancel across clients (the "offline keys" of MUFC Alg. 2)."""

from __future__ import annotations

from fedlib._typing import SeedLike
from fedlib._validation import check_random_state, check_scalar
from fedlib.field import random_field_elements


def zero_sum_masks(n_clients: int, length: int, prime: int, *, random_state: SeedLike | str = None) -> list[list[int]]:
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
    random_state : int, numpy.random.Generator, None or "secrets", default=None
        ``"secrets"`` draws from the operating system's CSPRNG; an int or a
        Generator gives a reproducible simulation.

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
    >>> masks = zero_sum_masks(3, 4, 13, random_state=0)
    >>> [sum(column) % 13 for column in zip(*masks)]
    [0, 0, 0, 0]
    """
    n_clients = check_scalar(n_clients, "n_clients", "int", min_val=1)
    # One stream for all masks: an int seed made afresh per mask would give L - 1 identical masks, and the
    # difference of two clients' messages would show the difference of their vectors in the clear.
    stream = random_state if isinstance(random_state, str) else check_random_state(random_state)
    masks = [random_field_elements(prime, length, random_state=stream) for _ in range(n_clients - 1)]
    last = [(-sum(column)) % prime for column in zip(*masks, strict=True)] if masks else [0] * length
    masks.append(last)
    return masks
