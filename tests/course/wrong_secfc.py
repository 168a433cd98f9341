"""Plausible wrong answers to the SecFC chapter's coding exercises (each must fail its check)."""

WRONG = {
    "ex-secfc-shares": {
        "α_j = j, clashing with the β's": '''
import numpy as np

def lcc_shares(segments, masks, n_clients, q):
    values = [[int(v) for v in row] for row in segments] + [[int(v) for v in row] for row in masks]
    betas = list(range(1, len(values) + 1))
    shares = []
    for alpha in range(1, n_clients + 1):
        share = [0] * len(values[0])
        for u, beta_u in enumerate(betas):
            num, den = 1, 1
            for beta_v in betas:
                if beta_v != beta_u:
                    num = num * (alpha - beta_v) % q
                    den = den * (beta_u - beta_v) % q
            c = num * pow(den, -1, q) % q
            share = [(s + c * x) % q for s, x in zip(share, values[u])]
        shares.append(share)
    return np.array(shares, dtype=np.int64)
''',
        "int64 products (overflow in the large field)": '''
import numpy as np

def lcc_shares(segments, masks, n_clients, q):
    values = np.concatenate([np.asarray(segments), np.asarray(masks)]).astype(np.int64)
    r = len(values)
    betas = np.arange(1, r + 1, dtype=np.int64)
    shares = np.zeros((n_clients, values.shape[1]), dtype=np.int64)
    for j in range(n_clients):
        alpha = r + 1 + j
        for u in range(r):
            num, den = 1, 1
            for v in range(r):
                if v != u:
                    num = num * (alpha - betas[v]) % q
                    den = den * (betas[u] - betas[v]) % q
            c = np.int64(num * pow(int(den), -1, q) % q)
            shares[j] = (shares[j] + c * values[u]) % q
    return shares
''',
        "real Lagrange coefficients rounded, then reduced mod q": '''
import numpy as np

def lcc_shares(segments, masks, n_clients, q):
    values = np.concatenate([np.asarray(segments), np.asarray(masks)]).astype(float)
    r = len(values)
    shares = []
    for j in range(n_clients):
        alpha = r + 1 + j
        share = np.zeros(values.shape[1])
        for u in range(r):
            c = np.prod([(alpha - (v + 1)) / (u - v) for v in range(r) if v != u])
            share = share + c * values[u]
        shares.append(np.mod(np.round(share), q))
    return np.array(shares).astype(np.int64)
''',
        "masks first, segments at the last β's": '''
import numpy as np

def lcc_shares(segments, masks, n_clients, q):
    values = [[int(v) for v in row] for row in masks] + [[int(v) for v in row] for row in segments]
    betas = list(range(1, len(values) + 1))
    shares = []
    for alpha in range(len(betas) + 1, len(betas) + 1 + n_clients):
        share = [0] * len(values[0])
        for u, beta_u in enumerate(betas):
            num, den = 1, 1
            for beta_v in betas:
                if beta_v != beta_u:
                    num = num * (alpha - beta_v) % q
                    den = den * (beta_u - beta_v) % q
            c = num * pow(den, -1, q) % q
            share = [(s + c * x) % q for s, x in zip(share, values[u])]
        shares.append(share)
    return np.array(shares, dtype=np.int64)
''',
    },
    "ex-secfc-decode": {
        "threshold ℓ+t (the degree of the shares, not of the distances)": '''
import numpy as np

def decode_distances(responses, responders, n_segments, n_colluders, q):
    ell, t = n_segments, n_colluders
    R = ell + t
    if len(responders) < R:
        raise ValueError("too few responses")
    alphas = [ell + t + 1 + int(j) for j in responders[:R]]
    weights = []
    for a, alpha_a in enumerate(alphas):
        w = 0
        for beta in range(1, ell + 1):
            num, den = 1, 1
            for b, alpha_b in enumerate(alphas):
                if b != a:
                    num = num * (beta - alpha_b) % q
                    den = den * (alpha_a - alpha_b) % q
            w = (w + num * pow(den, -1, q)) % q
        weights.append(w)
    total = sum(w * r for w, r in zip(weights, np.asarray(responses)[:R].astype(object))) % q
    return total.astype(np.int64)
''',
        "off by one: accepts 2ℓ+2t−2 responses": '''
import numpy as np

def decode_distances(responses, responders, n_segments, n_colluders, q):
    ell, t = n_segments, n_colluders
    R = 2 * ell + 2 * t - 1
    if len(responders) < R - 1:
        raise ValueError("too few responses")
    R = min(R, len(responders))
    alphas = [ell + t + 1 + int(j) for j in responders[:R]]
    weights = []
    for a, alpha_a in enumerate(alphas):
        w = 0
        for beta in range(1, ell + 1):
            num, den = 1, 1
            for b, alpha_b in enumerate(alphas):
                if b != a:
                    num = num * (beta - alpha_b) % q
                    den = den * (alpha_a - alpha_b) % q
            w = (w + num * pow(den, -1, q)) % q
        weights.append(w)
    total = sum(w * r for w, r in zip(weights, np.asarray(responses)[:R].astype(object))) % q
    return total.astype(np.int64)
''',
        "only the first segment, φ(β_1)": '''
import numpy as np

def decode_distances(responses, responders, n_segments, n_colluders, q):
    ell, t = n_segments, n_colluders
    R = 2 * ell + 2 * t - 1
    if len(responders) < R:
        raise ValueError("too few responses")
    alphas = [ell + t + 1 + int(j) for j in responders[:R]]
    weights = []
    for a, alpha_a in enumerate(alphas):
        num, den = 1, 1
        for b, alpha_b in enumerate(alphas):
            if b != a:
                num = num * (1 - alpha_b) % q
                den = den * (alpha_a - alpha_b) % q
        weights.append(num * pow(den, -1, q) % q)
    total = sum(w * r for w, r in zip(weights, np.asarray(responses)[:R].astype(object))) % q
    return total.astype(np.int64)
''',
        "responder index taken as α (α_j = j + 1)": '''
import numpy as np

def decode_distances(responses, responders, n_segments, n_colluders, q):
    ell, t = n_segments, n_colluders
    R = 2 * ell + 2 * t - 1
    if len(responders) < R:
        raise ValueError("too few responses")
    alphas = [1 + int(j) for j in responders[:R]]
    weights = []
    for a, alpha_a in enumerate(alphas):
        w = 0
        for beta in range(1, ell + 1):
            num, den = 1, 1
            for b, alpha_b in enumerate(alphas):
                if b != a:
                    num = num * (beta - alpha_b) % q
                    den = den * (alpha_a - alpha_b) % q
            w = (w + num * pow(den, -1, q)) % q
        weights.append(w)
    total = sum(w * r for w, r in zip(weights, np.asarray(responses)[:R].astype(object))) % q
    return total.astype(np.int64)
''',
    },
    "ex-secfc-assign": {
        "float64 ratios d'/|S|²": '''
import numpy as np

def assign_exact(d_prime, sizes):
    sizes = np.asarray(sizes, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.asarray(d_prime, dtype=float) / sizes**2
    ratio[:, sizes == 0] = np.inf
    return np.argmin(ratio, axis=1)
''',
        "int64 cross products (wrap around past 2**63)": '''
import numpy as np

def assign_exact(d_prime, sizes):
    d_prime = np.asarray(d_prime, dtype=np.int64)
    sq = np.asarray(sizes, dtype=np.int64) ** 2
    alive = np.flatnonzero(sq > 0)
    best = np.full(len(d_prime), alive[0])
    for g in alive[1:]:
        closer = d_prime[:, g] * sq[best] < d_prime[np.arange(len(d_prime)), best] * sq[g]
        best[closer] = g
    return best
''',
        "empty clusters not skipped": '''
import numpy as np

def assign_exact(d_prime, sizes):
    d_prime = np.asarray(d_prime).astype(object)
    sq = [int(s) ** 2 for s in sizes]
    best = np.zeros(len(d_prime), dtype=np.int64)
    for g in range(1, len(sq)):
        closer = np.asarray(d_prime[:, g] * np.array([sq[b] for b in best], dtype=object)
                            < d_prime[np.arange(len(d_prime)), best] * sq[g], dtype=bool)
        best[closer] = g
    return best
''',
        "ties to the highest index (<= instead of <)": '''
import numpy as np

def assign_exact(d_prime, sizes):
    d_prime = np.asarray(d_prime).astype(object)
    sq = [int(s) ** 2 for s in sizes]
    alive = [h for h, s in enumerate(sq) if s > 0]
    best = np.full(len(d_prime), alive[0], dtype=np.int64)
    for g in alive[1:]:
        closer = np.asarray(d_prime[:, g] * np.array([sq[b] for b in best], dtype=object)
                            <= d_prime[np.arange(len(d_prime)), best] * sq[g], dtype=bool)
        best[closer] = g
    return best
''',
    },
}
