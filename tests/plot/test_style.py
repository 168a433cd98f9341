"""The book's figure style (fedlib/plot/_style.py)."""

from __future__ import annotations

import matplotlib as mpl
import pytest
import seaborn as sns

from fedlib.plot import METHOD_COLORS, PALETTE, method_color, method_palette, use_style


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


# The methods that share figures, part by part (the names the chapters plot; tests/fedbook checks them against
# fedbook's method lists).
PARTS = {
    "KNOT": ["KNOT", "FedBuff", "FedEraser", "Random", "FedAvg"],
    "MUFC": ["MUFC", "K-FED", "DC-KM", "Retraining"],
    "SecFC": ["Centralized Lloyd", "SecFC", "k-FED"],
}
# Pairs of PALETTE positions too alike to tell two methods apart: orange and vermillion, blue and sky blue,
# reddish purple and pink.
ALIKE = [{1, 3}, {0, 9}, {4, 6}]


def test_every_plotted_method_has_a_palette_colour():
    names = [name for part in PARTS.values() for name in part]
    assert set(names) == set(METHOD_COLORS)
    for name in names:
        assert method_color(name) == METHOD_COLORS[name] and METHOD_COLORS[name] in PALETTE


@pytest.mark.parametrize("part", sorted(PARTS))
def test_methods_that_share_figures_have_distinct_distinguishable_colours(part):
    positions = [PALETTE.index(method_color(name)) for name in PARTS[part]]
    assert len(set(positions)) == len(positions), dict(zip(PARTS[part], positions, strict=True))
    for pair in ALIKE:
        assert not pair <= set(positions), f"{part}: two methods in near-identical colours {pair}"


def test_the_same_method_has_the_same_colour_however_it_is_spelled():
    assert method_color("K-FED") == method_color("k-FED")


def test_method_color_names_the_known_methods_for_an_unknown_one():
    with pytest.raises(KeyError, match=r"'FedProx' has no colour.*known: .*FedBuff.*KNOT"):
        method_color("FedProx")


def test_method_palette_keeps_known_colours_and_gives_the_others_unused_ones():
    names = ["MUFC", "K-FED (variant)", "K-FED", "DC-KM", "MUFC (variant)", "MUFC"]
    colours = method_palette(names)
    assert list(colours) == ["MUFC", "K-FED (variant)", "K-FED", "DC-KM", "MUFC (variant)"]
    for name in ("MUFC", "K-FED", "DC-KM"):
        assert colours[name] == METHOD_COLORS[name]
    assert len(set(colours.values())) == len(colours) and set(colours.values()) <= set(PALETTE)
    assert colours["K-FED (variant)"] not in METHOD_COLORS.values()  # a colour no method has comes first
    assert method_palette(names) == colours  # the same names, the same colours
    backwards = method_palette(reversed(names))
    assert all(backwards[name] == colours[name] for name in ("MUFC", "K-FED", "DC-KM"))  # whatever the order


def test_method_palette_stays_distinct_for_more_names_than_spare_colours():
    names = ["KNOT", "FedBuff"] + [f"method {i}" for i in range(8)]
    colours = method_palette(names)
    assert len(set(colours.values())) == len(PALETTE)
    assert colours["KNOT"] == METHOD_COLORS["KNOT"] and colours["FedBuff"] == METHOD_COLORS["FedBuff"]
