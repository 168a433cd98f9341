"""One figure style for every chapter, and helpers that take an ``ax`` and return it."""

from fedlib.plot._helpers import client_heatmap, cluster_size_bars, projection_scatter
from fedlib.plot._style import PALETTE, use_style

__all__ = ["PALETTE", "client_heatmap", "cluster_size_bars", "projection_scatter", "use_style"]
