"""Plausible wrong answers to the primer's coding exercises (each must fail its check)."""

WRONG = {
    "ex-primer-fedavg-average": {
        "plain mean, sizes ignored": '''
import numpy as np

def fedavg_average(params, n_samples, summed):
    return np.asarray(params, dtype=float)[list(summed)].mean(axis=0)
''',
        "divides by every participant's examples": '''
import numpy as np

def fedavg_average(params, n_samples, summed):
    rows = np.asarray(summed)
    n = np.asarray(n_samples, dtype=float)
    return n[rows] @ np.asarray(params, dtype=float)[rows] / n.sum()
''',
        "dropped clients averaged in": '''
import numpy as np

def fedavg_average(params, n_samples, summed):
    n = np.asarray(n_samples, dtype=float)
    return n @ np.asarray(params, dtype=float) / n.sum()
''',
    },
    "ex-primer-shamir-share": {
        "t random coefficients (degree t)": '''
def shamir_share(secret, t, xs, p, rng):
    coefs = [secret] + [int(rng.integers(0, p)) for _ in range(t)]
    return [sum(c * pow(x, k, p) for k, c in enumerate(coefs)) % p for x in xs]
''',
        "the secret as the leading coefficient": '''
def shamir_share(secret, t, xs, p, rng):
    coefs = [int(rng.integers(0, p)) for _ in range(t - 1)] + [secret]
    return [sum(c * pow(x, k, p) for k, c in enumerate(coefs)) % p for x in xs]
''',
        "coefficients never zero": '''
def shamir_share(secret, t, xs, p, rng):
    coefs = [secret] + [int(rng.integers(1, p)) for _ in range(t - 1)]
    return [sum(c * pow(x, k, p) for k, c in enumerate(coefs)) % p for x in xs]
''',
        "int64 arithmetic that overflows": '''
import numpy as np

def shamir_share(secret, t, xs, p, rng):
    coefs = np.concatenate([[secret], rng.integers(0, p, size=t - 1)]).astype(np.int64)
    powers = np.array([[x**k for k in range(t)] for x in xs], dtype=np.int64)
    return ((powers * coefs).sum(axis=1) % p).tolist()
''',
        "coefficients below 2**31": '''
def shamir_share(secret, t, xs, p, rng):
    coefs = [secret] + [int(rng.integers(0, min(p, 2**31))) for _ in range(t - 1)]
    return [sum(c * pow(x, k, p) for k, c in enumerate(coefs)) % p for x in xs]
''',
    },
    "ex-primer-pairwise-masks": {
        "both ends add the mask": '''
import numpy as np

def mask_inputs(x, masks, modulus):
    y = np.array(x, dtype=np.int64) % modulus
    for (i, j), m in masks.items():
        y[i] = (y[i] + m) % modulus
        y[j] = (y[j] + m) % modulus
    return y
''',
        "signs the other way round": '''
import numpy as np

def mask_inputs(x, masks, modulus):
    y = np.array(x, dtype=np.int64) % modulus
    for (i, j), m in masks.items():
        y[i] = (y[i] - m) % modulus
        y[j] = (y[j] + m) % modulus
    return y
''',
        "not reduced modulo the modulus": '''
import numpy as np

def mask_inputs(x, masks, modulus):
    y = np.array(x, dtype=np.int64)
    for (i, j), m in masks.items():
        y[i] = y[i] + m
        y[j] = y[j] - m
    return y
''',
    },
}
