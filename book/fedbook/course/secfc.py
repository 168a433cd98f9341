"""Checks for the coding exercises of the SecFC chapter (Lagrange shares, the server's decoding, its exact argmin)."""

from __future__ import annotations

import numpy as np

from fedbook.course._feedback import Wrong, call, exercise, expect, expect_array, expect_raises

#: SecFC's default field, 2**50 - 27 (``fedlib.secagg.SECFC_PRIME``): products of two residues pass 2**63.
_BIG = 2**50 - 27
#: A field small enough to read, as in the chapter's round by hand.
_SMALL = 8191


def _integers(got: object, shape: tuple[int, ...], what: str) -> np.ndarray:
    """The answer as an int64 array of ``shape``; Python ints in object arrays are accepted, floats are not."""
    try:
        arr = np.asarray(got)
    except Exception as exc:
        raise Wrong(f"{what} cannot be read as an array: {exc}") from None
    expect(arr.shape == shape, f"{what} has shape {arr.shape}; expected {shape}")
    if arr.dtype == object:
        try:
            arr = np.array([int(v) for v in arr.ravel()], dtype=np.int64).reshape(shape)
        except (TypeError, ValueError, OverflowError) as exc:
            raise Wrong(f"{what} holds entries that are not integers below 2**63: {exc}") from None
    expect(
        np.issubdtype(arr.dtype, np.integer),
        f"{what} has dtype {arr.dtype}; field elements are integers, computed exactly (no floats)",
    )
    return arr.astype(np.int64)


# --- Lagrange shares of one point (SecFC Phase 1, Eq. (2)) -------------------------------------------------------


def _share_cases():
    """(name, segments, masks, n_clients, q): the chapter's small field, ℓ > 1, no mask, SecFC's prime."""
    rng = np.random.default_rng(20260515)
    yield (
        "the round by hand (q = 8191, ℓ = 1, t = 2, n = 5)",
        np.array([[1, 2]]), np.array([[17, 4000], [8190, 3]]), 5, _SMALL,
    )  # fmt: skip
    yield (
        "ℓ = 2 segments, t = 1 mask, n = 7 clients, q = 8191",
        np.array([[5, 8185, 0], [12, 7, 8000]]), np.array([[99, 1, 4321]]), 7, _SMALL,
    )  # fmt: skip
    yield (
        "t = 0 masks (no privacy), ℓ = 2, n = 4, q = 8191",
        np.array([[3, 10], [8, 8190]]), np.zeros((0, 2), dtype=np.int64), 4, _SMALL,
    )  # fmt: skip
    yield (
        "SecFC's prime q = 2**50 - 27, ℓ = 2, t = 2, n = 9",
        rng.integers(0, _BIG, (2, 3)), rng.integers(0, _BIG, (2, 3)), 9, _BIG,
    )  # fmt: skip


@exercise("ex-secfc-shares")
def _lcc_shares(answer) -> str:
    from fedlib.field import LagrangeCode

    for name, segments, masks, n, q in _share_cases():
        ell, t = len(segments), len(masks)
        code = LagrangeCode(n_clients=n, n_segments=ell, n_masks=t, prime=q)
        values = np.concatenate([segments, masks], axis=0).astype(np.int64)  # f(β_1..β_{ℓ+t})
        want = code.field.matmul(code.encoding_matrix(), values)
        got = call(answer, segments.copy(), masks.copy(), n, q, what=f"lcc_shares on {name}")
        got = _integers(got, want.shape, f"lcc_shares on {name}")
        if not np.array_equal(got, want):
            if t and any(np.array_equal(row, segments[0]) for row in got):
                raise Wrong(
                    f"on {name} some client's share equals the point's first segment: that client's α is a β "
                    "(α_j = ℓ+t+j, disjoint from β_u = u), so the share reveals the point"
                )
            expect(bool(np.all((got >= 0) & (got < q))), f"on {name} some shares are not residues in [0, q)")
            if q == _BIG:
                raise Wrong(
                    f"your shares are right in GF(8191) but not in GF(2**50 - 27) ({name}): there a product of "
                    "two residues reaches 2**100; int64 wraps around and floats round. Reduce Python integers mod q"
                )
            expect_array(got, want, f"the shares on {name}", exact=True)
    return "shares equal f(α_j) mod q on 4 cases (ℓ = 1 and 2, t = 0 to 2, q = 8191 and 2**50 - 27)"


