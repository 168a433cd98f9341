"""The Lagrange basis over GF(p) (fedlib/field/_interpolation.py) against the defining products and polynomials."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedlib.field import barycentric_weights, lagrange_basis

PRIMES = [7, 101, 2**61 - 1, 2**127 - 1]


@pytest.mark.parametrize("p", PRIMES)
@given(data=st.data())
def test_barycentric_weights_invert_the_node_products(p, data):
    nodes = data.draw(st.lists(st.integers(0, p - 1), min_size=1, max_size=min(p, 8), unique=True))
    weights = barycentric_weights(nodes, p)
    for x_r, w_r in zip(nodes, weights, strict=True):
        product = 1
        for x_s in nodes:
            if x_s != x_r:
                product = product * (x_r - x_s) % p
        assert 1 <= w_r < p and w_r * product % p == 1


@pytest.mark.parametrize("p", PRIMES)
@given(data=st.data())
def test_basis_interpolates_every_polynomial_of_lower_degree(p, data):
    """f(z) = Σ_r L_r(z) f(x_r) for every f of degree < len(nodes), in Python integers."""
    big = st.integers(-(10**40), 10**40)
    nodes = data.draw(st.lists(big, min_size=1, max_size=min(p, 7), unique_by=lambda v: v % p))
    coefficients = data.draw(st.lists(st.integers(0, p - 1), min_size=len(nodes), max_size=len(nodes)))
    targets = data.draw(st.lists(big, min_size=1, max_size=4))

    def f(z):
        return sum(c * pow(z, i, p) for i, c in enumerate(coefficients)) % p

    rows = lagrange_basis(nodes, targets, p)
    assert len(rows) == len(targets) and all(len(row) == len(nodes) for row in rows)
    for z, row in zip(targets, rows, strict=True):
        assert all(0 <= v < p for v in row)
        assert sum(w * f(x) for w, x in zip(row, nodes, strict=True)) % p == f(z)


def test_a_target_at_a_node_gets_the_unit_row():
    p = 101
    nodes = [3, 9, 40, 77]
    assert lagrange_basis(nodes, [40, 3, 3 + p], p) == [[0, 0, 1, 0], [1, 0, 0, 0], [1, 0, 0, 0]]


def test_worked_examples():
    assert barycentric_weights([1, 2, 3], 7) == [4, 6, 4]  # 1/2, 1/(-1), 1/2 mod 7
    (row,) = lagrange_basis([1, 2], [3], 101)  # the line through (1, 3), (2, 5) is 2x + 1, worth 7 at 3
    assert (row[0] * 3 + row[1] * 5) % 101 == 7


def test_nodes_must_be_distinct_in_the_field():
    p = 2**127 - 1
    with pytest.raises(ValueError, match="distinct"):
        lagrange_basis([1, 1 + p], [0], p)
    with pytest.raises(ValueError, match=r"distinct in GF\(7\)"):
        barycentric_weights([2, 9], 7)
