"""One figure style for every chapter, and helpers that take an ``ax`` and return it."""

from fedlib.plot._style import PALETTE, use_style
from fedlib.plot._helpers import cluster_size_bars, client_heatmap, projection_scatter

__all__ = ["PALETTE", "client_heatmap", "cluster_size_bars", "projection_scatter", "use_style"]
