"""Checks for the coding exercises of the Liu et al. part (SecAgg+ inside a cluster, ParGen).

Secure aggregation: Shamir reconstruction at 0 over GF(p), and the server's unmasking of a round with dropped
clients. ParGen: the corrected cluster size of Lemmas 1 and 2 (Eq. (3) and Eq. (4')), and the union bound on the
probability that Requirement 4 fails, vectorised over the number of requests.
"""

from __future__ import annotations

import math
import random

import numpy as np
from scipy.stats import binom, hypergeom

from fedbook.course._feedback import Wrong, call, exercise, expect, expect_array
from fedlib.exceptions import InfeasibleParameters
from fedlib.secagg import harary_graph, prg_words
from fedlib.unlearn import pargen, r4_failure_probability

_WORD = 2**32


def _uses(answer, names: tuple[str, ...]) -> str | None:
    """The first of ``names`` the answer's code refers to (a library call that does the whole exercise), if any."""
    code = getattr(answer, "__code__", None)
    used = set(code.co_names) if code is not None else set()
    return next((name for name in names if name in used), None)


# --- ex-secagg-shamir ------------------------------------------------------------------------------------------


def _shamir_cases():
    """Shares f(x_j) of a random polynomial with f(0) = secret, over several primes; (name, xs, ys, prime, secret)."""
    rng = random.Random(20260311)
    specs = [
        ("p = 97, t = 3 of 5 holders, holders 5, 2, 4", 97, 3, [5, 2, 4], None),
        ("p = 97, t = 4, holders 1, 2, 3, 4 (an even t)", 97, 4, [1, 2, 3, 4], None),
        ("p = 2^61 - 1, t = 4, holders 7, 3, 9, 1", 2**61 - 1, 4, [7, 3, 9, 1], None),
        ("p = 2^127 - 1, t = 5, secret 0", 2**127 - 1, 5, [2, 11, 5, 8, 3], 0),
        ("p = 2^521 - 1, t = 2, secret p - 1", 2**521 - 1, 2, [9, 4], 2**521 - 2),
        ("p = 2^127 - 1, t = 3, six consistent shares (more than t)", 2**127 - 1, 3, [1, 2, 3, 4, 5, 6], None),
    ]
    for name, prime, t, xs, secret in specs:
        coefficients = [rng.randrange(prime) if secret is None else secret] + [
            rng.randrange(prime) for _ in range(t - 1)
        ]
        ys = [sum(c * pow(x, e, prime) for e, c in enumerate(coefficients)) % prime for x in xs]
        yield name, xs, ys, prime, coefficients[0]


@exercise("ex-secagg-shamir")
def _shamir_reconstruct(answer) -> str:
    used = _uses(answer, ("Shamir", "LagrangeCode", "lagrange_basis", "barycentric_weights"))
    expect(used is None, f"shamir_reconstruct calls fedlib's {used}: write the Lagrange interpolation at 0 yourself")
    for name, xs, ys, prime, secret in _shamir_cases():
        got = call(answer, list(xs), list(ys), prime, what=f"shamir_reconstruct on {name}")
        try:
            value = int(got)
        except Exception:
            raise Wrong(f"on {name} shamir_reconstruct returned {type(got).__name__}, not an integer") from None
        expect(value == got, f"on {name} shamir_reconstruct returned {got!r}, not an integer")
        if value != secret and value % prime == secret:
            raise Wrong(f"on {name} the result {value} is the secret plus a multiple of p: reduce it to [0, p)")
        if value % prime == (-secret) % prime and secret != 0:
            raise Wrong(
                f"on {name} the result is minus the secret: the Lagrange basis at 0 is the product of "
                "x_m / (x_m - x_j), mind the sign of each factor"
            )
        expect(
            value == secret,
            f"on {name} (shares at x = {xs}) shamir_reconstruct returned {value}; the secret f(0) is {secret}"
            + (" (check for int64 overflow and float division: p exceeds 2^53)" if prime > 2**53 else ""),
        )
    return (
        "the secret recovered on 6 sharings: p = 97 (wrap-around), 2^61 - 1, 2^127 - 1 and 2^521 - 1, "
        "even and odd t, secret 0 and p - 1, holders in any order and more shares than t"
    )


# --- ex-secagg-unmask ------------------------------------------------------------------------------------------


def _sign(i: int, j: int) -> int:
    return 1 if i < j else -1


