"""Optional dependencies: import them when a feature needs them, or say which extra to install."""

from __future__ import annotations

import importlib
from types import ModuleType

from fedlib.exceptions import MissingDependencyError

#: The distribution that installs the import package ``fedlib``.
DISTRIBUTION = "fedlib-unlearning"


def import_optional(module: str, extra: str, *, feature: str) -> ModuleType:
    """Import ``module``, or raise :class:`~fedlib.exceptions.MissingDependencyError` naming the extra to install.

    Parameters
    ----------
    module : str
        The module to import, e.g. ``"torch"`` or ``"ortools.linear_solver.pywraplp"``.
    extra : str
        The extra of the ``fedlib-unlearning`` distribution that installs it.
    feature : str
        What needs it, for the message.

    Returns
    -------
    module
        The imported module.

    Raises
    ------
    MissingDependencyError
        When the module cannot be imported; also an ``ImportError``.
    """
    try:
        return importlib.import_module(module)
    except ImportError as error:
        package = module.split(".")[0]
        raise MissingDependencyError(
            f"{feature} needs {package}, which is not installed: pip install '{DISTRIBUTION}[{extra}]'."
        ) from error
