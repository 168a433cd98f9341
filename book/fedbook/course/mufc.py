"""Checks for the coding exercises of the mufc part (MUFC training with SCMA, and its unlearning)."""

from __future__ import annotations

import random
from collections.abc import Mapping

import numpy as np

from fedbook.course._feedback import Wrong, call, exercise, expect, expect_array, expect_raises

# --------------------------------------------------------------------------- helpers


def _as_counts(got: object, what: str) -> dict[int, int]:
    """A student's sparse vector ``{bin: count}`` as Python ints, or feedback saying why it is not one."""
    if not isinstance(got, Mapping):
        raise Wrong(f"{what} should be a dict {{bin index: count}}; got {type(got).__name__}")
    out: dict[int, int] = {}
    for j, c in got.items():
        if not isinstance(j, (int, np.integer)) or isinstance(j, bool):
            raise Wrong(f"{what} has the key {j!r} of type {type(j).__name__}; bin indices are integers")
        if not isinstance(c, (int, np.integer)) or isinstance(c, bool):
            raise Wrong(f"{what} has the count {c!r} of type {type(c).__name__} at bin {j}; counts are integers")
        out[int(j)] = int(c)
    return out


def _as_residues(got: object, length: int, p: int, what: str) -> list[int]:
    """A student's list of residues modulo ``p`` as Python ints, or feedback saying why it is not one."""
    try:
        values = list(got)
    except TypeError:
        raise Wrong(f"{what} should be a list of {length} integers; got {type(got).__name__}") from None
    expect(len(values) == length, f"{what} has {len(values)} entries; expected {length} (one per syndrome)")
    for i, v in enumerate(values):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool):
            raise Wrong(f"{what}[{i}] is {v!r} of type {type(v).__name__}; the message holds integers modulo p")
    values = [int(v) for v in values]
    bad = next((i for i, v in enumerate(values) if not 0 <= v < p), None)
    expect(bad is None, f"{what}[{bad}] = {values[bad] if bad is not None else 0} lies outside [0, p) with p = {p}: "
           "reduce every entry modulo p")
    return values


def _flat_index(cells: np.ndarray, shape, *, first_fastest: bool = True, base: int = 1) -> list[int]:
    """Bin numbers of integer cells, in Python ints (the grid can have more bins than int64 holds)."""
    order = list(range(len(shape))) if first_fastest else list(reversed(range(len(shape))))
    out = []
    for row in np.asarray(cells).tolist():
        j, radix = base, 1
        for t in order:
            j += int(row[t]) * radix
            radix *= int(shape[t])
        out.append(j)
    return out


def _counts_by_bin(bins: list[int], sizes) -> dict[int, int]:
    q: dict[int, int] = {}
    for j, c in zip(bins, np.asarray(sizes).tolist(), strict=True):
        if c:
            q[j] = q.get(j, 0) + int(c)
    return q


def _first_difference(got: dict[int, int], want: dict[int, int]) -> str:
    missing = sorted(set(want) - set(got))
    extra = sorted(set(got) - set(want))
    if missing:
        return f"bin {missing[0]} (count {want[missing[0]]}) is missing"
    if extra:
        return f"bin {extra[0]} (count {got[extra[0]]}) should not be there"
    j = next(j for j in sorted(want) if got[j] != want[j])
    return f"bin {j} holds {got[j]} points; expected {want[j]}"


# ------------------------------------------------------------------ training: Alg. 1 and Alg. 2