def _unmask_cases():
    """Masked inputs of a round (fedlib's PRG, random seeds), with the dropped clients' pairwise seeds.

    Yields (name, masked, self_seeds, dropped_seeds, want, variants): the sum of the survivors' inputs, and what
    three typical slips would return, to name them.
    """
    rng = np.random.default_rng(20260312)
    specs = [
        # (name, graph, dropped after sharing keys (U2 minus U3), dropped before (U1 minus U2), d)
        ("5 clients on a ring, nobody dropped", harary_graph(5, 2, shuffle=False), [], [], 6),
        ("6 clients, H(6, 4), client 2 dropped", harary_graph(6, 4, random_state=3), [2], [], 5),
        ("8 clients on a ring, neighbours 3 and 4 both dropped", harary_graph(8, 2, shuffle=False), [3, 4], [], 4),
        (
            "8 clients on a ring, client 3 dropped, its neighbour 4 dropped before sharing its keys",
            harary_graph(8, 2, shuffle=False),
            [3],
            [4],
            4,
        ),
        ("4 clients, complete graph, client 1 dropped", harary_graph(4, 3), [1], [], 7),
    ]
    for name, graph, dropped, early, d in specs:
        n = graph.n_clients
        x = rng.integers(0, _WORD, size=(n, d), dtype=np.uint64).astype(np.uint32)
        seeds = {}
        for i in range(n):
            for j in graph.neighbors[i]:
                j = int(j)
                if i < j:
                    seeds[i, j] = seeds[j, i] = rng.bytes(32)
        shared = [i for i in range(n) if i not in early]  # U2: clients whose keys were shared
        survivors = [i for i in shared if i not in dropped]  # U3
        self_seeds = {i: rng.bytes(32) for i in survivors}
        masked = {}
        for i in survivors:  # y_i carries a mask for every neighbour in U2
            y = x[i] + prg_words(self_seeds[i], d)
            for j in graph.neighbors[i]:
                j = int(j)
                if j in shared:
                    pad = prg_words(seeds[i, j], d)
                    y = y + pad if _sign(i, j) > 0 else y - pad
            masked[i] = y.astype(np.uint32)
        # The server rebuilt each dropped client's key, so it has the seed with every neighbour that advertised keys.
        dropped_seeds = {j: {int(i): seeds[int(i), j] for i in graph.neighbors[j]} for j in dropped}
        want = np.sum(x[survivors].astype(np.uint64), axis=0) % _WORD
        # Three slips: the pairwise corrections with the wrong sign; the self masks left on; corrections for
        # neighbours that did not send a masked input (their masks were never added).
        total = np.sum(np.stack([masked[i] for i in survivors]).astype(np.int64), axis=0)
        self_part = sum((prg_words(self_seeds[i], d).astype(np.int64) for i in survivors), np.zeros(d, np.int64))
        pair_live = np.zeros(d, dtype=np.int64)
        pair_dead = np.zeros(d, dtype=np.int64)
        for j, by_neighbour in dropped_seeds.items():
            for i, s in by_neighbour.items():
                term = _sign(i, j) * prg_words(s, d).astype(np.int64)
                if i in masked:
                    pair_live += term
                else:
                    pair_dead += term
        variants = {
            "flipped": (total - self_part + pair_live) % _WORD,
            "self masks on": (total - pair_live) % _WORD,
            "dead neighbours": (total - self_part - pair_live - pair_dead) % _WORD,
        }
        yield name, masked, self_seeds, dropped_seeds, want.astype(np.int64), variants


@exercise("ex-secagg-unmask")
def _unmask_sum(answer) -> str:
    for name, masked, self_seeds, dropped_seeds, want, variants in _unmask_cases():
        got = call(
            answer,
            {i: y.copy() for i, y in masked.items()},
            dict(self_seeds),
            {j: dict(s) for j, s in dropped_seeds.items()},
            what=f"unmask_sum on {name}",
        )
        try:
            arr = np.asarray(got)
            arr = arr.astype(np.int64) if np.issubdtype(arr.dtype, np.integer) else arr
        except Exception:
            raise Wrong(f"on {name} unmask_sum returned {type(got).__name__}, not an array of words") from None
        expect(arr.shape == want.shape, f"on {name} unmask_sum returned shape {arr.shape}; expected {want.shape}")
        expect(
            np.issubdtype(arr.dtype, np.integer),
            f"on {name} unmask_sum returned dtype {arr.dtype}; the sum is a vector of words in Z_(2^32), integers",
        )
        if np.array_equal(arr, want):
            continue
        if np.array_equal(arr % _WORD, want):
            raise Wrong(
                f"on {name} the sum is right modulo 2^32 but not reduced: words live in Z_(2^32) "
                "(numpy sums uint32 arrays in uint64)"
            )
        if dropped_seeds and np.array_equal(arr % _WORD, variants["flipped"]):
            raise Wrong(
                f"on {name} the corrections for the dropped clients have the wrong sign: a survivor i added "
                "+PRG(s_ij) for a dropped neighbour j > i and -PRG(s_ij) for j < i"
            )
        if np.array_equal(arr % _WORD, variants["self masks on"]):
            raise Wrong(f"on {name} the survivors' self masks PRG(b_i) are still in the sum")
        if np.array_equal(arr % _WORD, variants["dead neighbours"]):
            raise Wrong(
                f"on {name} you removed a pairwise mask of a dropped client with a neighbour that sent no masked "
                "input: only the survivors' masks with a dropped neighbour are in the sum"
            )
        expect_array(arr, want, f"the sum on {name}", exact=True)
    return (
        "exact sums on 5 rounds: no dropout, one dropped client on H(6, 4) and on the complete graph "
        "(both signs), two adjacent dropped clients, a neighbour that dropped before sharing its keys, "
        "with wrap-around modulo 2^32"
    )


