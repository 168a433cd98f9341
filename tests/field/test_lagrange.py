"""Lagrange coded computing (fedlib/field/_lagrange.py): encoding, decoding from any R clients, privacy blocks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from fedlib.exceptions import DecodingError
from fedlib.field import LagrangeCode, determinant_mod, lagrange_basis

Q = 2**50 - 27
SMALL_Q = 101


def _poly_value(coefficients_at_betas, betas, z, q):
    """Value at z of the polynomial through (betas, values), by Lagrange's formula in Python ints."""
    total = 0
    for u, (b_u, v) in enumerate(zip(betas, coefficients_at_betas, strict=True)):
        num = den = 1
        for w, b_w in enumerate(betas):
            if w != u:
                num, den = num * (z - b_w) % q, den * (b_u - b_w) % q
        total += v * num * pow(den, q - 2, q)
    return total % q


@given(
    n=st.integers(2, 12),
    ell=st.integers(1, 3),
    data=st.data(),
)
def test_shares_are_evaluations_of_the_lagrange_polynomial(n, ell, data):
    t = data.draw(st.integers(0, n - 1))
    code = LagrangeCode(n_clients=n, n_segments=ell, n_masks=t, prime=Q)
    seed = data.draw(st.integers(0, 2**32 - 1))
    secret = np.random.default_rng(seed).integers(0, Q, size=(2, ell, 3), dtype=np.int64)
    shares = code.encode(secret, random_state=seed)
    masks = np.random.default_rng(seed).integers(0, Q, size=(2, t, 3), dtype=np.int64)  # same stream as encode
    assert shares.shape == (n, 2, 3)
    for i in range(2):
        for c in range(3):
            values = [int(v) for v in secret[i, :, c]] + [int(v) for v in masks[i, :, c]]
            expected = [_poly_value(values, code.betas, a, Q) for a in code.alphas]
            assert shares[:, i, c].tolist() == expected


@given(n=st.integers(3, 14), ell=st.integers(1, 3), data=st.data())
def test_degree_two_decoding_from_any_recovery_set(n, ell, data):
    t_max = (n + 1 - 2 * ell) // 2  # the most masks with 2ℓ+2t-1 <= n
    assume(t_max >= 0)
    t = data.draw(st.integers(0, min(t_max, n - 1)))
    code = LagrangeCode(n_clients=n, n_segments=ell, n_masks=t, prime=Q)
    R = code.recovery_threshold(2)
    assert R == 2 * ell + 2 * t - 1
    seed = data.draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    secret = rng.integers(-(2**20), 2**20, size=(5, ell, 4))
    shares = code.encode(np.mod(secret, Q), random_state=rng)
    squares = np.array([[sum(int(v) ** 2 for v in row) % Q for row in S] for S in shares], dtype=np.int64)
    responders = [int(j) for j in rng.permutation(n)[: data.draw(st.integers(R, n))]]
    decoded = code.decode(squares[responders], responders, 2, targets="sum")
    assert decoded.tolist() == [int((secret[i].astype(object) ** 2).sum()) for i in range(5)]
    per_segment = code.decode(squares[responders], responders, 2)
    assert np.array_equal(np.mod(per_segment.sum(axis=0), Q), decoded)


def test_fewer_than_the_recovery_threshold_raises_and_would_be_wrong():
    code = LagrangeCode(n_clients=10, n_segments=1, n_masks=4, prime=Q)
    rng = np.random.default_rng(0)
    secret = rng.integers(0, 1000, size=(50, 1, 6))
    shares = code.encode(secret, random_state=1)
    squares = np.stack([np.mod((S.astype(object) ** 2).sum(axis=1), Q).astype(np.int64) for S in shares])
    with pytest.raises(ValueError, match=r"needs .* = 9 responses"):
        code.decode(squares[:8], range(8), 2, targets="sum")
    # Interpolating through 8 points anyway (degree 7) gives wrong values: the threshold is not slack.
    nodes = code.alphas[:8]
    weights = np.array(lagrange_basis(nodes, code.betas[:1], Q), dtype=object)
    wrong = (weights @ squares[:8].astype(object)) % Q
    assert np.mean(wrong[0] != (secret[:, 0].astype(object) ** 2).sum(axis=1)) > 0.9


