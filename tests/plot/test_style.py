"""The book's figure style (fedlib/plot/_style.py)."""

from __future__ import annotations

import matplotlib as mpl
import seaborn as sns

from fedlib.plot import PALETTE, use_style


def test_palette_is_seaborns_colour_blind_palette():
    assert PALETTE == sns.color_palette("colorblind").as_hex()


def test_use_style_sets_the_documented_parameters():
    with mpl.rc_context():
        use_style()
        assert mpl.rcParams["figure.figsize"] == [6.4, 3.6]
        assert mpl.rcParams["savefig.bbox"] == "tight" and mpl.rcParams["image.cmap"] == "viridis"
        assert not mpl.rcParams["axes.spines.top"] and not mpl.rcParams["legend.frameon"]
        cycle = [c["color"] for c in mpl.rcParams["axes.prop_cycle"]]
        assert [mpl.colors.to_hex(c) for c in cycle[: len(PALETTE)]] == PALETTE
