"""Serve MathJax 3 from the book itself, so math renders with no network.

MathJax comes from the ``django-static-mathjax`` wheel on PyPI (a plain copy of
the MathJax 3.2.2 release). Its ``es5`` components are copied into
``_static/mathjax`` after the build, not placed on ``html_static_path``:
Jupyter Book 1 adds every ``.js`` file found on that path to every page.
"""

from __future__ import annotations

import shutil
from pathlib import Path

# Components the CommonHTML output needs; the speech rule engine and SVG builds are left out.
_KEEP = ("tex-mml-chtml.js", "a11y", "adaptors", "input", "output", "ui", "core.js", "loader.js", "startup.js")


def _mathjax_source() -> Path:
    import mathjax  # provided by django-static-mathjax

    root = Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
    if not (root / "tex-mml-chtml.js").is_file():
        raise FileNotFoundError(f"MathJax es5 build not found under {root}; reinstall django-static-mathjax.")
    return root


def _copy_mathjax(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    source = _mathjax_source()
    target = Path(app.outdir) / "_static" / "mathjax"
    for name in _KEEP:
        src = source / name
        dst = target / name
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True)
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)


def setup(app):
    _mathjax_source()  # fail early, at config time, if MathJax is missing
    app.config.mathjax_path = "mathjax/tex-mml-chtml.js"
    app.connect("build-finished", _copy_mathjax)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
