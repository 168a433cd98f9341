"""One figure style for every chapter, and helpers that take an ``ax`` and return it.

:func:`ours_beside_paper` is the one figure that sets our numbers beside a paper's.
"""

from fedlib.plot._helpers import (
    ROLE_COLORS,
    client_heatmap,
    cluster_size_bars,
    masking_graph,
    ours_beside_paper,
    projection_scatter,
)
from fedlib.plot._style import PALETTE, use_style

__all__ = [
    "PALETTE",
    "ROLE_COLORS",
    "client_heatmap",
    "cluster_size_bars",
    "masking_graph",
    "ours_beside_paper",
    "projection_scatter",
    "use_style",
]
