"""Zero-sum one-time masks (fedlib/secagg/_masks.py; MUFC Alg. 2, line 2): they cancel, and any L-1 are uniform."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import chisquare

from fedlib.field import next_prime
from fedlib.secagg import zero_sum_masks


@given(
    st.integers(1, 8),
    st.integers(0, 20),
    st.sampled_from([2, 13, 101, next_prime(2**200)]),
    st.integers(0, 2**32 - 1),
)
def test_masks_are_residues_that_sum_to_zero(n_clients, length, p, seed):
    masks = zero_sum_masks(n_clients, length, p, random_state=seed)
    assert len(masks) == n_clients and all(len(z) == length for z in masks)
    assert all(0 <= v < p for z in masks for v in z)
    assert [sum(column) % p for column in zip(*masks, strict=True)] == [0] * length


def test_single_client_gets_the_zero_mask():
    assert zero_sum_masks(1, 4, 13, random_state=0) == [[0, 0, 0, 0]]


def test_any_l_minus_one_masks_are_jointly_uniform():
    """Clients 1 and 2 of three (the last mask is the dependent one): every pair of GF(5) values equally often."""
    p = 5
    pairs = Counter()
    for s in range(2500):
        masks = zero_sum_masks(3, 1, p, random_state=np.random.default_rng(s))
        pairs[(masks[1][0], masks[2][0])] += 1
    assert len(pairs) == p * p
    assert chisquare([pairs[(a, b)] for a in range(p) for b in range(p)]).pvalue > 1e-3


def test_masks_are_reproducible_fresh_and_refuse_no_clients():
    a = zero_sum_masks(4, 6, 101, random_state=7)
    assert a == zero_sum_masks(4, 6, 101, random_state=7)
    assert a != zero_sum_masks(4, 6, 101, random_state=8)
    secret = zero_sum_masks(3, 5, 101, random_state="secrets")
    assert [sum(c) % 101 for c in zip(*secret, strict=True)] == [0] * 5
    with pytest.raises(ValueError, match="n_clients=0 should be >= 1"):
        zero_sum_masks(0, 3, 13)
    assert np.array(zero_sum_masks(2, 0, 13, random_state=0)).size == 0


def test_an_int_seed_gives_independent_masks():
    """An int seed once drew every mask afresh from that seed: L-1 equal masks, q - q' in the clear."""
    masks = zero_sum_masks(4, 8, 2**61 - 1, random_state=0)
    assert len({tuple(z) for z in masks}) == 4
    assert masks == zero_sum_masks(4, 8, 2**61 - 1, random_state=np.random.default_rng(0))


def test_a_generator_gives_independent_masks():
    masks = zero_sum_masks(3, 8, 2**61 - 1, random_state=np.random.default_rng(0))
    assert len({tuple(z) for z in masks}) == 3
