"""SecFC Phase 1: LCC sharing of points, plain and with membership privacy."""

from __future__ import annotations

import numpy as np
import pytest

from fedlib.data import iid_partition
from fedlib.field import LagrangeCode
from fedlib.secagg import SECFC_PRIME, share_all, share_every_index, split_segments

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
