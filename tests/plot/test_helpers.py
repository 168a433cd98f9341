"""Plot helpers (fedlib/plot/_helpers.py): what is drawn is the data given, read back from the Axes."""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from fedlib.plot import (
    METHOD_COLORS,
    PALETTE,
    ROLE_COLORS,
    client_heatmap,
    cluster_size_bars,
    masking_graph,
    method_palette,
    ours_beside_paper,
    projection_scatter,
)
from fedlib.secagg import harary_graph


@pytest.fixture
def ax():
    fig, ax = plt.subplots()
    yield ax
    plt.close(fig)


def bar_heights(ax):
    return [patch.get_height() for patch in ax.patches]


def test_cluster_size_bars_draw_sizes_largest_first_and_published_dots(ax):
    assert cluster_size_bars(ax, [5, 20, 10], published=[30, 3, 12]) is ax
    assert bar_heights(ax) == [20.0, 10.0, 5.0]
    (dots,) = ax.lines
    assert dots.get_ydata().tolist() == [30.0, 12.0, 3.0]
    assert ax.get_ylabel() == "points"


def test_cluster_size_bars_normalize_to_shares(ax):
    cluster_size_bars(ax, [1, 3], published=[2, 2], normalize=True)
    assert bar_heights(ax) == [0.75, 0.25] and ax.lines[0].get_ydata().tolist() == [0.5, 0.5]
    assert ax.get_ylabel() == "share of points"


def test_cluster_size_bars_skip_published_sizes_of_another_k(ax):
    cluster_size_bars(ax, [1, 3], published=[2, 2, 2])
    assert len(ax.lines) == 0


def test_ours_beside_paper_groups_bars_by_category_and_marks_the_paper(ax):
    table = pd.DataFrame(
        {
            "dataset": ["A", "A", "B", "B"],
            "method": ["x", "y", "x", "y"],
            "mean": [1.0, 2.0, 3.0, 4.0],
            "std": [0.1, 0.2, 0.3, 0.4],
            "paper mean": [1.5, np.nan, 3.5, 4.5],
        }
    )
    assert ours_beside_paper(ax, table, category="dataset") is ax
    assert bar_heights(ax) == [1.0, 3.0, 2.0, 4.0]  # method x at A and B, then method y
    xs = [patch.get_x() + patch.get_width() / 2 for patch in ax.patches]
    assert xs == pytest.approx([-0.2, 0.8, 0.2, 1.2])
    marks = np.vstack([c.get_offsets() for c in ax.collections if len(c.get_offsets()) == 2])
    np.testing.assert_allclose(marks[:, 1], [1.5, 3.5, np.nan, 4.5])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["A", "B"]
    x, y = method_palette(["x", "y"]).values()  # names without a colour of their own
    assert ax.patches[0].get_facecolor() == matplotlib.colors.to_rgba(x) != ax.patches[2].get_facecolor()
    assert ax.patches[2].get_facecolor() == matplotlib.colors.to_rgba(y)


def test_ours_beside_paper_gives_each_method_its_book_wide_colour(ax):
    table = pd.DataFrame({"task": ["A"] * 3, "method": ["FedEraser", "Random", "KNOT"], "mean": [1.0, 2.0, 3.0],
                          "paper mean": [np.nan] * 3})  # fmt: skip
    ours_beside_paper(ax, table, category="task", std=None)
    colours = [matplotlib.colors.to_hex(patch.get_facecolor()) for patch in ax.patches]
    assert colours == [METHOD_COLORS[m] for m in ("FedEraser", "Random", "KNOT")]
    ax.clear()
    ours_beside_paper(ax, table, category="task", std=None, colors={"FedEraser": "red", "Random": "blue",
                                                                    "KNOT": "green"})  # fmt: skip
    assert ax.patches[0].get_facecolor() == matplotlib.colors.to_rgba("red")


def test_projection_scatter_subsamples_and_colours_by_label(ax):
    X2 = np.arange(20.0).reshape(10, 2)
    labels = np.array([0, 1] * 5)
    projection_scatter(ax, X2, labels, max_points=4, random_state=3)
    points = ax.collections[0].get_offsets()
    idx = np.random.default_rng(3).permutation(10)[:4]
    np.testing.assert_array_equal(points, X2[idx])
    colours = ax.collections[0].get_facecolors()[:, :3]
    expected = [matplotlib.colors.to_rgb(PALETTE[label]) for label in labels[idx]]
    np.testing.assert_allclose(colours, expected)


def test_client_heatmap_shows_clusters_by_clients(ax):
    counts = np.array([[3, 0], [1, 2], [0, 5]])
    client_heatmap(ax, counts, title="who holds what")
    np.testing.assert_array_equal(ax.images[0].get_array(), counts.T)
    assert ax.get_title() == "who holds what" and ax.get_xlabel() == "client"


def test_masking_graph_draws_every_edge_once_and_colours_roles(ax):
    graph = harary_graph(8, 3, shuffle=False)
    masking_graph(ax, graph, roles={1: "dropped", 7: "unlearned"})
    edges = [line for line in ax.get_lines() if len(line.get_xdata()) == 2]
    assert len(edges) == graph.n_edges == 12
    assert sum(line.get_linestyle() == "--" for line in edges) == 6  # the 3 + 3 edges of u2 and u8
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["honest", "dropped", "unlearned"] and set(labels) <= set(ROLE_COLORS)
