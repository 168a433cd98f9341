"""Stage the book for one scale and edition and build it with Jupyter Book, warnings as errors.

    python tools/build_book.py --scale default [--edition student]

Copies ``_config.yml``, ``_toc.yml`` and ``book/`` beside the executed chapters in
``_build/<scale>/src`` (keeping modification times, so Sphinx rebuilds only what
changed), with the library source for ``{literalinclude}`` and each recipe of "Using fedlib" as the
script its page links with ``{download}`` (``tools/recipes.py``: ``notebooks/using/<name>.py`` beside
``<name>.ipynb``), and runs ``jupyter-book build -W -n --keep-going``. The HTML lands in ``_build/<scale>/_build/html``.

The student edition is staged from the same executed notebooks into ``_build/<scale>/student/src`` with
every solution removed (``tools/exercises.py``: the solution blocks, cells tagged ``solution``, and the
outputs of the checks, computed on the reference solutions), so no solution reaches its pages, its
downloadable notebooks and sources (``_sources/``) or its search index; it builds into
``_build/<scale>/student/_build/html`` in minutes, without executing anything again.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from exercises import strip_solutions
from recipes import RECIPES, script

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
    stage_recipes(src)
    missing = [
        f
        for f in toc_files(ROOT / "_toc.yml")
        if f.startswith(("notebooks/", "labs/")) and not (src / f).with_suffix(".ipynb").is_file()
    ]
    if missing:
        sys.exit(f"chapters not executed for scale={scale!r}: {missing}; run `make book SCALE={scale}`.")
    return src


def stage_recipes(src: Path) -> list[Path]:
    """Write each recipe's script (default parameters) beside it in ``src``, for its page's ``{download}`` link.

    A script is rewritten only when it changed, so Sphinx copies it again only then; a script left by a recipe
    that no longer exists is removed. Sphinx copies each linked script to ``_downloads/<hash>/<name>.py``.
    """
    written = []
    for recipe in RECIPES:
        target = src / recipe.relative_to(ROOT).with_suffix(".py")
        target.parent.mkdir(parents=True, exist_ok=True)
        text = script(recipe)
        if not target.exists() or target.read_text() != text:
            target.write_text(text)
        written.append(target)
    for folder in {recipe.parent for recipe in RECIPES}:
        for stale in (src / folder.relative_to(ROOT)).glob("*.py"):
            if stale not in written:
                stale.unlink()
    return written


def stage_student(src: Path) -> Path:
    """Copy the staged instructor sources to ``student/src`` beside them, every solution removed."""
    import nbformat

    dest = src.parent / "student" / "src"
    dest.mkdir(parents=True, exist_ok=True)
    wanted = set()
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if path.is_dir() or rel.parts[0] in ("labsrc",) or ".partial" in path.name or ".failed" in path.name:
            continue
        target = dest / rel
        wanted.add(target)
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".ipynb":
            text = nbformat.writes(strip_solutions(nbformat.read(path, as_version=4)))
        elif path.suffix == ".md" and rel.parts[0] == "book":
            text = path.read_text()
            if "```{solution-start}" in text or "```{solution}" in text:
                raise SystemExit(f"{rel}: a book page with a solution; put exercises in chapters")
        elif path.name == "_config.yml":
            config = yaml.safe_load(path.read_text())
            config["title"] = f"{config['title']} (student edition)"
            # The course pages show the labs' times and checks as the instructor edition ran them.
            config["sphinx"]["config"]["course_labs_source"] = str(src)
            text = yaml.safe_dump(config, sort_keys=False, allow_unicode=True)
        else:
            if not target.exists() or target.stat().st_mtime != path.stat().st_mtime:
                shutil.copy2(path, target)
            continue
        # Rewrite only what changed, so Sphinx rebuilds only those pages.
        if not target.exists() or target.read_text() != text:
            target.write_text(text)
    for path in sorted(dest.rglob("*"), reverse=True):
        if path.is_file() and path not in wanted:
            path.unlink()
    return dest


def build(scale: str, edition: str = "instructor") -> Path:
    src = stage(scale)
    out = ROOT / "_build" / scale
    if edition == "student":
        src = stage_student(src)
        out = out / "student"
    jb = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jb), "build", str(src), "--path-output", str(out), "-W", "-n", "--keep-going"]
    result = subprocess.run(cmd, cwd=ROOT)
    if result.returncode != 0:
        sys.exit(
            f"jupyter-book build failed for scale={scale!r}, edition={edition!r} (warnings are errors); "
            "see the messages above."
        )
    return out / "_build" / "html" / "index.html"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", default="default", choices=["ci", "default", "paper"])
    parser.add_argument("--edition", default="instructor", choices=["instructor", "student"])
    args = parser.parse_args()
    index = build(args.scale, args.edition)
    print(f"built {index}")


if __name__ == "__main__":
    main()
