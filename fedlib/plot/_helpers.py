"""Plot helpers shared by the chapters; each draws on a given ``ax`` and returns it."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes

from fedlib._random import check_random_state
from fedlib._typing import SeedLike
from fedlib.plot._style import PALETTE, method_palette


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
    colors=None,
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
        Column of the bars within a group; each method has its book-wide colour
        (:func:`method_palette`).
    mean, std, paper : str
        Columns of our mean, our standard deviation (``None``: no error bars)
        and the paper's mean (NaN: nothing published, no mark).
    category_labels : sequence of str, optional
        Tick labels; the category values by default.
    colors : mapping of str to colour, optional
        Bar colour per method; by default :func:`method_palette` of the methods, so that a method of
        :data:`METHOD_COLORS` has the colour it has in every figure.

    Returns
    -------
    Axes
        ``ax``.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> import pandas as pd
    >>> from fedlib.plot import ours_beside_paper
    >>> rng = np.random.default_rng(0)
    >>> table = pd.DataFrame(
    ...     {
    ...         "dataset": ["MNIST", "MNIST", "CIFAR-10", "CIFAR-10"],
    ...         "method": ["KNOT", "FedBuff", "KNOT", "FedBuff"],
    ...         "mean": rng.uniform(0.5, 0.9, size=4),
    ...         "std": rng.uniform(0.01, 0.03, size=4),
    ...         "paper mean": [0.92, 0.87, 0.64, np.nan],  # NaN: the paper has no value, no mark
    ...     }
    ... )
    >>> fig, ax = plt.subplots()
    >>> ax = ours_beside_paper(ax, table, category="dataset")
    >>> len(ax.patches)  # one bar per (dataset, method)
    4
    >>> [label.get_text() for label in ax.get_xticklabels()]
    ['MNIST', 'CIFAR-10']
    >>> sorted(ax.get_legend_handles_labels()[1])  # each method's bars, and the paper's marks
    ['FedBuff (ours)', 'KNOT (ours)', 'paper']
    >>> plt.close(fig)
    """
    frame = table.reset_index()
    categories = list(dict.fromkeys(frame[category]))
    methods = list(dict.fromkeys(frame[method]))
    colours = method_palette(methods) if colors is None else dict(colors)
    width = 0.8 / len(methods)
    pos = np.arange(len(categories))
    for m, name in enumerate(methods):
        rows = frame[frame[method] == name].set_index(category).reindex(categories)
        x = pos + (m - (len(methods) - 1) / 2) * width
        errors = None if std is None else rows[std].to_numpy(dtype=float)
        ax.bar(x, rows[mean], width, yerr=errors, color=colours[name], label=f"{name} (ours)")
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
        ``ax``.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> from fedlib.plot import cluster_size_bars
    >>> rng = np.random.default_rng(0)
    >>> sizes = np.bincount(rng.integers(0, 4, size=100))  # four clusters of 100 points
    >>> fig, ax = plt.subplots()
    >>> ax = cluster_size_bars(ax, sizes, published=[25, 35, 20, 20])
    >>> [int(bar.get_height()) for bar in ax.patches] == sorted(sizes, reverse=True)  # largest first
    True
    >>> ax.get_lines()[0].get_ydata().tolist()  # the published sizes, largest first too
    [35.0, 25.0, 20.0, 20.0]
    >>> ax.get_xlabel(), ax.get_ylabel()
    ('cluster, largest first', 'points')
    >>> plt.close(fig)
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


def projection_scatter(
    ax: Axes, X2, labels, *, max_points: int = 3000, random_state: SeedLike = None, s: float = 4.0
) -> Axes:
    """Scatter of a 2-D projection coloured by label, subsampled to ``max_points``.

    Parameters
    ----------
    ax : matplotlib Axes
        Where to draw.
    X2 : array-like of shape (n_samples, 2)
        The projected points (e.g. their first two principal components).
    labels : array-like of shape (n_samples,)
        A label per point; the sorted distinct labels take the colours of :data:`PALETTE` in order.
    max_points : int, default=3000
        Draw at most this many points, drawn at random without replacement.
    random_state : int, numpy.random.Generator or None, default=None
        Draws the subsample (and the order in which the points are drawn).
    s : float, default=4.0
        Marker size, in points squared.

    Returns
    -------
    Axes
        ``ax``.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> from fedlib.plot import projection_scatter
    >>> rng = np.random.default_rng(0)
    >>> X2 = rng.normal(size=(500, 2))
    >>> labels = rng.integers(0, 3, size=500)
    >>> fig, ax = plt.subplots()
    >>> ax = projection_scatter(ax, X2, labels, max_points=200, random_state=0)
    >>> points = ax.collections[0]
    >>> len(points.get_offsets()), len({tuple(colour) for colour in points.get_facecolors()})  # 200 points, 3 labels
    (200, 3)
    >>> ax.get_xlabel(), ax.get_ylabel()
    ('PC 1', 'PC 2')
    >>> plt.close(fig)
    """
    X2 = np.asarray(X2)
    labels = np.asarray(labels)
    idx = check_random_state(random_state).permutation(X2.shape[0])[:max_points]
    classes = np.unique(labels)
    colors = [PALETTE[j % len(PALETTE)] for j in np.searchsorted(classes, labels[idx])]
    ax.scatter(X2[idx, 0], X2[idx, 1], c=colors, s=s, alpha=0.6, linewidths=0)
    ax.set_xlabel("PC 1")
    ax.set_ylabel("PC 2")
    return ax


