"""Shamir sharing (fedlib/field/_shamir.py): round trips against Python integers, threshold, privacy of t-1 shares."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import chisquare

from fedlib.exceptions import DecodingError
from fedlib.field import MERSENNE_521, Shamir


def _lagrange_at_zero(points: list[tuple[int, int]], p: int) -> int:
    """Independent oracle: the textbook Lagrange formula at x = 0, in plain Python integers."""
    total = 0
    for i, (xi, yi) in enumerate(points):
        num, den = 1, 1
        for j, (xj, _) in enumerate(points):
            if i != j:
                num = num * (0 - xj) % p
                den = den * (xi - xj) % p
        total = (total + yi * num * pow(den, -1, p)) % p
    return total


def test_default_prime_is_the_mersenne_prime_above_256_bits():
    assert MERSENNE_521 == 2**521 - 1
    assert Shamir(3, 2).secret_bytes == 65  # a 32-byte key fits with room to spare


@given(
    n=st.integers(1, 12),
    data=st.data(),
    secrets=st.lists(st.integers(0, MERSENNE_521 - 1), min_size=1, max_size=4),
    seed=st.integers(0, 2**32 - 1),
)
def test_any_t_shares_give_the_secrets_back(n, data, secrets, seed):
    t = data.draw(st.integers(1, n))
    holders = data.draw(st.permutations(range(n)))[: data.draw(st.integers(t, n))]
    shamir = Shamir(n_shares=n, threshold=t)
    shares = shamir.share(secrets, random_state=seed)
    assert shares.shape == (n, len(secrets))
    assert shamir.reconstruct(shares[holders], holders) == secrets


@given(secret=st.integers(0, 2**127 - 2), seed=st.integers(0, 2**32 - 1))
def test_shares_are_points_of_one_polynomial_whose_value_at_beta_1_is_the_secret(secret, seed):
    """Checked with an independent Lagrange interpolation in Python ints, shifted so the secret sits at 0."""
    p, n, t = 2**127 - 1, 6, 4
    shamir = Shamir(n_shares=n, threshold=t, prime=p)
    shares = shamir.share([secret], random_state=seed)[:, 0]
    # Shares sit at α_j = t + 1 + j and the secret at β_1 = 1: move β_1 to the origin.
    points = [(alpha - 1, int(y)) for alpha, y in zip(shamir.code.alphas, shares, strict=True)]
    for subset in itertools.combinations(points, t):
        assert _lagrange_at_zero(list(subset), p) == secret


@given(keys=st.lists(st.binary(min_size=32, max_size=32), min_size=1, max_size=3), seed=st.integers(0, 2**16))
def test_byte_strings_round_trip(keys, seed):
    shamir = Shamir(n_shares=9, threshold=5)
    shares = shamir.share_bytes(keys, random_state=seed)
    assert shamir.reconstruct_bytes(shares[[8, 1, 3, 5, 0]], [8, 1, 3, 5, 0]) == keys


def test_fewer_than_t_shares_refuse_to_reconstruct():
    shamir = Shamir(n_shares=5, threshold=3, prime=101)
    shares = shamir.share([42], random_state=0)
    with pytest.raises(ValueError, match="needs t=3 shares, got 2"):
        shamir.reconstruct(shares[:2], [0, 1])


def test_a_wrong_extra_share_is_detected():
    shamir = Shamir(n_shares=5, threshold=3, prime=101)
    shares = shamir.share([42], random_state=0).copy()
    shares[4, 0] = (shares[4, 0] + 1) % 101
    with pytest.raises(DecodingError):
        shamir.reconstruct(shares, range(5))


def test_bad_parameters_and_secrets_raise():
    with pytest.raises(ValueError, match="exceeds the n=3"):
        Shamir(n_shares=3, threshold=4)
    with pytest.raises(ValueError, match="residues"):
        Shamir(3, 2, prime=101).share([101])
    with pytest.raises(ValueError, match="does not fit"):
        Shamir(3, 2, prime=2**127 - 1).share_bytes([bytes(16)])
    with pytest.raises(TypeError):
        Shamir(3, 2.0)


def test_t_minus_one_shares_are_uniform_whatever_the_secret():
    """Chi-square: the joint law of any t-1 = 2 shares over GF(11) is uniform, for two different secrets."""
    p, n, t, draws = 11, 5, 3, 12100
    shamir = Shamir(n_shares=n, threshold=t, prime=p)
    for secret in (0, 5):
        shares = shamir.share([secret] * draws, random_state=secret)
        for a, b in [(0, 1), (2, 4)]:
            cells = np.bincount(shares[a] * p + shares[b], minlength=p * p)
            assert chisquare(cells).pvalue > 1e-4
    # The counterpart: t shares determine the secret, for every one of the draws at once.
    shares = shamir.share(list(np.arange(draws) % p), random_state=1)
    assert shamir.reconstruct(shares[:t], range(t)) == list(np.arange(draws) % p)


def test_secrets_mode_draws_from_the_os():
    shamir = Shamir(n_shares=4, threshold=2)
    a, b = shamir.share([7], random_state="secrets"), shamir.share([7], random_state="secrets")
    assert shamir.reconstruct(a[:2], [0, 1]) == shamir.reconstruct(b[2:], [2, 3]) == [7]
    assert not np.array_equal(a, b)