# --- ex-sfu-corrected-k ----------------------------------------------------------------------------------------

_CORRECTED_K_CASES = [
    # (name, n_clients, gamma, delta, zeta, xi, sigma, eta)
    ("N = 1000, γ = δ = ζ = 0.1, ξ = ξ* = 0.45, σ = η = 40 (the lemmas tie)", 1000, 0.1, 0.1, 0.1, 0.45, 40, 40),
    ("N = 1000, γ = δ = ζ = 0.1, ξ = 0.6, σ = η = 40 (Lemma 2 binds)", 1000, 0.1, 0.1, 0.1, 0.6, 40, 40),
    ("N = 5000, γ = 0.2, δ = 0.1, ζ = 0.05, ξ = 0.5, σ = 30, η = 20", 5000, 0.2, 0.1, 0.05, 0.5, 30, 20),
    ("N = 3000, γ = 0.1, δ = ζ = 0.05, ξ = 0.3, σ = 20, η = 60", 3000, 0.1, 0.05, 0.05, 0.3, 20, 60),
    ("N = 100, γ = δ = ζ = 0.05, ξ = 0.45, σ = η = 8", 100, 0.05, 0.05, 0.05, 0.45, 8, 8),
    ("the worked example, N = 200, ξ = 0.7 (k > N)", 200, 0.1, 0.1, 0.1, 0.7, 40, 40),
    ("N = 1000, δ = 0.25, ζ = 0.1, ξ = 0.7 (ξ + ζ + δ > 1)", 1000, 0.1, 0.25, 0.1, 0.7, 40, 40),
    ("N = 1000, γ = 0.3, ξ = 0.25 (ξ < γ)", 1000, 0.3, 0.1, 0.1, 0.25, 40, 40),
]


def _corrected_k(n, gamma, delta, zeta, xi, sigma, eta) -> int | None:
    try:
        return pargen(
            n, gamma=gamma, delta=delta, zeta=zeta, xi=xi, sigma=sigma, eta=eta, variant="corrected",
            exact_capacity=False,
        ).k  # fmt: skip
    except InfeasibleParameters:
        return None


def _printed_k(n, gamma, delta, zeta, xi, sigma, eta) -> int | None:
    """Lemmas 1 and 2 as printed (Eq. (4), the sign error), no Lemma 3: the k the misprint gives."""
    ks = np.arange(1, n + 1, dtype=float)
    tail = np.log(ks) - math.log(n)
    f1 = 2 * (xi - gamma) ** 2 * ks + tail - sigma * math.log(2)
    slope = 2 * ((1 - delta) ** 2 + xi**2 - 2 * (xi + zeta) * delta + 2 * xi + 2 * zeta)
    f2 = slope * ks + tail - eta * math.log(2)
    hits = np.flatnonzero((f1 >= 0) & (f2 >= 0))
    return int(ks[hits[0]]) if hits.size and xi > gamma else None


