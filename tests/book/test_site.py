"""The built book: internal links resolve, and in a real headless Chromium math is typeset and images load."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
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
    return sorted(p for p in html_dir.rglob("*.html") if not skip & set(p.relative_to(html_dir).parts))


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


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


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


@pytest.fixture(scope="module")
def rendered(html_dir):
    pages = {}
    for page in content_pages(html_dir):
        if page.name in ("genindex.html", "search.html"):
            continue
        pages[page] = dump_dom(page.as_uri())
    return pages


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