# --- The server's decoding (SecFC Alg. 1, lines 14-15) -----------------------------------------------------------


def _decode_case(seed, n_points, n_features, n_clusters, ell, t, n, q, responders, labels=None, span=20):
    """Coded distances computed by fedlib's clients on shares of quantized points in [-span, span], and the true d'."""
    from fedlib.cluster import PlainIntegerDistances
    from fedlib.field import LagrangeCode, to_field
    from fedlib.secagg import CodedDistances, share_points

    rng = np.random.default_rng(seed)
    X_int = rng.integers(-span, span + 1, (n_points, n_features))
    if labels is None:
        labels = rng.integers(0, n_clusters, n_points)
    code = LagrangeCode(n_clients=n, n_segments=ell, n_masks=t, prime=q)
    shares = share_points(code, to_field(X_int, q), random_state=seed)
    clients = CodedDistances(code, shares, n_responders=n, random_state=seed)
    responses = np.stack([clients.client_response(j, labels, n_clusters) for j in responders])
    plain = PlainIntegerDistances(X_int)(labels, n_clusters)
    assert np.array_equal(code.decode(responses, responders, 2, targets="sum"), plain)  # Theorem 1
    return responses, plain


@exercise("ex-secfc-decode")
def _decode_distances(answer) -> str:
    cases = [
        ("4 points, 2 clusters, q = 8191, ℓ = 1, t = 2, n = 5, clients 5, 1, 3, 4, 2 answering",
         dict(seed=1, n_points=4, n_features=2, n_clusters=2, ell=1, t=2, n=5, q=_SMALL, responders=[4, 0, 2, 3, 1],
              span=10)),
        ("12 points in 5-D, 3 clusters, q = 2**50 - 27, ℓ = 2 (zero-padded), t = 1, n = 7, 5 clients answering",
         dict(seed=2, n_points=12, n_features=5, n_clusters=3, ell=2, t=1, n=7, q=_BIG, responders=[6, 2, 5, 0, 3])),
        ("10 points, an empty cluster, q = 2**50 - 27, ℓ = 1, t = 3, n = 9, all 9 clients answering (2 extra)",
         dict(seed=3, n_points=10, n_features=3, n_clusters=3, ell=1, t=3, n=9, q=_BIG,
              responders=[8, 1, 4, 0, 7, 2, 6, 3, 5], labels=np.array([0, 1, 0, 1, 1, 0, 0, 1, 0, 1]))),
    ]  # fmt: skip
    for name, case in cases:
        responses, want = _decode_case(**case)
        ell, t, q = case["ell"], case["t"], case["q"]
        got = call(answer, responses.copy(), list(case["responders"]), ell, t, q, what=f"decode_distances on {name}")
        got = _integers(got, want.shape, f"decode_distances on {name}")
        if not np.array_equal(got, want) and ell > 1:  # a typical mistake: only the first segment decoded
            expect(
                not np.array_equal(got % q, _first_segment(responses, case)),
                f"on {name} you return φ(β_1), the first segment's partial distance; d' sums φ(β_u) over all "
                f"ℓ = {ell} segments (e.g. entry (0, 0): expected {want[0, 0]})",
            )
        expect_array(got, want, f"d' decoded on {name}", exact=True)

    # Below the recovery threshold the server cannot decode: it must refuse, not return a plausible matrix.
    case = cases[1][1]
    responses, _ = _decode_case(**case)
    short = case["responders"][:-1]
    threshold = 2 * case["ell"] + 2 * case["t"] - 1
    expect_raises(
        answer, responses[:-1].copy(), list(short), case["ell"], case["t"], case["q"],
        what=f"decode_distances with {len(short)} responses",
        why=f"one below the threshold 2ℓ+2t−1 = {threshold} (ℓ = {case['ell']}, t = {case['t']}), {len(short)} values "
        f"do not determine a polynomial of degree 2(ℓ+t−1) = {threshold - 1}",
    )  # fmt: skip
    return (
        "d' decoded exactly on 3 cases (q = 8191 and 2**50 - 27, ℓ = 1 and 2, shuffled and extra responders, an "
        "empty cluster); ValueError one response below the threshold"
    )


