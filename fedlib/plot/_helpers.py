"""Plot helpers shared by the chapters; each draws on a given ``ax`` and returns it."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes

from fedlib.plot._style import PALETTE


def ours_beside_paper(
    ax: Axes,
    table,
    *,
    category: str,
    method: str = "method",
    mean: str = "mean",
    std: str | None = "std",
    paper: str = "paper mean",
    category_labels=None,
) -> Axes:
    """The book's "ours beside the paper" figure: grouped bars of our means, the paper's values as black marks.

    Parameters
    ----------
    ax : matplotlib Axes
        Where to draw.
    table : pandas.DataFrame
        One row per (category, method) with our mean, optionally our standard
        deviation (error bar) and the paper's mean; the row order gives the
        order of categories and methods.
    category : str
        Column of the x-axis groups (e.g. "dataset" or "k'").
    method : str, default="method"
        Column of the bars within a group; each method keeps its colour.
    mean, std, paper : str
        Columns of our mean, our standard deviation (``None``: no error bars)
        and the paper's mean (NaN: nothing published, no mark).
    category_labels : sequence of str, optional
        Tick labels; the category values by default.

    Returns
    -------
    Axes
    """
    frame = table.reset_index()
    categories = list(dict.fromkeys(frame[category]))
    methods = list(dict.fromkeys(frame[method]))
    width = 0.8 / len(methods)
    pos = np.arange(len(categories))
    for m, name in enumerate(methods):
        rows = frame[frame[method] == name].set_index(category).reindex(categories)
        x = pos + (m - (len(methods) - 1) / 2) * width
        errors = None if std is None else rows[std].to_numpy(dtype=float)
        ax.bar(x, rows[mean], width, yerr=errors, color=PALETTE[m % len(PALETTE)], label=f"{name} (ours)")
        ax.scatter(x, rows[paper], marker="_", s=220, color="black", zorder=3, label="paper" if m == 0 else None)
    ax.set_xticks(pos, category_labels if category_labels is not None else [str(c) for c in categories])
    return ax


def cluster_size_bars(
    ax: Axes,
    sizes,
    *,
    published=None,
    normalize: bool = False,
    label: str | None = "ours",
    published_label: str = "published",
    color: str | None = None,
) -> Axes:
    """Bar chart of cluster sizes, largest first, with published sizes as dots (the papers' "sizes of the K clusters").

    Parameters
    ----------
    ax : matplotlib Axes
        Where to draw.
    sizes : array-like of int
        Our cluster sizes, in any order.
    published : sequence of int, optional
        A paper's sizes for the same number of clusters; drawn as dots when given.
    normalize : bool, default=False
        Plot shares of the points instead of counts.
    label : str or None, default="ours"
        Legend label of the bars.
    published_label : str, default="published"
        Legend label of the published sizes.
    color : str, optional
        Bar colour (the palette's first by default).

    Returns
    -------
    Axes
    """
    sizes = np.sort(np.asarray(sizes, dtype=float))[::-1]
    ranks = np.arange(1, sizes.size + 1)
    scale = sizes.sum() if normalize else 1.0
    ax.bar(ranks, sizes / scale, color=color or PALETTE[0], label=label)
    if published is not None and len(published) == sizes.size:
        theirs = np.sort(np.asarray(published, dtype=float))[::-1]
        ax.plot(ranks, theirs / (theirs.sum() if normalize else 1.0), "o", color=PALETTE[3], label=published_label)
    ax.set_xlabel("cluster, largest first")
    ax.set_ylabel("share of points" if normalize else "points")
    return ax


def projection_scatter(ax: Axes, X2, labels, *, max_points: int = 3000, random_state=0, s: float = 4.0) -> Axes:
    """Scatter of a 2-D projection coloured by label, subsampled to ``max_points``."""
    X2 = np.asarray(X2)
    labels = np.asarray(labels)
    rng = np.random.default_rng(random_state)
    idx = rng.permutation(X2.shape[0])[:max_points]
    classes = np.unique(labels)
    colors = [PALETTE[j % len(PALETTE)] for j in np.searchsorted(classes, labels[idx])]
    ax.scatter(X2[idx, 0], X2[idx, 1], c=colors, s=s, alpha=0.6, linewidths=0)
    ax.set_xlabel("PC 1")
    ax.set_ylabel("PC 2")
    return ax


def client_heatmap(ax: Axes, counts, *, title: str | None = None) -> Axes:
    """Heatmap of a (n_clients, n_clusters) count matrix: who holds which cluster."""
    counts = np.asarray(counts)
    im = ax.imshow(counts.T, aspect="auto", interpolation="nearest", cmap="viridis")
    ax.set_xlabel("client")
    ax.set_ylabel("cluster")
    ax.set_yticks(range(counts.shape[1]))
    ax.grid(False)
    ax.figure.colorbar(im, ax=ax, label="points")
    if title:
        ax.set_title(title)
    return ax
