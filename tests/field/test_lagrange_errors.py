"""Corrupted responses in Lagrange decoding: detection that names no innocent client, and Reed-Solomon correction.

With ``N`` responses and recovery threshold ``R``, :meth:`LagrangeCode.decode`
detects up to ``N − R`` corrupted responses and :meth:`LagrangeCode.decode_correcting`
corrects up to ``e = ⌊(N − R)/2⌋`` (Berlekamp-Welch), detecting ``N − R − e``.
"""

from __future__ import annotations

import re
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedlib.exceptions import DecodingError
from fedlib.field import CorrectedDecoding, LagrangeCode

Q = 2**50 - 27  # SecFC-sized: the int64 path
SMALL_Q = 101  # a combination hides a corrupted response with probability 1/101: exercises the retries
P127 = 2**127 - 1  # the Python-int path
PRIMES = st.sampled_from([Q, SMALL_Q, P127])


def _problem(data, *, min_extra: int = 0):
    """A random code, its responses to a degree-1 or degree-2 function, and a random order of responders."""
    q = data.draw(PRIMES, label="q")
    ell, t, degree = data.draw(st.integers(1, 2)), data.draw(st.integers(0, 2)), data.draw(st.integers(1, 2))
    probe = LagrangeCode(n_clients=t + 1, n_segments=ell, n_masks=t, prime=q)
    R = probe.recovery_threshold(degree)
    n = R + data.draw(st.integers(min_extra, 6), label="n - R")
    code = LagrangeCode(n_clients=n, n_segments=ell, n_masks=t, prime=q)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    width = data.draw(st.integers(1, 4), label="width")
    segments = code.field.random((2, ell, width), rng)
    shares = code.encode(segments, random_state=rng)
    gf = code.field
    responses = shares if degree == 1 else gf.mul(shares, shares)  # f(x) = x or x² coordinate-wise
    expected = segments.transpose(1, 0, 2) if degree == 1 else gf.mul(segments, segments).transpose(1, 0, 2)
    n_responders = data.draw(st.integers(R + min_extra, n), label="N")
    responders = [int(j) for j in rng.permutation(n)[:n_responders]]
    return code, degree, R, responses[responders], responders, expected, rng


def _corrupt(code, responses, positions, rng):
    """Add to each response at ``positions`` a non-zero error on a random non-empty subset of its coordinates."""
    q = code.prime
    bad = responses.copy()
    flat = bad.reshape(bad.shape[0], -1)
    for r in positions:
        hit = rng.random(flat.shape[1]) < 0.5
        hit[rng.integers(flat.shape[1])] = True
        for c in np.flatnonzero(hit):
            flat[r, c] = (int(flat[r, c]) + int(rng.integers(1, min(q, 2**62)))) % q
    return bad


@given(data=st.data())
def test_up_to_e_corrupted_responders_are_located_and_corrected(data):
    """With N ≥ R + 2e, any e corrupted responders (the first R included) are found, and the values are right."""
    code, degree, R, responses, responders, expected, rng = _problem(data)
    e = (len(responders) - R) // 2
    s = data.draw(st.integers(0, e), label="corrupted")
    positions = data.draw(st.permutations(range(len(responders))))[:s]
    bad = _corrupt(code, responses, positions, rng)
    result = code.decode_correcting(bad, responders, degree, random_state=rng)
    assert isinstance(result, CorrectedDecoding)
    assert result.max_errors == e
    assert result.corrupted == sorted(responders[r] for r in positions)
    assert np.array_equal(result.values, expected)
    assert np.array_equal(result.values, code.decode(responses, responders, degree))


@given(data=st.data())
def test_e_corrupted_responders_with_one_among_the_first_r_need_the_locator(data):
    """The first R no longer decode: Berlekamp-Welch on a random combination of coordinates must find all e."""
    code, degree, R, responses, responders, expected, rng = _problem(data, min_extra=2)
    e = (len(responders) - R) // 2
    first = data.draw(st.integers(0, R - 1), label="corrupted among the first R")
    others = [r for r in data.draw(st.permutations(range(len(responders)))) if r != first]
    positions = [first, *others[: e - 1]]
    bad = _corrupt(code, responses, positions, rng)
    result = code.decode_correcting(bad, responders, degree, random_state=rng)
    assert result.corrupted == sorted(responders[r] for r in positions)
    assert np.array_equal(result.values, expected)