def client_heatmap(ax: Axes, counts, *, title: str | None = None) -> Axes:
    """Heatmap of a (n_clients, n_clusters) count matrix: who holds which cluster.

    Clients run along the x-axis and clusters down the y-axis; a colour bar of the counts is added to the
    figure of ``ax``.

    Parameters
    ----------
    ax : matplotlib Axes
        Where to draw.
    counts : array-like of shape (n_clients, n_clusters)
        The number of points of each cluster that each client holds.
    title : str, optional
        Axes title.

    Returns
    -------
    Axes
        ``ax``.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> from fedlib.plot import client_heatmap
    >>> rng = np.random.default_rng(0)
    >>> counts = rng.integers(0, 10, size=(5, 3))  # 5 clients, 3 clusters
    >>> fig, ax = plt.subplots()
    >>> ax = client_heatmap(ax, counts, title="who holds what")
    >>> ax.images[0].get_array().shape  # clusters down, clients across
    (3, 5)
    >>> ax.get_title(), ax.get_xlabel(), ax.get_ylabel()
    ('who holds what', 'client', 'cluster')
    >>> len(fig.axes)  # the heatmap and its colour bar
    2
    >>> plt.close(fig)
    """
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


#: Colours of the client roles in masking-graph drawings.
ROLE_COLORS = {
    "honest": PALETTE[0],
    "dropped": PALETTE[7],
    "unlearned": PALETTE[2],
    "adversarial": PALETTE[3],
}


def masking_graph(
    ax: Axes, graph, *, roles: dict[int, str] | None = None, labels=None, title: str | None = None, legend: bool = True
):
    """Draw a masking graph with its clients on a circle, coloured by role (Liu et al. 2025, Figs. 2-3).

    Edges touching a client who is not honest are dashed and faint: their
    masks are gone (dropped, unlearned) or known to the server (adversarial).

    Parameters
    ----------
    ax : matplotlib Axes
        Where to draw.
    graph : fedlib.secagg.MaskingGraph
        Anything with ``neighbors`` (one array of neighbour ids per client).
    roles : dict of int to str, optional
        ``"dropped"``, ``"unlearned"`` or ``"adversarial"`` per client; others are ``"honest"``.
    labels : sequence of str, optional
        Client labels; by default ``u1, u2, ...``.
    title : str, optional
        Axes title.
    legend : bool, default=True
        Draw a legend of the roles present under the graph (a figure with
        several panels draws one legend for all, from :data:`ROLE_COLORS`).

    Returns
    -------
    matplotlib Axes
        ``ax``.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from fedlib.plot import masking_graph
    >>> from fedlib.secagg import harary_graph
    >>> graph = harary_graph(6, 2, shuffle=False)  # a ring of 6 clients
    >>> fig, ax = plt.subplots()
    >>> ax = masking_graph(ax, graph, roles={1: "dropped"}, title="H(6, 2)")
    >>> edges = ax.get_lines()
    >>> len(edges), sum(edge.get_linestyle() == "--" for edge in edges)  # u2's two edges are dashed
    (6, 2)
    >>> [text.get_text() for text in ax.get_legend().get_texts()], ax.get_title()
    (['honest', 'dropped'], 'H(6, 2)')
    >>> plt.close(fig)
    """
    roles = roles or {}
    n = len(graph.neighbors)
    labels = labels if labels is not None else [f"u{i + 1}" for i in range(n)]
    angle = np.pi / 2 - 2 * np.pi * np.arange(n) / n
    xy = np.column_stack([np.cos(angle), np.sin(angle)])
    for i, neighbours in enumerate(graph.neighbors):
        for j in neighbours:
            j = int(j)
            if j <= i:
                continue
            cut = roles.get(i, "honest") != "honest" or roles.get(j, "honest") != "honest"
            ax.plot(*xy[[i, j]].T, color="0.75" if cut else "0.3", ls="--" if cut else "-", lw=1.0, zorder=1)
    for i in range(n):
        role = roles.get(i, "honest")
        ax.scatter(*xy[i], s=500, color=ROLE_COLORS[role], edgecolors="black", linewidths=0.6, zorder=2)
        ax.annotate(labels[i], xy[i], ha="center", va="center", fontsize=9, color="white", weight="bold", zorder=3)
    if legend:
        used = sorted({roles.get(i, "honest") for i in range(n)}, key=list(ROLE_COLORS).index)
        for role in used:
            ax.scatter([], [], s=60, color=ROLE_COLORS[role], edgecolors="black", linewidths=0.6, label=role)
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=len(used), fontsize=8, handletextpad=0.2)
    ax.set_aspect("equal")
    ax.set_xlim(-1.3, 1.3)
    ax.set_ylim(-1.3, 1.3)
    ax.axis("off")
    if title:
        ax.set_title(title)
    return ax
