"""fedlib's randomness policy: one way to turn ``random_state`` into streams, one default.

The policy, for every function and estimator of fedlib:

- A random choice takes ``random_state``: an int, a :class:`numpy.random.Generator`, a
  :class:`numpy.random.SeedSequence` or ``None`` (:data:`fedlib.utils.SeedLike`).
- The default is ``None``, as in scikit-learn: fresh entropy from the operating system, so two
  calls differ. Pass an int for results that are the same bits on every run and machine.
- :func:`check_random_state` gives the one generator of a call. A call that needs several
  independent streams (one per client, per round, per purpose) derives them from one root
  (:func:`root_sequence`) with :func:`child_sequence`, which names a stream by a key of
  integers: the children of :meth:`numpy.random.SeedSequence.spawn`, but the same child for the
  same key however many were drawn before, so client ``c``'s stream does not depend on which
  other clients took part. :func:`spawn_generators` gives the first ``n`` of them.
- A Generator given as ``random_state`` is advanced by one draw, which seeds the root.
- Secret randomness is not a ``random_state``: keys, mask seeds, masks and the random
  coefficients of secret shares come from the operating system's CSPRNG (``"secrets"``) by
  default, in the protocol functions and inside every estimator that runs a protocol, whatever
  the estimator's ``random_state``. A seed for them is a reproducible simulation and *insecure*:
  whoever knows the seed recomputes every mask and so every input. The functions accept it as
  ``random_state``; the estimators only with ``insecure_seeded_secrets=True``
  (:func:`check_key_source`, :func:`spawn_key_sources`).
"""

from __future__ import annotations

import numbers

import numpy as np

from fedlib._typing import SeedLike

__all__ = [
    "check_key_source",
    "check_random_state",
    "child_sequence",
    "root_sequence",
    "spawn_generators",
    "spawn_key_sources",
]

KeySource = np.random.Generator | str
"""What draws secret randomness: ``"secrets"`` (the operating system) or a seeded Generator (a simulation)."""


