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


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Give every ``xdist_group`` test of the session the ``@group`` suffix that ``--dist loadgroup`` schedules by.

    pytest-xdist 3.8 appends the suffix by assigning ``item._nodeid``, which pytest 9.2's structured
    node ids (``item._id``) ignore, so the groups silently stop holding (pytest-dev/pytest-xdist#1386)
    and the book tests, which share ``_build/ci``, would run on both workers at once. This hook runs
    after xdist's and adds the suffix where it is missing; it does nothing once xdist does it itself.
    """
    if not config.getoption("loadgroup", default=False):  # set on xdist workers under --dist loadgroup
        return
    for item in items:
        marks = list(item.iter_markers("xdist_group"))
        if not marks:
            continue
        groups = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in marks})
        suffix = "@" + "_".join(groups)
        if item.nodeid.endswith(suffix):
            continue
        if hasattr(item, "_id"):  # pytest >= 9.2
            item._id = type(item._id).parse(item.nodeid + suffix)
        else:
            item._nodeid = item.nodeid + suffix


def make(target: str, *variables: str) -> subprocess.CompletedProcess:
    """``make SCALE=ci [VARIABLE=value ...] target`` in the repository."""
    return subprocess.run(
        ["make", "--no-print-directory", f"SCALE={SCALE}", *variables, target],
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
