"""The labs' running times, as this build measured them, on the course pages.

Papermill records each executed notebook's wall-clock time in its metadata (``papermill.duration``); the
Makefile executes every lab at ``scale="ci"``. Two MyST constructs read it:

- the role ``{lab-time}`foundations``` gives the lab's time (``"4 s"``), and
- the directive ``{lab-table}`` a table of every lab of ``_toc.yml``: its part, chapters, coding exercises
  (the checked ones) and running time.

A page that uses them depends on the lab notebooks, so a rebuilt lab rebuilds the page. A lab that was not
executed is a build error, never a typed-in or missing number.
"""

from __future__ import annotations

import json
from pathlib import Path

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective, SphinxRole


def _lab_notebook(env, part: str) -> Path:
    # The student edition's labs have no solutions and no check outputs: read the instructor edition's, which
    # ran them (``course_labs_source``, set by tools/build_book.py), so both editions show the same measurement.
    source = env.config.course_labs_source or env.srcdir
    return Path(source) / "labs" / f"{part}.ipynb"


def lab_record(env, part: str) -> dict:
    """The lab's papermill record: ``duration`` (s), ``scale``, the number of checks (coding exercises), titles.

    Raises if the lab was not executed or if any of its checks did not pass on the reference solution.
    """
    path = _lab_notebook(env, part)
    if not path.is_file():
        raise FileNotFoundError(f"the lab {part!r} was not executed ({path}); run `make labs`")
    env.note_dependency(str(path))
    notebook = json.loads(path.read_text())
    meta = notebook["metadata"].get("papermill", {})
    checks = [c for c in notebook["cells"] if "check" in c.get("metadata", {}).get("tags", [])]
    titles = [
        "".join(c["source"]).split("\n", 1)[0].removeprefix("## ").strip()
        for c in notebook["cells"]
        if c["cell_type"] == "markdown" and "".join(c["source"]).startswith("## ")
    ]
    failed = [
        "".join(c["source"]).strip()
        for c in checks
        if not "".join(
            "".join(o.get("data", {}).get("text/plain", "")) for o in c.get("outputs", [])
        ).startswith("[PASSED]")
    ]
    if failed:
        raise ValueError(f"the lab {part!r} ran, but these checks did not pass on the reference solutions: {failed}")
    return {
        "duration": float(meta["duration"]),
        "scale": meta.get("parameters", {}).get("scale"),
        "checks": len(checks),
        "titles": titles,
    }


def lab_parts(toc: Path) -> list[str]:
    """The labs named in the table of contents (``labs/<part>``), in its order."""
    import yaml

    found: list[str] = []

    def walk(node):
        if isinstance(node, dict):
            if str(node.get("file", "")).startswith("labs/"):
                found.append(node["file"].split("/", 1)[1])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(yaml.safe_load(toc.read_text()))
    return found


def format_seconds(seconds: float) -> str:
    """``4 s``, ``1 min 05 s``."""
    seconds = round(seconds)
    return f"{seconds} s" if seconds < 60 else f"{seconds // 60} min {seconds % 60:02d} s"


class LabTime(SphinxRole):
    """``{lab-time}`part```: the lab's running time at scale "ci", measured by this build."""

    def run(self):
        try:
            record = lab_record(self.env, self.text.strip())
        except (FileNotFoundError, KeyError, ValueError) as exc:
            msg = self.inliner.reporter.error(str(exc), line=self.lineno)
            return [self.inliner.problematic(self.rawtext, self.rawtext, msg)], [msg]
        return [nodes.Text(format_seconds(record["duration"]))], []


class LabTable(SphinxDirective):
    """``{lab-table}``: every lab of the table of contents with its exercises and measured running time."""

    def run(self):
        parts = lab_parts(Path(self.env.srcdir) / "_toc.yml")
        rows = ["| Lab | Coding exercises (with checks) | Running time at `scale=\"ci\"` |", "|---|---|---|"]
        for part in parts:
            try:
                record = lab_record(self.env, part)
            except (FileNotFoundError, KeyError, ValueError) as exc:
                raise self.error(str(exc)) from None
            if record["scale"] != "ci":
                raise self.error(f"the lab {part!r} ran at scale {record['scale']!r}, not 'ci'")
            rows.append(
                f"| {{doc}}`/labs/{part}` | {record['checks']}: {'; '.join(record['titles'])} "
                f"| {format_seconds(record['duration'])} |"
            )
        container = nodes.container()
        self.state.nested_parse(StringList(rows, source=self.env.docname), self.content_offset, container)
        return container.children


def setup(app):
    app.add_config_value("course_labs_source", "", "env")
    app.add_role("lab-time", LabTime())
    app.add_directive("lab-table", LabTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
