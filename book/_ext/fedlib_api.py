"""What the API reference (``book/api``) needs beyond autodoc and numpydoc.

Each page runs ``.. automodule:: fedlib.<package>`` with ``:members:``; autodoc then documents
exactly the names in the package's ``__all__``, under their public dotted path. This fills the gaps:

- Constants are re-exported from private modules (``fedlib.field.MAX_MODULUS`` is defined in
  ``fedlib/field/_int64.py``), and autodoc looks for their ``#:`` comment or docstring only in
  the module being documented, so it would skip them as undocumented. Here they are found in the
  fedlib module that defines them.
- numpydoc turns the words of a parameter's type into cross-references. With
  ``numpydoc_xref_ignore = "all"`` (set here) only aliased words are linked; this adds an alias for every
  public fedlib class and constant (short and dotted name, so ``DistanceOracle`` links to
  ``fedlib.cluster.DistanceOracle`` from any package), and keeps numpydoc's default aliases
  (``int``, ``None``, ``ndarray``, ``array-like``, ...) as plain text: they point into the Python
  and NumPy inventories of intersphinx, which this offline book does not load.
- numpydoc renders a class's Attributes section, and a dataclass's fields (documented as
  Parameters), as lists with no targets, so ``:attr:`params_``` (a fitted attribute) or
  ``:attr:`SecAggResult.late_inputs``` (a field) would link nowhere. Each such entry that is not
  documented on its own (a property is) becomes the Python object ``<class>.<attribute>``, with
  an anchor of that name.
- A :class:`typing.Protocol` gets no ``(*args, **kwargs)`` signature.
- A public module whose optional dependency is missing (``fedlib.flower`` without Flower) is imported
  under autodoc's mock of ``autodoc_mock_imports`` and said so in the build log, so ``make book``
  builds the whole reference with only what it installs.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import inspect
import pkgutil
import re
import sys
import typing
from pathlib import Path

from docutils import nodes
from sphinx.ext.autodoc import DataDocumenter, ModuleDocumenter
from sphinx.pycode import ModuleAnalyzer, PycodeError
from sphinx.util import logging
from sphinx.util.inspect import object_description
from sphinx.util.nodes import make_id

_MAX_VALUE_CHARS = 100

logger = logging.getLogger(__name__)


def public_modules(mock_imports: list[str] | tuple[str, ...] = ()) -> list:
    """fedlib's public modules and packages (no leading underscore), each documented on ``book/api/<name>.md``.

    Found in the package's directory rather than listed, so a new one (``fedlib.base``) is covered
    as soon as it exists; tests/book/test_site.py then requires its page.

    A module whose optional dependency is not installed (``fedlib.flower`` without Flower: ``make book``
    does not install it) is imported under autodoc's mock of ``mock_imports`` (the book's
    ``autodoc_mock_imports``), as autodoc itself imports it for its page, and the build log says so.
    A missing dependency that is not mocked is an error that names it and the setting.
    """
    from sphinx.ext.autodoc.mock import mock

    import fedlib
    from fedlib.exceptions import MissingDependencyError

    names = sorted(m.name for m in pkgutil.iter_modules(fedlib.__path__) if not m.name.startswith("_"))
    modules = []
    for name in names:
        try:
            modules.append(importlib.import_module(f"fedlib.{name}"))
        except MissingDependencyError as error:
            missing = getattr(error.__cause__, "name", None) or ""
            if missing.split(".")[0] not in {m.split(".")[0] for m in mock_imports}:
                raise RuntimeError(
                    f"fedlib.{name} cannot be documented: {error} Install it, or add {missing!r} to "
                    "autodoc_mock_imports in _config.yml so that its reference builds without it."
                ) from error
            with mock(list(mock_imports)):
                modules.append(importlib.import_module(f"fedlib.{name}"))
            logger.info(
                f"fedlib_api: {missing} is not installed; fedlib.{name} is documented with autodoc's mock of it."
            )
    return modules


def _is_type(obj) -> bool:
    """Classes and type aliases: the public names a parameter's type can mention."""
    return inspect.isclass(obj) or typing.get_origin(obj) is not None


def _aliases(mock_imports: list[str]) -> dict[str, str]:
    aliases = {}
    for module in public_modules(mock_imports):
        for name in module.__all__:
            obj = getattr(module, name)
            if _is_type(obj) or name.isupper():
                aliases[name] = aliases[f"{module.__name__}.{name}"] = f"{module.__name__}.{name}"
    return aliases


def _set_xref_aliases(app, config) -> None:
    from numpydoc.xref import DEFAULT_LINKS

    # Set here, not in _config.yml: Jupyter Book passes its settings as overrides, and Sphinx
    # refuses to override a set-valued default (numpydoc's is ``set()``) with a string.
    config.numpydoc_xref_ignore = "all"
    # Runs after numpydoc's own config-inited handler, which builds numpydoc_xref_aliases_complete.
    complete = config.numpydoc_xref_aliases_complete
    for word in DEFAULT_LINKS:
        if word not in config.numpydoc_xref_aliases:
            complete[word] = word
    complete.update(_aliases(config.autodoc_mock_imports))


def _defining_module_doc(qualname: str) -> list[str] | None:
    """The ``#:`` comment or docstring of a public constant, read where it is defined."""
    modname, _, name = qualname.rpartition(".")
    module = sys.modules.get(modname)
    if module is None or name not in getattr(module, "__all__", ()):
        return None
    obj = getattr(module, name)
    candidates = [m for m in list(sys.modules.values()) if getattr(m, "__name__", "").startswith("fedlib.")]
    if hasattr(module, "__path__"):  # import the package's private modules not imported yet
        for info in pkgutil.iter_modules(module.__path__, modname + "."):
            candidates.append(importlib.import_module(info.name))
    for candidate in candidates:
        if candidate is module or getattr(candidate, name, object()) is not obj:
            continue
        try:
            docs = ModuleAnalyzer.for_module(candidate.__name__).find_attr_docs()
        except PycodeError:  # a module without source has no attribute docs
            continue
        if ("", name) in docs:
            return list(docs[("", name)])
    return None


