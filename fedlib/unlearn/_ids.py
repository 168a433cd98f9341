"""Row-id lookup for clients that forget rows: sorted ids and ``searchsorted``, never a dict of every id."""

from __future__ import annotations

import numpy as np

from fedlib._typing import NDArrayInt


class IdIndex:
    """Positions of row ids in a client's arrays, by binary search.

    Parameters
    ----------
    ids : ndarray of int
        Row ids (in the ``X`` given to ``fit``) in the client's row order; distinct.

    Examples
    --------
    >>> index = IdIndex(np.array([40, 10, 30]))
    >>> index.positions([30, 40]).tolist(), index.positions([20]).tolist()
    ([2, 0], [-1])
    """

    def __init__(self, ids: NDArrayInt) -> None:
        self._order = np.argsort(ids, kind="stable")
        self._sorted = ids[self._order]

    def positions(self, query) -> NDArrayInt:
        """Position of each queried id, or -1 where the client never held it. ``O(R log n)``."""
        query = np.asarray(query, dtype=np.int64).ravel()
        at = np.searchsorted(self._sorted, query)
        at_clipped = np.minimum(at, max(self._sorted.size - 1, 0))
        found = (at < self._sorted.size) & (self._sorted[at_clipped] == query) if self._sorted.size else at < 0
        return np.where(found, self._order[at_clipped] if self._sorted.size else -1, -1).astype(np.int64)
