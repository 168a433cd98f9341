"""The Lagrange basis over GF(p), in exact Python integers: the one interpolation formula of fedlib.

Every interpolation in the library goes through :func:`barycentric_weights`:
evaluating a polynomial from its values (:func:`lagrange_basis`, used by the
Lagrange code of :mod:`fedlib.field` for sharing, decoding and consistency
checks) and solving the transposed Vandermonde system of MUFC Alg. 2
(:func:`fedlib.field.solve_transposed_vandermonde`).
"""

from __future__ import annotations

from collections.abc import Sequence


def _check_nodes(nodes: Sequence[int], p: int) -> list[int]:
    reduced = [int(x) % p for x in nodes]
    if len(set(reduced)) != len(reduced):
        raise ValueError(f"interpolation nodes must be distinct in GF({p}), got {list(nodes)}.")
    return reduced


def barycentric_weights(nodes: Sequence[int], p: int) -> list[int]:
    """``w_r = 1 / Π_{r' ≠ r} (x_r − x_{r'})`` mod ``p`` for distinct ``nodes``.

    These are the denominators of the Lagrange basis polynomials,
    ``L_r(z) = w_r Π_{r' ≠ r} (z − x_{r'})``. One modular inverse per node.

    Parameters
    ----------
    nodes : sequence of int
        Distinct elements of GF(p).
    p : int
        The prime.

    Returns
    -------
    list of int
        ``w_r`` for every node, in ``[1, p)``.

    Examples
    --------
    >>> from fedlib.field import barycentric_weights
    >>> barycentric_weights([1, 2, 3], 7)  # 1/((1-2)(1-3)), 1/((2-1)(2-3)), 1/((3-1)(3-2))
    [4, 6, 4]
    """
    x = _check_nodes(nodes, p)
    weights = []
    for r, x_r in enumerate(x):
        den = 1
        for r2, x_r2 in enumerate(x):
            if r2 != r:
                den = den * (x_r - x_r2) % p
        weights.append(pow(den, -1, p))
    return weights


def lagrange_basis(nodes: Sequence[int], targets: Sequence[int], p: int) -> list[list[int]]:
    """``L[a][r] = L_r(targets[a])``: the weights that turn values at ``nodes`` into values at ``targets``.

    For a polynomial ``f`` of degree below ``len(nodes)``,
    ``f(targets[a]) = Σ_r L[a][r] f(nodes[r]) mod p``. Computed in Python
    integers with prefix and suffix products, ``O(len(nodes))`` per target
    after the ``O(len(nodes)²)`` weights; a target equal to a node gets the
    unit row.

    Parameters
    ----------
    nodes : sequence of int
        Distinct interpolation points.
    targets : sequence of int
        Points at which the polynomial is wanted.
    p : int
        The prime.

    Returns
    -------
    list of list of int
        One row of ``len(nodes)`` residues per target.

    Examples
    --------
    The line through (1, 3) and (2, 5) is 2x + 1, worth 7 at 3:

    >>> from fedlib.field import lagrange_basis
    >>> (row,) = lagrange_basis([1, 2], [3], 101)
    >>> (row[0] * 3 + row[1] * 5) % 101
    7
    """
    x = _check_nodes(nodes, p)
    weights = barycentric_weights(x, p)
    n = len(x)
    rows = []
    for z in targets:
        z = int(z) % p
        diff = [(z - x_r) % p for x_r in x]
        prefix = [1] * (n + 1)
        for r in range(n):
            prefix[r + 1] = prefix[r] * diff[r] % p
        suffix = [1] * (n + 1)
        for r in range(n - 1, -1, -1):
            suffix[r] = suffix[r + 1] * diff[r] % p
        rows.append([weights[r] * prefix[r] % p * suffix[r + 1] % p for r in range(n)])
    return rows
