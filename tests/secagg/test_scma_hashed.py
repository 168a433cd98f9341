"""SCMA over hashed bin indices (fedlib/secagg/_scma_hashed.py): exact sums, detected collisions, refusals."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from fedbook.bench import random_sparse_clients
from hypothesis import given, settings
from hypothesis import strategies as st

from fedlib.exceptions import DecodingError, IndexCollisionError
from fedlib.field import splitting_seconds
from fedlib.secagg import (
    HASHED_SCMA_PRIME,
    bin_hashes,
    hashed_scma_aggregate,
    hashed_scma_decode,
    hashed_scma_encode,
    hashed_scma_key,
    hashed_scma_params,
    random_bytes,
    scma_params,
    secure_hashed_sparse_sum,
    table_rows,
    zero_sum_mask_arrays,
)
from fedlib.secagg._scma_hashed import KEY_BYTES, index_chunks, indices_from_chunks


def _plain(clients):
    return dict(sorted(sum((Counter(c) for c in clients), Counter()).items()))


def _round(clients, params, key, *, backend="auto", seed=0):
    masks = zero_sum_mask_arrays(len(clients), params.message_length, params.prime, random_state=seed)
    messages = [hashed_scma_encode(c, params, key, z, backend=backend) for c, z in zip(clients, masks, strict=True)]
    return hashed_scma_aggregate(messages, params)


@st.composite
def sparse_inputs(draw):
    n_clients = draw(st.integers(1, 6))
    k = draw(st.integers(1, 5))
    n_bins = draw(st.sampled_from([7, 1000, 2**64 + 13, 2**300, 15**784]))
    clients = []
    for _ in range(n_clients):
        bins = draw(st.lists(st.integers(1, n_bins), min_size=0, max_size=k, unique=True))
        clients.append({j: draw(st.integers(1, 50)) for j in bins})
    return clients, k, n_bins


@given(sparse_inputs(), st.integers(0, 2**32 - 1), st.sampled_from(["python", "flint"]))
@settings(deadline=None)
def test_secure_sum_equals_plain_sum(inputs, seed, backend):
    clients, k, n_bins = inputs
    n = max(1, sum(sum(c.values()) for c in clients))
    params = hashed_scma_params(n_samples=n, n_bins=n_bins, n_clusters=k, n_clients=len(clients))
    result = secure_hashed_sparse_sum(clients, params, random_state=seed, backend=backend)
    assert result.total == _plain(clients)
    assert result.attempts == 1  # a 62-bit field: collisions are far too rare to meet here


@given(st.integers(0, 2**32 - 1))
@settings(deadline=None, max_examples=40)
def test_a_tiny_field_collides_often_and_is_never_wrong(seed):
    """q = 1009: hashes of 12 bins collide in ~6% of keys; every round is exact or raises, and the retries decode."""
    rng = np.random.default_rng(seed)
    clients = [{int(j): int(rng.integers(1, 5)) for j in rng.choice(10**6, 4, replace=False) + 1} for _ in range(3)]
    params = hashed_scma_params(n_samples=60, n_bins=10**6, n_clusters=4, n_clients=3, prime=1009)
    key = rng.bytes(32)
    try:
        aggregate = _round(clients, params, key, seed=seed)
        assert hashed_scma_decode(aggregate, params, key) == _plain(clients)
    except IndexCollisionError:
        pass
    assert secure_hashed_sparse_sum(clients, params, random_state=seed, max_attempts=20).total == _plain(clients)


def _colliding_bins(params, key, *, same_hash: bool) -> tuple[int, int]:
    """Two bins sharing their hash (or, with distinct hashes, all their table rows) under ``key``."""
    bins = list(range(1, 200_000))
    hashes = bin_hashes(bins, key, params)
    if same_hash:
        first: dict[int, int] = {}
        for j, h in zip(bins, hashes.tolist(), strict=True):
            if h in first:
                return first[h], j
            first[h] = j
    else:
        rows = table_rows(hashes, params)
        seen: dict[tuple, tuple[int, int]] = {}
        for j, h, r in zip(bins, hashes.tolist(), map(tuple, rows.tolist()), strict=True):
            if r in seen and seen[r][1] != h:
                return seen[r][0], j
            seen.setdefault(r, (j, h))
    raise AssertionError("no collision found")


def test_a_shared_hash_is_detected_not_decoded_wrong():
    params = hashed_scma_params(n_samples=20, n_bins=10**6, n_clusters=2, n_clients=2, prime=10007)
    key = b"k" * 32
    a, b = _colliding_bins(params, key, same_hash=True)
    aggregate = _round([{a: 3}, {b: 5}], params, key)
    with pytest.raises(IndexCollisionError, match="share a hash"):
        hashed_scma_decode(aggregate, params, key)


def test_shared_rows_in_every_sub_table_are_detected():
    params = hashed_scma_params(n_samples=20, n_bins=10**6, n_clusters=2, n_clients=2, n_tables=2)
    key = b"r" * 32
    a, b = _colliding_bins(params, key, same_hash=False)
    aggregate = _round([{a: 3}, {b: 5}], params, key)
    with pytest.raises(IndexCollisionError, match="cannot be separated"):
        hashed_scma_decode(aggregate, params, key)


def test_a_client_whose_own_bins_collide_refuses_and_the_round_is_rerun():
    params = hashed_scma_params(n_samples=20, n_bins=10**6, n_clusters=2, n_clients=1, prime=10007)
    key = b"c" * 32
    a, b = _colliding_bins(params, key, same_hash=True)
    with pytest.raises(IndexCollisionError):
        hashed_scma_encode({a: 1, b: 2}, params, key, np.zeros(params.message_length, dtype=np.uint64))


def test_every_key_colliding_raises_after_max_attempts(monkeypatch):
    import fedlib.secagg._scma_hashed as module

    params = hashed_scma_params(n_samples=20, n_bins=10**6, n_clusters=2, n_clients=2, prime=10007)
    a, b = _colliding_bins(params, b"k" * 32, same_hash=True)
    monkeypatch.setattr(module, "hashed_scma_key", lambda stream: b"k" * 32)
    with pytest.raises(IndexCollisionError, match="every one of 2 keys"):
        secure_hashed_sparse_sum([{a: 3}, {b: 5}], params, random_state=0, max_attempts=2)


def test_corrupted_messages_fail_loudly():
    clients = [{5: 2, 900: 1}, {5: 1, 77: 4}]
    params = hashed_scma_params(n_samples=8, n_bins=1000, n_clusters=2, n_clients=2)
    key = bytes(32)
    aggregate = _round(clients, params, key)
    for position in (0, params.n_syndromes + 3, params.message_length - 1):
        bad = aggregate.copy()
        bad[position] = (bad[position] + np.uint64(1)) % np.uint64(params.prime)
        with pytest.raises(DecodingError):
            hashed_scma_decode(bad, params, key)


def test_messages_are_masked_and_the_masks_cancel():
    clients = [{3: 2, 10**40: 1}, {3: 1}, {10**39: 7}]
    params = hashed_scma_params(n_samples=11, n_bins=10**41, n_clusters=2, n_clients=3)
    key = bytes(range(32))
    zero = np.zeros(params.message_length, dtype=np.uint64)
    unmasked = hashed_scma_aggregate([hashed_scma_encode(c, params, key, zero) for c in clients], params)
    masks = list(zero_sum_mask_arrays(3, params.message_length, params.prime, random_state=1))
    masked = [hashed_scma_encode(c, params, key, z) for c, z in zip(clients, masks, strict=True)]
    assert not np.array_equal(masked[0], hashed_scma_encode(clients[0], params, key, zero))
    assert np.array_equal(hashed_scma_aggregate(masked, params), unmasked)
    assert hashed_scma_decode(unmasked, params, key) == _plain(clients)


def test_single_message_is_uniform_looking():
    """One client's message for a fixed input is uniform over the masks: chi-square on one table entry mod 11."""
    from scipy.stats import chisquare

    params = hashed_scma_params(n_samples=5, n_bins=100, n_clusters=1, n_clients=2)
    key = bytes(32)
    rng = np.random.default_rng(0)
    values = [
        int(hashed_scma_encode({7: 3}, params, key, next(zero_sum_mask_arrays(2, params.message_length,
                                                                              params.prime, random_state=rng)))[-1])
        % 11
        for _ in range(1100)
    ]  # fmt: skip
    assert chisquare(np.bincount(values, minlength=11)).pvalue > 1e-3


