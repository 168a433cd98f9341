"""Timing helpers for benchmarks: medians and ratios against a reference measured in the same run.

Also the SCMA benchmark (MUFC Alg. 2, and its variant over hashed bins, at the FEMNIST sample's shape),
stage by stage: ``python -m fedbook.bench``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from fedlib.field import decode_power_sums, random_field_elements, splitting_seconds
from fedlib.utils import SeedLike, check_random_state


def speed_ratios(candidates: dict[str, Callable[[], object]], *, reference: str, repeat: int = 5) -> dict[str, float]:
    """``median_time(reference) / median_time(candidate)`` for each candidate (> 1: faster than the reference).

    Calls are interleaved round by round so that a machine-wide slowdown hits
    every candidate alike; absolute times are not returned on purpose.

    Parameters
    ----------
    candidates : dict of str to callable
        Functions of no argument to time, by name; each is called once to warm up.
    reference : str
        The name of the candidate the others are compared with.
    repeat : int, default=5
        Timed rounds; the median of each candidate's times is used.

    Returns
    -------
    dict of str to float
        Speed-up of each candidate over the reference (the reference's own is 1.0).

    Raises
    ------
    KeyError
        If ``reference`` is not a candidate.
    """
    if reference not in candidates:
        raise KeyError(f"reference {reference!r} is not among the candidates {sorted(candidates)}.")
    medians = interleaved_medians(candidates, repeat)
    return {name: medians[reference] / medians[name] for name in candidates}


def interleaved_medians(candidates: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Median seconds of each function, called in turn ``repeat`` times after one warm-up call each.

    The calls are interleaved (a, b, a, b, ...), so a machine-wide slowdown hits every candidate alike.

    Parameters
    ----------
    candidates : dict of str to callable
        Functions without arguments.
    repeat : int
        Timed calls of each.

    Returns
    -------
    dict of str to float
        The median seconds of each.
    """
    for func in candidates.values():
        func()  # warm-up
    samples: dict[str, list[float]] = {name: [] for name in candidates}
    for _ in range(repeat):
        for name, func in candidates.items():
            start = time.perf_counter()
            func()
            samples[name].append(time.perf_counter() - start)
    return {name: float(np.median(ts)) for name, ts in samples.items()}


@dataclass(frozen=True)
class SCMATimings:
    """Seconds of one SCMA round (MUFC Alg. 2), stage by stage: :func:`scma_round_timings`.

    Parameters
    ----------
    n_clients : int
        ``L``.
    n_clusters : int
        ``K``, the most non-zeros per client.
    support : int
        ``m``, the non-zeros of the sum (at most ``KL``).
    prime_bits : int
        ``ceil(log2 p)``.
    params : float
        :func:`fedlib.secagg.scma_params`, that is the search for the prime.
    masks : float
        :func:`fedlib.secagg.zero_sum_masks` for every client.
    encode : float
        :func:`fedlib.secagg.scma_encode`, all clients one after another.
    encode_slowest : float
        The slowest client's encoding (clients encode in parallel).
    aggregate : float
        :func:`fedlib.secagg.scma_aggregate`.
    locator : float
        Berlekamp-Massey: the polynomial ``prod (x - j)`` of the support.
    roots : float
        Its roots: measured when ``roots_measured``, else a lower bound.
    roots_measured : bool
        ``False`` when ``roots`` is a lower bound: the first exponentiation of
        :func:`fedlib.field.poly_roots`, ``(x + a)^((p-1)/D)`` modulo the locator
        (about ``log2 p`` squarings of its degree), timed on a few squarings.
    magnitudes : float
        The counts ``q_j`` at the roots (multipoint evaluation).
    check : float
        Recomputing all ``2T`` syndromes of the result.
    """

    n_clients: int
    n_clusters: int
    support: int
    prime_bits: int
    params: float
    masks: float
    encode: float
    encode_slowest: float
    aggregate: float
    locator: float
    roots: float
    roots_measured: bool
    magnitudes: float
    check: float

    @property
    def decode(self) -> float:
        """The server's decoding: locator, roots, magnitudes and check."""
        return self.locator + self.roots + self.magnitudes + self.check

    @property
    def total(self) -> float:
        """The round end to end: parameters, masks, every client's encoding, aggregation and decoding."""
        return self.params + self.masks + self.encode + self.aggregate + self.decode


def random_sparse_clients(
    n_clients: int, n_clusters: int, *, n_bins: int, n_samples: int, random_state: SeedLike = 0
) -> list[dict[int, int]]:
    """Client count vectors as MUFC makes them: ``n_clusters`` distinct bins each, uniform over ``1..n_bins``.

    Each client spreads ``max(K, n_samples // n_clients)`` points over its bins
    (multinomial, at least one per bin), as :func:`fedbook.mufc.scma_round_cost`
    does, but with bins drawn over the whole grid, however large.

    Parameters
    ----------
    n_clients : int
        ``L``.
    n_clusters : int
        ``K``, non-zeros per client; at most ``n_bins``.
    n_bins : int
        ``B^d``.
    n_samples : int
        ``n``, the points of all clients together.
    random_state : int, numpy.random.Generator or None, default=0
        Draws the bins and the counts.

    Returns
    -------
    list of dict of int to int
        One ``{bin: count}`` per client.

    Raises
    ------
    ValueError
        If ``n_clusters`` is not between 1 and ``n_bins``.
    """
    if not 1 <= n_clusters <= n_bins:
        raise ValueError(f"n_clusters={n_clusters} distinct bins cannot be drawn from n_bins={n_bins}.")
    rng = check_random_state(random_state)
    per_client = max(n_clusters, n_samples // n_clients)
    clients = []
    for _ in range(n_clients):
        bins: set[int] = set()
        while len(bins) < n_clusters:
            bins.update(1 + v for v in random_field_elements(n_bins, n_clusters - len(bins), random_state=rng))
        split = rng.multinomial(per_client - n_clusters, np.ones(n_clusters) / n_clusters) + 1
        clients.append(dict(zip(sorted(bins), split.tolist(), strict=True)))
    return clients


def _timed_power_sum_decoding(
    syndromes: list[int], p: int, *, known_support: list[int] | None = None, random_state: SeedLike = 0
) -> tuple[dict[int, int], tuple[float, float, float, float]]:
    """Decode power sums on FLINT stage by stage: ``({j: q_j}, (locator, roots, magnitudes, check seconds))``.

    With ``known_support`` the roots are not searched: the locator must vanish
    on it (:func:`fedlib.field.decode_power_sums` checks a claimed support), and the
    root finding is replaced by its lower bound (:func:`fedlib.field.splitting_seconds`).
    """
    seconds: dict[str, float] = {}
    try:
        total = decode_power_sums(
            syndromes, p, backend="flint", support=known_support, stage_seconds=seconds, random_state=0
        )
    except ValueError as error:
        raise RuntimeError(f"the locator's roots are not the bins of the plain sum: {error}") from error
    t_roots = seconds["roots"]
    if known_support is not None:
        t_roots = splitting_seconds(len(known_support), p, random_state=random_state)
    return total, (seconds["locator"], t_roots, seconds["magnitudes"], seconds["check"])


def scma_round_timings(
    client_counts: Sequence[Mapping[int, int]],
    *,
    n_samples: int,
    n_bins: int,
    n_clusters: int,
    time_roots: bool = True,
    random_state: SeedLike = 0,
) -> SCMATimings:
    """Time one SCMA round (MUFC Alg. 2) stage by stage, on FLINT, and check it returns the plain sum.

    Parameters
    ----------
    client_counts : sequence of mapping of int to int
        ``q^(l)`` of every client.
    n_samples : int
        ``n`` for :func:`fedlib.secagg.scma_params`; at least the points held.
    n_bins : int
        ``B^d``.
    n_clusters : int
        ``K``.
    time_roots : bool, default=True
        Find the roots of the locator. ``False`` replaces that step by its
        lower bound (see :class:`SCMATimings`) and goes on from the true
        support, which the benchmark knows: for FEMNIST's full support the
        root finding alone runs for hours.
    random_state : int, numpy.random.Generator or None, default=0
        Draws the masks.

    Returns
    -------
    SCMATimings
        The seconds of every stage.

    Raises
    ------
    RuntimeError
        If the decoded sum differs from the plain sum (a bug), or (without
        ``time_roots``) the locator's roots are not the bins of the plain sum.
    ImportError
        When python-flint is not installed.

    References
    ----------
    C. Pan, J. Sima, S. Prakash, V. Rana, O. Milenkovic. "Machine Unlearning of
    Federated Clusters", ICLR 2023, Alg. 2 and App. C.
    """
    from fedlib.secagg import plain_sparse_sum, scma_aggregate, scma_encode, scma_params, zero_sum_masks

    start = time.perf_counter()
    params = scma_params(n_samples=n_samples, n_bins=n_bins, n_clusters=n_clusters, n_clients=len(client_counts))
    t_params = time.perf_counter() - start
    p = params.prime
    start = time.perf_counter()
    masks = zero_sum_masks(len(client_counts), params.n_syndromes, p, random_state=random_state)
    t_masks = time.perf_counter() - start
    messages, t_clients = [], []
    for counts, mask in zip(client_counts, masks, strict=True):
        start = time.perf_counter()
        messages.append(scma_encode(counts, params, mask, backend="flint"))
        t_clients.append(time.perf_counter() - start)
    start = time.perf_counter()
    syndromes = scma_aggregate(messages, params)
    t_aggregate = time.perf_counter() - start
    plain = plain_sparse_sum(client_counts)
    total, (t_locator, t_roots, t_magnitudes, t_check) = _timed_power_sum_decoding(
        syndromes, p, known_support=None if time_roots else sorted(plain), random_state=random_state
    )
    if total != plain:
        raise RuntimeError("SCMA decoded a different sum than the plain sum")  # a bug if it ever fires
    return SCMATimings(
        n_clients=len(client_counts),
        n_clusters=n_clusters,
        support=len(total),
        prime_bits=params.element_bits,
        params=t_params,
        masks=t_masks,
        encode=float(sum(t_clients)),
        encode_slowest=max(t_clients),
        aggregate=t_aggregate,
        locator=t_locator,
        roots=t_roots,
        roots_measured=time_roots,
        magnitudes=t_magnitudes,
        check=t_check,
    )


@dataclass(frozen=True)
class HashedSCMATimings:
    """Seconds of one hashed SCMA round (:func:`fedlib.secagg.secure_hashed_sparse_sum`), stage by stage.

    Parameters
    ----------
    n_clients : int
        ``L``.
    n_clusters : int
        ``K``.
    support : int
        ``m``, the non-zeros of the sum.
    prime_bits : int
        ``ceil(log2 q)``, 62 by default.
    message_bits : int
        Bits one client sends (power sums and index table).
    params : float
        :func:`fedlib.secagg.hashed_scma_params`.
    masks : float
        :func:`fedlib.secagg.zero_sum_mask_arrays`, every client.
    encode : float
        :func:`fedlib.secagg.hashed_scma_encode`, all clients one after another.
    encode_slowest : float
        The slowest client's encoding.
    aggregate : float
        Adding the messages mod q.
    locator : float
        Berlekamp-Massey on the ``2T`` power sums.
    roots : float
        The locator's roots: the hashed support.
    counts : float
        The counts at the roots (Vandermonde by multipoint evaluation).
    check : float
        Recomputing the ``2T`` power sums of the result.
    table : float
        Peeling the index table and checking every index against its hash.
    """

    n_clients: int
    n_clusters: int
    support: int
    prime_bits: int
    message_bits: int
    params: float
    masks: float
    encode: float
    encode_slowest: float
    aggregate: float
    locator: float
    roots: float
    counts: float
    check: float
    table: float

    @property
    def decode(self) -> float:
        """The server's decoding: power sums (locator, roots, counts, check), then the table."""
        return self.locator + self.roots + self.counts + self.check + self.table

    @property
    def total(self) -> float:
        """The round end to end: parameters, masks, every client's encoding, aggregation and decoding."""
        return self.params + self.masks + self.encode + self.aggregate + self.decode


def hashed_scma_round_timings(
    client_counts: Sequence[Mapping[int, int]],
    *,
    n_samples: int,
    n_bins: int,
    n_clusters: int,
    random_state: SeedLike = 0,
) -> HashedSCMATimings:
    """Time one hashed SCMA round stage by stage, on FLINT, and check it returns the plain sum.

    Parameters
    ----------
    client_counts : sequence of mapping of int to int
        ``q^(l)`` of every client.
    n_samples : int
        ``n``; at least the points held.
    n_bins : int
        ``B^d``.
    n_clusters : int
        ``K``.
    random_state : int, numpy.random.Generator or None, default=0
        Draws the key and the masks.

    Returns
    -------
    HashedSCMATimings
        The seconds of every stage.

    Raises
    ------
    RuntimeError
        If the decoded sum differs from the plain sum (a bug).
    fedlib.exceptions.IndexCollisionError
        If the key made two occupied bins collide (probability below ``m^2/2q``).
    ImportError
        When python-flint is not installed.
    """
    from fedlib.secagg import (
        hashed_scma_decode,
        hashed_scma_encode,
        hashed_scma_key,
        hashed_scma_params,
        plain_sparse_sum,
        zero_sum_mask_arrays,
    )

    start = time.perf_counter()
    params = hashed_scma_params(
        n_samples=n_samples, n_bins=n_bins, n_clusters=n_clusters, n_clients=len(client_counts)
    )
    t_params = time.perf_counter() - start
    rng = check_random_state(random_state)
    key = hashed_scma_key(rng)
    q = np.uint64(params.prime)
    masks = zero_sum_mask_arrays(len(client_counts), params.message_length, params.prime, random_state=rng)
    aggregate = np.zeros(params.message_length, dtype=np.uint64)
    t_masks = t_aggregate = 0.0
    t_clients = []
    for counts in client_counts:
        start = time.perf_counter()
        mask = next(masks)
        t_masks += time.perf_counter() - start
        start = time.perf_counter()
        message = hashed_scma_encode(counts, params, key, mask, backend="flint")
        t_clients.append(time.perf_counter() - start)
        start = time.perf_counter()
        aggregate = (aggregate + message) % q
        t_aggregate += time.perf_counter() - start
    seconds: dict[str, float] = {}
    total = hashed_scma_decode(aggregate, params, key, backend="flint", stage_seconds=seconds)
    plain = plain_sparse_sum(client_counts)
    if total != plain:
        raise RuntimeError("hashed SCMA decoded a different sum than the plain sum")  # a bug if it ever fires
    return HashedSCMATimings(
        n_clients=len(client_counts),
        n_clusters=n_clusters,
        support=len(total),
        prime_bits=params.element_bits,
        message_bits=params.message_bits,
        params=t_params,
        masks=t_masks,
        encode=float(sum(t_clients)),
        encode_slowest=max(t_clients),
        aggregate=t_aggregate,
        locator=seconds["locator"],
        roots=seconds["roots"],
        counts=seconds["magnitudes"],
        check=seconds["check"],
        table=seconds["table"],
    )


def femnist_grid() -> tuple[int, int]:
    """``(n, B^d)`` of the FEMNIST sample as MUFC runs on it (100 largest writers, ``gamma = 1/sqrt(n)``).

    The grid is :class:`fedlib.cluster.UniformGrid` over the scaled sample, as in
    :meth:`fedlib.unlearn.MUFC.fit`; a stand-in of the same shape (with a
    warning) when the data cannot be had.

    Returns
    -------
    tuple of int
        The number of images and the number of bins.
    """
    from fedbook.mufc import FEMNIST_WRITERS, largest_groups
    from fedlib.cluster import UniformGrid
    from fedlib.data import load_or_standin, scale_max_abs

    ds = load_or_standin("femnist_sample", random_state=0)
    rows = largest_groups(ds.extras["user_index"], FEMNIST_WRITERS) if "user_index" in ds.extras else None
    X = scale_max_abs(ds.X if rows is None else ds.X[rows])
    return X.shape[0], UniformGrid.from_data(X, 1.0 / np.sqrt(X.shape[0])).n_bins


def _print_scma_row(title: str, t: SCMATimings) -> None:
    roots = f"{t.roots:.2f} s" if t.roots_measured else f">= {t.roots:.1f} s (lower bound, not run)"
    print(
        f"{title}: L={t.n_clients}, K={t.n_clusters}, support m={t.support}, p of {t.prime_bits} bits\n"
        f"  params {t.params:.2f} s | masks {t.masks:.2f} s | encode {t.encode:.2f} s "
        f"(slowest client {t.encode_slowest:.3f} s) | aggregate {t.aggregate:.2f} s\n"
        f"  decode: locator {t.locator:.2f} s | roots {roots} | magnitudes {t.magnitudes:.2f} s "
        f"| check {t.check:.2f} s\n"
        f"  end to end {t.total:.1f} s" + ("" if t.roots_measured else " (with the roots' lower bound)")
    )


def _print_hashed_row(title: str, t: HashedSCMATimings) -> None:
    print(
        f"{title}: L={t.n_clients}, K={t.n_clusters}, support m={t.support}, q of {t.prime_bits} bits, "
        f"{t.message_bits:,} bits per client\n"
        f"  params {t.params:.2f} s | masks {t.masks:.2f} s | encode {t.encode:.2f} s "
        f"(slowest client {t.encode_slowest:.3f} s) | aggregate {t.aggregate:.2f} s\n"
        f"  decode: locator {t.locator:.2f} s | roots {t.roots:.2f} s | counts {t.counts:.2f} s "
        f"| check {t.check:.2f} s | index table {t.table:.2f} s\n"
        f"  end to end {t.total:.1f} s"
    )


def main(argv: Sequence[str] | None = None) -> None:
    """SCMA benchmark rows: ``python -m fedbook.bench [--clients 100] [--clusters 62] [--time-roots]``.

    1. One SCMA round at the FEMNIST sample's shape (``L = 100`` writers,
       ``K = 62``, MUFC's grid of the sample's ``d = 784`` dimensions), every
       stage timed; root finding only with ``--time-roots`` (hours), else its
       lower bound. 1b. The same clients' round over hashed bins
       (:func:`fedlib.secagg.secure_hashed_sparse_sum`), every stage run.
    2. The same grid with the 27 non-zeros of ``L = 3``, ``K = 9`` (the issue's
       example): every stage run.
    3. FLINT against the pure-Python reference, as speed ratios measured in this
       run (:func:`speed_ratios`): one client's encoding and the locator
       (Berlekamp-Massey) at ``L = 10``, ``K = 62`` on the same grid.

    Parameters
    ----------
    argv : sequence of str or None, default=None
        Command-line arguments; ``None`` reads ``sys.argv``.
    """
    import argparse

    from fedlib.field import berlekamp_massey, power_sums
    from fedlib.secagg import plain_sparse_sum, scma_params

    parser = argparse.ArgumentParser(description=main.__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--clusters", type=int, default=62)
    parser.add_argument("--time-roots", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    n_samples, n_bins = femnist_grid()
    shape = dict(n_bins=n_bins, n_samples=n_samples)
    clients = random_sparse_clients(args.clients, args.clusters, **shape, random_state=args.seed)
    row = scma_round_timings(clients, **shape, n_clusters=args.clusters, time_roots=args.time_roots)
    _print_scma_row("1. SCMA round, FEMNIST sample shape", row)
    hashed = hashed_scma_round_timings(clients, **shape, n_clusters=args.clusters, random_state=args.seed)
    _print_hashed_row("1b. SCMA over hashed bins, same clients", hashed)
    small = random_sparse_clients(3, 9, **shape, random_state=args.seed)
    _print_scma_row("2. SCMA round, 27 non-zeros", scma_round_timings(small, **shape, n_clusters=9))
    params = scma_params(n_samples=n_samples, n_bins=n_bins, n_clusters=args.clusters, n_clients=10)
    p, two_t = params.prime, params.n_syndromes
    client = random_sparse_clients(1, args.clusters, **shape, random_state=args.seed)[0]
    bins, counts = list(client), list(client.values())
    encode = speed_ratios(
        {b: (lambda b=b: power_sums(bins, counts, two_t, p, backend=b)) for b in ("python", "flint")},
        reference="python",
        repeat=1,
    )
    ten = random_sparse_clients(10, args.clusters, **shape, random_state=args.seed)
    total = plain_sparse_sum(ten)
    syndromes = power_sums(list(total), list(total.values()), two_t, p)
    locator = speed_ratios(
        {b: (lambda b=b: berlekamp_massey(syndromes, p, backend=b)) for b in ("python", "flint")},
        reference="python",
        repeat=1,
    )
    print(
        f"3. FLINT vs pure Python (L=10, K={args.clusters}, 2T={two_t}, p of {params.element_bits} bits): "
        f"encoding one client {encode['flint']:.0f}x faster, Berlekamp-Massey {locator['flint']:.0f}x faster"
    )


if __name__ == "__main__":
    main()