def _first_segment(responses, case) -> np.ndarray:
    """What decoding only φ(β_1) would give (a typical mistake for ℓ > 1)."""
    from fedlib.field import LagrangeCode

    code = LagrangeCode(n_clients=case["n"], n_segments=case["ell"], n_masks=case["t"], prime=case["q"])
    return code.decode(responses, case["responders"], 2, targets=[1])[0]


# --- The server's exact argmin (SecFC Alg. 1, lines 16-18) -------------------------------------------------------

#: Two clusters of 1000 and 999 points whose ratios d'/|S|² differ by 1/(1000² · 999²) near 10**8: float64
#: rounds both to the same number, the exact comparison finds cluster 1 closer.
_NEAR_TIE = (100_000_000_002_001, 99_800_100_001_997)


def _assign_cases():
    rng = np.random.default_rng(11)
    yield (
        "30 points, 4 clusters of sizes 7, 12, 5, 6",
        rng.integers(0, 10**6, (30, 4)), np.array([7, 12, 5, 6]),
        "",
    )  # fmt: skip
    v = 1000
    yield (
        "exact ties (sizes 2, 3, 6: d' = 4v, 9v, 36v are equally near)",
        np.array([[4 * v, 9 * v, 36 * v + 1], [4 * v + 1, 9 * v, 36 * v], [4 * v + 5, 9 * v + 9, 36 * v],
                  [4 * v, 9 * v, 36 * v]]),
        np.array([2, 3, 6]),
        " (on a tie the lowest cluster index wins)",
    )  # fmt: skip
    yield (
        "an empty cluster 0 (size 0, decoded d' = 0)",
        np.column_stack([np.zeros(6, dtype=np.int64), rng.integers(0, 500, (6, 2))]), np.array([0, 4, 3]),
        " (an empty cluster has no centre and is never chosen)",
    )  # fmt: skip
    d0, d1 = _NEAR_TIE
    yield (
        "a near tie (sizes 1000 and 999, d' near 10**14)",
        np.array([[d0, d1], [d0, d1 + 2], [d0 + 1, d1]]), np.array([1000, 999]),
        " (float64 rounds both ratios d'/|S|² of row 0 to the same number; compare in integers)",
    )  # fmt: skip
    yield (
        "decoded values up to 2**48 and clusters of about 4000 points",
        rng.integers(2**46, 2**48, (40, 3)), np.array([3001, 4093, 3906]),
        " (the products d'·|S|² reach 2**72 here: int64 arithmetic wraps around silently)",
    )  # fmt: skip


@exercise("ex-secfc-assign")
def _assign_exact(answer) -> str:
    from fedlib.cluster import assign_from_distances

    for name, d_prime, sizes, hint in _assign_cases():
        d_prime = d_prime.astype(np.int64)
        want = assign_from_distances(d_prime, sizes)
        got = call(answer, d_prime.copy(), sizes.copy(), what=f"assign_exact on {name}")
        got = _integers(got, want.shape, f"the labels on {name}")
        if not np.array_equal(got, want):
            i = int(np.flatnonzero(got != want)[0])
            raise Wrong(
                f"on {name}, point {i} (d' = {d_prime[i].tolist()}, sizes {sizes.tolist()}) went to cluster "
                f"{int(got[i])}; expected {int(want[i])}{hint}"
            )
    return "exact assignments on 5 cases (ties, an empty cluster, a near tie float64 misses, products past 2**63)"
