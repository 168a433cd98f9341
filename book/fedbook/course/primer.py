"""Checks for the coding exercises of the primer part (FedAvg, FedBuff's staleness, Shamir, pairwise masks)."""

from __future__ import annotations

import numpy as np

from fedbook.course._feedback import Wrong, call, exercise, expect, expect_array

# -- FedAvg's weighted average ------------------------------------------------------------------------------------


def _fedavg_cases():
    """Client models, sizes and the rows that reached the server; one case with dropped clients."""
    rng = np.random.default_rng(20170420)
    cases = [
        ("3 clients of 20 examples each, all summed", (3, 4), [20, 20, 20], [0, 1, 2]),
        ("4 clients of 10, 20, 30 and 40 examples, all summed", (4, 5), [10, 20, 30, 40], [0, 1, 2, 3]),
        ("5 clients of 50, 10, 25, 5 and 10 examples, clients 1 and 3 dropped (summed = [4, 0, 2])", (5, 3),
         [50, 10, 25, 5, 10], [4, 0, 2]),
        ("float32 models of 3 clients of 7, 3 and 90 examples, client 2 dropped", (3, 6), [7, 3, 90], [0, 1]),
        ("one client summed out of 3", (3, 2), [5, 15, 30], [1]),
    ]  # fmt: skip
    for name, shape, sizes, summed in cases:
        params = rng.normal(size=shape)
        if name.startswith("float32"):
            params = params.astype(np.float32)
        yield name, params, np.array(sizes), summed


@exercise("ex-primer-fedavg-average")
def fedavg_average(answer) -> str:
    from fedlib.learn import fedavg_mean

    for name, params, sizes, summed in _fedavg_cases():
        got = call(answer, params.copy(), sizes.copy(), list(summed), what=f"fedavg_average on {name}")
        rows = np.asarray(summed)
        want = fedavg_mean(params[rows].astype(np.float64), sizes[rows])
        try:
            arr = np.asarray(got, dtype=np.float64)
        except (TypeError, ValueError):
            arr = None  # expect_array says what is wrong with it
        if arr is not None and arr.shape == want.shape:
            plain = params[rows].mean(axis=0)
            if np.allclose(arr, plain) and not np.allclose(want, plain):
                raise Wrong(
                    f"on {name} you return the plain mean of the summed models: FedAvg weights client i by its "
                    "number of examples n_i"
                )
            dropped = rows.size < len(sizes)
            if dropped and np.allclose(arr, (sizes[rows, None] * params[rows]).sum(axis=0) / sizes.sum()):
                raise Wrong(
                    f"on {name} you divide by the examples of every participant, dropped ones included: the "
                    "server can only average over the clients whose models it received"
                )
            if dropped and np.allclose(arr, fedavg_mean(params.astype(np.float64), sizes)):
                raise Wrong(f"on {name} your average includes the dropped clients' models; use only the rows in summed")
        expect_array(got, want, f"the average on {name}", rtol=1e-6, atol=1e-7)
    return (
        "the sample-weighted mean over the summed clients agrees with fedlib.learn.fedavg_mean on 5 cases "
        "(equal and unequal sizes, dropped clients, float32 models, a single client)"
    )


# -- Dealing Shamir shares ---------------------------------------------------------------------------------------


def _share_cases():
    """(name, secret, t, points, prime) of the sharings the check deals."""
    return [
        ("secret 42, t = 3, five holders at x = 1..5, p = 101", 42, 3, [1, 2, 3, 4, 5], 101),
        (
            "t = 4, six holders at x = 5, 2, 9, 7, 3, 11, p = 2**61 - 1",
            2**60 + 12345,
            4,
            [5, 2, 9, 7, 3, 11],
            2**61 - 1,
        ),
        ("t = 1 (every share is the secret), three holders, p = 7919", 7918, 1, [1, 2, 3], 7919),
        ("t = 5 = the number of holders, p = 13", 0, 5, [1, 2, 3, 4, 5], 13),
    ]


def _shares_of(answer, name, secret, t, xs, p, seed):
    got = call(answer, secret, t, list(xs), p, np.random.default_rng(seed), what=f"shamir_share on {name}")
    try:
        shares = [int(v) for v in got]
    except (TypeError, ValueError):
        raise Wrong(f"on {name} shamir_share should return a list of ints, one per holder; got {got!r}") from None
    expect(len(shares) == len(xs), f"on {name} you return {len(shares)} shares for {len(xs)} holders")
    expect(all(0 <= v < p for v in shares), f"on {name} some shares lie outside [0, p): reduce them modulo p")
    return shares


