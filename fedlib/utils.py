"""Public helpers for code built on fedlib (experiment drivers, benchmarks, chapters).

- :data:`SeedLike` and :func:`check_random_state`: every random choice takes an int, a
  ``numpy.random.Generator``, a ``SeedSequence`` or ``None``; :func:`spawn_generators` gives
  independent per-client streams.
- :func:`check_scalar`: the one scalar validator (a float where an int is meant raises).
- :func:`progress`: a tqdm bar interactively, none in the rendered book (``FEDLIB_PROGRESS=0``).
"""

from fedlib._progress import progress
from fedlib._typing import SeedLike
from fedlib._validation import check_random_state, check_scalar, spawn_generators

__all__ = ["SeedLike", "check_random_state", "check_scalar", "progress", "spawn_generators"]
