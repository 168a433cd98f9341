"""The book's own style sheet: results tables that fit the content column, glued values in the sentence's weight.

A results table (a pandas ``DataFrame`` or ``Styler`` shown by a chapter) is set a little smaller than the prose and its
headers wrap between words; a number or a word is never split (a table that cannot fit is the chapter's to
reshape, and the browser test says so). A display equation wider than the column scrolls inside it rather than
losing a side. Glued values (``{glue:text}``) take the weight of the sentence around them: myst-nb sets them
bold, which turns a glued verdict into a bold paragraph. The browser test (``tests/book/test_site.py``) checks
that no table or display equation is wider than the column and that no cell is cut with an ellipsis.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

STATIC = Path(__file__).resolve().parent / "static"


def _add_static_path(app) -> None:
    if str(STATIC) not in app.config.html_static_path:
        app.config.html_static_path.append(str(STATIC))


def setup(app):
    app.connect("builder-inited", _add_static_path)
    app.add_css_file("fedbook.css")
    # Sphinx copies static files only when some page is rebuilt: a digest of the style sheet among the HTML
    # settings makes a change to it rebuild the pages, so that an incremental `make book` ships the new sheet.
    digest = hashlib.sha256((STATIC / "fedbook.css").read_bytes()).hexdigest()[:16]
    app.add_config_value("fedbook_css_digest", digest, "html")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