@exercise("ex-primer-shamir-share")
def shamir_share(answer) -> str:
    from fedlib.field import lagrange_basis

    for name, secret, t, xs, p in _share_cases():
        shares = _shares_of(answer, name, secret, t, xs, p, seed=0)
        rows = lagrange_basis(xs[:t], [0, *xs[t:]], p)  # the polynomial through the first t shares
        at = [sum(r * v for r, v in zip(row, shares[:t], strict=True)) % p for row in rows]
        off = [j for j, (a, b) in enumerate(zip(at[1:], shares[t:], strict=True), start=t) if a != b]
        expect(
            not off,
            f"on {name} the shares do not lie on one polynomial of degree below t = {t}: the shares of holders "
            f"0..{t - 1} determine it, and holder {off[0] if off else 0} is off it (f must have exactly t - 1 random "
            "coefficients besides the secret, and no product may overflow: compute with Python ints modulo p)",
        )
        expect(
            at[0] == secret,
            f"on {name} the polynomial through your shares has f(0) = {at[0]}, not the secret {secret}: the secret "
            "is f's constant term",
        )
        again = _shares_of(answer, name, secret, t, xs, p, seed=0)
        expect(
            again == shares,
            f"on {name} two calls with generators seeded alike gave different shares: draw every coefficient "
            "from the rng argument",
        )
        if t > 1:
            other = _shares_of(answer, name, secret, t, xs, p, seed=1)
            expect(
                other != shares,
                f"on {name} the shares do not change with the random draws: f needs random coefficients",
            )
    # t - 1 = 1 share must be uniform whatever the secret (the second claim of the threshold lemma).
    name = "secret 3, t = 2, holders at x = 1, 2, 3, p = 7, 700 draws of holder 0's share"
    counts = np.bincount([_shares_of(answer, name, 3, 2, [1, 2, 3], 7, seed)[0] for seed in range(700)], minlength=7)
    expect(
        bool(np.all((counts >= 50) & (counts <= 150))),
        f"on {name} the share took the values 0..6 with counts {counts.tolist()}; one share of a t = 2 sharing "
        "must be uniform on GF(7), about 100 each: draw the coefficients uniformly from [0, p)",
    )
    name = "t = 2, holder at x = 1, p = 2**61 - 1, 200 draws"
    p = 2**61 - 1
    spread = max((_shares_of(answer, name, 5, 2, [1], p, seed)[0] - 5) % p for seed in range(200))
    expect(
        spread > p // 2,
        f"on {name} the coefficient f(1) - f(0) never exceeded {spread} < p / 2 in 200 draws: draw it from all of "
        "[0, p)",
    )
    return (
        "shares on one polynomial of degree below t with f(0) = secret on 4 sharings (p up to 2**61 - 1, t = 1 and "
        "t = number of holders), reproducible from the rng, and uniform as the threshold lemma requires"
    )


# -- Pairwise masks -----------------------------------------------------------------------------------------------


def _mask_cases():
    rng = np.random.default_rng(2017)
    complete = [(i, j) for i in range(4) for j in range(i + 1, 4)]
    ring = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (0, 5)]  # a Harary graph H(6, 2)
    isolated = [(0, 1), (0, 2), (1, 2)]  # client 3 masks with nobody
    specs = [
        ("4 clients, complete graph (SecAgg), modulus 2**32", 4, complete, 2**32),
        ("6 clients on a ring (SecAgg+ with m = 2), modulus 2**31 - 1", 6, ring, 2**31 - 1),
        ("4 clients, client 3 without neighbours, modulus 2**32", 4, isolated, 2**32),
    ]
    for name, n, edges, modulus in specs:
        d = 5
        x = rng.integers(0, modulus, size=(n, d), dtype=np.int64)
        masks = {e: rng.integers(0, modulus, size=d, dtype=np.int64) for e in edges}
        yield name, x, masks, modulus
    x = np.full((3, 2), 2**32 - 1, dtype=np.int64)
    masks = {(0, 1): np.array([2**32 - 1, 1]), (0, 2): np.array([2**32 - 2, 2**31]), (1, 2): np.array([5, 2**32 - 1])}
    yield "3 clients with inputs and masks near the modulus 2**32 (wrap-around)", x, masks, 2**32


def _signed_sum(x, masks, modulus, sign_low, sign_high):
    y = x.astype(object).copy()
    for (i, j), m in masks.items():
        y[i] = y[i] + sign_low * m.astype(object)
        y[j] = y[j] + sign_high * m.astype(object)
    return np.array([[int(v) % modulus for v in row] for row in y], dtype=np.int64)


@exercise("ex-primer-pairwise-masks")
def pairwise_masks(answer) -> str:
    for name, x, masks, modulus in _mask_cases():
        given = {e: m.copy() for e, m in masks.items()}
        got = call(answer, x.copy(), given, modulus, what=f"mask_inputs on {name}")
        want = _signed_sum(x, masks, modulus, +1, -1)
        try:
            arr = np.asarray(got)
            ints = arr.astype(object) if arr.dtype.kind in "iuO" else None
        except Exception as exc:
            raise Wrong(f"on {name} mask_inputs returned something that is not an array: {exc}") from None
        expect(
            arr.shape == want.shape,
            f"on {name} mask_inputs returned shape {arr.shape}; expected {want.shape} (one masked vector per client)",
        )
        expect(ints is not None, f"on {name} the masked inputs have dtype {arr.dtype}; expected integers")
        expect(
            all(0 <= int(v) < modulus for v in ints.ravel()),
            f"on {name} some masked entries lie outside [0, modulus): reduce every entry modulo {modulus}",
        )
        total = [int(v) % modulus for v in ints.sum(axis=0)]
        plain = [int(v) % modulus for v in x.astype(object).sum(axis=0)]
        if total != plain:
            if np.array_equal(arr.astype(np.int64), _signed_sum(x, masks, modulus, +1, +1)):
                raise Wrong(f"on {name} both ends of every edge add its mask, so the masks do not cancel in the sum")
            raise Wrong(
                f"on {name} the masked inputs do not sum to the inputs' sum modulo {modulus}: the masks must cancel"
            )
        if np.array_equal(arr.astype(np.int64), _signed_sum(x, masks, modulus, -1, +1)):
            raise Wrong(
                f"on {name} your masks cancel, but with the opposite signs: for the edge (i, j) with i < j, "
                "client i adds m_ij and client j subtracts it"
            )
        expect_array(arr.astype(np.int64), want, f"the masked inputs on {name}", exact=True)
    return (
        "masked inputs right, and cancelling in the sum, on 4 graphs (complete, ring, a client without "
        "neighbours, wrap-around modulo 2**32)"
    )
