"""PrimeField (fedlib/field/_field.py): the same exact operations on the int64 path (p < 2**50) and on Python ints."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedlib.field import PrimeField, lagrange_basis

PRIMES = [101, 2**31 - 1, 2**50 - 27, 2**61 - 1, 2**127 - 1]


@pytest.mark.parametrize("p", PRIMES)
@given(data=st.data())
def test_arithmetic_equals_python_integers(p, data):
    field = PrimeField(p)
    assert field.is_int64 is (p < 2**50)
    rows, inner, cols = (data.draw(st.integers(1, 4)) for _ in range(3))
    ints = st.integers(-(p - 1), p - 1)
    A = [[data.draw(ints) for _ in range(inner)] for _ in range(rows)]
    B = [[data.draw(ints) for _ in range(cols)] for _ in range(inner)]
    got = field.matmul(field.asarray(A), field.asarray(B))
    expected = [[sum(A[i][k] * B[k][j] for k in range(inner)) % p for j in range(cols)] for i in range(rows)]
    assert [[int(v) for v in row] for row in got] == expected
    a, b = field.asarray(A[0]), field.asarray([row[0] for row in B][: len(A[0])] + [1] * (len(A[0]) - inner))
    assert [int(v) for v in field.mul(a, b)] == [(x * y) % p for x, y in zip(A[0], [int(v) for v in b], strict=True)]
    assert [int(v) for v in field.add(a, b)] == [(x + int(y)) % p for x, y in zip(A[0], b, strict=True)]
    assert [int(v) for v in field.sub(a, b)] == [(x - int(y)) % p for x, y in zip(A[0], b, strict=True)]
    assert int(field.sum(a)) == sum(A[0]) % p
    assert [int(v) for v in field.signed(field.asarray(A[0]))] == [
        ((x % p) - p if x % p > p // 2 else x % p) for x in A[0]
    ]


@pytest.mark.parametrize("p", PRIMES)
def test_random_elements_are_residues_and_reproducible(p):
    field = PrimeField(p)
    a = field.random((3, 4), 7)
    b = field.random((3, 4), 7)
    assert a.shape == (3, 4) and a.dtype == field.dtype
    assert all(0 <= int(v) < p for v in a.ravel())
    assert [int(v) for v in a.ravel()] == [int(v) for v in b.ravel()]


@pytest.mark.parametrize("p", [101, 2**127 - 1])
def test_field_lagrange_basis_is_the_python_basis_as_an_array(p):
    field = PrimeField(p)
    got = field.lagrange_basis([1, 5, 9], [0, 2])
    assert got.shape == (2, 3) and got.dtype == field.dtype
    assert [[int(v) for v in row] for row in got] == lagrange_basis([1, 5, 9], [0, 2], p)


@pytest.mark.parametrize("p", [101, 2**127 - 1])
def test_asarray_wraps_integers_of_any_size_and_refuses_the_rest(p):
    field = PrimeField(p)
    values = [-1, 0, p, 3 * p + 2, -(2**70)] if not field.is_int64 else [-1, 0, p, 3 * p + 2, -(2**40)]
    got = field.asarray(np.array(values, dtype=object if not field.is_int64 else np.int64))
    assert [int(v) for v in got] == [v % p for v in values]
    assert field.asarray(np.zeros((0, 2), dtype=np.int64)).shape == (0, 2)
    with pytest.raises(TypeError, match="field elements must be integers"):
        field.asarray(np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match="field elements must be integers"):
        field.asarray(np.array([True]))


def test_python_int_path_refuses_floats_inside_object_arrays():
    with pytest.raises(TypeError, match=r"got float 1\.5"):
        PrimeField(2**127 - 1).asarray(np.array([1, 1.5], dtype=object))


def test_field_refuses_non_primes_and_floats():
    with pytest.raises(ValueError, match="not a prime"):
        PrimeField(100)
    with pytest.raises(TypeError, match="prime must be an int"):
        PrimeField(101.0)
    assert PrimeField(101).matmul(np.eye(2, dtype=np.int64), [[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
