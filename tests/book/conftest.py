"""Build products of the book at CI scale, made through the Makefile so nothing runs twice."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SCALE = "ci"


def chapters() -> list[str]:
    """Chapter sources named in _toc.yml (notebooks/<part>/<name>.md)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    found = []

    def walk(node):
        if isinstance(node, dict):
            if str(node.get("file", "")).startswith("notebooks/"):
                found.append(node["file"] + ".md")
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc)
    return found


def make(target: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["make", "--no-print-directory", f"SCALE={SCALE}", target],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )


@pytest.fixture(scope="session")
def html_dir() -> Path:
    """The book built at CI scale with warnings as errors (executes any chapter not yet executed)."""
    index = f"_build/{SCALE}/_build/html/index.html"
    result = make(index)
    if result.returncode != 0:
        pytest.fail(f"make {index} failed:\n{result.stdout[-6000:]}\n{result.stderr[-6000:]}")
    return ROOT / "_build" / SCALE / "_build" / "html"
