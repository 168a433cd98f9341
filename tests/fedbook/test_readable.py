"""How the chapters show their tables (book/fedbook/_readable.py): text cells, nothing computed."""

from __future__ import annotations

import numpy as np
import pandas as pd
from fedbook import readable
from fedbook._readable import cell, power_of_ten


def test_floats_keep_a_few_significant_digits():
    assert [cell(v) for v in (341.150194, 16.490839, 0.001789, 2.828427, -168.8)] == [
        "341", "16.5", "0.00179", "2.83", "-169",
    ]  # fmt: skip
    assert cell(40.0) == "40" and cell(2036) == "2036" and cell(27_131.0) == "27,131" and cell(0.0) == "0"
    assert cell(1.267651e230) == "1.27 × 10²³⁰" and cell(float("inf")) == "∞"
    assert cell(308.098705, decimals=2) == "308.10"


def test_long_integers_read_as_powers_of_ten_with_their_length():
    value = 1152950328365038294212588805060800136730139468466645618381078168406131783405 * 10**120
    assert cell(value) == f"1.15 × 10¹⁹⁵ ({len(str(value))} digits)"
    assert power_of_ten(999_999, 3) == "1.00 × 10⁶" and power_of_ten(123_456_789, 4) == "1.235 × 10⁸"
    assert power_of_ten(10**200 - 1, 7) == "1.000000 × 10²⁰⁰"


def test_tuples_booleans_and_missing_values_read_as_words():
    assert [cell(v) for v in ((4,), (True,), (False,), [20, 8, 4], np.array([1, 2]), {-1: 3, 0: 5})] == [
        "4", "yes", "no", "20, 8, 4", "1, 2", "-1: 3, 0: 5",
    ]  # fmt: skip
    assert cell(np.nan) == cell(None) == cell("") == "—"
    assert cell(np.nan, missing="not reached") == "not reached"


def test_readable_frame_keeps_index_and_columns():
    frame = pd.DataFrame(
        {"time": [707.357961, np.nan], "reached": [True, False], "sizes": [(20,), (4, 5, 2, 3, 6)]},
        index=pd.Index(["FedAvg", "Random"], name="method"),
    )
    shown = readable(frame, missing={"time": "not reached"})
    assert list(shown.columns) == list(frame.columns) and shown.index.equals(frame.index)
    assert shown.loc["FedAvg"].tolist() == ["707", "yes", "20"]
    assert shown.loc["Random"].tolist() == ["not reached", "no", "4, 5, 2, 3, 6"]
    assert readable(frame, decimals=1).loc["FedAvg", "time"] == "707.4"
    grouped = pd.Series([1.0, 2.5], index=pd.MultiIndex.from_tuples([("KNOT", False), ("KNOT", True)]))
    assert readable(grouped).index.tolist() == [("KNOT", "no"), ("KNOT", "yes")]
    assert readable(pd.Series([1.0], index=pd.Index([0.5], name="alpha"))).index.tolist() == ["0.5"]
    assert frame["time"].iloc[0] == 707.357961  # the computed frame is untouched