def _client_cases():
    """(name, X, seeds, gamma, offset, shape): grids from all clients' data, one client's points and seeds."""
    from fedlib.cluster import UniformGrid, kmeans_plusplus

    rng = np.random.default_rng(20230501)
    everyone = rng.uniform(-1.0, 1.0, size=(200, 2))
    client = 0.35 * rng.normal(size=(60, 2)).clip(-2.5, 2.5)
    grid = UniformGrid.from_data(np.vstack([everyone, client]), 0.2)
    seeds = kmeans_plusplus(client, 4, random_state=1)[1]
    yield "a client of 60 points in 2-D, K=4, gamma=0.2", client, seeds, grid.gamma, grid.offset, grid.shape

    near = np.array([[0.1, 0.1], [0.2, 0.15], [0.12, 0.3], [2.6, -1.1], [2.4, -0.9], [-1.7, 1.8], [-1.8, 2.1]])
    grid = UniformGrid.from_data(near, 1.0)
    seeds = np.array([0, 3, 1, 5])  # the first and the third seed (rows 0 and 1) share the bin of (0, 0)
    yield "two seeds in one bin (gamma=1, 7 points)", near, seeds, grid.gamma, grid.offset, grid.shape

    box = rng.uniform([-0.9, -0.4, -0.7], [0.5, 0.9, 0.2], size=(45, 3))
    grid = UniformGrid.from_data(box, 0.3)  # shape (6, 5, 4): negative offsets, unequal sides
    seeds = kmeans_plusplus(box, 5, random_state=2)[1]
    yield f"a 3-D grid of shape {grid.shape} with negative coordinates", box, seeds, grid.gamma, grid.offset, grid.shape

    line = np.array([[0.0], [1.0], [2.0], [3.0], [4.0]])
    yield "a point half-way between two seeds (1-D, a tie)", line, np.array([2, 0]), 1.0, np.array([0]), (5,)

    wide = rng.uniform(-1.0, 1.0, size=(30, 12))
    grid = UniformGrid.from_data(wide, 0.02)
    seeds = kmeans_plusplus(wide, 3, random_state=3)[1]
    yield (f"a 12-D grid of B^d ~ 2^{grid.n_bins.bit_length()} bins (beyond int64)", wide, seeds, grid.gamma,
           grid.offset, grid.shape)


@exercise("ex-mufc-client-vector")
def _client_vector(answer) -> str:
    from fedlib.cluster import UniformGrid, local_clusters

    for name, X, seeds, gamma, offset, shape in _client_cases():
        got = call(answer, X.copy(), seeds.copy(), gamma, offset.copy(), tuple(shape), what=f"client_vector on {name}")
        got = _as_counts(got, f"client_vector on {name}")
        grid = UniformGrid(gamma, np.asarray(offset, dtype=np.int64), tuple(shape))
        centers, labels = local_clusters(X, seeds, lloyd=False)
        cells = grid.cells(centers)
        sizes = np.bincount(labels, minlength=len(seeds))
        want = _counts_by_bin(grid.flat_index(cells), sizes)
        if got == want:
            continue
        total = sum(got.values())
        expect(total == len(X), f"on {name} the counts add up to {total}, not to the client's {len(X)} points: every "
               "point counts once, in the bin of its nearest seed, and two seeds in one bin add their counts")
        expect(got != _counts_by_bin(_flat_index(cells, shape, base=0), sizes),
               f"on {name} every bin index is one less than expected: bins are numbered from 1 to B^d")
        expect(got != _counts_by_bin(_flat_index(cells, shape, first_fastest=False), sizes),
               f"on {name} the bin numbers run the last dimension fastest; number them with the first "
               "dimension fastest, j = 1 + a_1 + a_2 B_1 + a_3 B_1 B_2 + ...")
        floor_cells = np.floor(centers / gamma).astype(np.int64) - np.asarray(offset)
        expect(got != _counts_by_bin(_flat_index(floor_cells, shape), sizes),
               f"on {name} the seeds were rounded down: a seed lies in the bin of the NEAREST multiple of gamma")
        trunc_cells = np.trunc(centers / gamma + 0.5).astype(np.int64) - np.asarray(offset)
        expect(got != _counts_by_bin(_flat_index(trunc_cells, shape), sizes),
               f"on {name} negative coordinates are rounded towards zero: round x/gamma to the nearest integer")
        raise Wrong(f"client_vector on {name}: {_first_difference(got, want)}")
    return ("q^(l) agrees with fedlib's grid and local clusters on 5 clients (a shared bin, negative coordinates, "
            "a tie, a grid of more bins than int64 counts)")


