"""The book's figure style (seaborn's colour-blind palette on a light grid)."""

from __future__ import annotations

import matplotlib as mpl
import seaborn as sns

#: Colours in a fixed order; methods keep their colour across chapters.
PALETTE: list[str] = sns.color_palette("colorblind").as_hex()


def use_style(*, context: str = "notebook") -> None:
    """Apply the book's style to matplotlib (call once at the top of a chapter)."""
    sns.set_theme(context=context, style="whitegrid", palette=PALETTE)
    mpl.rcParams.update(
        {
            "figure.figsize": (6.4, 3.6),
            "figure.dpi": 110,
            "savefig.dpi": 150,
            "savefig.bbox": "tight",
            "axes.titlesize": "medium",
            "axes.titleweight": "bold",
            "axes.spines.top": False,
            "axes.spines.right": False,
            "legend.frameon": False,
            "image.cmap": "viridis",
        }
    )
