"""The built book: internal links resolve, every public name of fedlib has an API entry, and in a real headless
Chromium at 1,400 px math is typeset, images load, the API pages render and every page fits its content column."""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import re
import shutil
import subprocess
import tempfile
from html import unescape as html_unescape
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

pytestmark = [pytest.mark.book, pytest.mark.xdist_group("book")]


class _Collector(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[str] = []
        self.images: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])
        if tag == "img" and a.get("src"):
            self.images.append(a["src"])


def parse(path: Path) -> _Collector:
    collector = _Collector()
    collector.feed(path.read_text(encoding="utf-8"))
    return collector


def content_pages(html_dir: Path) -> list[Path]:
    skip = {"_static", "_sources", "_images", "_sphinx_design_static"}
    return sorted(
        p
        for p in html_dir.rglob("*.html")
        if not skip & set(p.relative_to(html_dir).parts) and not p.name.startswith(".")  # a probe's copy
    )


def test_internal_links_and_anchors_resolve(html_dir):
    cache: dict[Path, set[str]] = {}
    broken = []
    for page in content_pages(html_dir):
        for href in parse(page).links:
            parts = urlsplit(href)
            if parts.scheme or href.startswith(("mailto:", "//")):
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.name}: {href} (no file)")
                continue
            if parts.fragment and target.suffix == ".html":
                ids = cache.setdefault(target, parse(target).ids)
                if parts.fragment not in ids:
                    broken.append(f"{page.name}: {href} (no anchor)")
    assert not broken, "broken internal links:\n" + "\n".join(broken)


def test_no_external_scripts_or_styles(html_dir):
    """Offline book: nothing is loaded from a CDN."""
    offenders = []
    for page in content_pages(html_dir):
        text = page.read_text(encoding="utf-8")
        offenders += [
            f"{page.name}: {m}" for m in re.findall(r'<(?:script|link)[^>]+(?:src|href)="(https?://[^"]+)"', text)
        ]
    assert not offenders, "\n".join(offenders)


def test_navigation_lists_every_chapter(html_dir):
    from .conftest import chapters

    index_links = set(parse(html_dir / "book" / "intro.html").links)
    for chapter in chapters():
        assert any(link.endswith(chapter[:-3] + ".html") for link in index_links), chapter


def public_modules() -> list[str]:
    """fedlib's public modules and packages (no leading underscore), each documented on ``book/api/<name>.html``."""
    import fedlib

    return sorted(f"fedlib.{m.name}" for m in pkgutil.iter_modules(fedlib.__path__) if not m.name.startswith("_"))


def api_page(html_dir: Path, module: str) -> Path:
    return html_dir / "book" / "api" / f"{module.rpartition('.')[2]}.html"


def test_api_reference_has_an_entry_for_every_public_name(html_dir):
    """Each name in a public module's ``__all__`` has an anchor of its dotted name on the module's API page,
    and no anchor there names something private or outside ``__all__``."""
    assert len(public_modules()) >= 10, public_modules()
    problems, n_names = [], 0
    for module in public_modules():
        page = api_page(html_dir, module)
        if not page.is_file():
            problems.append(f"{module}: no API page (add book/api/{page.stem}.md, a copy of another page)")
            continue
        public = set(importlib.import_module(module).__all__)
        ids = {i for i in parse(page).ids if i.startswith("fedlib.")}
        n_names += len(public)
        documented = {anchor.removeprefix(module + ".") for anchor in ids}
        problems += [f"{module}.{name}: no entry on {page.name}" for name in sorted(public - documented)]
        for anchor in sorted(ids):
            top = anchor.removeprefix(module + ".").partition(".")[0]
            if re.search(r"(^|\.)_", anchor.removeprefix("fedlib.")) or top not in public:
                problems.append(f"{page.name}: an entry for {anchor}, which is not public")
    assert not problems, "\n".join(problems)
    assert n_names > 250, n_names


def test_chapters_name_only_documented_fedlib_objects(html_dir):
    """Every ``fedlib.x.y`` a chapter's prose mentions in backquotes is an object of the API reference."""
    from sphinx.util.inventory import InventoryFile

    from .conftest import ROOT, chapters

    with open(html_dir / "objects.inv", "rb") as f:
        inventory = InventoryFile.load(f, "", lambda base, uri: uri)
    documented = {
        name
        for role, entries in inventory.items()
        if role.startswith("py:")
        for name in entries
        if not re.search(r"\._", name)  # autodoc's aliases of re-exported classes under their private module
    }
    mentioned = {
        (chapter, name)
        for chapter in chapters()
        for name in re.findall(r"`(fedlib(?:\.\w+)+)`", (ROOT / chapter).read_text(encoding="utf-8"))
    }
    assert mentioned, "no fedlib name found in the chapters; the pattern is wrong"
    missing = sorted(f"{chapter}: {name}" for chapter, name in mentioned if name not in documented)
    assert not missing, "\n".join(missing)


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