@given(st.lists(st.integers(1, 15**784), min_size=1, max_size=20), st.sampled_from([12, 16338, 2**40]))
def test_index_chunks_round_trip(bins, n):
    params = hashed_scma_params(n_samples=n, n_bins=15**784, n_clusters=1, n_clients=1)
    chunks = index_chunks(bins, params)
    assert chunks.shape == (len(bins), params.n_chunks)
    assert int(chunks.max()) < 2**params.chunk_bits
    assert int(chunks.max()) * n < params.prime  # a count times a chunk never wraps around
    assert indices_from_chunks(chunks, params) == bins


def test_params_of_the_femnist_shape_and_the_message_against_alg_2():
    params = hashed_scma_params(n_samples=16338, n_bins=15**784, n_clusters=62, n_clients=100)
    assert params.prime == HASHED_SCMA_PRIME and params.element_bits == 62
    assert (15**784).bit_length() == 3064
    assert (params.chunk_bits, params.n_chunks, params.n_buckets) == (47, 66, 2170)  # 66 = ceil(3064 / 47)
    assert params.message_length == 12400 + 8680 * 66
    direct = scma_params(n_samples=16338, n_bins=15**784, n_clusters=62, n_clients=100)
    assert params.message_bits < direct.message_bits


def test_refusals_name_the_bound():
    with pytest.raises(ValueError, match="below 2\\*\\*62"):
        hashed_scma_params(n_samples=5, n_bins=9, n_clusters=1, n_clients=1, prime=2**89 - 1)
    with pytest.raises(ValueError, match="too large for q"):
        hashed_scma_params(n_samples=600, n_bins=9, n_clusters=1, n_clients=1, prime=1009)
    with pytest.raises(ValueError, match="is not a prime"):
        hashed_scma_params(n_samples=5, n_bins=9, n_clusters=1, n_clients=1, prime=2**61)
    with pytest.raises(ValueError):
        hashed_scma_params(n_samples=5, n_bins=9, n_clusters=1, n_clients=1, n_tables=1)
    with pytest.raises(ValueError):
        hashed_scma_params(n_samples=0, n_bins=9, n_clusters=1, n_clients=1)
    params = hashed_scma_params(n_samples=5, n_bins=9, n_clusters=2, n_clients=2)
    zero = np.zeros(params.message_length, dtype=np.uint64)
    with pytest.raises(ValueError, match="at most K=2"):
        hashed_scma_encode({1: 1, 2: 1, 3: 1}, params, bytes(32), zero)
    with pytest.raises(ValueError, match="outside"):
        hashed_scma_encode({10: 1}, params, bytes(32), zero)
    with pytest.raises(ValueError, match="outside"):
        hashed_scma_encode({1: 6}, params, bytes(32), zero)
    with pytest.raises(ValueError, match="mask"):
        hashed_scma_encode({1: 1}, params, bytes(32), zero[:-1])
    with pytest.raises(ValueError, match="more than n_samples=5"):
        secure_hashed_sparse_sum([{1: 3}, {2: 3}], params, random_state=0)
    with pytest.raises(ValueError, match="shape"):
        hashed_scma_decode(zero[:-1], params, bytes(32))


