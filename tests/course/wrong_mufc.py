"""Plausible wrong answers to the mufc part's coding exercises (each must fail its check)."""

WRONG = {
    "ex-mufc-client-vector": {
        "bins numbered from 0": '''
import numpy as np

def client_vector(X, seeds, gamma, offset, shape):
    centres = X[seeds]
    d2 = ((X[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
    sizes = np.bincount(np.argmin(d2, axis=1), minlength=len(centres))
    cells = np.rint(centres / gamma).astype(np.int64) - offset
    q = {}
    for cell, size in zip(cells.tolist(), sizes.tolist()):
        j, radix = 0, 1
        for a, b in zip(cell, shape):
            j += a * radix
            radix *= b
        q[j] = q.get(j, 0) + size
    return q
''',
        "last dimension fastest (C order)": '''
import numpy as np

def client_vector(X, seeds, gamma, offset, shape):
    centres = X[seeds]
    d2 = ((X[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
    sizes = np.bincount(np.argmin(d2, axis=1), minlength=len(centres))
    cells = np.rint(centres / gamma).astype(np.int64) - offset
    q = {}
    for cell, size in zip(cells.tolist(), sizes.tolist()):
        j = 1 + int(np.ravel_multi_index(tuple(cell), tuple(shape)))
        q[j] = q.get(j, 0) + size
    return q
''',
        "two seeds in one bin overwrite each other": '''
import numpy as np

def client_vector(X, seeds, gamma, offset, shape):
    centres = X[seeds]
    d2 = ((X[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
    sizes = np.bincount(np.argmin(d2, axis=1), minlength=len(centres))
    cells = np.rint(centres / gamma).astype(np.int64) - offset
    q = {}
    for cell, size in zip(cells.tolist(), sizes.tolist()):
        j, radix = 1, 1
        for a, b in zip(cell, shape):
            j += a * radix
            radix *= b
        q[j] = size
    return q
''',
        "seeds rounded down (floor)": '''
import numpy as np

def client_vector(X, seeds, gamma, offset, shape):
    centres = X[seeds]
    d2 = ((X[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
    sizes = np.bincount(np.argmin(d2, axis=1), minlength=len(centres))
    cells = np.floor(centres / gamma).astype(np.int64) - offset
    q = {}
    for cell, size in zip(cells.tolist(), sizes.tolist()):
        j, radix = 1, 1
        for a, b in zip(cell, shape):
            j += a * radix
            radix *= b
        q[j] = q.get(j, 0) + size
    return q
''',
        "int64 bin index (overflows on large grids)": '''
import numpy as np

def client_vector(X, seeds, gamma, offset, shape):
    centres = X[seeds]
    d2 = ((X[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
    sizes = np.bincount(np.argmin(d2, axis=1), minlength=len(centres))
    cells = np.rint(centres / gamma).astype(np.int64) - offset
    radix = np.concatenate([[1], np.cumprod(np.array(shape[:-1], dtype=np.int64))])
    q = {}
    for j, size in zip((1 + cells @ radix).tolist(), sizes.tolist()):
        q[j] = q.get(j, 0) + size
    return q
''',
        "ties to the last seed": '''
import numpy as np

def client_vector(X, seeds, gamma, offset, shape):
    centres = X[seeds]
    d2 = ((X[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
    labels = len(centres) - 1 - np.argmin(d2[:, ::-1], axis=1)
    sizes = np.bincount(labels, minlength=len(centres))
    cells = np.rint(centres / gamma).astype(np.int64) - offset
    q = {}
    for cell, size in zip(cells.tolist(), sizes.tolist()):
        j, radix = 1, 1
        for a, b in zip(cell, shape):
            j += a * radix
            radix *= b
        q[j] = q.get(j, 0) + size
    return q
''',
    },
    "ex-mufc-scma-message": {
        "exponent starts at 1 (j^i)": '''
def scma_message(counts, mask, p):
    return [(sum(q * pow(j, i, p) for j, q in counts.items()) + z) % p for i, z in enumerate(mask, start=1)]
''',
        "mask forgotten": '''
def scma_message(counts, mask, p):
    return [sum(q * pow(j, i, p) for j, q in counts.items()) % p for i in range(len(mask))]
''',
        "int64 arithmetic": '''
import numpy as np

def scma_message(counts, mask, p):
    out = np.array(mask, dtype=np.int64) % p
    for j, q in counts.items():
        term = np.int64(q)
        for i in range(len(mask)):
            out[i] = (out[i] + term) % p
            term = (term * np.int64(j % p)) % p
    return [int(v) for v in out]
''',
        "not reduced modulo p": '''
def scma_message(counts, mask, p):
    return [sum(q * j ** i for j, q in counts.items()) + z for i, z in enumerate(mask)]
''',
    },
    "ex-mufc-scma-counts": {
        "equations with j^i (exponent off by one)": '''
def bin_counts(S, bins, p):
    m = len(bins)
    rows = [[pow(j, i + 1, p) for j in bins] + [S[i] % p] for i in range(m)]
    for col in range(m):
        pivot = next(r for r in range(col, m) if rows[r][col])
        rows[col], rows[pivot] = rows[pivot], rows[col]
        inv = pow(rows[col][col], p - 2, p)
        rows[col] = [v * inv % p for v in rows[col]]
        for r in range(m):
            if r != col:
                f = rows[r][col]
                rows[r] = [(a - f * b) % p for a, b in zip(rows[r], rows[col])]
    return {j: rows[t][m] for t, j in enumerate(bins)}
''',
        "floating-point solve": '''
import numpy as np

def bin_counts(S, bins, p):
    m = len(bins)
    A = np.array([[float(j) ** i for j in bins] for i in range(m)])
    x = np.linalg.solve(A, np.array([float(s) for s in S[:m]]))
    return {j: int(round(v)) % p for j, v in zip(bins, x)}
''',
        "first syndrome only (assumes one bin)": '''
def bin_counts(S, bins, p):
    return {j: S[0] % p for j in bins}
''',
    },
    "ex-mufc-race-seeding": {
        "distance, not squared distance": '''
import numpy as np

def race_seeding(X, weights, keys):
    n, k = keys.shape
    seeds = np.empty(k, dtype=np.int64)
    closest = np.full(n, np.inf)
    rate = weights
    for t in range(k):
        with np.errstate(divide="ignore"):
            seeds[t] = np.argmin(keys[:, t] / rate)
        closest = np.minimum(closest, np.sqrt(((X - X[seeds[t]]) ** 2).sum(axis=1)))
        rate = weights * closest
    return seeds
''',
        "distance to the last seed only": '''
import numpy as np

def race_seeding(X, weights, keys):
    n, k = keys.shape
    seeds = np.empty(k, dtype=np.int64)
    rate = weights
    for t in range(k):
        with np.errstate(divide="ignore"):
            seeds[t] = np.argmin(keys[:, t] / rate)
        rate = weights * ((X - X[seeds[t]]) ** 2).sum(axis=1)
    return seeds
''',
        "weights ignored": '''
import numpy as np

def race_seeding(X, weights, keys):
    n, k = keys.shape
    seeds = np.empty(k, dtype=np.int64)
    closest = np.full(n, np.inf)
    rate = np.ones(n)
    for t in range(k):
        with np.errstate(divide="ignore"):
            seeds[t] = np.argmin(keys[:, t] / rate)
        closest = np.minimum(closest, ((X - X[seeds[t]]) ** 2).sum(axis=1))
        rate = closest
    return seeds
''',
        "largest key times rate wins": '''
import numpy as np

def race_seeding(X, weights, keys):
    n, k = keys.shape
    seeds = np.empty(k, dtype=np.int64)
    closest = np.full(n, np.inf)
    rate = weights
    for t in range(k):
        seeds[t] = np.argmax(keys[:, t] * rate)
        closest = np.minimum(closest, ((X - X[seeds[t]]) ** 2).sum(axis=1))
        rate = weights * closest
    return seeds
''',
    },
    "ex-mufc-unlearn-seeding": {
        "keep the other seeds, redraw only the removed one": '''
import numpy as np

def unlearn_seeding(X, keys, seeds, removed):
    n, k = keys.shape
    hit = np.flatnonzero(np.isin(seeds, removed))
    n_kept = int(hit[0]) if hit.size else k
    keep = np.ones(n, dtype=bool)
    keep[removed] = False
    row = np.cumsum(keep) - 1
    X_rest, keys_rest = X[keep], keys[keep]
    new = [int(row[s]) if keep[s] else -1 for s in seeds]
    for t in hit:
        others = [c for c in new if c >= 0]
        if others:
            d2 = np.min([((X_rest - X_rest[c]) ** 2).sum(axis=1) for c in others], axis=0)
        else:
            d2 = np.ones(len(X_rest))
        with np.errstate(divide="ignore"):
            new[t] = int(np.argmin(keys_rest[:, t] / d2))
    return n_kept, np.array(new)
''',
        "seeds left as rows of the old data": '''
import numpy as np
from fedlib.cluster import kmeans_plusplus

def unlearn_seeding(X, keys, seeds, removed):
    n, k = keys.shape
    hit = np.flatnonzero(np.isin(seeds, removed))
    n_kept = int(hit[0]) if hit.size else k
    keep = np.ones(n, dtype=bool)
    keep[removed] = False
    _, new = kmeans_plusplus(X[keep], k, race_keys=keys[keep])
    return n_kept, np.flatnonzero(keep)[new]
''',
        "n_kept counts up to the last removed seed": '''
import numpy as np
from fedlib.cluster import kmeans_plusplus

def unlearn_seeding(X, keys, seeds, removed):
    n, k = keys.shape
    hit = np.flatnonzero(np.isin(seeds, removed))
    n_kept = int(hit[-1]) if hit.size else k
    keep = np.ones(n, dtype=bool)
    keep[removed] = False
    return n_kept, kmeans_plusplus(X[keep], k, race_keys=keys[keep])[1]
''',
        "n_kept includes the removed seed": '''
import numpy as np
from fedlib.cluster import kmeans_plusplus

def unlearn_seeding(X, keys, seeds, removed):
    n, k = keys.shape
    hit = np.flatnonzero(np.isin(seeds, removed))
    n_kept = int(hit[0]) + 1 if hit.size else k
    keep = np.ones(n, dtype=bool)
    keep[removed] = False
    return n_kept, kmeans_plusplus(X[keep], k, race_keys=keys[keep])[1]
''',
    },
    "ex-mufc-server-update": {
        "bins emptied by the client kept with weight 0": '''
import numpy as np

def server_after_leaving(total, leaving, gamma, offset, shape):
    remaining = dict(total)
    for j, c in leaving.items():
        if c > remaining.get(j, 0):
            raise ValueError("inconsistent")
        remaining[j] -= c
    bins = sorted(remaining)
    cells = np.zeros((len(bins), len(shape)), dtype=np.int64)
    for r, j in enumerate(bins):
        rest = j - 1
        for t, b in enumerate(shape):
            rest, cells[r, t] = divmod(rest, b)
    return (cells + offset) * gamma, np.array([remaining[j] for j in bins], dtype=float)
''',
        "bin numbers decoded last dimension fastest": '''
import numpy as np

def server_after_leaving(total, leaving, gamma, offset, shape):
    remaining = dict(total)
    for j, c in leaving.items():
        if c > remaining.get(j, 0):
            raise ValueError("inconsistent")
        remaining[j] -= c
    bins = sorted(j for j, c in remaining.items() if c > 0)
    cells = np.array([np.unravel_index(j - 1, shape) for j in bins], dtype=np.int64)
    return (cells + offset) * gamma, np.array([remaining[j] for j in bins], dtype=float)
''',
        "no check of inconsistent requests": '''
import numpy as np

def server_after_leaving(total, leaving, gamma, offset, shape):
    remaining = dict(total)
    for j, c in leaving.items():
        remaining[j] = remaining.get(j, 0) - c
    bins = sorted(j for j, c in remaining.items() if c > 0)
    cells = np.zeros((len(bins), len(shape)), dtype=np.int64)
    for r, j in enumerate(bins):
        rest = j - 1
        for t, b in enumerate(shape):
            rest, cells[r, t] = divmod(rest, b)
    return (cells + offset) * gamma, np.array([remaining[j] for j in bins], dtype=float)
''',
        "centre at the lower corner of the bin": '''
import numpy as np

def server_after_leaving(total, leaving, gamma, offset, shape):
    remaining = dict(total)
    for j, c in leaving.items():
        if c > remaining.get(j, 0):
            raise ValueError("inconsistent")
        remaining[j] -= c
    bins = sorted(j for j, c in remaining.items() if c > 0)
    cells = np.zeros((len(bins), len(shape)), dtype=np.int64)
    for r, j in enumerate(bins):
        rest = j - 1
        for t, b in enumerate(shape):
            rest, cells[r, t] = divmod(rest, b)
    return (cells + offset - 0.5) * gamma, np.array([remaining[j] for j in bins], dtype=float)
''',
    },
}
