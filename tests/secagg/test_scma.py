"""SCMA (fedlib/secagg/_scma.py; MUFC Alg. 2): secure sum equals plain sum, messages hide, bounds raise."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedlib.exceptions import DecodingError
from fedlib.secagg import (
    dense_secure_sum_bits,
    scma_aggregate,
    scma_decode,
    scma_encode,
    scma_params,
    secure_sparse_sum,
    zero_sum_masks,
)


def test_worked_example_of_the_paper_setting():
    """K=2, L=2, B^d=4, n=12, p=13 (the setting of MUFC Fig. 2), with zero-sum masks chosen by hand."""
    params = scma_params(n_samples=12, n_bins=4, n_clusters=2, n_clients=2, prime=13)
    z1, z2 = [6, 12, 6, 0, 4, 8, 7, 6], [7, 1, 7, 0, 9, 5, 6, 7]
    assert [(a + b) % 13 for a, b in zip(z1, z2, strict=True)] == [0] * 8
    m1 = scma_encode({1: 4, 3: 2}, params, z1)
    m2 = scma_encode({3: 5, 4: 1}, params, z2)
    assert m1 == [12, 9, 2, 6, 1, 4, 0, 3] and m2 == [0, 7, 3, 4, 7, 8, 12, 0]
    S = scma_aggregate([m1, m2], params)
    assert S == [12, 3, 5, 10, 8, 12, 12, 3]
    assert scma_decode(S, params) == {1: 4, 3: 7, 4: 1}


@st.composite
def sparse_inputs(draw):
    n_clients = draw(st.integers(1, 6))
    k = draw(st.integers(1, 4))
    n_bins = draw(st.sampled_from([7, 1000, 10**12, 2**100]))
    clients = []
    for _ in range(n_clients):
        bins = draw(st.lists(st.integers(1, n_bins), min_size=0, max_size=k, unique=True))
        clients.append({j: draw(st.integers(1, 50)) for j in bins})
    return clients, k, n_bins


@given(sparse_inputs(), st.integers(0, 2**32 - 1))
def test_secure_sum_equals_plain_sum(inputs, seed):
    clients, k, n_bins = inputs
    n = max(1, sum(sum(c.values()) for c in clients))
    params = scma_params(n_samples=n, n_bins=n_bins, n_clusters=k, n_clients=len(clients))
    plain = sum((Counter(c) for c in clients), Counter())
    assert secure_sparse_sum(clients, params, random_state=seed).total == dict(sorted(plain.items()))


def test_single_message_is_uniform_looking():
    """One client's message for a fixed input is uniform over the masks: chi-square on its first element."""
    from scipy.stats import chisquare

    p = 101
    params = scma_params(n_samples=50, n_bins=100, n_clusters=1, n_clients=2, prime=p)
    firsts = [
        secure_sparse_sum([{7: 3}, {9: 2}], params, random_state=np.random.default_rng(s)).messages[0][0]
        for s in range(3000)
    ]
    counts = Counter(firsts)
    assert chisquare([counts[v] for v in range(p)]).pvalue > 1e-3


@given(sparse_inputs(), st.integers(0, 2**32 - 1))
def test_messages_are_masked_power_sums_and_aggregate_to_the_plain_ones(inputs, seed):
    """S_i^(l) = Σ_j q_j j^(i-1) + z_i^(l) mod p by its definition, and the masks cancel in the sum."""
    clients, k, n_bins = inputs
    n = max(1, sum(sum(c.values()) for c in clients))
    params = scma_params(n_samples=n, n_bins=n_bins, n_clusters=k, n_clients=len(clients))
    p, two_t = params.prime, params.n_syndromes
    masks = zero_sum_masks(len(clients), two_t, p, random_state=np.random.default_rng(seed))
    messages = [scma_encode(c, params, z) for c, z in zip(clients, masks, strict=True)]
    for c, z, message in zip(clients, masks, messages, strict=True):
        assert message == [(sum(q * pow(j, i, p) for j, q in c.items()) + z[i]) % p for i in range(two_t)]
    plain = sum((Counter(c) for c in clients), Counter())
    expected = [sum(q * pow(j, i, p) for j, q in plain.items()) % p for i in range(two_t)]
    assert scma_aggregate(messages, params) == expected


@given(st.integers(1, 10**6), st.integers(1, 10**30), st.integers(1, 6), st.integers(1, 200))
def test_params_take_the_smallest_prime_above_max_n_and_bins(n, n_bins, k, n_clients):
    from sympy import nextprime

    params = scma_params(n_samples=n, n_bins=n_bins, n_clusters=k, n_clients=n_clients)
    assert params.prime == nextprime(max(n, n_bins))
    assert params.n_syndromes == 2 * k * n_clients
    assert 2 ** (params.element_bits - 1) < params.prime <= 2**params.element_bits  # ceil(log2 p) bits
    assert params.message_bits == params.n_syndromes * params.element_bits
    count_bits = next(b for b in range(64) if 2**b >= n + 1)  # ceil(log2(n + 1)), in integers
    assert dense_secure_sum_bits(params) == n_bins * count_bits


