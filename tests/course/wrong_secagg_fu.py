"""Plausible wrong answers to the Liu et al. part's coding exercises (each must fail its check)."""

WRONG = {
    "ex-secagg-shamir": {
        "numpy int64 arithmetic (products overflow)": '''
import numpy as np

def shamir_reconstruct(xs, ys, prime):
    x = np.array(xs, dtype=np.int64)
    y = np.array(ys, dtype=np.int64)
    p = np.int64(prime)
    total = np.int64(0)
    for j in range(len(x)):
        others = np.delete(x, j)
        num = np.prod(others % p) % p
        den = np.prod((others - x[j]) % p) % p
        total = (total + y[j] * num % p * pow(int(den), -1, prime)) % p
    return int(total)
''',
        "float division instead of the inverse mod p": '''
def shamir_reconstruct(xs, ys, prime):
    total = 0.0
    for j, (xj, yj) in enumerate(zip(xs, ys)):
        basis = 1.0
        for m, xm in enumerate(xs):
            if m != j:
                basis *= xm / (xm - xj)
        total += yj * basis
    return int(round(total)) % prime
''',
        "basis with the wrong sign, x_m / (x_j - x_m)": '''
def shamir_reconstruct(xs, ys, prime):
    total = 0
    for j, (xj, yj) in enumerate(zip(xs, ys)):
        num, den = 1, 1
        for m, xm in enumerate(xs):
            if m != j:
                num = num * xm % prime
                den = den * (xj - xm) % prime
        total += yj * num * pow(den, -1, prime)
    return total % prime
''',
        "not reduced mod p": '''
def shamir_reconstruct(xs, ys, prime):
    total = 0
    for j, (xj, yj) in enumerate(zip(xs, ys)):
        num, den = 1, 1
        for m, xm in enumerate(xs):
            if m != j:
                num = num * xm % prime
                den = den * (xm - xj) % prime
        total += yj * num * pow(den, -1, prime) % prime
    return total
''',
    },
    "ex-secagg-unmask": {
        "pairwise corrections with the wrong sign": '''
import numpy as np
from fedlib.secagg import prg_words

def unmask_sum(masked, self_seeds, dropped_seeds):
    d = len(next(iter(masked.values())))
    total = np.zeros(d, dtype=np.uint32)
    for i, y in masked.items():
        total += y
        total -= prg_words(self_seeds[i], d)
    for j, by_neighbour in dropped_seeds.items():
        for i, seed in by_neighbour.items():
            if i not in masked:
                continue
            if i > j:
                total -= prg_words(seed, d)
            else:
                total += prg_words(seed, d)
    return total
''',
        "self masks left on": '''
import numpy as np
from fedlib.secagg import prg_words

def unmask_sum(masked, self_seeds, dropped_seeds):
    d = len(next(iter(masked.values())))
    total = np.zeros(d, dtype=np.uint32)
    for y in masked.values():
        total += y
    for j, by_neighbour in dropped_seeds.items():
        for i, seed in by_neighbour.items():
            if i not in masked:
                continue
            if i < j:
                total -= prg_words(seed, d)
            else:
                total += prg_words(seed, d)
    return total
''',
        "corrects for neighbours that dropped too": '''
import numpy as np
from fedlib.secagg import prg_words

def unmask_sum(masked, self_seeds, dropped_seeds):
    d = len(next(iter(masked.values())))
    total = np.zeros(d, dtype=np.uint32)
    for i, y in masked.items():
        total += y
        total -= prg_words(self_seeds[i], d)
    for j, by_neighbour in dropped_seeds.items():
        for i, seed in by_neighbour.items():
            if i < j:
                total -= prg_words(seed, d)
            else:
                total += prg_words(seed, d)
    return total
''',
        "uint64 sum, not reduced mod 2^32": '''
import numpy as np
from fedlib.secagg import prg_words

def unmask_sum(masked, self_seeds, dropped_seeds):
    d = len(next(iter(masked.values())))
    total = np.sum([y for y in masked.values()], axis=0)  # uint64: no wrap-around
    total = total.astype(np.int64)
    for i in masked:
        total -= prg_words(self_seeds[i], d)
    for j, by_neighbour in dropped_seeds.items():
        for i, seed in by_neighbour.items():
            if i in masked:
                total -= (1 if i < j else -1) * prg_words(seed, d).astype(np.int64)
    return total
''',
    },
    "ex-sfu-corrected-k": {
        "Lemma 2 as printed (Eq. (4), the sign error)": '''
import math
import numpy as np

def corrected_k(n_clients, gamma, delta, zeta, xi, sigma, eta):
    if xi <= gamma:
        return None
    ks = np.arange(1, n_clients + 1, dtype=float)
    tail = np.log(ks) - math.log(n_clients)
    f1 = 2 * (xi - gamma) ** 2 * ks + tail - sigma * math.log(2)
    slope = 2 * ((1 - delta) ** 2 + xi**2 - 2 * (xi + zeta) * delta + 2 * xi + 2 * zeta)
    f2 = slope * ks + tail - eta * math.log(2)
    ok = np.flatnonzero((f1 >= 0) & (f2 >= 0))
    return int(ks[ok[0]]) if ok.size else None
''',
        "σ in bits taken as nats (no ln 2)": '''
import math
import numpy as np

def corrected_k(n_clients, gamma, delta, zeta, xi, sigma, eta):
    if xi <= gamma or xi + zeta + delta >= 1:
        return None
    ks = np.arange(1, n_clients + 1, dtype=float)
    tail = np.log(ks) - math.log(n_clients)
    f1 = 2 * (xi - gamma) ** 2 * ks + tail - sigma
    f2 = 2 * (1 - delta - xi - zeta) ** 2 * ks + tail - eta
    ok = np.flatnonzero((f1 >= 0) & (f2 >= 0))
    return int(ks[ok[0]]) if ok.size else None
''',
        "the last k that fails instead of the first that works": '''
import math
import numpy as np

def corrected_k(n_clients, gamma, delta, zeta, xi, sigma, eta):
    if xi <= gamma or xi + zeta + delta >= 1:
        return None
    ks = np.arange(1, n_clients + 1, dtype=float)
    tail = np.log(ks) - math.log(n_clients)
    f1 = 2 * (xi - gamma) ** 2 * ks + tail - sigma * math.log(2)
    f2 = 2 * (1 - delta - xi - zeta) ** 2 * ks + tail - eta * math.log(2)
    ok = np.flatnonzero((f1 >= 0) & (f2 >= 0))
    return int(ks[ok[0]]) - 1 if ok.size else None
''',
        "k > N not refused": '''
import math
import numpy as np

def corrected_k(n_clients, gamma, delta, zeta, xi, sigma, eta):
    if xi <= gamma or xi + zeta + delta >= 1:
        return None
    ks = np.arange(1, 10**6, dtype=float)
    tail = np.log(ks) - math.log(n_clients)
    f1 = 2 * (xi - gamma) ** 2 * ks + tail - sigma * math.log(2)
    f2 = 2 * (1 - delta - xi - zeta) ** 2 * ks + tail - eta * math.log(2)
    ok = np.flatnonzero((f1 >= 0) & (f2 >= 0))
    return int(ks[ok[0]]) if ok.size else None
''',
    },
    "ex-sfu-r4-union": {
        "at least the cap instead of more than the cap": '''
import numpy as np
from scipy.stats import hypergeom

def r4_union_bound(cluster_sizes, caps, taus):
    n = sum(cluster_sizes)
    taus = np.asarray(taus)
    return sum(hypergeom.sf(c - 1, n, taus, k) for k, c in zip(cluster_sizes, caps))
''',
        "binomial tails (requests with replacement)": '''
import numpy as np
from scipy.stats import binom

def r4_union_bound(cluster_sizes, caps, taus):
    n = sum(cluster_sizes)
    taus = np.asarray(taus)
    return sum(binom.sf(c, taus, k / n) for k, c in zip(cluster_sizes, caps))
''',
        "s times the first cluster's tail": '''
import numpy as np
from scipy.stats import hypergeom

def r4_union_bound(cluster_sizes, caps, taus):
    n = sum(cluster_sizes)
    taus = np.asarray(taus)
    return len(cluster_sizes) * hypergeom.sf(caps[0], n, taus, cluster_sizes[0])
''',
        "the largest tail instead of the sum": '''
import numpy as np
from scipy.stats import hypergeom

def r4_union_bound(cluster_sizes, caps, taus):
    n = sum(cluster_sizes)
    taus = np.asarray(taus)
    return np.max([hypergeom.sf(c, n, taus, k) for k, c in zip(cluster_sizes, caps)], axis=0)
''',
    },
}
