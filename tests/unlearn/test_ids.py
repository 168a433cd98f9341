"""Row-id lookup by binary search (fedlib/unlearn/_ids.py) against a dict of every id.

``IdIndex`` has no public name: MUFC uses it inside ``remove``; it is imported from its module here so that the
lookup is checked on its own, including the empty client and ids that were never held.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from fedlib.unlearn._ids import IdIndex


@given(
    st.lists(st.integers(-(2**62), 2**62), unique=True, max_size=40),
    st.lists(st.integers(-(2**62), 2**62), max_size=20),
    st.data(),
)
def test_positions_equal_a_dict_lookup(ids, others, data):
    held = data.draw(st.lists(st.sampled_from(ids), max_size=20)) if ids else []
    query = data.draw(st.permutations(held + others))
    position = {v: i for i, v in enumerate(ids)}
    got = IdIndex(np.array(ids, dtype=np.int64)).positions(query)
    assert got.dtype == np.int64
    assert got.tolist() == [position.get(v, -1) for v in query]


def test_small_ids_around_the_held_ones():
    ids = np.array([40, 10, 30])
    index = IdIndex(ids)
    query = [9, 10, 11, 29, 30, 31, 39, 40, 41]
    assert index.positions(query).tolist() == [-1, 1, -1, -1, 2, -1, -1, 0, -1]
    assert index.positions(np.array([[30, 40]])).tolist() == [2, 0]  # any shape, read flat
    assert index.positions([]).tolist() == []


def test_an_empty_client_holds_nothing():
    index = IdIndex(np.array([], dtype=np.int64))
    assert index.positions([0, 5, -1]).tolist() == [-1, -1, -1]
