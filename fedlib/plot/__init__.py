"""One figure style for every chapter, and helpers that take an ``ax`` and return it.

:func:`ours_beside_paper` is the one figure that sets our numbers beside a paper's; :func:`async_timeline` and
:func:`score_curves` draw asynchronous training on its simulated clock. Each method has one colour in every
figure, :data:`METHOD_COLORS` (:func:`method_color`, :func:`method_palette`).
"""

from fedlib._optional import import_optional

import_optional("matplotlib", "plot", feature="fedlib.plot")
import_optional("seaborn", "plot", feature="fedlib.plot")

from fedlib.plot._helpers import (
    ROLE_COLORS,
    client_heatmap,
    cluster_size_bars,
    masking_graph,
    ours_beside_paper,
    projection_scatter,
)
from fedlib.plot._style import METHOD_COLORS, PALETTE, method_color, method_palette, use_style
from fedlib.plot._timeline import async_timeline, score_curves

__all__ = [
    "METHOD_COLORS",
    "PALETTE",
    "ROLE_COLORS",
    "async_timeline",
    "client_heatmap",
    "cluster_size_bars",
    "masking_graph",
    "method_color",
    "method_palette",
    "ours_beside_paper",
    "projection_scatter",
    "score_curves",
    "use_style",
]
