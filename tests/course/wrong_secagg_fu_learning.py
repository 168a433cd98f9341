"""Plausible wrong answers to the coding exercises of "Training and unlearning with clusters" (each must fail)."""

WRONG = {
    "ex-sfu-secure-mean": {
        "divides by the number of survivors (1/|U3|)": '''
import numpy as np

def server_step(theta, total, summed, n_samples, frac_bits):
    summed = np.asarray(summed)
    if summed.size == 0:
        return np.array(theta, dtype=np.float32)
    decoded = np.asarray(total, dtype=np.uint32).view(np.int32) / 2.0**frac_bits
    return (theta + decoded / summed.size).astype(np.float32)
''',
        "decodes the ring as unsigned": '''
import numpy as np

def server_step(theta, total, summed, n_samples, frac_bits):
    summed = np.asarray(summed)
    if summed.size == 0:
        return np.array(theta, dtype=np.float32)
    decoded = np.asarray(total, dtype=np.float64) / 2.0**frac_bits
    sizes = np.asarray(n_samples, dtype=np.float64)
    return (theta + decoded / (sizes / sizes.mean())[summed].sum()).astype(np.float32)
''',
        "counts the dropped clients' weights": '''
import numpy as np

def server_step(theta, total, summed, n_samples, frac_bits):
    summed = np.asarray(summed)
    if summed.size == 0:
        return np.array(theta, dtype=np.float32)
    decoded = np.asarray(total, dtype=np.uint32).view(np.int32) / 2.0**frac_bits
    sizes = np.asarray(n_samples, dtype=np.float64)
    return (theta + decoded / (sizes / sizes.mean()).sum()).astype(np.float32)
''',
        "divides by the survivors' sample counts": '''
import numpy as np

def server_step(theta, total, summed, n_samples, frac_bits):
    summed = np.asarray(summed)
    if summed.size == 0:
        return np.array(theta, dtype=np.float32)
    decoded = np.asarray(total, dtype=np.uint32).view(np.int32) / 2.0**frac_bits
    return (theta + decoded / np.asarray(n_samples)[summed].sum()).astype(np.float32)
''',
        "forgets the aborted round (divides by zero)": '''
import numpy as np

def server_step(theta, total, summed, n_samples, frac_bits):
    summed = np.asarray(summed, dtype=np.int64)
    decoded = np.asarray(total, dtype=np.uint32).view(np.int32) / 2.0**frac_bits
    sizes = np.asarray(n_samples, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (theta + decoded / (sizes / sizes.mean())[summed].sum()).astype(np.float32)
''',
    },
    "ex-sfu-dropouts": {
        "Requirement 2 only (t survivors)": '''
import numpy as np

def round_completes(adjacency, threshold, dropped):
    return bool((~np.asarray(dropped, dtype=bool)).sum() >= threshold)
''',
        "more than t survivors (off by one)": '''
import numpy as np
from scipy.sparse.csgraph import connected_components

def round_completes(adjacency, threshold, dropped):
    alive = ~np.asarray(dropped, dtype=bool)
    if alive.sum() <= threshold:
        return False
    n_pieces, _ = connected_components(np.asarray(adjacency)[np.ix_(alive, alive)], directed=False)
    return bool(n_pieces == 1)
''',
        "connectivity of the whole graph, dropped clients included": '''
import numpy as np
from scipy.sparse.csgraph import connected_components

def round_completes(adjacency, threshold, dropped):
    alive = ~np.asarray(dropped, dtype=bool)
    n_pieces, _ = connected_components(np.asarray(adjacency), directed=False)
    return bool(alive.sum() >= threshold and n_pieces == 1)
''',
        "connectivity only": '''
import numpy as np
from scipy.sparse.csgraph import connected_components

def round_completes(adjacency, threshold, dropped):
    alive = ~np.asarray(dropped, dtype=bool)
    if not alive.any():
        return False
    n_pieces, _ = connected_components(np.asarray(adjacency)[np.ix_(alive, alive)], directed=False)
    return bool(n_pieces == 1)
''',
    },
    "ex-sfu-vote-ties": {
        "soft vote (argmax of the summed probabilities)": '''
import numpy as np

def vote(probabilities):
    return np.asarray(probabilities).sum(axis=0).argmax(axis=1)
''',
        "ties of votes to the lowest label": '''
import numpy as np

def vote(probabilities):
    P = np.asarray(probabilities)
    choice = P.argmax(axis=2)
    return np.array([np.bincount(choice[:, i], minlength=P.shape[2]).argmax() for i in range(P.shape[1])])
''',
        "ties of votes to the largest single probability": '''
import numpy as np

def vote(probabilities):
    P = np.asarray(probabilities)
    choice = P.argmax(axis=2)
    votes = np.stack([np.bincount(choice[:, i], minlength=P.shape[2]) for i in range(P.shape[1])])
    leaders = votes == votes.max(axis=1, keepdims=True)
    return np.where(leaders, P.max(axis=0), -np.inf).argmax(axis=1)
''',
    },
    "ex-sfu-targeted": {
        "the forgotten client retrains too (pre-removal count)": '''
import math
from fractions import Fraction
import numpy as np

def unlearning_costs(clusters, zeta, requests, rounds):
    cluster_of = {int(u): i for i, c in enumerate(clusters) for u in c}
    caps = [math.floor(Fraction(repr(float(zeta))) * len(c)) for c in clusters]
    lost, out = [0] * len(clusters), []
    for u in requests:
        i = cluster_of[int(u)]
        if lost[i] == caps[i]:
            out.append(-1)
            continue
        out.append((len(clusters[i]) - lost[i]) * rounds)
        lost[i] += 1
    return np.array(out)
''',
        "cap from the floating-point product": '''
import math
import numpy as np

def unlearning_costs(clusters, zeta, requests, rounds):
    cluster_of = {int(u): i for i, c in enumerate(clusters) for u in c}
    caps = [math.floor(zeta * len(c)) for c in clusters]
    lost, out = [0] * len(clusters), []
    for u in requests:
        i = cluster_of[int(u)]
        if lost[i] == caps[i]:
            out.append(-1)
            continue
        lost[i] += 1
        out.append((len(clusters[i]) - lost[i]) * rounds)
    return np.array(out)
''',
        "admits one request past the cap": '''
import math
from fractions import Fraction
import numpy as np

def unlearning_costs(clusters, zeta, requests, rounds):
    cluster_of = {int(u): i for i, c in enumerate(clusters) for u in c}
    caps = [math.floor(Fraction(repr(float(zeta))) * len(c)) for c in clusters]
    lost, out = [0] * len(clusters), []
    for u in requests:
        i = cluster_of[int(u)]
        if lost[i] > caps[i]:
            out.append(-1)
            continue
        lost[i] += 1
        out.append((len(clusters[i]) - lost[i]) * rounds)
    return np.array(out)
''',
        "counts clients, not client-rounds": '''
import math
from fractions import Fraction
import numpy as np

def unlearning_costs(clusters, zeta, requests, rounds):
    cluster_of = {int(u): i for i, c in enumerate(clusters) for u in c}
    caps = [math.floor(Fraction(repr(float(zeta))) * len(c)) for c in clusters]
    lost, out = [0] * len(clusters), []
    for u in requests:
        i = cluster_of[int(u)]
        if lost[i] == caps[i]:
            out.append(-1)
            continue
        lost[i] += 1
        out.append(len(clusters[i]) - lost[i])
    return np.array(out)
''',
    },
}
