"""int64 GF(q) arithmetic for q < 2**50 (fedlib/field/_int64.py) against Python integers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from fedlib.field import MAX_MODULUS, as_residues, check_modulus, matmul_mod, mulmod, next_prime, signed, sum_mod

Q50 = 1125899906842597  # 2**50 - 27, the largest prime below 2**50: SecFC's field
MODULI = [101, 2**31 - 1, 35184372088777, Q50]


def test_q50_is_the_prime_below_2_50():
    assert Q50 == 2**50 - 27
    assert check_modulus(Q50) == Q50 and next_prime(Q50) > MAX_MODULUS == 2**50


@pytest.mark.parametrize("q", MODULI)
@given(data=st.data())
def test_mulmod_equals_python_integers(q, data):
    a = data.draw(arrays(np.int64, 50, elements=st.integers(0, q - 1)))
    b = data.draw(arrays(np.int64, 50, elements=st.integers(0, q - 1)))
    expected = [int(x) * int(y) % q for x, y in zip(a, b, strict=True)]
    assert mulmod(a, b, q).tolist() == expected


@pytest.mark.parametrize("q", MODULI)
def test_mulmod_extremes(q):
    a = np.array([0, 1, q - 1, q - 1, q // 2, q // 2 + 1], dtype=np.int64)
    b = np.array([q - 1, q - 1, q - 1, 1, q // 2 + 1, q - 2], dtype=np.int64)
    assert mulmod(a, b, q).tolist() == [int(x) * int(y) % q for x, y in zip(a, b, strict=True)]


@pytest.mark.parametrize("q", MODULI)
@pytest.mark.parametrize("shape", [(1, 1, 1), (3, 7, 2), (16, 300, 9)])
def test_matmul_mod_equals_python_integers(q, shape, global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    m, d, k = shape
    A = rng.integers(0, q, size=(m, d), dtype=np.int64)
    B = rng.integers(0, q, size=(d, k), dtype=np.int64)
    expected = (A.astype(object) @ B.astype(object)) % q
    np.testing.assert_array_equal(matmul_mod(A, B, q), expected.astype(np.int64))


def test_matmul_mod_at_the_largest_values():
    A = np.full((2, 4000), Q50 - 1, dtype=np.int64)
    B = np.full((4000, 2), Q50 - 1, dtype=np.int64)
    assert matmul_mod(A, B, Q50)[0, 0] == 4000 * (Q50 - 1) ** 2 % Q50


def test_bounds_raise():
    with pytest.raises(ValueError, match="q < 2\\*\\*50"):
        matmul_mod(np.ones((1, 1)), np.ones((1, 1)), 2**61 - 1)
    with pytest.raises(ValueError, match="not a prime"):
        check_modulus(2**40)
    with pytest.raises(ValueError, match="inner dimension"):
        matmul_mod(np.zeros((1, 2**19), dtype=np.int64), np.zeros((2**19, 1), dtype=np.int64), Q50)


def test_signed_lift():
    assert signed(np.array([0, 1, 50, 51, 100]), 101).tolist() == [0, 1, 50, -50, -1]


@pytest.mark.parametrize("q", [101, Q50])
@pytest.mark.parametrize(("m", "w", "k"), [(1, 1, 1), (50, 7, 3), (3000, 120, 16)])
def test_limb_matrix_products_equal_python_integers(q, m, w, k, global_random_seed):
    from fedlib.field import LimbMatrix

    rng = np.random.default_rng(global_random_seed)
    X = rng.integers(0, q, size=(m, w), dtype=np.int64)
    prepared = LimbMatrix(X, q)
    onehot = np.zeros((k, m), dtype=np.int64)
    onehot[rng.integers(0, k, m), np.arange(m)] = 1
    M = rng.integers(0, q, size=(k, w), dtype=np.int64)
    Xo = X.astype(object)
    # one-hot rows pick cluster members: their Python-int column sums are the whole product
    sums = np.array([Xo[onehot[h] == 1].sum(axis=0) if onehot[h].any() else [0] * w for h in range(k)], dtype=object)
    np.testing.assert_array_equal(prepared.left_mul(onehot), (sums % q).astype(np.int64))
    # M @ X.T in Python ints on up to 300 of its columns (the object product of all 3000 is slow)
    cols = np.sort(rng.choice(m, size=min(m, 300), replace=False))
    expected = (M.astype(object) @ Xo[cols].T) % q
    np.testing.assert_array_equal(prepared.left_mul_transposed(M)[:, cols], expected.astype(np.int64))


@given(st.integers(1, 30000), st.integers(0, 2**32 - 1))
def test_sum_mod_equals_python_integers(n, seed):
    a = np.random.default_rng(seed).integers(Q50 - 2**20, Q50, size=n, dtype=np.int64)
    assert int(sum_mod(a, Q50)) == sum(int(v) for v in a) % Q50


def test_sum_mod_over_any_axis():
    rng = np.random.default_rng(1)
    a = rng.integers(0, Q50, size=(3, 9000, 2), dtype=np.int64)
    for axis in (0, 1, 2, -1):
        expected = np.mod(a.astype(object).sum(axis=axis), Q50).astype(np.int64)
        np.testing.assert_array_equal(sum_mod(a, Q50, axis=axis), expected)


@given(st.lists(st.integers(-(2**62), 2**62), max_size=20), st.sampled_from(MODULI))
def test_as_residues_equal_python_modulo(values, q):
    assert as_residues(np.array(values, dtype=np.int64), q).tolist() == [v % q for v in values]


@given(st.lists(st.integers(0, Q50 - 1), min_size=1, max_size=20))
def test_signed_lift_against_python(values):
    assert signed(values, Q50).tolist() == [v - Q50 if v > Q50 // 2 else v for v in values]


def test_mulmod_broadcasts():
    a = np.array([[1], [Q50 - 1]], dtype=np.int64)
    b = np.array([2, Q50 - 2, 5], dtype=np.int64)
    assert mulmod(a, b, Q50).tolist() == [[int(x) * int(y) % Q50 for y in b] for x in a[:, 0]]


def test_check_modulus_refuses_non_integers():
    with pytest.raises(TypeError, match="prime must be an int"):
        check_modulus(101.0)
    with pytest.raises(ValueError, match="q < 2\\*\\*50"):
        check_modulus(2**61 - 1)


def test_mulmod_refuses_moduli_and_inputs_it_cannot_multiply_exactly():
    # issue 11: q = 2**61 - 1 gave wrong products for most pairs, silently
    q = 2**61 - 1
    with pytest.raises(ValueError, match="2\\*\\*50"):
        mulmod([q - 1], [q - 1], q)
    with pytest.raises(ValueError, match="residues in \\[0, q\\)"):
        mulmod([-1], [3], 7)
    with pytest.raises(ValueError, match="residues in \\[0, q\\)"):
        mulmod([2], [7], 7)
    assert mulmod([6], [6], 7).tolist() == [1]