def test_zero_sum_mask_arrays_cancel_and_refuse_large_primes():
    p = HASHED_SCMA_PRIME
    for source in (3, "secrets"):
        masks = list(zero_sum_mask_arrays(4, 1000, p, random_state=source))
        assert all(m.dtype == np.uint64 and int(m.max()) < p for m in masks)
        assert sum(int(v) for v in np.array([m[17] for m in masks], dtype=object)) % p == 0
        assert all(sum(int(m[i]) for m in masks) % p == 0 for i in range(1000))
    first, second = zero_sum_mask_arrays(3, 50, p, random_state=9), zero_sum_mask_arrays(3, 50, p, random_state=9)
    assert all(np.array_equal(a, b) for a, b in zip(first, second, strict=True))
    with pytest.raises(ValueError, match="2\\*\\*62"):
        next(zero_sum_mask_arrays(2, 5, 2**62 + 135))
    with pytest.raises(ValueError, match="secrets"):
        next(zero_sum_mask_arrays(2, 5, 13, random_state="os"))


def test_a_femnist_shape_round_is_exact():
    """The issue's scale: L = 100 clients, K = 62 bins each, the 15^784 grid (m = 6,200 non-zeros)."""
    clients = random_sparse_clients(100, 62, n_bins=15**784, n_samples=16338, random_state=0)
    params = hashed_scma_params(n_samples=16338, n_bins=15**784, n_clusters=62, n_clients=100)
    result = secure_hashed_sparse_sum(clients, params, random_state=1)
    assert len(result.total) == 6200 and result.total == _plain(clients)


def test_splitting_seconds_is_a_nonnegative_number():
    seconds = splitting_seconds(50, 2**127 - 1, random_state=0)
    assert isinstance(seconds, float) and seconds >= 0.0


def test_a_round_with_os_randomness_is_exact():
    params = hashed_scma_params(n_samples=20, n_bins=2**500, n_clusters=3, n_clients=3)
    result = secure_hashed_sparse_sum([{1: 2, 2**499: 3}, {5: 1}, {2**499: 4}], params, random_state="secrets")
    assert result.total == {1: 2, 5: 1, 2**499: 7} and len(result.keys[-1]) == 32


def test_round_keys_are_the_key_bytes_of_the_secure_aggregation():
    """hashed_scma_key is random_bytes(KEY_BYTES): the same stream, the same refusal of other strings."""
    for seed in (0, 1, 12345):
        assert hashed_scma_key(seed) == random_bytes(KEY_BYTES, seed) == np.random.default_rng(seed).bytes(KEY_BYTES)
    assert len(hashed_scma_key()) == KEY_BYTES and hashed_scma_key() != hashed_scma_key()
    with pytest.raises(ValueError, match="the only string accepted is 'secrets'"):
        hashed_scma_key("os")


def test_both_rounds_validate_their_sizes_alike():
    for make in (scma_params, hashed_scma_params):
        for name in ("n_samples", "n_bins", "n_clusters", "n_clients"):
            sizes = dict(n_samples=12, n_bins=4, n_clusters=2, n_clients=2) | {name: 0}
            with pytest.raises(ValueError, match=f"^{name}=0 should be >= 1.$"):
                make(**sizes)