@given(data=st.data())
def test_more_than_e_but_at_most_n_minus_r_minus_e_corruptions_always_raise(data):
    """Correcting e detects N − R − e: between the two, every pattern raises (e + 1 when N − R is odd, for one)."""
    code, degree, R, responses, responders, _, rng = _problem(data, min_extra=1)
    extra = len(responders) - R
    e = data.draw(st.integers(0, (extra - 1) // 2), label="max_errors")  # so that e + 1 <= N - R - e
    s = data.draw(st.integers(e + 1, extra - e), label="corrupted")
    positions = data.draw(st.permutations(range(len(responders))))[:s]
    bad = _corrupt(code, responses, positions, rng)
    with pytest.raises(DecodingError) as caught:
        code.decode_correcting(bad, responders, degree, max_errors=e, random_state=rng)
    assert not re.search(r"client \d|clients \[", str(caught.value))
    with pytest.raises(DecodingError):
        code.decode(bad, responders, degree)


def test_the_issue_case_decode_names_no_innocent_client():
    """Client 0 (among the first R = 5) is corrupted, client 5 is extra: the old message blamed client 5."""
    code = LagrangeCode(n_clients=6, n_segments=1, n_masks=2, prime=Q)
    shares = code.encode(np.arange(12).reshape(4, 1, 3), random_state=0)
    squares = np.stack([np.mod((S.astype(object) ** 2).sum(axis=1), Q).astype(np.int64) for S in shares])
    squares[0, 2] = (squares[0, 2] + 1) % Q
    with pytest.raises(DecodingError) as caught:
        code.decode(squares, range(6), 2, targets="sum")
    message = str(caught.value)
    assert "not evaluations of one polynomial of degree 4" in message
    assert "floor(1/2) = 0 corrupted responses can be located" in message
    assert "[5]" not in message and not re.search(r"client \d|clients \[", message)
    # decode_correcting cannot locate with one extra responder either, and says so
    with pytest.raises(DecodingError, match=r"floor\(1/2\) = 0"):
        code.decode_correcting(squares, range(6), 2, targets="sum")


def test_the_issue_case_with_two_more_responders_is_corrected():
    code = LagrangeCode(n_clients=8, n_segments=1, n_masks=2, prime=Q)
    shares = code.encode(np.arange(12).reshape(4, 1, 3), random_state=0)
    squares = np.stack([np.mod((S.astype(object) ** 2).sum(axis=1), Q).astype(np.int64) for S in shares])
    clean = code.decode(squares, range(8), 2, targets="sum")
    assert clean.tolist() == [5, 50, 149, 302]
    squares[0, 2] = (squares[0, 2] + 1) % Q
    with pytest.raises(DecodingError, match="up to floor\\(3/2\\) = 1 corrupted responses can be located"):
        code.decode(squares, range(8), 2, targets="sum")
    result = code.decode_correcting(squares, range(8), 2, targets="sum")
    assert result.corrupted == [0] and result.max_errors == 1
    assert np.array_equal(result.values, clean)


def test_every_error_pattern_in_a_tiny_field_is_corrected():
    """Exhaustively over GF(13), one coordinate (Berlekamp-Welch is then deterministic): N = 6, R = 2, e = 2."""
    q = 13
    code = LagrangeCode(n_clients=6, n_segments=1, n_masks=1, prime=q)
    shares = code.encode([[[7]]], random_state=0)[:, 0, 0]  # a line through (β_1, 7)
    for s in (1, 2):
        for positions in combinations(range(6), s):
            for errors in np.ndindex(*(q - 1,) * s):
                bad = shares.copy()
                bad[list(positions)] = (bad[list(positions)] + np.array(errors) + 1) % q
                result = code.decode_correcting(bad, range(6), 1)
                assert result.corrupted == list(positions), (positions, errors)
                assert int(result.values[0]) == 7


def test_the_correction_bound_is_tight():
    """N = R + 2e and e + 1 corruptions that turn the word into another codeword's, up to e changes.

    No decoder can tell this from e corrupted responses of that other codeword: the code's minimum
    distance is N − R + 1 = 2e + 1. The decoder returns the other codeword and names e honest clients,
    which is why the guarantee for more than e corruptions stops at N − R − e.
    """
    code = LagrangeCode(n_clients=6, n_segments=1, n_masks=1, prime=Q)  # degree 1: R = 2, N = 6, e = 2
    gf = code.field
    shares = code.encode([[[7]]], random_state=0)[:, 0, 0]
    alphas, beta = code.alphas, code.betas[0]
    g = [(a - alphas[0]) % Q for a in alphas]  # a line vanishing at client 0 (R - 1 = 1 zero)
    bad = shares.copy()
    liars = [1, 2, 3]  # e + 1 = 3 clients shift their shares onto shares + g
    bad[liars] = gf.add(bad[liars], gf.asarray([g[j] for j in liars]))
    result = code.decode_correcting(bad, range(6), 1)
    assert result.corrupted == [4, 5]  # the honest ones, out-voted
    assert int(result.values[0]) == (7 + beta - alphas[0]) % Q  # the other codeword's secret
    # correcting only e = 1 still detects the N − R − 1 = 3 changes
    with pytest.raises(DecodingError, match="more than e=1"):
        code.decode_correcting(bad, range(6), 1, max_errors=1)


def test_a_client_that_knows_the_random_combination_causes_an_error_not_a_wrong_value():
    """An error vector orthogonal to the combination γ is invisible to the locator; the check refuses the result."""
    code = LagrangeCode(n_clients=7, n_segments=1, n_masks=1, prime=Q)  # degree 1: R = 2, N = 7, e = 2
    segments = np.arange(6).reshape(3, 1, 2)
    shares = code.encode(segments, random_state=0)
    width = 6
    gamma = np.random.default_rng(5).integers(0, Q, size=(width, 1), dtype=np.int64)[:, 0]  # decode_correcting's draw
    error = np.zeros(width, dtype=object)
    error[0], error[1] = int(gamma[1]), (-int(gamma[0])) % Q  # error · γ = 0
    bad = shares.copy().reshape(7, width)
    bad[0] = np.mod(bad[0].astype(object) + error, Q).astype(np.int64)  # client 0, among the first R
    bad[6, 3] = (bad[6, 3] + 1) % Q  # and client 6, so the first R alone do not decode
    bad = bad.reshape(shares.shape)
    with pytest.raises(DecodingError, match=r"another random_state would tell"):
        code.decode_correcting(bad, range(7), 1, random_state=5)
    result = code.decode_correcting(bad, range(7), 1, random_state=6)
    assert result.corrupted == [0, 6]
    assert np.array_equal(result.values, code.decode(shares, range(7), 1))


def test_corrupted_extra_responders_cost_no_locator_and_no_randomness():
    """Errors outside the first R are found by the plain consistency check: random_state is never used."""
    code = LagrangeCode(n_clients=9, n_segments=1, n_masks=2, prime=P127)
    shares = code.encode(np.arange(8).reshape(2, 1, 4), random_state=1)
    bad = shares.copy()
    bad[7, 1, 2] += 1
    bad[8, 0, 0] += 5
    result = code.decode_correcting(bad, range(9), 1, random_state=object())  # would fail if drawn from
    assert result.corrupted == [7, 8]
    assert np.array_equal(result.values, code.decode(shares, range(9), 1))


def test_sum_targets_secrets_rng_and_max_errors():
    code = LagrangeCode(n_clients=9, n_segments=2, n_masks=1, prime=Q)  # degree 1: R = 3, up to e = 3
    segments = np.arange(12).reshape(2, 2, 3)
    shares = code.encode(segments, random_state=2)
    bad = shares.copy()
    bad[[0, 2], 0, 0] += 1
    result = code.decode_correcting(bad[:7], range(7), 1, targets="sum", random_state="secrets")
    assert result.corrupted == [0, 2] and result.max_errors == 2
    assert result.values.tolist() == (segments[:, 0] + segments[:, 1]).tolist()
    assert code.decode_correcting(shares, range(9), 1).corrupted == []
    with pytest.raises(ValueError, match=r"needs N >= R \+ 2e = 9 responders; got N=7"):
        code.decode_correcting(bad[:7], range(7), 1, max_errors=3)
    with pytest.raises(DecodingError, match="not evaluations of one polynomial"):  # max_errors=0: decode's check
        code.decode_correcting(bad[:7], range(7), 1, max_errors=0)
    with pytest.raises(ValueError, match="8 responses for 7 responders"):
        code.decode_correcting(bad[:8], range(7), 1)
    with pytest.raises(ValueError, match=r"needs .* = 3 responses"):
        code.decode_correcting(bad[:2], range(2), 1)
    empty = code.encode(np.zeros((0, 2, 3), dtype=np.int64), random_state=0)
    assert code.decode_correcting(empty, range(9), 1).values.shape == (2, 0, 3)
