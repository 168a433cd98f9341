"""Tables as the chapters show them: every cell as short text, nothing computed.

:func:`readable` turns a results table into text cells a reader can take in at a glance: floats to a few
significant digits, integers too long to read as a power of ten with their number of digits, booleans as
"yes"/"no", one-element tuples as their element, lists as comma-separated values, and a missing value as a
dash (or a word the chapter chooses). The numbers themselves stay in the frame the chapter computed; only
the copy shown is text.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping

import numpy as np
import pandas as pd

#: Shown for a missing value (NaN, None, an empty string) unless a chapter says what is missing.
MISSING = "—"

#: Integers from this size on are shown as a power of ten with their number of digits.
BIG_INTEGER = 10**15

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _whole(value: int) -> str:
    """A whole number, with thousands separators from five digits on (2036, 27,131)."""
    return f"{value:,}" if abs(value) >= 10_000 else str(value)


def power_of_ten(value: float | int, digits: int = 3) -> str:
    """``value`` as "m × 10ᵉ" with ``digits`` significant digits; exact for Python integers of any size.

    Examples
    --------
    >>> power_of_ten(1152950328365038294212588805060800136730139468466645618381078, 3)
    '1.15 × 10⁶⁰'
    >>> power_of_ten(-2.5e-9)
    '-2.50 × 10⁻⁹'
    """
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        value = int(value)
        sign, magnitude = ("-" if value < 0 else ""), abs(value)
        exponent = len(str(magnitude)) - 1
        shift = exponent - (digits - 1)
        mantissa = magnitude // 10**shift if shift > 0 else magnitude * 10**-shift
        rest = magnitude - mantissa * 10**shift if shift > 0 else 0
        if shift > 0 and 2 * rest >= 10**shift:  # round half up on the exact digits
            mantissa += 1
        if mantissa >= 10**digits:
            mantissa //= 10
            exponent += 1
        text = str(mantissa)
        lead = f"{text[0]}.{text[1:]}" if digits > 1 else text
        return f"{sign}{lead} × 10{str(exponent).translate(_SUPERSCRIPT)}"
    mantissa_text, exponent_text = f"{float(value):.{digits - 1}e}".split("e")
    return f"{mantissa_text} × 10{str(int(exponent_text)).translate(_SUPERSCRIPT)}"


def _float(value: float, digits: int, decimals: int | None) -> str:
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    if decimals is not None:
        return f"{value:,.{decimals}f}" if abs(value) >= 10_000 else f"{value:.{decimals}f}"
    if value == 0:
        return "0"
    if value.is_integer() and abs(value) < BIG_INTEGER:
        return _whole(int(value))
    if abs(value) >= BIG_INTEGER or abs(value) < 1e-4:
        return power_of_ten(value, digits)
    if abs(value) >= 10 ** (digits - 1):  # whole units already carry the significant digits
        return _whole(round(value))
    places = digits - 1 - math.floor(math.log10(abs(value)))
    if abs(round(value, places)) >= 10 ** (digits - places):  # rounding carried into a new leading digit
        places -= 1
    return f"{value:.{max(places, 0)}f}"  # trailing zeros are significant digits


def short_float(value: float) -> str:
    """A float in a pandas table: whole numbers as such, one decimal from 100 on, else three significant digits.

    For ``pd.set_option("display.float_format", short_float)``, where a chapter shows many small tables of
    rates and bounds and :func:`readable` on each would be noise.

    Examples
    --------
    >>> [short_float(v) for v in (40.0, 27131.0, 308.104, 0.0095617, 16.490839)]
    ['40', '27,131', '308.1', '0.00956', '16.5']
    """
    if value.is_integer():
        return f"{value:,.0f}"
    return f"{value:,.1f}" if abs(value) >= 100 else f"{value:.3g}"


def cell(value, *, digits: int = 3, decimals: int | None = None, missing: str = MISSING) -> str:
    """One value as :func:`readable` shows it.

    Examples
    --------
    >>> [cell(v) for v in (341.150194, 16.490839, 0.001789, 40.0, np.nan, (4,), (True,), [20, 8, 4])]
    ['341', '16.5', '0.00179', '40', '—', '4', 'yes', '20, 8, 4']
    >>> cell(10**194 + 7)
    '1.00 × 10¹⁹⁴ (195 digits)'
    """
    if value is None or (isinstance(value, str) and not value):
        return missing
    if isinstance(value, str):
        return value
    if isinstance(value, bool | np.bool_):
        return "yes" if value else "no"
    if isinstance(value, numbers.Integral):
        value = int(value)
        if abs(value) < BIG_INTEGER:
            return _whole(value)
        return f"{power_of_ten(value, digits)} ({len(str(abs(value)))} digits)"
    if isinstance(value, numbers.Real):
        value = float(value)
        return missing if math.isnan(value) else _float(value, digits, decimals)
    if isinstance(value, Mapping):
        return ", ".join(f"{cell(k, digits=digits)}: {cell(v, digits=digits)}" for k, v in value.items())
    if isinstance(value, tuple | list | np.ndarray):
        items = list(np.asarray(value, dtype=object).ravel()) if isinstance(value, np.ndarray) else list(value)
        if not items:
            return missing
        return ", ".join(cell(v, digits=digits, decimals=decimals, missing=missing) for v in items)
    try:
        if pd.isna(value):
            return missing
    except (TypeError, ValueError):
        pass
    return str(value)


def _label(value) -> object:
    """An index label: booleans and tuples read as text, a float as written (0.5), other labels kept."""
    if isinstance(value, bool | np.bool_ | tuple | list):
        return cell(value)
    if isinstance(value, float | np.floating):
        return f"{value:g}"
    return value


def readable(
    frame: pd.DataFrame | pd.Series,
    *,
    digits: int = 3,
    decimals: int | Mapping[str, int] | None = None,
    missing: str | Mapping[str, str] = MISSING,
) -> pd.DataFrame:
    """A copy of ``frame`` with every cell as short text, for display (see :func:`cell`).

    Parameters
    ----------
    frame : pandas.DataFrame or pandas.Series
        The table as computed (a Series becomes a one-column frame).
    digits : int, default=3
        Significant digits of floats and of integers too long to read.
    decimals : int or dict of str to int, optional
        Floats shown with a fixed number of decimals instead: in every column (e.g. percentages, one decimal),
        or in the columns named (e.g. a logarithm whose second decimal matters).
    missing : str or dict of str to str, default="—"
        What a missing value reads; a dict gives it per column (others read "—").

    Returns
    -------
    pandas.DataFrame
        Same index and columns, text cells; boolean and tuple index labels as text too.

    Examples
    --------
    >>> readable(pd.DataFrame({"t": [12_341.15, np.nan], "ok": [True, False]}), missing={"t": "not reached"})
                 t   ok
    0       12,341  yes
    1  not reached   no
    """
    if isinstance(frame, pd.Series):
        frame = frame.to_frame()
    if not isinstance(decimals, Mapping):
        decimals = dict.fromkeys(frame.columns, decimals)
    out = pd.DataFrame(index=frame.index, columns=frame.columns, dtype=object)
    for position, column in enumerate(frame.columns):
        gone = missing.get(column, MISSING) if isinstance(missing, Mapping) else missing
        places = decimals.get(column)
        out.iloc[:, position] = [
            cell(v, digits=digits, decimals=places, missing=gone) for v in frame.iloc[:, position].tolist()
        ]
    if isinstance(out.index, pd.MultiIndex):
        out.index = pd.MultiIndex.from_tuples(
            [tuple(_label(v) for v in labels) for labels in out.index], names=out.index.names
        )
    elif out.index.dtype == object or out.index.dtype == bool or out.index.dtype.kind == "f":
        out.index = pd.Index([_label(v) for v in out.index], name=out.index.name)
    return out