def test_message_size_is_logarithmic_in_the_grid():
    small = scma_params(n_samples=12009, n_bins=110**10, n_clusters=4, n_clients=100)
    large = scma_params(n_samples=12009, n_bins=110**20, n_clusters=4, n_clients=100)
    assert small.message_bits == 800 * small.element_bits
    assert large.message_bits < 2.1 * small.message_bits  # squaring the grid only doubles the bits
    assert dense_secure_sum_bits(small) > 10**15 * small.message_bits


def test_prime_too_small_raises_naming_the_bound():
    with pytest.raises(ValueError, match=r"p > max\(n, B\^d\)"):
        scma_params(n_samples=12, n_bins=13, n_clusters=2, n_clients=2, prime=13)


def test_bad_inputs_raise():
    params = scma_params(n_samples=12, n_bins=4, n_clusters=2, n_clients=2, prime=13)
    with pytest.raises(ValueError, match="1-based"):
        scma_encode({0: 1}, params, [0] * 8)
    with pytest.raises(ValueError, match="outside"):
        scma_encode({1: 13}, params, [0] * 8)
    with pytest.raises(ValueError, match="mask has length"):
        scma_encode({1: 1}, params, [0] * 7)


def test_client_with_more_than_k_nonzeros_is_refused():
    """With at most K non-zeros per client the sum has at most KL, so 2KL syndromes decode it exactly."""
    params = scma_params(n_samples=100, n_bins=1000, n_clusters=1, n_clients=2)
    with pytest.raises(ValueError, match="at most K=1 non-zero bins"):
        secure_sparse_sum([{1: 1, 2: 1}, {3: 1}], params, random_state=0)


def test_corrupted_syndromes_fail_loudly():
    from fedlib.field import random_field_elements

    params = scma_params(n_samples=100, n_bins=2**60, n_clusters=5, n_clients=2)
    garbage = random_field_elements(params.prime, params.n_syndromes, random_state=0)
    with pytest.raises(DecodingError):
        scma_decode(garbage, params)


def test_secure_sparse_sum_refuses_more_points_than_the_parameters_hold():
    # issue 11: 10 points summed under parameters for n = 5 decoded to {1: 3} (10 mod 7), silently
    params = scma_params(n_samples=5, n_bins=4, n_clusters=2, n_clients=2)
    with pytest.raises(ValueError, match="hold 10 points in all, more than n_samples=5"):
        secure_sparse_sum([{1: 5}, {1: 5}], params, random_state=0)
    assert secure_sparse_sum([{1: 2}, {1: 3}], params, random_state=0).total == {1: 5}


@given(sparse_inputs(), st.integers(0, 2**32 - 1))
def test_flint_and_python_backends_send_and_decode_the_same(inputs, seed):
    """Every message and the decoded sum are bit-for-bit those of the pure-Python reference."""
    clients, k, n_bins = inputs
    n = max(1, sum(sum(c.values()) for c in clients))
    params = scma_params(n_samples=n, n_bins=n_bins, n_clusters=k, n_clients=len(clients))
    fast = secure_sparse_sum(clients, params, random_state=seed, backend="flint")
    slow = secure_sparse_sum(clients, params, random_state=seed, backend="python")
    assert fast.messages == slow.messages
    assert fast.total == slow.total


def test_a_784_dimensional_grid_round_is_exact():
    """d = 784 with B = 2 (a 785-bit prime): MUFC's FEMNIST dimension, small enough for a unit test."""
    rng = np.random.default_rng(0)
    clients = [{int(j) * 2**700: int(rng.integers(1, 20)) for j in rng.integers(1, 2**62, size=4)} for _ in range(5)]
    n = sum(sum(c.values()) for c in clients)
    params = scma_params(n_samples=n, n_bins=2**784, n_clusters=4, n_clients=5)
    assert params.element_bits == 785
    plain = sum((Counter(c) for c in clients), Counter())
    assert secure_sparse_sum(clients, params, random_state=1).total == dict(sorted(plain.items()))


def test_the_prime_is_the_one_sympy_would_pick():
    """scma_params' prime is sympy.nextprime(max(n, B^d)), now found by a sieve and FLINT's BPSW."""
    from sympy import nextprime

    for n_bins in (2**64, 10**40, 7**300):
        params = scma_params(n_samples=100, n_bins=n_bins, n_clusters=2, n_clients=3)
        assert params.prime == nextprime(n_bins)


def test_encode_refuses_an_unknown_backend():
    params = scma_params(n_samples=12, n_bins=4, n_clusters=2, n_clients=2, prime=13)
    with pytest.raises(ValueError, match="backend"):
        scma_encode({1: 1}, params, [0] * 8, backend="sage")