def test_extra_responses_are_checked():
    code = LagrangeCode(n_clients=6, n_segments=1, n_masks=2, prime=Q)
    shares = code.encode(np.arange(12).reshape(4, 1, 3), random_state=0)
    squares = np.stack([np.mod((S.astype(object) ** 2).sum(axis=1), Q).astype(np.int64) for S in shares])
    assert code.decode(squares, range(6), 2, targets="sum").tolist() == [5, 50, 149, 302]
    squares[5, 2] = (squares[5, 2] + 1) % Q
    with pytest.raises(DecodingError, match="not evaluations of one polynomial of degree 4"):
        code.decode(squares, range(6), 2, targets="sum")


def test_bad_parameters_raise():
    with pytest.raises(ValueError, match="t < n"):
        LagrangeCode(n_clients=4, n_segments=1, n_masks=4, prime=Q)
    with pytest.raises(ValueError, match="n_segments"):
        LagrangeCode(n_clients=4, n_segments=0, n_masks=1, prime=Q)
    with pytest.raises(TypeError, match="n_segments"):
        LagrangeCode(n_clients=4, n_segments=1.5, n_masks=1, prime=Q)
    with pytest.raises(ValueError, match="not a prime"):
        LagrangeCode(n_clients=4, n_segments=1, n_masks=1, prime=2**61 + 1)
    code = LagrangeCode(n_clients=4, n_segments=1, n_masks=1, prime=Q)
    with pytest.raises(ValueError, match="residues"):
        code.encode(np.full((1, 1, 2), -1))
    with pytest.raises(ValueError, match="distinct"):
        code.decode(np.zeros((3, 2)), [0, 0, 1], 2)


@pytest.mark.parametrize(("n", "ell", "t"), [(9, 2, 2), (10, 1, 4), (7, 1, 3)])
def test_every_colluding_set_sees_uniform_shares(n, ell, t):
    assert LagrangeCode(n_clients=n, n_segments=ell, n_masks=t, prime=Q).all_colluding_sets_learn_nothing()


def test_colluder_view_is_uniform_in_a_tiny_field():
    """Exhaustively: two colluders' shares take every value pair equally often, whatever the secret."""
    code = LagrangeCode(n_clients=5, n_segments=1, n_masks=2, prime=SMALL_Q)
    U = code.encoding_matrix()
    colluders = [1, 3]
    masks = np.array([(a, b) for a in range(SMALL_Q) for b in range(SMALL_Q)])
    for secret in (0, 7, 100):
        views = (U[colluders, 0][None, :] * secret + masks @ U[colluders, 1:].T) % SMALL_Q
        counts = np.unique(views[:, 0] * SMALL_Q + views[:, 1], return_counts=True)[1]
        assert counts.size == SMALL_Q**2 and np.all(counts == 1)


def test_determinant_matches_sympy():
    sympy = pytest.importorskip("sympy")
    rng = np.random.default_rng(3)
    for size in (1, 2, 3, 5):
        M = rng.integers(0, 97, size=(size, size)).tolist()
        assert determinant_mod(M, 97) == int(sympy.Matrix(M).det()) % 97


P256 = 2**521 - 1  # a Mersenne prime above 2**256: keys and Shamir secrets live on the Python-int path


@given(n=st.integers(2, 9), data=st.data())
def test_shamir_over_a_large_prime_round_trips_against_python_integers(n, data):
    """Shamir sharing = the Lagrange code with one segment; any t+1 shares give a 256-bit secret back."""
    t = data.draw(st.integers(0, n - 1))
    code = LagrangeCode(n_clients=n, n_segments=1, n_masks=t, prime=P256)
    assert code.field.dtype == object
    secrets_ = data.draw(st.lists(st.integers(0, 2**256 - 1), min_size=1, max_size=3))
    shares = code.encode([[[s] for s in [v]] for v in secrets_], random_state=data.draw(st.integers(0, 2**32)))
    # every share is the value at alpha_j of the polynomial through the secret and the masks (checked in ints)
    who = data.draw(st.permutations(range(n)))[: t + 1]
    decoded = code.decode(shares[who], who, 1)
    assert [int(v) for v in decoded[0, :, 0]] == secrets_
    # independently: the polynomial through the t+1 shares, evaluated at β_1 by Lagrange's formula in Python ints
    nodes = [code.alphas[j] for j in who]
    for i, secret in enumerate(secrets_):
        assert _poly_value([int(v) for v in shares[who, i, 0]], nodes, code.betas[0], P256) == secret


