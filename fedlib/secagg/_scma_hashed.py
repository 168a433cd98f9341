"""SCMA over hashed bin indices: MUFC Alg. 2 in a 62-bit field, for grids of thousands of bits.

MUFC Alg. 2 uses the bin index ``j`` itself as the Reed-Solomon evaluation
point, so its prime must exceed ``B^d``. On the FEMNIST grid (784 dimensions)
that is a prime of about 3,050 bits, and the server must find the roots of a
locator of degree ``m = KL = 6200`` modulo it: every splitting costs about
``log2 p`` squarings of a degree-``m`` polynomial with 3,050-bit coefficients,
hours in all (the book's SCMA benchmark measures it). This variant keeps
Alg. 2's algebra and moves it to a word-sized field GF(q), ``q < 2**62``:

1. A public key, fresh every round, names each bin by a keyed hash
   ``x_j = h(j)`` in GF(q)* (BLAKE2b).
2. Each client sends the ``2T`` power sums ``Σ_j q_j x_j^i`` (Alg. 2 with
   ``x_j`` in place of ``j``) and a table of ``n_tables`` sub-tables of
   ``n_buckets`` rows: ``q_j`` times the index ``j``, written as ``R`` chunks
   of ``w`` bits, is added to one row of every sub-table, at rows that are a
   public function of ``x_j``. Everything is masked with zero-sum masks mod q.
3. The server decodes the power sums exactly as in Alg. 2 (Berlekamp-Massey,
   roots, Vandermonde): the hashed support ``{x_j}`` and the counts ``q_j``. The
   ``x_j`` name the rows every bin was added to, so the server peels the table:
   a row left with a single bin holds ``q_j`` times its chunks, and dividing by
   ``q_j`` gives the index ``j`` (the invertible Bloom lookup table of Goodrich
   and Mitzenmacher, here with the keys known from the power sums).
4. Every index is checked: ``h(j)`` must equal its root ``x_j``, the chunks must
   be exact multiples, and the whole table must be explained.

What the server learns is what Alg. 2 gives it: both parts of the sum are
linear functions of the summed vector ``q`` with public coefficients, so its
view is ``q`` plus masks that are uniform given the sum. A round fails, loudly
and never silently, when two occupied bins share a hash (probability below
``m^2 / 2q``, 4e-12 at ``m = 6200``) or share their rows in every sub-table;
:func:`secure_hashed_sparse_sum` then reruns the round with a fresh key, which
reveals nothing new (the new view is again a function of ``q``).
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from fedlib._random import check_key_source
from fedlib._typing import SeedLike
from fedlib._validation import check_scalar
from fedlib.exceptions import DecodingError, IndexCollisionError
from fedlib.field import check_prime, decode_power_sums, power_sums
from fedlib.secagg._crypto import random_bytes
from fedlib.secagg._masks import MAX_ARRAY_MODULUS, zero_sum_mask_arrays
from fedlib.secagg._scma import _check_client, _check_held, _check_sizes, _SparseSumParams

#: The field of the hashed round: ``q = 4194240 · 2**40 + 1 = 2**46 · 3 · 5 · 17 · 257 + 1``, a 62-bit prime
#: whose ``q − 1`` is smooth, so the locator's roots split by power characters (:func:`fedlib.field.poly_roots`).
HASHED_SCMA_PRIME = 4611615649683210241

#: Bytes of a round key (BLAKE2b accepts up to 64).
KEY_BYTES = 32

#: Odd constants that make the rows of the sub-tables independent functions of ``x_j`` (splitmix64 increments).
_TABLE_SALTS = np.array(
    [
        0x9E3779B97F4A7C15,
        0xD1B54A32D192ED03,
        0x8CB92BA72F3D8DD7,
        0xABC98388FB8FAC03,
        0xCA5A826395121157,
        0xE7037ED1A0B428DB,
        0x8EBC6AF09C88C6E3,
        0x589965CC75374CC3,
    ],
    dtype=np.uint64,
)


@dataclass(frozen=True)
class HashedSCMAParams(_SparseSumParams):
    """Public parameters of one hashed SCMA round; build them with :func:`hashed_scma_params`.

    Parameters
    ----------
    prime : int
        ``q < 2**62``, above ``n``.
    n_syndromes : int
        ``2T``; ``T = K L`` bounds the number of non-zeros of the sum.
    n_samples : int
        ``n``, the largest possible count.
    n_bins : int
        ``B^d``, the largest bin index (indices are ``1..B^d``).
    n_clusters : int
        ``K``, the most non-zeros one client may send.
    n_tables : int
        Sub-tables of the index table; every bin is added to one row of each.
    n_buckets : int
        Rows per sub-table.
    chunk_bits : int
        ``w``: ``n (2^w − 1) < q``, so a count times a chunk never wraps around.
    n_chunks : int
        ``R = ceil(log2(B^d + 1) / w)`` chunks per index.

    Examples
    --------
    >>> from fedlib.secagg import HashedSCMAParams, hashed_scma_params
    >>> params = hashed_scma_params(n_samples=12, n_bins=2**300, n_clusters=2, n_clients=2)
    >>> isinstance(params, HashedSCMAParams), params.n_syndromes, params.table_rows, params.n_chunks
    (True, 8, 64, 6)
    >>> params.message_length == params.n_syndromes + params.table_rows * params.n_chunks
    True
    """

    n_tables: int
    n_buckets: int
    chunk_bits: int
    n_chunks: int

    @property
    def table_rows(self) -> int:
        """Rows of the index table, all sub-tables together."""
        return self.n_tables * self.n_buckets

    @property
    def message_length(self) -> int:
        """Residues one client sends: ``2T`` power sums and the table's ``rows · R`` entries."""
        return self.n_syndromes + self.table_rows * self.n_chunks

    @property
    def message_bits(self) -> int:
        """Bits one client sends: message_length · ceil(log2 q)."""
        return self.message_length * self.element_bits

    @property
    def index_bytes(self) -> int:
        """Bytes of a bin index when it is hashed (the same for every client)."""
        return max(1, (self.n_bins.bit_length() + 7) // 8)


def hashed_scma_params(
    *,
    n_samples: int,
    n_bins: int,
    n_clusters: int,
    n_clients: int,
    prime: int = HASHED_SCMA_PRIME,
    n_tables: int = 4,
    table_load: float = 1.4,
) -> HashedSCMAParams:
    """Parameters of a hashed SCMA round for ``n_clients`` vectors with at most ``n_clusters`` non-zeros each.

    Parameters
    ----------
    n_samples : int
        ``n``, the total number of points (the largest possible count).
    n_bins : int
        ``B^d``, the number of quantization bins; any size.
    n_clusters : int
        ``K``, the most non-zero bins one client may send.
    n_clients : int
        ``L``.
    prime : int, default=HASHED_SCMA_PRIME
        ``q``, a prime below 2**62; the hashes live in GF(q)*.
    n_tables : int, default=4
        Sub-tables of the index table, 2 to 8. With 4, two of ``m`` bins share
        their rows in every sub-table with probability about ``m^2 / 2 M^4``
        (``M`` rows per sub-table).
    table_load : float, default=1.4
        Rows of all sub-tables together per possible non-zero: ``n_tables · M >=
        table_load · T``. Peeling with 4 sub-tables succeeds for almost every
        key above 1.3 (the threshold of random hypergraphs is 1.295).

    Returns
    -------
    HashedSCMAParams
        With ``2T = 2KL`` syndromes and at least 16 rows per sub-table.

    Raises
    ------
    ValueError
        If a count is below 1, ``prime`` is not a prime below 2**62, ``n`` is
        too large for a chunk of one bit (``2n >= q``), or ``n_tables`` or
        ``table_load`` is out of range.

    Examples
    --------
    FEMNIST's shape: 62 centres from each of 100 writers, on a grid of 3,053 bits.

    >>> from fedlib.secagg import hashed_scma_params
    >>> params = hashed_scma_params(n_samples=16338, n_bins=2**3053, n_clusters=62, n_clients=100)
    >>> params.chunk_bits, params.n_chunks, params.table_rows
    (47, 65, 8680)
    """
    _check_sizes(n_samples=n_samples, n_bins=n_bins, n_clusters=n_clusters, n_clients=n_clients)
    prime = check_prime(prime)
    if prime >= MAX_ARRAY_MODULUS:
        raise ValueError(f"the hashed round works in uint64 arrays: the prime must be below 2**62, got {prime}.")
    n_tables = check_scalar(n_tables, "n_tables", "int", min_val=2, max_val=len(_TABLE_SALTS))
    table_load = check_scalar(table_load, "table_load", "real", min_val=1.0)
    n_samples, n_bins = int(n_samples), int(n_bins)
    chunk_bits = prime.bit_length() - 1 - n_samples.bit_length()
    if chunk_bits < 1:
        raise ValueError(
            f"n_samples={n_samples} is too large for q={prime}: a count times a one-bit chunk must stay below q."
        )
    n_syndromes = 2 * int(n_clusters) * int(n_clients)
    return HashedSCMAParams(
        prime=prime,
        n_syndromes=n_syndromes,
        n_samples=n_samples,
        n_bins=n_bins,
        n_clusters=int(n_clusters),
        n_tables=n_tables,
        n_buckets=max(16, math.ceil(table_load * n_syndromes / 2 / n_tables)),
        chunk_bits=chunk_bits,
        n_chunks=math.ceil(n_bins.bit_length() / chunk_bits),
    )


def bin_hashes(bins: Sequence[int], key: bytes, params: HashedSCMAParams) -> np.ndarray:
    """``x_j = 1 + (BLAKE2b_key(j) mod (q − 1))``: the evaluation point of bin ``j`` in GF(q)*.

    Parameters
    ----------
    bins : sequence of int
        Bin indices.
    key : bytes
        The round's public key, 1 to 64 bytes.
    params : HashedSCMAParams
        The public parameters.

    Returns
    -------
    ndarray of uint64
        One non-zero field element per bin.

    Examples
    --------
    >>> from fedlib.secagg import HASHED_SCMA_PRIME, bin_hashes, hashed_scma_key, hashed_scma_params
    >>> params = hashed_scma_params(n_samples=12, n_bins=2**300, n_clusters=2, n_clients=2)
    >>> key = hashed_scma_key(random_state=0)
    >>> x = bin_hashes([1, 2, 2**299], key, params)
    >>> x.dtype, bool((x > 0).all() and (x < HASHED_SCMA_PRIME).all()), len(set(x.tolist()))
    (dtype('uint64'), True, 3)
    >>> bool((bin_hashes([1], key, params) == x[0]).all())  # the same bin, the same point
    True
    """
    width, modulus = params.index_bytes, params.prime - 1
    out = [
        1
        + int.from_bytes(hashlib.blake2b(int(j).to_bytes(width, "little"), key=key, digest_size=16).digest(), "little")
        % modulus
        for j in bins
    ]
    return np.array(out, dtype=np.uint64)


def table_rows(hashes: np.ndarray, params: HashedSCMAParams) -> np.ndarray:
    """The row of every bin in every sub-table: a splitmix64 mix of ``x_j``, one salt per sub-table.

    Parameters
    ----------
    hashes : ndarray of uint64, shape (m,)
        The bins' ``x_j`` (the server has them as the locator's roots).
    params : HashedSCMAParams
        The public parameters.

    Returns
    -------
    ndarray of int64, shape (m, n_tables)
        Row indices into the whole table; column ``t`` lies in sub-table ``t``,
        so a bin's rows are distinct.

    Examples
    --------
    >>> from fedlib.secagg import bin_hashes, hashed_scma_key, hashed_scma_params, table_rows
    >>> params = hashed_scma_params(n_samples=12, n_bins=2**300, n_clusters=2, n_clients=2)
    >>> rows = table_rows(bin_hashes([1, 2, 2**299], hashed_scma_key(random_state=0), params), params)
    >>> rows.shape, (params.n_tables, params.n_buckets)
    ((3, 4), (4, 16))
    >>> bool(((rows // params.n_buckets) == [0, 1, 2, 3]).all())  # column t falls in sub-table t
    True
    """
    z = np.asarray(hashes, dtype=np.uint64)[:, None] + _TABLE_SALTS[None, : params.n_tables]
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    offsets = np.arange(params.n_tables, dtype=np.int64) * params.n_buckets
    return (z % np.uint64(params.n_buckets)).astype(np.int64) + offsets


def index_chunks(bins: Sequence[int], params: HashedSCMAParams) -> np.ndarray:
    """Bin indices as ``R`` chunks of ``w`` bits, least significant first.

    Parameters
    ----------
    bins : sequence of int
        Bin indices in ``1..B^d``.
    params : HashedSCMAParams
        The public parameters.

    Returns
    -------
    ndarray of uint64, shape (m, R)
        ``j = Σ_r chunk_r 2^(w r)``.
    """
    w, R = params.chunk_bits, params.n_chunks
    n_bytes = (w * R + 7) // 8
    raw = b"".join(int(j).to_bytes(n_bytes, "little") for j in bins)
    bits = np.unpackbits(np.frombuffer(raw, dtype=np.uint8).reshape(len(bins), n_bytes), axis=1, bitorder="little")
    bits = bits[:, : w * R].reshape(len(bins), R, w)
    chunks = np.zeros((len(bins), R), dtype=np.uint64)
    for b in range(w):
        chunks |= bits[:, :, b].astype(np.uint64) << np.uint64(b)
    return chunks


def indices_from_chunks(chunks: np.ndarray, params: HashedSCMAParams) -> list[int]:
    """Inverse of :func:`index_chunks`; every chunk must be below ``2^w``.

    Parameters
    ----------
    chunks : ndarray of uint64, shape (m, R)
        Chunks, least significant first.
    params : HashedSCMAParams
        The public parameters.

    Returns
    -------
    list of int
        The indices.
    """
    w = params.chunk_bits
    bits = ((chunks[:, :, None] >> np.arange(w, dtype=np.uint64)) & np.uint64(1)).astype(np.uint8)
    packed = np.packbits(bits.reshape(len(chunks), -1), axis=1, bitorder="little")
    return [int.from_bytes(row.tobytes(), "little") for row in packed]


def _scatter_mod(table: np.ndarray, rows: np.ndarray, values: np.ndarray, prime: int, *, subtract: bool) -> None:
    """``table[rows[i]] ±= values[i] mod q`` in place, rows may repeat (applied in batches of distinct rows)."""
    if rows.size == 0:
        return
    q = np.uint64(prime)
    addends = (q - values) % q if subtract else values
    order = np.argsort(rows, kind="stable")
    ranked = rows[order]
    rank = np.arange(ranked.size) - np.searchsorted(ranked, ranked, side="left")
    for k in range(int(rank.max()) + 1):
        sel = order[rank == k]
        idx = rows[sel]
        table[idx] = (table[idx] + addends[sel]) % q


def hashed_scma_encode(
    counts: Mapping[int, int], params: HashedSCMAParams, key: bytes, mask: np.ndarray, *, backend: str = "auto"
) -> np.ndarray:
    """Client message: the ``2T`` power sums at the hashed bins and the index table, masked mod q.

    The power sums are those of MUFC Alg. 2 (line 2) with ``x_j = h(j)`` in place
    of ``j`` (:func:`fedlib.field.power_sums`); the table adds ``q_j`` times
    the chunks of ``j`` to the rows :func:`table_rows` gives ``x_j``.

    Parameters
    ----------
    counts : mapping of int to int
        ``q^(l)``: bin index (1-based) to count, at most ``K`` entries.
    params : HashedSCMAParams
        The public parameters.
    key : bytes
        The round's public key.
    mask : ndarray of uint64
        The client's one-time mask, ``params.message_length`` residues.
    backend : {"auto", "python", "flint"}, default="auto"
        The arithmetic of the power sums.

    Returns
    -------
    ndarray of uint64, shape (message_length,)
        The masked power sums, then the masked table row by row.

    Raises
    ------
    ValueError
        For more than ``K`` non-zeros, an index or a count out of range, or a mask of the wrong length.
    IndexCollisionError
        If two of the client's own bins share a hash under this key.

    References
    ----------
    C. Pan, J. Sima, S. Prakash, V. Rana, O. Milenkovic. "Machine Unlearning of
    Federated Clusters", ICLR 2023, Alg. 2. M. T. Goodrich, M. Mitzenmacher.
    "Invertible Bloom Lookup Tables", Allerton 2011.

    Examples
    --------
    One round by hand: a public key, zero-sum masks, two clients' messages, the server's sum and its decoding:

    >>> from fedlib.secagg import (
    ...     hashed_scma_aggregate, hashed_scma_decode, hashed_scma_encode, hashed_scma_key, hashed_scma_params,
    ...     zero_sum_mask_arrays,
    ... )
    >>> params = hashed_scma_params(n_samples=12, n_bins=2**300, n_clusters=2, n_clients=2)
    >>> key = hashed_scma_key(random_state=0)
    >>> z1, z2 = zero_sum_mask_arrays(2, params.message_length, params.prime, random_state=1)
    >>> m1 = hashed_scma_encode({1: 3, 2**299: 4}, params, key, z1)
    >>> m2 = hashed_scma_encode({2**299: 1, 4: 4}, params, key, z2)
    >>> m1.shape == (params.message_length,)
    True
    >>> hashed_scma_decode(hashed_scma_aggregate([m1, m2], params), params, key) == {1: 3, 4: 4, 2**299: 5}
    True
    """
    _check_client(counts, params, "hashed_scma_encode")
    mask = np.asarray(mask, dtype=np.uint64)
    if mask.shape != (params.message_length,):
        raise ValueError(f"mask has shape {mask.shape}, need ({params.message_length},).")
    q = params.prime
    bins = [int(j) for j in counts]
    weights = np.array([int(v) for v in counts.values()], dtype=np.uint64)
    hashes = bin_hashes(bins, key, params)
    if np.unique(hashes).size < hashes.size:
        raise IndexCollisionError("two of this client's bins share a hash under this key; rerun with a fresh key.")
    sums = np.array(
        power_sums(hashes.tolist(), weights.tolist(), params.n_syndromes, q, backend=backend), dtype=np.uint64
    )
    table = np.zeros((params.table_rows, params.n_chunks), dtype=np.uint64)
    payload = index_chunks(bins, params) * weights[:, None]  # < n 2^w <= q: no wrap-around
    rows = table_rows(hashes, params)
    _scatter_mod(table, rows.ravel(), np.repeat(payload, params.n_tables, axis=0), q, subtract=False)
    message = np.concatenate([sums, table.ravel()])
    return (message + mask) % np.uint64(q)


def hashed_scma_aggregate(messages: Sequence[np.ndarray], params: HashedSCMAParams) -> np.ndarray:
    """Server: add the masked messages mod q; the masks cancel.

    Parameters
    ----------
    messages : sequence of ndarray of uint64
        One message per client.
    params : HashedSCMAParams
        The public parameters.

    Returns
    -------
    ndarray of uint64
        The power sums and the table of the summed vector.

    Raises
    ------
    ValueError
        If there are no messages or one has the wrong shape.

    Examples
    --------
    The masks cancel: the sum of the masked messages is the unmasked message of the summed counts.

    >>> import numpy as np
    >>> from fedlib.secagg import (
    ...     hashed_scma_aggregate, hashed_scma_encode, hashed_scma_key, hashed_scma_params, zero_sum_mask_arrays,
    ... )
    >>> params = hashed_scma_params(n_samples=12, n_bins=100, n_clusters=3, n_clients=2)
    >>> key = hashed_scma_key(random_state=0)
    >>> z1, z2 = zero_sum_mask_arrays(2, params.message_length, params.prime, random_state=1)
    >>> total = hashed_scma_aggregate(
    ...     [hashed_scma_encode({1: 3, 2: 4}, params, key, z1), hashed_scma_encode({2: 1, 4: 4}, params, key, z2)],
    ...     params,
    ... )
    >>> zero = np.zeros(params.message_length, dtype=np.uint64)
    >>> bool(np.array_equal(total, hashed_scma_encode({1: 3, 2: 5, 4: 4}, params, key, zero)))
    True
    """
    if not messages:
        raise ValueError("no messages to aggregate.")
    q = np.uint64(params.prime)
    total = np.zeros(params.message_length, dtype=np.uint64)
    for k, message in enumerate(messages):
        message = np.asarray(message, dtype=np.uint64)
        if message.shape != total.shape:
            raise ValueError(f"message {k} has shape {message.shape}, need {total.shape}.")
        total = (total + message % q) % q
    return total


def _peel(table: np.ndarray, rows: np.ndarray, prime: int) -> np.ndarray:
    """Each bin's row content (``q_j`` times its chunks) from the summed table, given every bin's rows.

    A row holding a single bin not yet found gives that bin; it is subtracted
    from all its rows, which may leave other rows with a single bin.
    """
    m, n_tables = rows.shape
    flat = rows.ravel()
    owners = np.repeat(np.arange(m, dtype=np.int64), n_tables)
    count = np.bincount(flat, minlength=table.shape[0])
    owner_sum = np.zeros(table.shape[0], dtype=np.int64)
    np.add.at(owner_sum, flat, owners)
    payload = np.zeros((m, table.shape[1]), dtype=np.uint64)
    found = np.zeros(m, dtype=bool)
    while True:
        pure = np.flatnonzero(count == 1)
        if pure.size == 0:
            break
        cells, first = np.unique(owner_sum[pure], return_index=True)
        payload[cells] = table[pure[first]]
        found[cells] = True
        cell_rows = rows[cells].ravel()
        _scatter_mod(table, cell_rows, np.repeat(payload[cells], n_tables, axis=0), prime, subtract=True)
        np.subtract.at(count, cell_rows, 1)
        np.subtract.at(owner_sum, cell_rows, np.repeat(cells, n_tables))
    if not found.all():
        raise IndexCollisionError(
            f"{int((~found).sum())} of {m} bins cannot be separated in the index table (they share rows in every "
            "sub-table under this key); rerun with a fresh key."
        )
    if table.any():
        raise DecodingError(
            "the index table holds more than the bins of the power sums: the messages are inconsistent."
        )
    return payload


def hashed_scma_decode(
    aggregate: np.ndarray,
    params: HashedSCMAParams,
    key: bytes,
    *,
    backend: str = "auto",
    stage_seconds: dict[str, float] | None = None,
) -> dict[int, int]:
    """Server: the exact sparse sum ``{j: q_j}`` from the summed messages.

    The power sums are decoded as in MUFC Alg. 2 (line 3) by
    :func:`fedlib.field.decode_power_sums` (Berlekamp-Massey, roots,
    Vandermonde) into the hashed support ``{x_j: q_j}``; the table is then peeled
    into ``q_j`` times the chunks of each ``j``.

    Parameters
    ----------
    aggregate : ndarray of uint64
        :func:`hashed_scma_aggregate`'s output.
    params : HashedSCMAParams
        The public parameters.
    key : bytes
        The round's public key.
    backend : {"auto", "python", "flint"}, default="auto"
        The arithmetic of :func:`fedlib.field.decode_power_sums`.
    stage_seconds : dict, optional
        Filled with the seconds of each stage: those of
        :func:`fedlib.field.decode_power_sums` and ``"table"`` (peeling the index table).

    Returns
    -------
    dict of int to int
        ``q``: bin index to count, sorted by index.

    Raises
    ------
    IndexCollisionError
        If occupied bins collided under this key (a shared hash, or rows shared in every sub-table).
    fedlib.exceptions.DecodingError
        If the messages are inconsistent (more than ``T`` non-zeros, or a table that the support does not explain).
    ValueError
        If the aggregate has the wrong shape.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.secagg import hashed_scma_decode, hashed_scma_encode, hashed_scma_key, hashed_scma_params
    >>> params = hashed_scma_params(n_samples=12, n_bins=2**300, n_clusters=2, n_clients=1)
    >>> key = hashed_scma_key(random_state=0)
    >>> zero = np.zeros(params.message_length, dtype=np.uint64)  # one client: no mask to cancel
    >>> message = hashed_scma_encode({7: 3, 2**299: 9}, params, key, zero)
    >>> hashed_scma_decode(message, params, key) == {7: 3, 2**299: 9}
    True
    """
    aggregate = np.asarray(aggregate, dtype=np.uint64)
    if aggregate.shape != (params.message_length,):
        raise ValueError(f"aggregate has shape {aggregate.shape}, need ({params.message_length},).")
    nodes = decode_power_sums(
        aggregate[: params.n_syndromes].tolist(), params.prime, backend=backend, stage_seconds=stage_seconds
    )
    start = time.perf_counter()
    total = _indices_from_table(aggregate, params, key, nodes)
    if stage_seconds is not None:
        stage_seconds["table"] = time.perf_counter() - start
    return total


def _indices_from_table(aggregate: np.ndarray, params: HashedSCMAParams, key: bytes, nodes: dict[int, int]) -> dict:
    """Second half of :func:`hashed_scma_decode`: peel the table at the decoded ``{x_j: q_j}``, check each ``j``."""
    two_t = params.n_syndromes
    if not nodes:
        if aggregate[two_t:].any():
            raise DecodingError("the power sums are zero but the index table is not: the messages are inconsistent.")
        return {}
    hashes = np.array(list(nodes), dtype=np.uint64)
    counts = np.array(list(nodes.values()), dtype=np.uint64)
    if int(counts.max()) > params.n_samples:
        raise DecodingError(f"a decoded count exceeds n={params.n_samples}: the messages are inconsistent.")
    table = aggregate[two_t:].reshape(params.table_rows, params.n_chunks).copy()
    payload = _peel(table, table_rows(hashes, params), params.prime)
    chunks, remainder = np.divmod(payload, counts[:, None])
    if remainder.any() or int(chunks.max(initial=0)) >> params.chunk_bits:
        raise IndexCollisionError(
            "an index is not a whole multiple of its count: two bins share a hash (or a message was corrupted); "
            "rerun with a fresh key."
        )
    bins = indices_from_chunks(chunks, params)
    if any(not 1 <= j <= params.n_bins for j in bins) or not np.array_equal(bin_hashes(bins, key, params), hashes):
        raise IndexCollisionError(
            "a decoded index does not hash to its root: two bins share a hash (or a message was corrupted); "
            "rerun with a fresh key."
        )
    return dict(sorted(zip(bins, (int(c) for c in counts), strict=True)))


@dataclass(frozen=True)
class HashedSCMAResult:
    """Outcome of :func:`secure_hashed_sparse_sum`.

    Parameters
    ----------
    total : dict of int to int
        ``q = Σ_l q^(l)``: bin index to count.
    params : HashedSCMAParams
        The public parameters.
    keys : list of bytes
        The public key of every attempt; the last one decoded.
    aggregate : ndarray of uint64
        The server's view of the last attempt: the sum of the masked messages.

    Examples
    --------
    >>> from fedlib.secagg import HashedSCMAResult, hashed_scma_params, secure_hashed_sparse_sum
    >>> params = hashed_scma_params(n_samples=12, n_bins=2**300, n_clusters=2, n_clients=2)
    >>> result = secure_hashed_sparse_sum([{1: 3, 2: 4}, {2: 1, 4: 4}], params, random_state=0)
    >>> isinstance(result, HashedSCMAResult), result.total, result.attempts
    (True, {1: 3, 2: 5, 4: 4}, 1)
    >>> result.aggregate.shape == (params.message_length,), len(result.keys[0])
    (True, 32)
    """

    total: dict[int, int]
    params: HashedSCMAParams
    keys: list[bytes]
    aggregate: np.ndarray

    @property
    def attempts(self) -> int:
        """Rounds run (1 unless a key made bins collide)."""
        return len(self.keys)


def hashed_scma_key(random_state: SeedLike | str = "secrets") -> bytes:
    """A fresh public round key for the hashed bins of :func:`hashed_scma_encode`.

    Parameters
    ----------
    random_state : "secrets", int, numpy.random.Generator or None, default="secrets"
        ``"secrets"``: from the OS CSPRNG; otherwise a reproducible simulation's stream
        (:func:`fedlib.secagg.random_bytes`).

    Returns
    -------
    bytes
        ``KEY_BYTES`` bytes, published to every client and the server.

    Raises
    ------
    ValueError
        For a string other than ``"secrets"``.

    Examples
    --------
    >>> from fedlib.secagg import hashed_scma_key
    >>> len(hashed_scma_key()) == 32 and hashed_scma_key(0) == hashed_scma_key(0)
    True
    """
    return random_bytes(KEY_BYTES, random_state)


def secure_hashed_sparse_sum(
    client_counts: Sequence[Mapping[int, int]],
    params: HashedSCMAParams,
    *,
    random_state: SeedLike | str = "secrets",
    backend: str = "auto",
    max_attempts: int = 3,
) -> HashedSCMAResult:
    """Run a hashed SCMA round: a fresh public key and zero-sum masks, encoding, aggregation, decoding.

    The clients' messages are summed as they arrive (a message is
    ``params.message_length`` residues). A round whose key makes occupied bins
    collide is detected by the decoder and rerun with a fresh key, up to
    ``max_attempts`` rounds.

    Parameters
    ----------
    client_counts : sequence of mapping of int to int
        ``q^(l)`` of every client: bin index (1-based) to count.
    params : HashedSCMAParams
        The public parameters, for ``L = len(client_counts)`` clients.
    random_state : "secrets", int, numpy.random.Generator or None, default="secrets"
        Draws the keys and the masks: by default the operating system's CSPRNG;
        a seed is a reproducible simulation, insecure (whoever knows it
        recomputes the masks and so every client's vector).
    backend : {"auto", "python", "flint"}, default="auto"
        The arithmetic of the power sums and their decoding.
    max_attempts : int, default=3
        Rounds to try before giving up.

    Returns
    -------
    HashedSCMAResult
        The exact sum, the parameters, the keys tried and the server's last view.

    Raises
    ------
    ValueError
        If a client's vector breaks the parameters, or the clients hold more points in all than
        ``params.n_samples``.
    IndexCollisionError
        If every one of ``max_attempts`` keys made bins collide.
    fedlib.exceptions.DecodingError
        If the messages are inconsistent.

    Notes
    -----
    The server learns ``q`` and nothing else: its view, the summed power sums
    and table, is a function of ``q`` and the public key (any ``L − 1`` masks
    are jointly uniform). Used in :doc:`/notebooks/mufc/training`.

    Examples
    --------
    MUFC's Fig. 2 vectors on a grid of 2**300 bins:

    >>> from fedlib.secagg import hashed_scma_params, secure_hashed_sparse_sum
    >>> params = hashed_scma_params(n_samples=12, n_bins=2**300, n_clusters=2, n_clients=2)
    >>> result = secure_hashed_sparse_sum([{1: 3, 2**299: 4}, {2**299: 1, 4: 4}], params, random_state=0)
    >>> result.total == {1: 3, 4: 4, 2**299: 5}, result.attempts
    (True, 1)
    """
    _check_held(client_counts, params)
    max_attempts = check_scalar(max_attempts, "max_attempts", "int", min_val=1)
    stream = check_key_source(random_state)
    keys: list[bytes] = []
    for _ in range(max_attempts):
        key = hashed_scma_key(stream)
        keys.append(key)
        masks = zero_sum_mask_arrays(len(client_counts), params.message_length, params.prime, random_state=stream)
        aggregate = np.zeros(params.message_length, dtype=np.uint64)
        q = np.uint64(params.prime)
        try:
            for counts, mask in zip(client_counts, masks, strict=True):
                aggregate += hashed_scma_encode(counts, params, key, mask, backend=backend)
                aggregate %= q
            total = hashed_scma_decode(aggregate, params, key, backend=backend)
        except IndexCollisionError as error:
            last = error
            continue
        return HashedSCMAResult(total=total, params=params, keys=keys, aggregate=aggregate)
    raise IndexCollisionError(f"every one of {max_attempts} keys made occupied bins collide; last: {last}")