def _in_all(parent, name: str) -> bool:
    return name in (getattr(parent, "__all__", None) or ())


class ReexportedDataDocumenter(DataDocumenter):
    """A constant in a package's ``__all__`` that is defined in one of its private modules.

    autodoc's own data documenter takes only names with a ``#:`` comment or docstring in the
    documented module itself; this one reads the comment where the constant is defined.
    """

    objtype = "fedlibdata"
    directivetype = "data"
    priority = DataDocumenter.priority + 1

    @classmethod
    def can_document_member(cls, member, membername, isattr, parent) -> bool:
        return (
            isinstance(parent, ModuleDocumenter)
            and not isattr
            and _in_all(parent.object, membername)
            and not (inspect.isclass(member) or inspect.isroutine(member) or inspect.ismodule(member))
        )

    def get_module_comment(self, attrname: str) -> list[str] | None:
        return _defining_module_doc(f"{self.modname}.{attrname}") or super().get_module_comment(attrname)

    def should_suppress_value_header(self) -> bool:
        # A long value (a table of datasets, a palette) says less than its description.
        return len(object_description(self.object)) > _MAX_VALUE_CHARS or super().should_suppress_value_header()


def _keep_documented_constants(app, what, name, obj, skip, options):
    """Do not skip a re-exported constant for lacking a comment in the package's ``__init__``."""
    module = sys.modules.get(app.env.temp_data.get("autodoc:module") or "")
    if what == "module" and skip and module is not None and _in_all(module, name):
        if _defining_module_doc(f"{module.__name__}.{name}"):
            return False
    return None


def _skip_foreign_members(app, what, name, obj, skip, options):
    """Document a class's methods only where fedlib defines them (inherited ones included).

    scikit-learn's ``BaseEstimator`` adds ``get_params``, ``set_params`` and, through metadata routing,
    ``set_<method>_request`` to every estimator; Python adds ``with_traceback`` to every exception. They are
    documented by their owners, not here; a method an estimator inherits from a fedlib mixin (``unlearn``,
    ``predict``) is documented on the estimator's own entry.
    """
    if what != "class":
        return None
    if re.fullmatch(r"set_\w+_request", name):
        return True
    target = obj.fget if isinstance(obj, property) else obj
    if callable(target) or isinstance(obj, property):
        module = getattr(target, "__module__", None)
        if module is None or not module.startswith("fedlib"):
            return True
    return None


_ENTRY = re.compile(r"^(    )\*\*(\w+(?:, \w+)*)\*\*( : .*)?$")


def _attribute_targets(app, what, name, obj, options, lines) -> None:
    """Turn numpydoc's ``**attr**`` entries into ``:fedlib-attribute:`` targets.

    The entries are those of the Attributes section, and for a dataclass those of the Parameters
    section that name its fields (a dataclass documents its fields as constructor parameters).
    """
    if what not in ("class", "exception"):
        return
    fields = {f.name for f in dataclasses.fields(obj)} if dataclasses.is_dataclass(obj) else set()
    section = None
    for i, line in enumerate(lines):
        if line.startswith((":", "..")):
            section = line.strip()
            continue
        match = _ENTRY.match(line) if section in (":Attributes:", ":Parameters:") else None
        if not match:
            continue
        indent, names, rest = match.groups()
        attrs = names.split(", ")
        if section == ":Parameters:" and not set(attrs) <= fields:
            continue
        targets = ", ".join(f":fedlib-attribute:`{name}.{attr}`" for attr in attrs)
        lines[i] = f"{indent}{targets}{rest or ''}"


def _attribute_role(role, rawtext, text, lineno, inliner, options=None, content=None):
    """``:fedlib-attribute:`fedlib.x.Class.attr```: the attribute's name in bold, as a Python object."""
    env = inliner.document.settings.env
    node = nodes.strong(text.rpartition(".")[2], text.rpartition(".")[2])
    node["ids"].append(make_id(env, inliner.document, "", text))
    inliner.document.set_id(node)
    env.get_domain("py").note_object(text, "attribute", node["ids"][0], location=node)
    return [node], []


def _protocol_signature(app, what, name, obj, options, signature, return_annotation):
    """No ``(*args, **kwargs)`` for a :class:`typing.Protocol`: it is a type to satisfy, never constructed."""
    if what == "class" and getattr(obj, "_is_protocol", False):
        return "", None
    return None


def setup(app):
    # Sphinx rereads a page when its source or a documented module changes, not when this file does:
    # a config value that is this file's hash makes an edit here reread every page.
    digest = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
    app.add_config_value("fedlib_api_source_hash", digest, "env")
    app.setup_extension("sphinx.ext.autodoc")
    app.setup_extension("numpydoc")
    app.add_autodocumenter(ReexportedDataDocumenter)
    app.connect("config-inited", _set_xref_aliases, priority=600)
    app.connect("autodoc-skip-member", _keep_documented_constants)
    app.connect("autodoc-skip-member", _skip_foreign_members)
    app.connect("autodoc-process-docstring", _attribute_targets, priority=600)  # after numpydoc (500)
    app.add_role("fedlib-attribute", _attribute_role)
    app.connect("autodoc-process-signature", _protocol_signature, priority=400)  # before numpydoc's
    return {"parallel_read_safe": True, "parallel_write_safe": True}