@exercise("ex-sfu-corrected-k")
def _check_corrected_k(answer) -> str:
    used = _uses(answer, ("pargen", "f1_shamir_security", "f2_shamir_correctness"))
    expect(used is None, f"corrected_k calls fedlib's {used}: write Eq. (3) and Eq. (4') and the search yourself")
    for name, n, gamma, delta, zeta, xi, sigma, eta in _CORRECTED_K_CASES:
        got = call(answer, n, gamma, delta, zeta, xi, sigma, eta, what=f"corrected_k on {name}")
        want = _corrected_k(n, gamma, delta, zeta, xi, sigma, eta)
        if want is None:
            expect(
                got is None, f"on {name} no cluster size works, so corrected_k should return None; it returned {got!r}"
            )
            continue
        expect(
            got is not None and not isinstance(got, bool) and isinstance(got, int | np.integer),
            f"on {name} corrected_k returned {got!r}; expected an int",
        )
        got = int(got)
        printed = _printed_k(n, gamma, delta, zeta, xi, sigma, eta)
        if got != want and got == printed:
            raise Wrong(
                f"on {name} your k = {got} is what Lemma 2 as printed (Eq. (4), with its sign error) gives; "
                f"the corrected Eq. (4') gives k = {want}"
            )
        if got == want - 1 or got == want + 1:
            raise Wrong(f"on {name} corrected_k returned {got}, one off the smallest admissible k = {want}")
        expect(got == want, f"on {name} corrected_k returned {got}; the smallest k meeting Eqs. (3) and (4') is {want}")
    return (
        "k agrees with fedlib.unlearn.pargen(variant='corrected') on 5 designs (either lemma binding, σ ≠ η) "
        "and None on 3 infeasible ones (k > N, ξ + ζ + δ > 1, ξ < γ)"
    )


# --- ex-sfu-r4-union -------------------------------------------------------------------------------------------


def _r4_cases():
    """(name, cluster sizes, caps, taus): equal clusters, the printed design at N = 1000, small unequal clusters."""
    design = pargen(1000, gamma=0.1, delta=0.1, zeta=0.1, xi=0.7, sigma=40, eta=40)
    yield "4 clusters of 50, caps 5, τ = 0..30", [50] * 4, [5] * 4, np.arange(31)
    yield (
        f"the printed design at N = 1000 ({len(design.cluster_sizes)} clusters of 43 or 44, caps 4), τ = 0..60",
        list(design.cluster_sizes),
        list(design.cluster_caps),
        np.arange(61),
    )
    yield (
        "clusters of 10, 12 and 15 with caps 1, 1, 2, τ = 0, 1, 2, 3, 10, 37 (all)",
        [10, 12, 15],
        [1, 1, 2],
        np.array([0, 1, 2, 3, 10, 37]),
    )


def _union_bound(sizes, caps, taus, *, tail_from: int = 1) -> np.ndarray:
    n = sum(sizes)
    return np.sum([hypergeom.sf(c + tail_from - 1, n, taus, k) for k, c in zip(sizes, caps, strict=True)], axis=0)


@exercise("ex-sfu-r4-union")
def _check_r4_union(answer) -> str:
    used = _uses(answer, ("requirement_failure_probabilities", "r4_failure_probability", "overflow_probability"))
    expect(used is None, f"r4_union_bound calls fedlib's {used}: write the per-cluster tails yourself")
    for name, sizes, caps, taus in _r4_cases():
        got = call(answer, list(sizes), list(caps), taus.copy(), what=f"r4_union_bound on {name}")
        try:
            arr = np.asarray(got, dtype=float)
        except Exception:
            raise Wrong(f"on {name} r4_union_bound returned {type(got).__name__}, not an array of numbers") from None
        expect(arr.shape == taus.shape, f"on {name} r4_union_bound returned shape {arr.shape}; expected {taus.shape}")
        want = _union_bound(sizes, caps, taus)
        if np.allclose(arr, want, rtol=1e-9, atol=1e-15):
            continue
        exact = np.array([float(r4_failure_probability(sizes, caps, int(tau))) for tau in taus[:12]])
        below = np.flatnonzero(arr[: len(exact)] < exact * (1 - 1e-9))
        if below.size:
            tau = int(taus[below[0]])
            raise Wrong(
                f"on {name} at τ = {tau} your bound {arr[below[0]]:.6g} is below the exact probability "
                f"{exact[below[0]]:.6g} that Requirement 4 fails: it is not an upper bound"
            )
        if np.allclose(arr, _union_bound(sizes, caps, taus, tail_from=0), rtol=1e-9, atol=1e-15):
            raise Wrong(
                f"on {name} you summed Pr[a cluster holds at least its cap]: Requirement 4 fails when a cluster holds "
                "MORE than its cap ⌊ζ k_i⌋"
            )
        n = sum(sizes)
        with_replacement = np.sum([binom.sf(c, taus, k / n) for k, c in zip(sizes, caps, strict=True)], axis=0)
        if np.allclose(arr, with_replacement, rtol=1e-9, atol=1e-15):
            raise Wrong(
                f"on {name} your tails are binomial, the paper's with-replacement model: the τ unlearned clients are "
                "distinct, so a cluster's count is hypergeometric"
            )
        expect_array(arr, want, f"the union bound on {name}", rtol=1e-9, atol=1e-15)
    return (
        "the union bound agrees with the hypergeometric tails on 3 clusterings (equal sizes, the printed design at "
        "N = 1000, small unequal clusters), for τ from 0 to N"
    )
