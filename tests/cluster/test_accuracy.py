"""Clustering accuracy (SecFC §5, Hungarian matching) against brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fedlib.cluster import clustering_accuracy

labels_strategy = st.lists(st.integers(0, 4), min_size=1, max_size=40)


def brute_force_accuracy(true, pred) -> float:
    """Best injective map from predicted to true labels by enumeration (tiny label sets only)."""
    t_vals, p_vals = np.unique(true), np.unique(pred)
    best = 0
    slots = list(t_vals) + [None] * len(p_vals)  # None: predicted label left unmatched
    for image in itertools.permutations(slots, len(p_vals)):
        mapping = dict(zip(p_vals.tolist(), image, strict=True))
        best = max(best, sum(mapping[p] == t for p, t in zip(pred.tolist(), true.tolist(), strict=True)))
    return best / len(true)


@given(st.data())
def test_accuracy_matches_brute_force(draw):
    true = np.array(draw.draw(labels_strategy))
    pred = np.array(draw.draw(st.lists(st.integers(-1, 3), min_size=true.size, max_size=true.size)))
    assert clustering_accuracy(true, pred) == pytest.approx(brute_force_accuracy(true, pred))


@given(labels_strategy, st.permutations(range(5)), st.integers(-3, 100))
def test_accuracy_is_one_for_a_relabelling(true, perm, shift):
    true = np.array(true)
    relabelled = np.array(perm)[true] * 7 + shift  # any injective relabelling, not 0..k-1
    assert clustering_accuracy(true, relabelled) == 1.0


@given(st.data(), st.permutations(range(5)))
def test_accuracy_invariant_to_permuting_predicted_labels(draw, perm):
    true = np.array(draw.draw(labels_strategy))
    pred = np.array(draw.draw(st.lists(st.integers(0, 4), min_size=true.size, max_size=true.size)))
    a = clustering_accuracy(true, pred)
    assert clustering_accuracy(true, np.array(perm)[pred]) == a
    assert 0.0 <= a <= 1.0
    # at least as good as matching the single most frequent (pred, true) pair
    _, pair_counts = np.unique(np.stack([pred, true]), axis=1, return_counts=True)
    assert a * true.size >= pair_counts.max()


def test_accuracy_examples():
    assert clustering_accuracy([0, 0, 1, 1], [1, 1, 0, 0]) == 1.0
    assert clustering_accuracy([0, 0, 1, 1], [0, 0, 0, 0]) == 0.5
    # more predicted than true labels: the extra one counts as wrong
    assert clustering_accuracy([0, 0, 0, 1, 1, 1], [2, 2, 5, 1, 1, 1]) == pytest.approx(5 / 6)
    # string labels
    assert clustering_accuracy(["a", "b", "b"], [3, 4, 4]) == 1.0
    with pytest.raises(ValueError, match="same length, got 2 and 3"):
        clustering_accuracy([0, 1], [0, 1, 1])
