"""Plot helpers shared by the chapters; each draws on a given ``ax`` and returns it."""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes

from fedlib.plot._style import PALETTE


def cluster_size_bars(ax: Axes, sizes, *, label: str | None = None, color: str | None = None) -> Axes:
    """Bar chart of cluster sizes, largest first (the papers' "sizes of the K clusters")."""
    sizes = np.sort(np.asarray(sizes))[::-1]
    ax.bar(np.arange(1, sizes.size + 1), sizes, color=color or PALETTE[0], label=label)
    ax.set_xlabel("cluster (largest first)")
    ax.set_ylabel("points")
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