PROBE = Path(__file__).with_name("layout_probe.js")
WINDOW = (1400, 1800)  # the width at which the book was read page by page


def dump_dom(url: str) -> tuple[str, str]:
    exe = _chromium()
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("Chromium is required in CI (install Debian's chromium package).")
        pytest.skip("no Chromium on this machine")
    with tempfile.TemporaryDirectory() as profile:
        result = subprocess.run(
            [
                exe,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={profile}",
                "--enable-logging=stderr",
                "--v=0",
                f"--window-size={WINDOW[0]},{WINDOW[1]}",
                "--virtual-time-budget=20000",
                "--dump-dom",
                url,
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout, result.stderr


def dump_probed(page: Path) -> tuple[str, str]:
    """The DOM of ``page`` in Chromium, with the layout probe's report on ``<body>``.

    The probe runs in a copy of the page written beside it, so that every relative link and resource resolves
    as it does for the page itself; the copy is removed at once.
    """
    html = page.read_text(encoding="utf-8")
    if "</body>" not in html:  # the front door: a redirect to the first page, which is opened in its own right
        return dump_dom(page.as_uri())
    probed = html.replace("</body>", f"<script>{PROBE.read_text(encoding='utf-8')}</script></body>", 1)
    copy = page.with_name(f".probe-{page.name}")
    copy.write_text(probed, encoding="utf-8")
    try:
        return dump_dom(copy.as_uri())
    finally:
        copy.unlink()


@pytest.fixture(scope="module")
def rendered(html_dir):
    pages = {}
    for page in content_pages(html_dir):
        if page.name in ("genindex.html", "search.html"):
            continue
        pages[page] = dump_probed(page)
    return pages


def layout_report(dom: str) -> dict:
    match = re.search(r'data-layout-report="([^"]*)"', dom)
    assert match, "the layout probe did not report (did the page load?)"
    return json.loads(html_unescape(match.group(1)))


def test_pages_fit_the_column(rendered, html_dir):
    """No display equation or table wider than the content column, no table cell cut with an ellipsis.

    Folded solutions are opened first: a reader who opens one sees the same page.
    """
    found = []
    for page, (dom, _) in rendered.items():
        if "</body>" not in page.read_text(encoding="utf-8"):
            continue  # a redirect
        report = layout_report(dom)
        assert report["column"] > 400, f"{page.name}: content column of {report['column']} px"
        found += [f"{page.relative_to(html_dir)}: {problem}" for problem in report["problems"]]
    assert not found, f"{len(found)} layout problems:\n" + "\n".join(found)


def test_math_is_typeset_by_local_mathjax(rendered):
    with_math = {p: dom for p, (dom, _) in rendered.items() if 'class="math' in p.read_text(encoding="utf-8")}
    assert with_math, "no page with math was found"
    for page, dom in with_math.items():
        assert "<mjx-container" in dom, f"{page.name}: math not typeset"
        assert "<mjx-merror" not in dom and "data-mjx-error" not in dom, f"{page.name}: MathJax error"
        assert "_static/mathjax/tex-mml-chtml.js" in dom


def test_figures_and_resources_load(rendered, html_dir):
    n_images = 0
    for page, (dom, log) in rendered.items():
        assert "ERR_FILE_NOT_FOUND" not in log, f"{page.name}: a resource failed to load:\n{log[-2000:]}"
        collector = _Collector()
        collector.feed(dom)
        for src in collector.images:
            if src.startswith("data:"):
                n_images += 1
                continue
            target = page.parent / unquote(urlsplit(src).path)
            assert target.is_file() and target.stat().st_size > 0, f"{page.name}: image {src} missing"
            n_images += 1
    assert n_images >= 3, "expected the chapters' figures"


def test_citations_and_proof_directives_render(rendered):
    doms = {p.name: dom for p, (dom, _) in rendered.items()}
    assert "Arthur" in doms["bibliography.html"]
    kmeans = doms["kmeans.html"]
    assert "Algorithm" in kmeans and "Theorem" in kmeans and "Lemma" in kmeans
    assert 'class="reference internal" href="../../book/bibliography.html' in kmeans


def test_api_pages_render(rendered, html_dir):
    """The API pages are among those opened in Chromium: signatures and parameter lists are in the DOM."""
    doms = {p: dom for p, (dom, _) in rendered.items()}
    assert html_dir / "book" / "api" / "index.html" in doms
    for module in public_modules():
        dom = doms[api_page(html_dir, module)]
        assert 'class="sig sig-object py"' in dom, module
        assert "Parameters" in dom or module == "fedlib.exceptions", module
