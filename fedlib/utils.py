"""Public helpers for code built on fedlib (experiment drivers, benchmarks, chapters).

- Randomness, fedlib's one policy (``fedlib/_random.py``): every random choice takes ``random_state``, a
  :data:`SeedLike` (an int, a ``numpy.random.Generator``, a ``SeedSequence`` or ``None``), default ``None``
  (fresh entropy, as in scikit-learn; pass an int for the same bits on every run).
  :func:`check_random_state` gives a call's generator; :func:`root_sequence` the root of a computation's
  streams, :func:`child_sequence` the stream named by a key (a child of ``SeedSequence.spawn``, the same
  whatever was drawn before) and :func:`spawn_generators` the first ``n`` children as generators.
  Secret randomness (keys, mask seeds, masks, share coefficients) is not a ``random_state``: it comes
  from the OS CSPRNG (``"secrets"``) by default, also inside estimators with a seeded ``random_state``,
  unless a seed is given for a reproducible, insecure simulation (:func:`check_key_source`,
  :func:`spawn_key_sources`; the estimators' ``insecure_seeded_secrets=True``).
- :func:`check_scalar`: the one scalar validator (a float where an int is meant raises).
- :func:`progress`: a tqdm bar interactively, none in the rendered book (``FEDLIB_PROGRESS=0``).
"""

from fedlib._progress import progress
from fedlib._random import (
    check_key_source,
    check_random_state,
    child_sequence,
    root_sequence,
    spawn_generators,
    spawn_key_sources,
)
from fedlib._typing import SeedLike
from fedlib._validation import check_scalar

__all__ = [
    "SeedLike",
    "check_key_source",
    "check_random_state",
    "check_scalar",
    "child_sequence",
    "progress",
    "root_sequence",
    "spawn_generators",
    "spawn_key_sources",
]