def _scma_cases():
    """(name, params, client vectors, masks) for the message and decoding exercises."""
    from fedlib.secagg import scma_params, zero_sum_masks

    toy = scma_params(n_samples=12, n_bins=4, n_clusters=2, n_clients=2, prime=13)
    yield "MUFC's Fig. 2 setting (p=13)", toy, [{1: 4, 3: 2}, {3: 5, 4: 1}], zero_sum_masks(2, 8, 13, random_state=0)

    draw = random.Random(68)
    n_bins = 110**10  # about Celltype's grid with gamma = 1/sqrt(n): a 68-bit prime
    big = scma_params(n_samples=12009, n_bins=n_bins, n_clusters=4, n_clients=3)
    vectors = [{draw.randrange(1, n_bins + 1): draw.randrange(1, 900) for _ in range(size)} for size in (4, 3, 3)]
    vectors[2][n_bins] = 17  # the largest bin index, B^d itself
    masks = zero_sum_masks(3, big.n_syndromes, big.prime, random_state=1)
    yield f"3 clients, K=4, a {big.prime.bit_length()}-bit prime (Celltype's grid)", big, vectors, masks

    masks = zero_sum_masks(2, toy.n_syndromes, toy.prime, random_state=2)
    yield "a client with an empty vector (p=13)", toy, [{}, {2: 7, 4: 5}], masks


@exercise("ex-mufc-scma-message")
def _scma_message(answer) -> str:
    from fedlib.secagg import plain_sparse_sum, scma_aggregate, scma_decode, scma_encode

    for name, params, vectors, masks in _scma_cases():
        p = params.prime
        messages = []
        for client, (q, z) in enumerate(zip(vectors, masks, strict=True)):
            what = f"scma_message on {name}, client {client + 1}"
            got = call(answer, dict(q), list(z), p, what=what)
            got = _as_residues(got, params.n_syndromes, p, what)
            want = scma_encode(q, params, z, backend="python")
            if got != want:
                plain = [(w - int(m)) % p for w, m in zip(want, z, strict=True)]
                expect(got != plain, f"{what}: the mask is missing; add z_i to every power sum")
                shifted = [(sum(c * pow(j, i + 1, p) for j, c in q.items()) + int(m)) % p for i, m in enumerate(z)]
                expect(got != shifted, f"{what}: S_1 should be the sum of the counts plus z_1: the exponent of j in "
                       "S_i is i - 1, starting at 0")
                i = next(i for i in range(len(want)) if got[i] != want[i])
                hint = (" (right on the Fig. 2 setting: products of residues this large overflow int64, use Python "
                        "integers)" if p.bit_length() > 31 else "")
                raise Wrong(f"{what}: S_{i + 1} is {got[i]}, expected {want[i]}{hint}")
            messages.append(got)
        total = scma_decode(scma_aggregate(messages, params), params, backend="python")
        expect(total == plain_sparse_sum(vectors), f"on {name} the sum of your messages does not decode to the sum")
    return ("messages equal fedlib.secagg.scma_encode and their sum decodes to q (Fig. 2, a 68-bit prime, "
            "an empty vector)")


