"""Compare the glued values of two builds of the book, chapter by chapter.

    python tools/compare_glue.py BEFORE_DIR AFTER_DIR [--rtol 1e-9] [--ignore PATTERN ...]

Each directory holds executed notebooks (``_build/<scale>/src``). For every
notebook present in both, the values stored by ``myst_nb.glue`` are matched by
name and compared: strings exactly, numbers up to ``--rtol``. The exit status is
1 when a value differs or a name exists on one side only, so a refactoring that
must not change any number can be checked with one command. ``--ignore`` takes
regular expressions of glue names whose values are timings (they differ from
run to run whatever the code).
"""

from __future__ import annotations

import argparse
import ast
import json
import math
import re
import sys
from pathlib import Path

_MIME = "application/papermill.record/text/plain"


def glued_values(notebook: Path) -> dict[str, str]:
    """``{name: text/plain repr}`` of every value glued in an executed notebook."""
    cells = json.loads(notebook.read_text())["cells"]
    found: dict[str, str] = {}
    for cell in cells:
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            if name is not None and _MIME in output.get("data", {}):
                found[name] = output["data"][_MIME]
    return found


def same_value(a: str, b: str, rtol: float) -> bool:
    """Equal reprs, or numbers equal up to ``rtol`` (NaN equals NaN)."""
    if a == b:
        return True
    try:
        x, y = ast.literal_eval(a), ast.literal_eval(b)
    except (ValueError, SyntaxError):
        return False
    if isinstance(x, (int, float)) and isinstance(y, (int, float)) and not isinstance(x, bool):
        if math.isnan(x) and math.isnan(y):
            return True
        return math.isclose(x, y, rel_tol=rtol, abs_tol=0.0)
    return False


def compare(before: Path, after: Path, *, rtol: float, ignore: list[str]) -> list[str]:
    """Lines describing every difference between the two builds (empty: identical)."""
    patterns = [re.compile(p) for p in ignore]
    problems = []
    for old in sorted(before.rglob("*.ipynb")):
        if old.name.endswith((".partial.ipynb", ".failed.ipynb")):
            continue
        rel = old.relative_to(before)
        new = after / rel
        if not new.is_file():
            problems.append(f"{rel}: missing in {after}")
            continue
        a, b = glued_values(old), glued_values(new)
        for name in sorted(set(a) | set(b)):
            if any(p.search(name) for p in patterns):
                continue
            if name not in b:
                problems.append(f"{rel}: {name} glued before only ({a[name]})")
            elif name not in a:
                problems.append(f"{rel}: {name} glued after only ({b[name]})")
            elif not same_value(a[name], b[name], rtol):
                problems.append(f"{rel}: {name}: {a[name]} -> {b[name]}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--rtol", type=float, default=0.0, help="relative tolerance for numbers (default exact)")
    parser.add_argument("--ignore", action="append", default=[], metavar="PATTERN", help="glue names to skip")
    args = parser.parse_args(argv)
    problems = compare(args.before, args.after, rtol=args.rtol, ignore=args.ignore)
    for line in problems:
        print(line)
    print(f"{len(problems)} difference(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
