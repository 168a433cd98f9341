"""Figures of asynchronous training (fedlib/plot/_timeline.py): read back from the drawn Axes."""

from __future__ import annotations

import types

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from fedlib.plot import PALETTE, async_timeline, method_color, score_curves


@pytest.fixture
def ax():
    fig, ax = plt.subplots(figsize=(8, 4))
    yield ax
    plt.close(fig)


@pytest.fixture
def schedule():
    trainings = pd.DataFrame(
        {
            "client": [0, 0, 1, 1, 2],
            "cluster": [0, 0, 1, 1, 0],
            "start": [0.0, 40.0, 0.0, 35.0, 10.0],
            "finish": [40.0, 90.0, 35.0, 80.0, 70.0],
            "fate": ["aggregated", "aggregated", "aggregated", "discarded", "aggregated"],
        }
    )
    aggregations = pd.DataFrame({"time": [35.0, 40.0, 70.0], "cluster": [1, 0, 0], "replaced": [False, False, True]})
    return trainings, aggregations


def erasure_label(ax):
    (label,) = [t for t in ax.texts if t.get_text() == "erasure"]
    return label


def test_timeline_draws_a_bar_per_training_and_a_row_per_client_and_cluster(ax, schedule):
    trainings, aggregations = schedule
    assert async_timeline(ax, trainings, aggregations, erased=[1]) is ax
    assert len(ax.patches) == len(trainings)
    assert [p.get_width() for p in ax.patches] == (trainings["finish"] - trainings["start"]).tolist()
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["client 0", "client 1 (erased)", "client 2", "cluster 0 aggregates", "cluster 1 aggregates"]
    assert ax.yaxis_inverted() and not ax.texts  # no erasure, no label
    discarded = ax.patches[3]
    assert discarded.get_hatch() == "///" and discarded.get_facecolor() == matplotlib.colors.to_rgba("white")
    assert ax.patches[0].get_facecolor() == matplotlib.colors.to_rgba(PALETTE[0])


@pytest.mark.parametrize("erase_time", [0.0, 38.0, 75.0])
def test_the_erasure_label_is_drawn_over_the_bars_and_overlaps_none(ax, schedule, erase_time):
    trainings, aggregations = schedule
    async_timeline(ax, trainings, aggregations, erase_time=erase_time)
    label = erasure_label(ax)
    assert label.get_zorder() > max(p.get_zorder() for p in ax.patches)
    assert label.get_bbox_patch() is not None and label.get_bbox_patch().get_facecolor()[:3] == (1.0, 1.0, 1.0)
    ax.figure.canvas.draw()
    box = label.get_window_extent()
    for bar in ax.patches:
        assert not box.overlaps(bar.get_window_extent()), bar
    # Inside the axes, in the band above the first client's row (the y-axis runs downwards).
    assert ax.get_window_extent().contains(*box.p0) and ax.get_window_extent().contains(*box.p1)
    assert label.xy[1] < -0.35 and ax.get_ylim()[1] < label.xy[1]


def run(method, scores, erase_time=2.0):
    scores = np.asarray(scores, dtype=float)
    curve = types.SimpleNamespace(times=np.arange(len(scores)), best=scores.max(axis=1), scores=scores)
    return types.SimpleNamespace(method=method, erase_time=erase_time, curve=curve)


def test_score_curves_give_each_method_its_colour_whatever_the_order(ax):
    runs = [run("Random", [[0.1, 0.2], [0.3, 0.5]]), run("FedBuff", [[0.2], [0.4]]), run("KNOT", [[0.1], [0.6]])]
    score_curves(ax, runs, target=0.5)
    lines = {line.get_label(): line for line in ax.lines}
    for method in ("Random", "FedBuff", "KNOT"):
        assert matplotlib.colors.to_hex(lines[method].get_color()) == method_color(method)
    np.testing.assert_array_equal(lines["Random"].get_ydata(), [0.2, 0.5])
    assert len(ax.collections) == 1  # the band of the run with two clusters
    target = [line for line in ax.lines if line.get_linestyle() == ":"]
    assert len(target) == 1 and matplotlib.colors.to_hex(target[0].get_color()) == "#000000"


def test_score_curves_take_explicit_colours(ax):
    score_curves(ax, [run("mine", [[0.1], [0.2]])], colors={"mine": "#123456"}, band=False)
    assert ax.lines[0].get_color() == "#123456"