@exercise("ex-mufc-scma-counts")
def _scma_counts(answer) -> str:
    from fedlib.secagg import plain_sparse_sum, scma_aggregate, scma_decode, scma_encode

    cases = []
    for name, params, vectors, masks in _scma_cases():
        messages = [scma_encode(q, params, z, backend="python") for q, z in zip(vectors, masks, strict=True)]
        cases.append((name, params, scma_aggregate(messages, params), plain_sparse_sum(vectors)))
    from fedlib.secagg import scma_params

    one = scma_params(n_samples=50, n_bins=1000, n_clusters=1, n_clients=1, prime=1009)
    cases.append(("one occupied bin (p=1009)", one, [(37 * pow(998, i, 1009)) % 1009 for i in range(2)], {998: 37}))
    for k, (name, params, S, _) in enumerate(cases):
        p = params.prime
        decoded = scma_decode(S, params, backend="python")
        bins = sorted(decoded)
        if k == 1:
            bins = bins[::-1]  # roots come in no particular order
        what = f"bin_counts on {name}"
        got = _as_counts(call(answer, list(S), list(bins), p, what=what), what)
        if got == decoded:
            continue
        expect(set(got) == set(bins), f"{what}: the keys should be exactly the {len(bins)} given bins")
        expect(any(got[j] != (decoded[j] * pow(j, -1, p)) % p for j in bins),
               f"{what}: each count came out divided by its bin index: the equations are "
               "S_i = sum_j q_j j^(i-1), so S_1 is the sum of the counts (exponent 0)")
        bad = [j for j in bins if not 0 < got[j] < p]
        expect(not bad, f"{what}: the count at bin {bad[0] if bad else 0} is {got[bad[0]] if bad else 0}, outside "
               "[1, p): solve modulo p, dividing by multiplying with inverses mod p")
        j = next(j for j in bins if got[j] != decoded[j])
        raise Wrong(f"{what}: bin {j} holds {got[j]}, expected {decoded[j]} (the syndromes are residues: the "
                    "system holds modulo p, not over the reals)")
    return "counts agree with fedlib.secagg.scma_decode on 4 sums (Fig. 2, a 68-bit prime, an empty client, one bin)"


# ---------------------------------------------------------------- unlearning: races and Alg. 3, 4


def _race(X, weights, keys, *, power: float = 2.0, last_only: bool = False) -> np.ndarray:
    """The race seeding with a mistake switched on (distance, not squared; distance to the last seed only)."""
    n, k = keys.shape
    seeds = np.empty(k, dtype=np.int64)
    closest = np.full(n, np.inf)
    rate = weights
    for t in range(k):
        with np.errstate(divide="ignore"):
            seeds[t] = int(np.argmin(keys[:, t] / rate))
        d = np.sqrt(((X - X[seeds[t]]) ** 2).sum(axis=1)) ** power
        closest = d if last_only else np.minimum(closest, d)
        rate = weights * closest
    return seeds


def _race_cases():
    from fedlib.cluster import draw_race_keys

    rng = np.random.default_rng(2023)
    X = rng.normal(size=(50, 2))
    yield "50 points in 2-D, unit weights, K=5", X, np.ones(50), draw_race_keys(50, 5, random_state=1)
    X = rng.normal(size=(40, 3))
    w = np.where(rng.random(40) < 0.25, 30.0, 1.0)
    yield "40 points in 3-D, weights 1 and 30, K=4", X, w, draw_race_keys(40, 4, random_state=2)
    base = rng.normal(size=(12, 2))
    twins = np.vstack([base, base])  # each point twice: a seed's twin has D^2 = 0 and may never win
    yield "12 points each given twice (duplicates), K=6", twins, np.ones(24), draw_race_keys(24, 6, random_state=3)
    X = np.array([[0.0], [0.05], [1.65], [2.05], [3.05], [4.9]])
    yield "the chapter's six points in 1-D, weights 1..6, K=3", X, np.arange(1.0, 7.0), draw_race_keys(6, 3,
                                                                                                     random_state=4)


