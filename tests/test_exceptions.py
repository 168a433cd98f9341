"""One module of exceptions: every class fedlib raises of its own is in fedlib.exceptions, under FedlibError."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from fedlib import exceptions
from fedlib.exceptions import FedlibError

ROOT = Path(__file__).resolve().parents[1]

CLASSES = [
    obj for obj in vars(exceptions).values() if inspect.isclass(obj) and obj.__module__ == "fedlib.exceptions"
]


def test_no_exception_class_is_defined_outside_the_module():
    """A class whose bases name an Error, Exception, Abort or Warning is an exception; only one file defines them."""
    found = []
    for path in (ROOT / "fedlib").rglob("*.py"):
        if path.name == "exceptions.py" and path.parent.name == "fedlib":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(b) for b in node.bases]
                if any(b.endswith(("Error", "Exception", "Abort", "Warning")) for b in bases):
                    found.append(f"{path.relative_to(ROOT)}: {node.name}({', '.join(bases)})")
    assert not found, found


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_every_exception_is_a_fedlib_error_and_a_builtin_one(cls):
    assert issubclass(cls, FedlibError)
    if cls is not FedlibError:
        generic = (Exception, BaseException, object)
        builtins = [b for b in cls.__mro__ if b.__module__ == "builtins" and b not in generic]
        assert builtins, f"{cls.__name__} specialises no builtin exception"
    assert cls.__doc__ and cls.__doc__.strip(), cls.__name__


def test_except_builtin_keeps_working():
    from fedlib.field import to_fixed_point

    with pytest.raises(ValueError, match=r"2\*\*52"):
        to_fixed_point([[1e30]], scale=1.0)
    with pytest.raises(FedlibError):
        to_fixed_point([[1e30]], scale=1.0)
