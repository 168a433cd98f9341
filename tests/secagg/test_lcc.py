"""SecFC Phase 1 (fedlib/secagg/_lcc.py): LCC sharing of points, plain and with membership privacy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedlib.data import iid_partition
from fedlib.field import LagrangeCode
from fedlib.secagg import SECFC_PRIME, share_all, share_every_index, share_points, split_segments
from fedlib.utils import spawn_generators

Q = SECFC_PRIME


def test_split_segments_pads_with_zeros():
    X = np.arange(10).reshape(2, 5)
    S = split_segments(X, 2)
    assert S.shape == (2, 2, 3)
    assert S[0].ravel().tolist() == [0, 1, 2, 3, 4, 0]
    with pytest.raises(ValueError, match="exceeds n_features"):
        split_segments(X, 6)


@pytest.mark.parametrize("share", [share_all, share_every_index])
@pytest.mark.parametrize(("n", "ell", "t"), [(5, 1, 2), (9, 2, 2), (7, 3, 0)])
def test_any_l_plus_t_shares_reveal_the_points(share, n, ell, t, global_random_seed):
    rng = np.random.default_rng(global_random_seed)
    X = np.mod(rng.integers(-500, 500, size=(40, 7)), Q)
    parts = iid_partition(40, n, random_state=global_random_seed)
    code = LagrangeCode(n_clients=n, n_segments=ell, n_masks=t, prime=Q)
    shares = share(code, X, parts, random_state=global_random_seed)
    who = sorted(rng.permutation(n)[: ell + t].tolist())
    segments = code.decode(shares[who], who, 1)  # (ℓ, m, width)
    recovered = np.concatenate(list(segments), axis=1)[:, :7]
    np.testing.assert_array_equal(recovered, X)


def test_membership_private_shares_differ_but_encode_the_same_points():
    X = np.mod(np.arange(60).reshape(20, 3) - 30, Q)
    parts = iid_partition(20, 5, random_state=0)
    code = LagrangeCode(n_clients=5, n_segments=1, n_masks=2, prime=Q)
    plain = share_all(code, X, parts, random_state=1)
    private = share_every_index(code, X, parts, random_state=1)
    assert not np.array_equal(plain, private)
    for shares in (plain, private):
        np.testing.assert_array_equal(code.decode(shares[[0, 2, 4]], [0, 2, 4], 1)[0], X)


@given(st.integers(1, 6), st.integers(1, 9), st.data())
def test_split_segments_equals_its_definition(m, d, data):
    ell = data.draw(st.integers(1, d))
    X = np.array(data.draw(st.lists(st.lists(st.integers(0, 100), min_size=d, max_size=d), min_size=m, max_size=m)))
    width = -(-d // ell)
    S = split_segments(X, ell)
    assert S.shape == (m, ell, width) and S.dtype == X.dtype
    for i in range(m):
        padded = X[i].tolist() + [0] * (ell * width - d)
        assert S[i].tolist() == [padded[u * width : (u + 1) * width] for u in range(ell)]


def test_share_all_is_each_owner_sharing_its_own_points_with_its_own_stream():
    """SecFC Alg. 1, lines 1-4: client c encodes the rows it owns with the c-th spawned stream."""
    rng = np.random.default_rng(3)
    X = np.mod(rng.integers(-50, 50, size=(30, 4)), Q)
    parts = iid_partition(30, 4, random_state=3)
    code = LagrangeCode(n_clients=4, n_segments=2, n_masks=1, prime=Q)
    shares = share_all(code, X, parts, random_state=11)
    for idx, stream in zip(parts, spawn_generators(11, 4), strict=True):
        np.testing.assert_array_equal(shares[:, idx], share_points(code, X[idx], random_state=stream))
        np.testing.assert_array_equal(
            share_points(code, X[idx], random_state=0),
            code.encode(split_segments(X[idx], 2), random_state=0),
        )


def test_membership_private_shares_are_sums_of_everyones_shares_of_their_own_rows():
    """SecFC Eqs. (4)-(6): client c encodes every index, its own points and zeros elsewhere; shares add up."""
    X = np.mod(np.arange(36).reshape(12, 3) - 18, Q)
    parts = iid_partition(12, 3, random_state=0)
    code = LagrangeCode(n_clients=3, n_segments=1, n_masks=1, prime=Q)
    expected = np.zeros((3, 12, 3), dtype=object)
    for idx, stream in zip(parts, spawn_generators(5, 3), strict=True):
        own = np.zeros_like(X)
        own[idx] = X[idx]
        expected = expected + share_points(code, own, random_state=stream).astype(object)
    np.testing.assert_array_equal(share_every_index(code, X, parts, random_state=5), np.mod(expected, Q))


def test_one_share_alone_is_uniform_whatever_the_point():
    """t = 1: a single client's share of a fixed point, over the masks, hits every residue of GF(7) equally often."""
    from scipy.stats import chisquare

    code = LagrangeCode(n_clients=3, n_segments=1, n_masks=1, prime=7)
    for point in ([[0]], [[5]]):
        seen = [int(share_points(code, point, random_state=s)[1, 0, 0]) for s in range(1400)]
        assert chisquare(np.bincount(seen, minlength=7)).pvalue > 1e-3