@exercise("ex-mufc-race-seeding")
def _race_seeding(answer) -> str:
    from fedlib.cluster import kmeans_plusplus

    for name, X, w, keys in _race_cases():
        k = keys.shape[1]
        what = f"race_seeding on {name}"
        got = call(answer, X.copy(), w.copy(), keys.copy(), what=what)
        try:
            got = np.asarray(got)
        except Exception as exc:
            raise Wrong(f"{what} returned something that is not an array of indices: {exc}") from None
        expect(got.shape == (k,), f"{what} returned shape {got.shape}; expected ({k},), one row index per step")
        expect(np.issubdtype(got.dtype, np.integer), f"{what} returned dtype {got.dtype}; expected integer indices")
        want = kmeans_plusplus(X, k, sample_weight=w, race_keys=keys)[1]
        if np.array_equal(got, want):
            continue
        expect(not np.array_equal(got, _race(X, w, keys, power=1.0)),
               f"{what}: the rates follow the distance D, not the squared distance D^2")
        expect(not np.array_equal(got, _race(X, w, keys, last_only=True)),
               f"{what}: D^2 is the distance to the NEAREST seed chosen so far, not to the last one")
        if not np.allclose(w, 1.0):
            expect(not np.array_equal(got, _race(X, np.ones(len(X)), keys)),
                   f"{what}: the weights are ignored: the rate of point i is w_i D^2(x_i), and w_i at the first step")
        expect(len(set(got.tolist())) == k, f"{what} chose a row twice: a point at distance 0 from a seed never wins")
        t = int(np.flatnonzero(got != want)[0])
        raise Wrong(f"{what}: step {t} chose row {int(got[t])}, expected row {int(want[t])}"
                    + (" (the first step: smallest key / weight)" if t == 0 else ""))
    return ("seeds equal fedlib.cluster.kmeans_plusplus with race keys, bit for bit, on 4 data sets (weights, "
            "duplicates)")


def _unlearn_cases():
    """(name, X, K, seed of the keys, which rows to remove given the seeds)."""
    rng = np.random.default_rng(51)
    X = rng.normal(size=(40, 2))
    yield "two points that are not seeds", X, 5, 0, lambda s: [i for i in range(40) if i not in s][1:4:2]
    yield ("the second seed and one other point", X, 5, 0,
           lambda s: [int(s[1]), next(i for i in range(40) if i not in s)])
    yield "the first seed", X, 5, 1, lambda s: [int(s[0])]
    yield "the last seed", X, 5, 2, lambda s: [int(s[-1])]
    Y = rng.normal(size=(30, 3))
    yield "the fourth and the second seed at once (30 points in 3-D)", Y, 4, 3, lambda s: [int(s[3]), int(s[1])]


@exercise("ex-mufc-unlearn-seeding")
def _unlearn_seeding(answer) -> str:
    from fedlib.cluster import draw_race_keys
    from fedlib.unlearn import KMeansPlusPlus

    for name, X, k, key_seed, pick in _unlearn_cases():
        model = KMeansPlusPlus(k, random_state=key_seed).fit(X)
        keys = draw_race_keys(len(X), k, random_state=key_seed)  # the keys fit drew
        seeds = model.seed_indices_.copy()
        removed = np.array(pick(seeds.tolist()), dtype=np.int64)
        report = model.unlearn(removed)
        keep = np.ones(len(X), dtype=bool)
        keep[removed] = False
        want_kept = int(report.details["n_kept_prefix"])
        want = np.searchsorted(np.flatnonzero(keep), model.seed_indices_)  # as rows of the remaining data
        what = f"unlearn_seeding removing {name}"
        got = call(answer, X.copy(), keys.copy(), seeds.copy(), removed.copy(), what=what)
        expect(isinstance(got, tuple) and len(got) == 2,
               f"{what} should return a pair (n_kept, new_seeds); it returned {type(got).__name__}")
        n_kept, new = got
        expect(isinstance(n_kept, (int, np.integer)) and not isinstance(n_kept, bool),
               f"{what}: n_kept should be an int, got {type(n_kept).__name__}")
        if int(n_kept) != want_kept:
            raise Wrong(f"{what}: n_kept is {int(n_kept)}, expected {want_kept}: the seeds kept are those drawn "
                        "BEFORE the first removed seed, in draw order" + (" (none was removed: keep all K)"
                                                                          if want_kept == k else ""))
        new = np.asarray(new)
        expect(new.shape == (k,), f"{what}: new_seeds has shape {new.shape}; expected ({k},)")
        if not np.array_equal(new, want):
            expect(not np.array_equal(new, np.flatnonzero(keep)[want]),
                   f"{what}: give the seeds as rows of the remaining data np.delete(X, removed, axis=0): removing "
                   "rows before a seed shifts it down")
            t = int(np.flatnonzero(new != want)[0])
            later = " (a seed after the first removed one was kept? it was drawn given the removed one)"
            raise Wrong(f"{what}: seed {t} is row {int(new[t])} of the remaining data, expected {int(want[t])}"
                        + (later if t > want_kept else ""))
    return ("n_kept and the new seeds equal fedlib.unlearn.KMeansPlusPlus.unlearn on 5 requests (no seed, the first, "
            "a middle, the last, two seeds)")


