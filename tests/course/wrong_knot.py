"""Plausible wrong answers to the coding exercises of the KNOT chapters on clustered aggregation and on the comparison.

Each must fail its check (``book/fedbook/course/knot.py``).
"""

WRONG = {
    "ex-knot-clock": {
        "a client restarts when its own result arrives": """
import heapq

import numpy as np


def fedbuff_clock(training_times, buffer, rounds):
    K = len(training_times)
    queue = [(float(training_times[k]), k, k, 0) for k in range(K)]
    heapq.heapify(queue)
    sent = K
    times = np.zeros(rounds)
    clients = np.zeros((rounds, buffer), dtype=np.int64)
    staleness = np.zeros((rounds, buffer), dtype=np.int64)
    for r in range(1, rounds + 1):
        popped = [heapq.heappop(queue) for _ in range(buffer)]
        times[r - 1] = popped[-1][0]
        clients[r - 1] = [item[2] for item in popped]
        staleness[r - 1] = [r - 1 - item[3] for item in popped]
        for item in sorted(popped, key=lambda item: item[2]):
            heapq.heappush(queue, (item[0] + float(training_times[item[2]]), sent, item[2], r))
            sent += 1
    return times, clients, staleness
""",
        "staleness counted from the round it was sent in (one too high)": """
import heapq

import numpy as np


def fedbuff_clock(training_times, buffer, rounds):
    K = len(training_times)
    queue = [(float(training_times[k]), k, k, 0) for k in range(K)]
    heapq.heapify(queue)
    sent = K
    times = np.zeros(rounds)
    clients = np.zeros((rounds, buffer), dtype=np.int64)
    staleness = np.zeros((rounds, buffer), dtype=np.int64)
    for r in range(1, rounds + 1):
        popped = [heapq.heappop(queue) for _ in range(buffer)]
        now = popped[-1][0]
        times[r - 1] = now
        clients[r - 1] = [item[2] for item in popped]
        staleness[r - 1] = [r - item[3] for item in popped]
        for k in sorted(item[2] for item in popped):
            heapq.heappush(queue, (now + float(training_times[k]), sent, k, r))
            sent += 1
    return times, clients, staleness
""",
        "ties broken by client id, not by the order sent": """
import heapq

import numpy as np


def fedbuff_clock(training_times, buffer, rounds):
    K = len(training_times)
    queue = [(float(training_times[k]), k, 0) for k in range(K)]
    heapq.heapify(queue)
    times = np.zeros(rounds)
    clients = np.zeros((rounds, buffer), dtype=np.int64)
    staleness = np.zeros((rounds, buffer), dtype=np.int64)
    for r in range(1, rounds + 1):
        popped = [heapq.heappop(queue) for _ in range(buffer)]
        now = popped[-1][0]
        times[r - 1] = now
        clients[r - 1] = [item[1] for item in popped]
        staleness[r - 1] = [r - 1 - item[2] for item in popped]
        for k in sorted(item[1] for item in popped):
            heapq.heappush(queue, (now + float(training_times[k]), k, r))
    return times, clients, staleness
""",
    },
    "ex-knot-fedbuff-step": {
        "weights renormalised after the staleness scaling": """
import numpy as np


def fedbuff_update(model, deltas, n_samples, staleness, server_lr=1.0, scaling=True):
    p = np.asarray(n_samples, dtype=float) / np.sum(n_samples)
    s = 1.0 / np.sqrt(1.0 + np.asarray(staleness, dtype=float)) if scaling else np.ones(len(p))
    w = p * s / np.sum(p * s)
    return np.asarray(model, dtype=float) + server_lr * w @ np.asarray(deltas, dtype=float)
""",
        "uniform weights 1/M": """
import numpy as np


def fedbuff_update(model, deltas, n_samples, staleness, server_lr=1.0, scaling=True):
    m = len(deltas)
    s = 1.0 / np.sqrt(1.0 + np.asarray(staleness, dtype=float)) if scaling else np.ones(m)
    return np.asarray(model, dtype=float) + server_lr * (s / m) @ np.asarray(deltas, dtype=float)
""",
        "scaling 1/(1 + τ)": """
import numpy as np


def fedbuff_update(model, deltas, n_samples, staleness, server_lr=1.0, scaling=True):
    p = np.asarray(n_samples, dtype=float) / np.sum(n_samples)
    s = 1.0 / (1.0 + np.asarray(staleness, dtype=float)) if scaling else np.ones(len(p))
    return np.asarray(model, dtype=float) + server_lr * (p * s) @ np.asarray(deltas, dtype=float)
""",
        "server learning rate ignored": """
import numpy as np


def fedbuff_update(model, deltas, n_samples, staleness, server_lr=1.0, scaling=True):
    p = np.asarray(n_samples, dtype=float) / np.sum(n_samples)
    s = 1.0 / np.sqrt(1.0 + np.asarray(staleness, dtype=float)) if scaling else np.ones(len(p))
    return np.asarray(model, dtype=float) + (p * s) @ np.asarray(deltas, dtype=float)
""",
    },
    "ex-knot-rollback": {
        "back to round first - 1 whether or not it has a checkpoint": """
import numpy as np


def rollback_plan(cluster_labels, first_selected, checkpoint_rounds, erased):
    rolled_back = {}
    for k in erased:
        if first_selected[k] < 0:
            continue
        n = int(cluster_labels[k])
        rolled_back[n] = min(rolled_back.get(n, first_selected[k] - 1), int(first_selected[k]) - 1)
    in_rolled = np.flatnonzero(np.isin(cluster_labels, list(rolled_back)))
    return rolled_back, np.setdiff1d(in_rolled, erased)
""",
        "a client never sent a model still rolls its cluster back": """
import numpy as np


def rollback_plan(cluster_labels, first_selected, checkpoint_rounds, erased):
    rolled_back = {}
    for k in erased:
        n = int(cluster_labels[k])
        before = max(v for v in checkpoint_rounds[n] if v <= max(first_selected[k] - 1, 0))
        rolled_back[n] = min(rolled_back.get(n, before), before)
    in_rolled = np.flatnonzero(np.isin(cluster_labels, list(rolled_back)))
    return rolled_back, np.setdiff1d(in_rolled, erased)
""",
        "the last erased client of a cluster decides, not the earliest": """
import numpy as np


def rollback_plan(cluster_labels, first_selected, checkpoint_rounds, erased):
    rolled_back = {}
    for k in erased:
        if first_selected[k] < 0:
            continue
        n = int(cluster_labels[k])
        rolled_back[n] = max(v for v in checkpoint_rounds[n] if v <= first_selected[k] - 1)
    in_rolled = np.flatnonzero(np.isin(cluster_labels, list(rolled_back)))
    return rolled_back, np.setdiff1d(in_rolled, erased)
""",
        "the erased clients counted among those that retrain": """
import numpy as np


def rollback_plan(cluster_labels, first_selected, checkpoint_rounds, erased):
    rolled_back = {}
    for k in erased:
        if first_selected[k] < 0:
            continue
        n = int(cluster_labels[k])
        before = max(v for v in checkpoint_rounds[n] if v <= first_selected[k] - 1)
        rolled_back[n] = min(rolled_back.get(n, before), before)
    return rolled_back, np.flatnonzero(np.isin(cluster_labels, list(rolled_back)))
""",
    },
    "ex-knot-calibrate": {
        "the fresh updates applied as they are": """
import numpy as np


def calibrated_step(model, stored, fresh, n_samples):
    p = np.asarray(n_samples, dtype=float) / np.sum(n_samples)
    return np.asarray(model, dtype=float) + p @ np.asarray(fresh, dtype=float)
""",
        "direction and length swapped": """
import numpy as np


def calibrated_step(model, stored, fresh, n_samples):
    stored = np.asarray(stored, dtype=float)
    lengths = np.linalg.norm(stored, axis=1)
    target = np.linalg.norm(np.asarray(fresh, dtype=float), axis=1)
    scale = np.divide(target, lengths, out=np.zeros_like(lengths), where=lengths > 0)
    p = np.asarray(n_samples, dtype=float) / np.sum(n_samples)
    return np.asarray(model, dtype=float) + (p * scale) @ stored
""",
        "uniform weights": """
import numpy as np


def calibrated_step(model, stored, fresh, n_samples):
    fresh = np.asarray(fresh, dtype=float)
    lengths = np.linalg.norm(fresh, axis=1)
    target = np.linalg.norm(np.asarray(stored, dtype=float), axis=1)
    scale = np.divide(target, lengths, out=np.zeros_like(lengths), where=lengths > 0)
    return np.asarray(model, dtype=float) + (scale / len(fresh)) @ fresh
""",
        "a zero calibration update divides by zero": """
import numpy as np


def calibrated_step(model, stored, fresh, n_samples):
    fresh = np.asarray(fresh, dtype=float)
    unit = fresh / np.linalg.norm(fresh, axis=1, keepdims=True)
    target = np.linalg.norm(np.asarray(stored, dtype=float), axis=1)
    p = np.asarray(n_samples, dtype=float) / np.sum(n_samples)
    return np.asarray(model, dtype=float) + (p * target) @ unit
""",
    },
}
