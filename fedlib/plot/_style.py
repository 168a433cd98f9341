"""The book's figure style (seaborn's colour-blind palette on a light grid) and each method's colour."""

from __future__ import annotations

from collections.abc import Iterable

import matplotlib as mpl
import seaborn as sns

#: Colours in a fixed order: seaborn's colour-blind palette (blue, orange, green, vermillion, reddish purple,
#: brown, pink, grey, yellow, sky blue).
PALETTE: list[str] = sns.color_palette("colorblind").as_hex()

#: The one colour of each method the book plots, whatever the figure: a colour of :data:`PALETTE`.
#: The methods that share figures (one part of the book) have distinct hues; orange and vermillion, blue and
#: sky blue, reddish purple and pink are never given to two of them. A colour may recur across parts: each
#: part's own method (KNOT, MUFC) is blue, and grey marks the reference it is measured against.
METHOD_COLORS: dict[str, str] = {
    # Asynchronous unlearning (the KNOT chapters).
    "KNOT": PALETTE[0],
    "FedBuff": PALETTE[1],
    "FedEraser": PALETTE[2],
    "Random": PALETTE[4],
    "FedAvg": PALETTE[7],
    # Federated clustering and its unlearning (the MUFC and SecFC chapters).
    "MUFC": PALETTE[0],
    "SecFC": PALETTE[1],
    "K-FED": PALETTE[2],
    "k-FED": PALETTE[2],
    "DC-KM": PALETTE[4],
    "Centralized Lloyd": PALETTE[0],
    "Retraining": PALETTE[7],
}

# Colours for names without one, in this order: first those no method has, the vermillion (next to orange) last.
_SPARE = [PALETTE[i] for i in (5, 9, 8, 6, 3)]


def method_color(name: str) -> str:
    """The colour of a method in every figure of the book.

    Parameters
    ----------
    name : str
        A key of :data:`METHOD_COLORS`, e.g. ``"KNOT"`` or ``"FedBuff"``.

    Returns
    -------
    str
        A hex colour of :data:`PALETTE`.

    Raises
    ------
    KeyError
        If the method has no colour; the message lists those that have one. Figures that also show
        methods without a colour (variants of a method) use :func:`method_palette`.

    Examples
    --------
    >>> from fedlib.plot import PALETTE, method_color
    >>> method_color("KNOT"), method_color("FedBuff")
    ('#0173b2', '#de8f05')
    >>> method_color("MUFC") == method_color("KNOT") == PALETTE[0]  # each part's own method is blue
    True
    >>> method_color("KNOT, no rollback")
    Traceback (most recent call last):
        ...
    KeyError: "method 'KNOT, no rollback' has no colour in fedlib.plot.METHOD_COLORS; known: Centralized Lloyd, ..."
    """
    try:
        return METHOD_COLORS[name]
    except KeyError:
        known = ", ".join(sorted(METHOD_COLORS))
        raise KeyError(f"method {name!r} has no colour in fedlib.plot.METHOD_COLORS; known: {known}") from None


def method_palette(names: Iterable[str]) -> dict[str, str]:
    """A colour for each method of one figure: its own, or a spare one when it has none.

    Names of :data:`METHOD_COLORS` keep their colour. The others, in the order given, take the palette's
    colours that no method has (brown, sky blue, yellow, pink, vermillion), then those that no method of
    this figure uses, then the palette again in order: the same names always get the same colours.

    Parameters
    ----------
    names : iterable of str
        The figure's methods; repeats are ignored.

    Returns
    -------
    dict of str to str
        Method name to hex colour, in the order of first appearance; usable as seaborn's ``palette=``.

    Examples
    --------
    >>> from fedlib.plot import method_color, method_palette
    >>> palette = method_palette(["KNOT", "KNOT, no rollback", "FedBuff", "KNOT"])
    >>> list(palette)
    ['KNOT', 'KNOT, no rollback', 'FedBuff']
    >>> palette["KNOT"] == method_color("KNOT"), palette["KNOT, no rollback"]  # a spare colour: brown
    (True, '#ca9161')
    """
    names = list(dict.fromkeys(names))
    colours = {name: METHOD_COLORS[name] for name in names if name in METHOD_COLORS}
    unknown = [name for name in names if name not in METHOD_COLORS]
    spare = _SPARE + [c for c in dict.fromkeys(METHOD_COLORS.values()) if c not in colours.values()]
    spare = [c for c in spare if c not in colours.values()]
    for i, name in enumerate(unknown):
        colours[name] = spare[i] if i < len(spare) else PALETTE[(i - len(spare)) % len(PALETTE)]
    return {name: colours[name] for name in names}


def use_style(*, context: str = "notebook") -> None:
    """Apply the book's style to matplotlib (call once at the top of a chapter).

    Seaborn's ``"whitegrid"`` theme with :data:`PALETTE` as the colour cycle, and the book's figure size,
    resolution, titles, spines, legends and colour map; it changes :data:`matplotlib.rcParams` for the
    whole session.

    Parameters
    ----------
    context : {"notebook", "paper", "talk", "poster"}, default="notebook"
        Seaborn's plotting context: the scale of fonts, lines and markers.

    Examples
    --------
    >>> import matplotlib
    >>> from fedlib.plot import PALETTE, use_style
    >>> with matplotlib.rc_context():  # puts matplotlib's settings back afterwards
    ...     use_style(context="paper")
    ...     rc = dict(matplotlib.rcParams)
    >>> rc["figure.dpi"], rc["axes.titleweight"], rc["axes.spines.top"], rc["image.cmap"]
    (110.0, 'bold', False, 'viridis')
    >>> matplotlib.colors.to_hex(rc["axes.prop_cycle"].by_key()["color"][0]) == PALETTE[0]
    True
    """
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