def check_random_state(random_state: SeedLike) -> np.random.Generator:
    """Turn ``random_state`` into a :class:`numpy.random.Generator`.

    Parameters
    ----------
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None
        Pass an int for reproducible output across multiple function calls.
        A Generator is returned as is (so the caller's stream advances);
        ``None`` draws fresh entropy from the operating system.

    Returns
    -------
    numpy.random.Generator
        A PCG64 generator, or ``random_state`` itself.

    Raises
    ------
    TypeError
        For any other type.

    Examples
    --------
    >>> from fedlib.utils import check_random_state
    >>> check_random_state(7).random() == check_random_state(7).random()
    True
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(random_state, (numbers.Integral, np.random.SeedSequence)):
        return np.random.default_rng(random_state)
    raise TypeError(
        "random_state must be an int, a numpy.random.Generator, a SeedSequence or None, "
        f"not {type(random_state).__name__}."
    )


def root_sequence(random_state: SeedLike) -> np.random.SeedSequence:
    """The root of every stream of a computation: a :class:`numpy.random.SeedSequence`.

    Parameters
    ----------
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None
        An int or a SeedSequence is used as is; a Generator is advanced by one
        draw, which seeds the root; ``None`` draws fresh entropy.

    Returns
    -------
    numpy.random.SeedSequence
        The root.

    Raises
    ------
    TypeError
        For any other type.

    Examples
    --------
    >>> from fedlib.utils import root_sequence
    >>> root_sequence(3).entropy
    3
    """
    if isinstance(random_state, np.random.SeedSequence):
        return random_state
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(int(random_state.integers(0, 2**63)))
    check_random_state(random_state)  # type check only
    return np.random.SeedSequence(random_state)


def child_sequence(root: np.random.SeedSequence, *key: int) -> np.random.SeedSequence:
    """The stream of ``root`` named by integer ``key``: the same key gives the same bits, whatever else was drawn.

    ``child_sequence(root, i)`` is the ``i``-th child :meth:`numpy.random.SeedSequence.spawn` gives
    a fresh ``root``; longer keys name grandchildren.

    Parameters
    ----------
    root : numpy.random.SeedSequence
        The computation's root (:func:`root_sequence`).
    *key : int
        The stream's name, e.g. ``(purpose, round, client)``.

    Returns
    -------
    numpy.random.SeedSequence
        ``root`` with ``key`` appended to its spawn key.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.utils import child_sequence
    >>> root = np.random.SeedSequence(0)
    >>> a = np.random.default_rng(child_sequence(root, 1, 2)).random()
    >>> a == np.random.default_rng(child_sequence(root, 1, 2)).random()
    True
    >>> child_sequence(root, 1).spawn_key == np.random.SeedSequence(0).spawn(2)[1].spawn_key
    True
    """
    return np.random.SeedSequence(
        root.entropy, spawn_key=(*root.spawn_key, *(int(k) for k in key)), pool_size=root.pool_size
    )


def spawn_generators(random_state: SeedLike, n: int) -> list[np.random.Generator]:
    """Return ``n`` independent generators derived from ``random_state``: children ``0..n-1`` of its root.

    Per-client streams come from :func:`child_sequence`, so client ``i`` sees the same stream
    whatever the other clients draw, and the same ``random_state`` gives the same streams on
    every call (a SeedSequence is not consumed).

    Parameters
    ----------
    random_state : int, numpy.random.Generator, numpy.random.SeedSequence or None
        The parent seed (:func:`root_sequence`). A Generator is advanced by one draw, which seeds the children.
    n : int
        Number of generators.

    Returns
    -------
    list of numpy.random.Generator
        ``n`` independent generators.

    Raises
    ------
    TypeError
        For a ``random_state`` of any other type.

    Examples
    --------
    >>> from fedlib.utils import spawn_generators
    >>> a, b = spawn_generators(0, 2)
    >>> a.random() == spawn_generators(0, 2)[0].random(), a.random() == b.random()
    (True, False)
    """
    root = root_sequence(random_state)
    return [np.random.default_rng(child_sequence(root, i)) for i in range(n)]


def check_key_source(random_state: SeedLike | str) -> KeySource:
    """The source of secret randomness: ``"secrets"`` as is, anything else through :func:`check_random_state`.

    Parameters
    ----------
    random_state : "secrets", int, numpy.random.Generator, numpy.random.SeedSequence or None
        ``"secrets"``: the operating system's CSPRNG (Python's ``secrets``), for real keys and masks.
        Anything else seeds a generator: a reproducible simulation, insecure (whoever knows the
        seed recomputes the keys and masks).

    Returns
    -------
    "secrets" or numpy.random.Generator
        The source.

    Raises
    ------
    ValueError
        For a string other than ``"secrets"``.
    TypeError
        For a type :func:`check_random_state` refuses.

    Examples
    --------
    >>> from fedlib.utils import check_key_source
    >>> check_key_source("secrets")
    'secrets'
    """
    if isinstance(random_state, str):
        if random_state != "secrets":
            raise ValueError(
                f"random_state={random_state!r}: the only string accepted is 'secrets' (keys and masks from the "
                "operating system); otherwise pass an int, a numpy Generator, a SeedSequence or None."
            )
        return random_state
    return check_random_state(random_state)


def spawn_key_sources(random_state: SeedLike | str, n: int) -> list[KeySource]:
    """``n`` independent sources of secret randomness, one per party (``"secrets"`` n times, or seeded streams).

    Parameters
    ----------
    random_state : "secrets", int, numpy.random.Generator, numpy.random.SeedSequence or None
        As in :func:`check_key_source`.
    n : int
        Number of parties.

    Returns
    -------
    list of "secrets" or numpy.random.Generator
        One source per party.

    Raises
    ------
    ValueError
        For a string other than ``"secrets"``.

    Examples
    --------
    >>> from fedlib.utils import spawn_key_sources
    >>> spawn_key_sources("secrets", 2)
    ['secrets', 'secrets']
    """
    if isinstance(random_state, str):
        check_key_source(random_state)
        return ["secrets"] * n
    return spawn_generators(random_state, n)
