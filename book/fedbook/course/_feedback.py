"""The checker: a registry of checks by exercise label, and the feedback a student sees."""

from __future__ import annotations

import importlib
import pkgutil
import reprlib
import textwrap
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

_CHECKS: dict[str, Callable[[object], str]] = {}


class Wrong(Exception):
    """What is wrong with an answer, in words meant for the student (raised by a check, shown by :func:`check`)."""


class NotAnswered(Exception):
    """The answer is still the starter's (``...``, ``None`` or a function raising ``NotImplementedError``)."""


@dataclass(frozen=True)
class Feedback:
    """The result of :func:`check`: passed or not, and the message the student reads.

    ``bool(feedback)`` is whether the answer passed; the notebook shows the message.
    """

    label: str
    passed: bool
    message: str

    def __bool__(self) -> bool:
        return self.passed

    def __repr__(self) -> str:
        mark = "PASSED" if self.passed else "NOT YET"
        return textwrap.fill(f"[{mark}] {self.label}: {self.message}", width=100, subsequent_indent="    ")


def exercise(label: str) -> Callable[[Callable[[object], str]], Callable[[object], str]]:
    """Register a check for the exercise ``label``.

    The check takes the student's answer, raises :class:`Wrong` with a message for the student when the
    answer is wrong, and returns a short sentence saying what it verified when it is right.
    """

    def register(fn: Callable[[object], str]) -> Callable[[object], str]:
        if label in _CHECKS:
            raise ValueError(f"two checks registered for {label!r}")
        _CHECKS[label] = fn
        return fn

    return register


def registered() -> dict[str, Callable[[object], str]]:
    """Every registered check by exercise label (importing all parts' check modules)."""
    import fedbook.course

    # Every public module of this package registers the checks of one part (or chapter) of the book.
    for info in pkgutil.iter_modules(fedbook.course.__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"fedbook.course.{info.name}")
    return dict(_CHECKS)


def check(label: str, answer: object) -> Feedback:
    """Check a student's answer to the coding exercise ``label``.

    Parameters
    ----------
    label : str
        The exercise's label, as in the book (``"ex-kmeans-lloyd-step"``).
    answer : object
        The function or value the exercise asks for.

    Returns
    -------
    Feedback
        Passed, with what was checked; or not, with what is wrong and on which input. Never a solution.
    """
    checks = registered()
    if label not in checks:
        raise KeyError(f"no coding exercise is labelled {label!r}; labels: {sorted(checks)}")
    if answer is Ellipsis or answer is None:
        return Feedback(label, False, "not answered yet: replace the `...` of the starter cell with your answer.")
    try:
        said = checks[label](answer)
    except NotAnswered as exc:
        return Feedback(label, False, f"not answered yet: {exc}")
    except Wrong as exc:
        return Feedback(label, False, str(exc))
    return Feedback(label, True, said)


def call(fn: object, *args, what: str | None = None, **kwargs):
    """Call the student's function, turning its failures into feedback.

    ``NotImplementedError`` means the starter was not filled in; any other exception becomes a
    :class:`Wrong` naming the call (``what``, or the function's name) and the error.
    """
    name = what or f"{getattr(fn, '__name__', 'your function')}(...)"
    if not callable(fn):
        raise Wrong(f"expected a function, got {type(fn).__name__}")
    try:
        return fn(*args, **kwargs)
    except NotImplementedError:
        raise NotAnswered("the starter still raises NotImplementedError; write the function's body.") from None
    except Exception as exc:  # the student's code may fail in any way: report it, don't crash the notebook
        raise Wrong(f"{name} raised {type(exc).__name__}: {exc}") from None


def expect_raises(fn: object, *args, error: type[Exception] = ValueError, what: str, why: str) -> None:
    """The student's function must refuse these arguments with ``error``; say what it did instead.

    Parameters
    ----------
    fn : callable
        The student's function.
    *args
        Arguments it must refuse (copies, if the caller reuses them).
    error : type of Exception, default=ValueError
        The exception a right answer raises.
    what : str
        The call, as the message names it (``"decode_distances with 4 responses"``).
    why : str
        Why it must refuse (``"one below the threshold 2ℓ+2t−1 = 5"``).
    """
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            got = fn(*args)
    except error:
        return
    except NotImplementedError:
        raise NotAnswered("the starter still raises NotImplementedError; write the function's body.") from None
    except Exception as exc:  # the student's code may fail in any way
        raise Wrong(f"{what} raised {type(exc).__name__} ({exc}); it should raise {error.__name__}: {why}") from None
    raise Wrong(f"{what} returned {reprlib.repr(got)}; it should raise {error.__name__}: {why}")


def expect(condition: bool, message: str) -> None:
    """Raise :class:`Wrong` with ``message`` unless ``condition`` holds."""
    if not condition:
        raise Wrong(message)


def expect_array(
    got: object, want: np.ndarray, what: str, *, rtol: float = 1e-9, atol: float = 1e-12, exact: bool = False
) -> None:
    """Compare an array-like answer with the expected array, saying where and how it differs.

    Parameters
    ----------
    got : array_like
        The student's value.
    want : numpy.ndarray
        The expected value.
    what : str
        How to name ``got`` in the message (``"lloyd_step(X, C)[0]"``).
    rtol, atol : float
        Tolerances of :func:`numpy.allclose` (ignored when ``exact``).
    exact : bool
        Require equal values (integers, labels, field elements).
    """
    want = np.asarray(want)
    try:
        arr = np.asarray(got)
    except Exception as exc:
        raise Wrong(f"{what} cannot be read as an array: {exc}") from None
    if arr.shape != want.shape:
        raise Wrong(f"{what} has shape {arr.shape}; expected {want.shape}")
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise Wrong(f"{what} has dtype {arr.dtype}; expected numbers")
    if exact:
        bad = arr != want
    else:
        bad = ~np.isclose(arr, want, rtol=rtol, atol=atol, equal_nan=False)
    if np.any(bad):
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        where_text = f" at index {where}" if where else ""
        raise Wrong(
            f"{what} differs from the expected value in {int(bad.sum())} of {bad.size} entries; "
            f"first{where_text}: got {arr[where]!r}, expected {want[where]!r}"
        )
