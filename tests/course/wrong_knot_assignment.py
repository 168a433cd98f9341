"""Plausible wrong answers to the coding exercises of the chapter on KNOT's assignment (each must fail its check)."""

_RATINGS_HEAD = '''
import numpy as np

def knot_ratings(T, S, n_clusters, levels=100):
    T = np.asarray(T, dtype=np.float64)
    S = np.asarray(S, dtype=np.float64)
    t_lo, t_hi = T.min(), T.max()
    T_anchor = t_lo + (t_hi - t_lo) * np.arange(n_clusters) / max(n_clusters - 1, 1)
    S_anchor = np.arange(1, n_clusters + 1) / n_clusters
    a = 1.0 / (t_hi - t_lo) if t_hi > t_lo else 1.0
'''

_RATINGS_D = '''
    d = np.hypot(a * (T_anchor[None, :] - T[:, None]), S_anchor[None, :] - S[:, None])
    span = d.max() - d.min()
    if span == 0:
        return np.zeros(d.shape, dtype=np.int64)
'''

_BRUTE_HEAD = '''
import itertools
import numpy as np

def brute_lexmin(D, lo, hi):
    D = np.asarray(D)
    K, N = D.shape
'''

WRONG = {
    "ex-knot-ratings": {
        "ceiling without the float guard": _RATINGS_HEAD
        + _RATINGS_D
        + '''
    return np.ceil((d - d.min()) / span * levels).astype(np.int64)
''',
        "rounded to the nearest level": _RATINGS_HEAD
        + _RATINGS_D
        + '''
    return np.rint((d - d.min()) / span * levels).astype(np.int64)
''',
        "float ratings (no cast to integers)": _RATINGS_HEAD
        + _RATINGS_D
        + '''
    return np.ceil((d - d.min()) / span * levels - 1e-9)
''',
        "Plato's weight a = 1 on raw seconds": _RATINGS_HEAD
        + '''
    a = 1.0
'''
        + _RATINGS_D
        + '''
    return np.ceil((d - d.min()) / span * levels - 1e-9).astype(np.int64)
''',
        "anchors (n - 1)/N instead of n/N for the disparity": _RATINGS_HEAD
        + '''
    S_anchor = np.arange(n_clusters) / n_clusters
'''
        + _RATINGS_D
        + '''
    return np.ceil((d - d.min()) / span * levels - 1e-9).astype(np.int64)
''',
    },
    "ex-knot-brute": {
        "ascending sort (best match compared first)": _BRUTE_HEAD
        + '''
    best = None
    for labels in itertools.product(range(N), repeat=K):
        sizes = np.bincount(labels, minlength=N)
        if sizes.min() < lo or sizes.max() > hi:
            continue
        key = tuple(sorted(D[np.arange(K), labels].tolist()))
        if best is None or key < best:
            best = key
    return np.array(sorted(best, reverse=True), dtype=np.int64)
''',
        "min-max only (first assignment with the smallest worst rating)": _BRUTE_HEAD
        + '''
    best, best_worst = None, None
    for labels in itertools.product(range(N), repeat=K):
        sizes = np.bincount(labels, minlength=N)
        if sizes.min() < lo or sizes.max() > hi:
            continue
        ratings = D[np.arange(K), labels]
        if best_worst is None or ratings.max() < best_worst:
            best, best_worst = ratings, ratings.max()
    return np.sort(best)[::-1]
''',
        "min-sum instead of lexmin": _BRUTE_HEAD
        + '''
    best = None
    for labels in itertools.product(range(N), repeat=K):
        sizes = np.bincount(labels, minlength=N)
        if sizes.min() < lo or sizes.max() > hi:
            continue
        ratings = D[np.arange(K), labels]
        if best is None or ratings.sum() < best.sum():
            best = ratings
    return np.sort(best)[::-1]
''',
        "size bounds ignored": _BRUTE_HEAD
        + '''
    best = None
    for labels in itertools.product(range(N), repeat=K):
        key = tuple(sorted(D[np.arange(K), labels].tolist(), reverse=True))
        if best is None or key < best:
            best = key
    return np.array(best, dtype=np.int64)
''',
        "a cluster may be one client short (bincount without minlength)": _BRUTE_HEAD
        + '''
    best = None
    for labels in itertools.product(range(N), repeat=K):
        sizes = np.bincount(labels)
        if sizes.min() < lo or sizes.max() > hi:
            continue
        key = tuple(sorted(D[np.arange(K), labels].tolist(), reverse=True))
        if best is None or key < best:
            best = key
    return np.array(best, dtype=np.int64)
''',
    },
    "ex-knot-costs": {
        "base K instead of K + 1": '''
import numpy as np

def lexmin_costs(D):
    D = np.asarray(D)
    return np.full(D.shape, D.shape[0], dtype=object) ** D.astype(object)
''',
        "base K - 1": '''
import numpy as np

def lexmin_costs(D):
    D = np.asarray(D)
    return np.full(D.shape, max(D.shape[0] - 1, 1), dtype=object) ** D.astype(object)
''',
        "int64 powers (wrap around)": '''
import numpy as np

def lexmin_costs(D):
    D = np.asarray(D, dtype=np.int64)
    return np.power(np.int64(D.shape[0] + 1), D)
''',
        "float64 powers": '''
import numpy as np

def lexmin_costs(D):
    D = np.asarray(D)
    return (D.shape[0] + 1.0) ** D
''',
        "the ratings themselves (min-sum)": '''
import numpy as np

def lexmin_costs(D):
    return np.asarray(D).astype(object)
''',
    },
    "ex-knot-constraints": {
        "cluster-major columns": '''
import numpy as np

def knot_constraints(K, N, lo, hi):
    A_1 = np.kron(np.ones((1, N), dtype=np.int64), np.eye(K, dtype=np.int64))
    A_2 = np.kron(np.eye(N, dtype=np.int64), np.ones((1, K), dtype=np.int64))
    A = np.vstack([A_1, -A_1, A_2, -A_2])
    b = np.concatenate([np.ones(K), -np.ones(K), np.full(N, hi), np.full(N, -lo)]).astype(np.int64)
    return A, b
''',
        "lower bound c2 without its sign flip": '''
import numpy as np

def knot_constraints(K, N, lo, hi):
    A_1 = np.kron(np.eye(K, dtype=np.int64), np.ones((1, N), dtype=np.int64))
    A_2 = np.kron(np.ones((1, K), dtype=np.int64), np.eye(N, dtype=np.int64))
    A = np.vstack([A_1, -A_1, A_2, -A_2])
    b = np.concatenate([np.ones(K), -np.ones(K), np.full(N, hi), np.full(N, lo)]).astype(np.int64)
    return A, b
''',
        "rows stacked A_1, A_2, -A_1, -A_2": '''
import numpy as np

def knot_constraints(K, N, lo, hi):
    A_1 = np.kron(np.eye(K, dtype=np.int64), np.ones((1, N), dtype=np.int64))
    A_2 = np.kron(np.ones((1, K), dtype=np.int64), np.eye(N, dtype=np.int64))
    A = np.vstack([A_1, A_2, -A_1, -A_2])
    b = np.concatenate([np.ones(K), np.full(N, hi), -np.ones(K), np.full(N, -lo)]).astype(np.int64)
    return A, b
''',
        "no rows for 'at least one cluster' (c1 only)": '''
import numpy as np

def knot_constraints(K, N, lo, hi):
    A_1 = np.kron(np.eye(K, dtype=np.int64), np.ones((1, N), dtype=np.int64))
    A_2 = np.kron(np.ones((1, K), dtype=np.int64), np.eye(N, dtype=np.int64))
    A = np.vstack([A_1, A_2, -A_2])
    b = np.concatenate([np.ones(K), np.full(N, hi), np.full(N, -lo)]).astype(np.int64)
    return A, b
''',
    },
}
