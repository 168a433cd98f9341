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


@pytest.mark.parametrize("q", [101, Q50])
def test_limb_matrix_takes_a_sparse_membership(q, global_random_seed):
    from scipy.sparse import csr_matrix

    from fedlib.field import LimbMatrix

    rng = np.random.default_rng(global_random_seed)
    m, w, k = 500, 6, 4
    X = rng.integers(0, q, size=(m, w), dtype=np.int64)
    labels = rng.integers(-1, k, m)
    onehot = np.zeros((k, m), dtype=np.int64)
    onehot[labels[labels >= 0], np.flatnonzero(labels >= 0)] = 1
    prepared = LimbMatrix(X, q)
    expected = ((onehot.astype(object) @ X.astype(object)) % q).astype(np.int64)
    np.testing.assert_array_equal(prepared.left_mul(csr_matrix(onehot)), expected)
    np.testing.assert_array_equal(prepared.left_mul(onehot), expected)


@pytest.mark.parametrize("q", [101, 2**31 - 1, Q50])
def test_wide_products_equal_python_integers(q, global_random_seed):
    """SecFC's shapes (a few rows against thousands of shares), every orientation, at the largest values too."""
    from fedlib.field import LimbMatrix

    rng = np.random.default_rng(global_random_seed)
    X = rng.integers(0, q, size=(9000, 40), dtype=np.int64)
    X[:50] = q - 1
    M = rng.integers(0, q, size=(16, 40), dtype=np.int64)
    M[0] = q - 1
    cols = np.concatenate([np.arange(50), rng.choice(9000, 200, replace=False), [4095, 4096, 8191, 8999]])
    expected = (M.astype(object) @ X[cols].astype(object).T) % q
    np.testing.assert_array_equal(LimbMatrix(X, q).left_mul_transposed(M)[:, cols], expected.astype(np.int64))
    np.testing.assert_array_equal(matmul_mod(M, X.T, q)[:, cols], expected.astype(np.int64))
    np.testing.assert_array_equal(matmul_mod(X, M.T, q)[cols], expected.T.astype(np.int64))
    np.testing.assert_array_equal(LimbMatrix(X.T.copy(), q).left_mul(M)[:, cols], expected.astype(np.int64))


@pytest.mark.parametrize("q", MODULI)
@pytest.mark.parametrize(("r", "s", "c"), [(1, 13, 3000), (2, 12, 50), (1, 255, 40), (1, 256, 40), (3, 8, 1)])
def test_products_with_a_few_scalars_equal_python_integers(q, r, s, c, global_random_seed):
    """A small operand of at most 24 entries multiplies rows as scalars, on either side, at the largest values too."""
    rng = np.random.default_rng(global_random_seed)
    A = rng.integers(0, q, size=(r, s), dtype=np.int64)
    B = rng.integers(0, q, size=(s, c), dtype=np.int64)
    A[0, 0], B[0] = q - 1, q - 1
    expected = ((A.astype(object) @ B.astype(object)) % q).astype(np.int64)
    np.testing.assert_array_equal(matmul_mod(A, B, q), expected)
    np.testing.assert_array_equal(matmul_mod(B.T, A.T, q), expected.T)


@pytest.mark.parametrize("q", [2, 3, 101, 2**31 - 1, Q50])
def test_unreduced_helpers_stay_exact_at_their_bounds(q, global_random_seed):
    """The products' private helpers: ``_mulmod_by`` exact for |a| < 2**56 with |r| < 2**55, ``_combine``, ``_mod``."""
    from fedlib.field._int64 import _combine, _mod, _mulmod_by

    rng = np.random.default_rng(global_random_seed)
    edges = [0, 1, -1, 2**56 - 1, -(2**56 - 1), 2**55, q - 1, -q, q]
    a = np.concatenate([np.array(edges, dtype=np.int64), rng.integers(-(2**56) + 1, 2**56, size=2000)])
    for c in {0, 1, q - 1, q // 2, int(rng.integers(0, q))}:
        r = _mulmod_by(a, c, q)
        assert int(np.abs(r).max()) < 2**55
        assert [int(v) % q for v in r] == [int(x) * c % q for x in a]
    values = np.array([0, 1, -1, 2**63 - 1, -(2**63), q, -q, q - 1], dtype=np.int64)
    assert _mod(values, q).tolist() == [int(v) % q for v in values]
    blocks = [np.array([2.0**53, 0.0, 2.0**53 - 1, float(rng.integers(0, 2**53))]) for _ in range(5)]
    for shift in (1, 17, 20, 25, 50):
        expected = [sum(int(b[i]) << (shift * s) for s, b in enumerate(blocks)) % q for i in range(4)]
        assert _combine(blocks, shift, q).tolist() == expected