def _leaving_cases():
    """(name, X, parts, K, gamma, the client that leaves) for a MUFC model with weighted bin centres."""
    rng = np.random.default_rng(3)
    centres = np.array([[-0.5, -0.5], [0.5, 0.4], [0.0, 0.6]])
    X = np.vstack([c + 0.08 * rng.normal(size=(30, 2)) for c in centres])
    parts = [np.arange(c, 90, 4) for c in range(4)]
    yield "4 clients in 2-D (gamma=0.25), client 2 leaves", X, parts, 3, 0.25, 2
    X = np.vstack([c + 0.2 * rng.normal(size=(25, 3)) for c in rng.uniform(-1, 1, size=(4, 3))])
    parts = [np.arange(c, 100, 5) for c in range(5)]
    yield "5 clients in 3-D (gamma=0.3), client 0 leaves", X, parts, 4, 0.3, 0


@exercise("ex-mufc-server-update")
def _server_update(answer) -> str:
    from fedlib.unlearn import MUFC

    for name, X, parts, k, gamma, leaving in _leaving_cases():
        model = MUFC(k, gamma=gamma, aggregation="plaintext", server_data="weighted_centers", server_n_init=1,
                     random_state=0).fit(X, parts=parts)
        total, mine = dict(model.counts_), dict(model.client_counts_[leaving])
        model.unlearn(clients=[leaving])
        grid = model.grid_
        bins = list(model.counts_)
        want_centers = grid.centers(grid.cells_of(bins))
        want_weights = np.array([model.counts_[j] for j in bins], dtype=float)
        what = f"server_after_leaving on {name}"
        got = call(answer, dict(total), dict(mine), grid.gamma, grid.offset.copy(), tuple(grid.shape), what=what)
        expect(isinstance(got, tuple) and len(got) == 2,
               f"{what} should return a pair (centers, weights); it returned {type(got).__name__}")
        centers, weights = np.asarray(got[0]), np.asarray(got[1])
        gone = sorted(set(total) - set(model.counts_))
        if weights.shape != want_weights.shape and weights.ndim == 1 and len(weights) == len(want_weights) + len(gone):
            raise Wrong(f"{what}: {len(gone)} bin(s) whose count drops to 0 (e.g. bin {gone[0]}) are still in the "
                        "server's data; only bins with q'_j > 0 remain")
        expect_array(weights, want_weights, f"the weights on {name} (in increasing bin index)", exact=True)
        expect_array(centers, want_centers, f"the centres on {name} (in increasing bin index)")
    # inconsistent messages: the leaving client claims what the sum does not hold
    j = next(iter(total))
    for label, claim in [("more points in a bin than the sum", {j: total[j] + 1}),
                         ("a bin the sum lacks", {max(total) + 1: 1})]:
        expect_raises(
            answer, dict(total), claim, grid.gamma, grid.offset.copy(), tuple(grid.shape),
            what=f"server_after_leaving with a leaving client holding {label}",
            why="the messages are inconsistent",
        )
    return ("weighted server data equal fedlib.unlearn.MUFC after a client leaves, on 2 models; inconsistent "
            "requests raise ValueError")
