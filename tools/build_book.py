"""Stage the book for one scale and build it with Jupyter Book, warnings as errors.

    python tools/build_book.py --scale default

Copies ``_config.yml``, ``_toc.yml`` and ``book/`` beside the executed chapters in
``_build/<scale>/src`` (keeping modification times, so Sphinx rebuilds only what
changed), with the library source for ``{literalinclude}``, and runs
``jupyter-book build -W -n --keep-going``. The HTML lands in ``_build/<scale>/_build/html``.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def toc_files(toc: Path) -> list[str]:
    """Every ``file:`` entry of a jb-book table of contents, root first."""
    data = yaml.safe_load(toc.read_text())
    files = [data["root"]]

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                files.append(node["file"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(data.get("parts", data.get("chapters", [])))
    return files


def stage(scale: str) -> Path:
    src = ROOT / "_build" / scale / "src"
    src.mkdir(parents=True, exist_ok=True)
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy2(ROOT / name, src / name)
    if (src / "book").exists():
        shutil.rmtree(src / "book")
    # The book's pages, not its Python package (book/fedbook, book/pyproject.toml: installed, never rendered).
    ignore = shutil.ignore_patterns("fedbook", "pyproject.toml", "*.egg-info", "__pycache__")
    shutil.copytree(ROOT / "book", src / "book", copy_function=shutil.copy2, ignore=ignore)
    # Library source, so chapters can show it with {literalinclude} (excluded from the build as documents).
    if (src / "fedlib").exists():
        shutil.rmtree(src / "fedlib")
    shutil.copytree(
        ROOT / "fedlib", src / "fedlib", copy_function=shutil.copy2, ignore=shutil.ignore_patterns("__pycache__")
    )
    missing = [
        f
        for f in toc_files(ROOT / "_toc.yml")
        if f.startswith("notebooks/") and not (src / f).with_suffix(".ipynb").is_file()
    ]
    if missing:
        sys.exit(f"chapters not executed for scale={scale!r}: {missing}; run `make book SCALE={scale}`.")
    return src


def build(scale: str) -> Path:
    src = stage(scale)
    out = ROOT / "_build" / scale
    jb = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jb), "build", str(src), "--path-output", str(out), "-W", "-n", "--keep-going"]
    result = subprocess.run(cmd, cwd=ROOT)
    if result.returncode != 0:
        sys.exit(f"jupyter-book build failed for scale={scale!r} (warnings are errors); see the messages above.")
    return out / "_build" / "html" / "index.html"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", default="default", choices=["ci", "default", "paper"])
    args = parser.parse_args()
    index = build(args.scale)
    print(f"built {index}")


if __name__ == "__main__":
    main()