def test_too_few_shares_refused_on_the_python_int_path():
    code = LagrangeCode(n_clients=5, n_segments=1, n_masks=2, prime=P256)
    shares = code.encode([[[7]]], random_state=0)
    with pytest.raises(ValueError, match=r"needs .* = 3 responses"):
        code.decode(shares[:2], [0, 1], 1)


@pytest.mark.parametrize(("n", "ell", "t", "p"), [(5, 1, 2, Q), (7, 2, 1, SMALL_Q), (4, 3, 0, P256)])
def test_encoding_matrix_is_the_lagrange_basis_of_the_betas_at_the_alphas(n, ell, t, p):
    """U[j, u] = Π_{v≠u} (α_j − β_v)/(β_u − β_v), SecFC Eq. (2), with β_u = u and α_j = ℓ+t+j."""
    code = LagrangeCode(n_clients=n, n_segments=ell, n_masks=t, prime=p)
    assert code.betas == list(range(1, ell + t + 1))
    assert code.alphas == list(range(ell + t + 1, ell + t + n + 1))
    U = code.encoding_matrix()
    assert U.shape == (n, ell + t)
    for j, a in enumerate(code.alphas):
        for u in range(ell + t):
            unit = [int(u == v) for v in range(ell + t)]  # L_u takes 1 at β_u and 0 at the other betas
            assert int(U[j, u]) == _poly_value(unit, code.betas, a, p)


@given(ell=st.integers(1, 5), t=st.integers(0, 5), degree=st.integers(1, 4))
def test_recovery_threshold_closed_form(ell, t, degree):
    code = LagrangeCode(n_clients=t + 1, n_segments=ell, n_masks=t, prime=Q)
    assert code.recovery_threshold(degree) == (ell + t - 1) * degree + 1


def test_decoding_weights_for_sums_and_arbitrary_points():
    code = LagrangeCode(n_clients=6, n_segments=2, n_masks=1, prime=SMALL_Q)
    shares = code.encode([[[3], [5]]], random_state=0)  # one secret, segments 3 and 5
    who = [4, 1, 2]
    per_segment = code.decoding_weights(who, 1)
    total = code.decoding_weights(who, 1, targets="sum")
    at_alpha = code.decoding_weights(who, 1, targets=[code.alphas[0]])
    values = [int(v) for v in shares[who, 0, 0]]
    assert [sum(int(w) * v for w, v in zip(row, values, strict=True)) % SMALL_Q for row in per_segment] == [3, 5]
    assert sum(int(w) * v for w, v in zip(total[0], values, strict=True)) % SMALL_Q == 8
    assert sum(int(w) * v for w, v in zip(at_alpha[0], values, strict=True)) % SMALL_Q == int(shares[0, 0, 0])
    with pytest.raises(ValueError, match="targets must be"):
        code.decoding_weights(who, 1, targets="mean")
    with pytest.raises(ValueError, match=r"client indices in \[0, 6\)"):
        code.decoding_weights([0, 1, 6], 1)
    with pytest.raises(ValueError, match="4 responses for 3 responders"):
        code.decode(shares[:4], [0, 1, 2], 1)
    with pytest.raises(ValueError, match="pass exactly t=1 colluders"):
        code.colluders_learn_nothing([0, 1])


def test_code_parameters_are_checked():
    with pytest.raises(ValueError, match="too few elements"):
        LagrangeCode(n_clients=60, n_segments=30, n_masks=11, prime=SMALL_Q)
    with pytest.raises(TypeError, match="n_clients"):
        LagrangeCode(n_clients=4.0, n_segments=1, n_masks=1, prime=Q)
    with pytest.raises(ValueError, match="n_masks"):
        LagrangeCode(n_clients=4, n_segments=1, n_masks=-1, prime=Q)
