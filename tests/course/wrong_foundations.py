"""Plausible wrong answers to the Foundations part's coding exercises (each must fail its check)."""

WRONG = {
    "ex-kmeans-lloyd-step": {
        "unweighted means": '''
import numpy as np

def lloyd_step(X, centers, weights):
    d2 = ((X[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)
    labels = np.argmin(d2, axis=1)
    new = centers.astype(float).copy()
    for k in range(len(centers)):
        if np.any(labels == k):
            new[k] = X[labels == k].mean(axis=0)
    return new, labels
''',
        "an empty cluster moves to the origin": '''
import numpy as np

def lloyd_step(X, centers, weights):
    d2 = ((X[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)
    labels = np.argmin(d2, axis=1)
    mass = np.bincount(labels, weights=weights, minlength=len(centers))
    sums = np.zeros_like(centers, dtype=float)
    np.add.at(sums, labels, weights[:, None] * X)
    return sums / np.maximum(mass, 1e-300)[:, None], labels
''',
        "distances instead of nearest (argmax)": '''
import numpy as np

def lloyd_step(X, centers, weights):
    d2 = ((X[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)
    labels = np.argmax(d2, axis=1)
    mass = np.bincount(labels, weights=weights, minlength=len(centers))
    sums = np.zeros_like(centers, dtype=float)
    np.add.at(sums, labels, weights[:, None] * X)
    new = centers.astype(float).copy()
    new[mass > 0] = sums[mass > 0] / mass[mass > 0, None]
    return new, labels
''',
    },
    "ex-kmeans-d2-probabilities": {
        "distance, not squared distance": '''
import numpy as np

def d2_probabilities(X, centers, weights):
    d = np.sqrt(((X[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2)).min(axis=1)
    return weights * d / np.sum(weights * d)
''',
        "weights ignored": '''
import numpy as np

def d2_probabilities(X, centers, weights):
    d2 = ((X[:, None, :] - centers[None, :, :]) ** 2).sum(axis=2).min(axis=1)
    return d2 / d2.sum()
''',
        "distance to the first centre only": '''
import numpy as np

def d2_probabilities(X, centers, weights):
    d2 = ((X - centers[0]) ** 2).sum(axis=1)
    return weights * d2 / np.sum(weights * d2)
''',
    },
}
