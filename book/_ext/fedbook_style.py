"""The book's own style sheet: tables of results that fit the content column.

A results table (a pandas ``DataFrame`` shown by a chapter) is set a little smaller than the prose, its
headers wrap between words, and a cell that is one long token (a 195-digit integer, a long identifier) breaks
anywhere rather than pushing the columns that matter out of view. Nothing is hidden: a table that is still
wider than the column scrolls inside it. The browser test (``tests/book/test_site.py``) checks that no table or
display equation is wider than the column and that no cell is cut with an ellipsis.
"""

from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).resolve().parent / "static"


def _add_static_path(app) -> None:
    if str(STATIC) not in app.config.html_static_path:
        app.config.html_static_path.append(str(STATIC))


def setup(app):
    app.connect("builder-inited", _add_static_path)
    app.add_css_file("fedbook.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
