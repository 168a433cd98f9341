"""Write a part's lab: the coding exercises of its chapters, as one notebook a student runs on a laptop.

    python tools/make_lab.py notebooks/foundations _build/ci/labsrc/foundations.md

The lab is generated from the chapters' sources (``tools/exercises.py`` reads them), so an exercise is
written once: for each coding exercise of the part, in the order of ``_toc.yml``, the lab has its statement,
the starter cell, the chapter's solution (in a dropdown; the student edition removes it) and the check.
Starters and solutions are self-contained, and the checks run on small inputs, so a lab runs in seconds at
any scale.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from exercises import exercises

ROOT = Path(__file__).resolve().parents[1]

HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
    format_version: 0.13
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

(lab-{part})=
# Lab: {caption}

The coding exercises of {chapters}, in one notebook. Each asks you to write one step of an algorithm;
the check below it runs your code on small inputs and says either that it passed, with what it verified, or
what is wrong and on which input. It never shows a solution.

To work on it, download this page as a notebook (the download button at the top of the page, `.ipynb`) and
open it in the book's environment: `make lab` in a clone of the repository installs JupyterLab into `.venv`
and opens every lab, without solutions; any Jupyter front end with the kernel of that environment, or of
`conda env create -f environment.yml`, works too (see {{doc}}`/book/course/labs`). Fill in each starter cell,
run it, then run its check; run the whole notebook again from the top when you are done. It runs in a few
seconds: every check uses small inputs, at any `scale`.

```{{code-cell}} ipython3
:tags: [parameters]

scale = "ci"  # the checks use the same small inputs at every scale
seed = 0
```

```{{code-cell}} ipython3
from fedbook import course
```
"""


def part_chapters(part_dir: Path, toc: Path = ROOT / "_toc.yml") -> tuple[str, list[Path]]:
    """The caption of the part whose chapters live in ``part_dir``, and those chapters in table-of-contents order."""
    data = yaml.safe_load(toc.read_text())
    prefix = part_dir.as_posix().rstrip("/") + "/"
    for part in data.get("parts", []):
        files = [c["file"] for c in part.get("chapters", []) if "file" in c]
        chosen = [f for f in files if f.startswith(prefix)]
        if chosen:
            return part["caption"], [ROOT / f"{f}.md" for f in chosen]
    raise SystemExit(f"no part of _toc.yml has chapters under {prefix}")


def _code_cell(source: str, tags: list[str]) -> str:
    tag_line = f":tags: [{', '.join(tags)}]\n\n" if tags else ""
    return f"```{{code-cell}} ipython3\n{tag_line}{source.strip()}\n```\n"


def lab_source(part_dir: Path) -> str:
    """The lab of the part in ``part_dir`` as MyST Markdown."""
    caption, chapters = part_chapters(part_dir)
    links = [f"{{doc}}`/{c.relative_to(ROOT).with_suffix('').as_posix()}`" for c in chapters]
    chapters_text = links[0] if len(links) == 1 else ", ".join(links[:-1]) + " and " + links[-1]
    out = [HEADER.format(part=part_dir.name, caption=caption, chapters=chapters_text)]
    count = 0
    for chapter in chapters:
        doc = chapter.relative_to(ROOT).with_suffix("").as_posix()
        for ex in exercises(chapter):
            if not ex.is_coding:
                continue
            count += 1
            label = f"lab-{ex.label}"
            out.append(f"## {ex.title}\n\nFrom {{numref}}`{ex.label}` in {{doc}}`/{doc}`.\n")
            out.append(f"```{{exercise-start}} {ex.title}\n:label: {label}\n:nonumber:\n```\n")
            out.append(f"{ex.statement}\n\n```{{exercise-end}}\n```\n")
            out.append(_code_cell(ex.starter, ["starter"]))
            out.append(f"```{{solution-start}} {label}\n:class: dropdown\n```\n")
            for cell in ex.solution:
                if cell["cell_type"] == "code":
                    out.append(_code_cell(cell["source"], ["solution"]))
                else:
                    out.append(cell["source"].strip() + "\n")
            out.append("```{solution-end}\n```\n")
            out.append(_code_cell(ex.check, ["check"]))
    if not count:
        raise SystemExit(f"{part_dir}: no coding exercise (a starter cell and a check cell) in {chapters}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("part", type=Path, help="the part's folder, e.g. notebooks/foundations")
    parser.add_argument("output", type=Path, help="the lab's MyST Markdown source to write")
    args = parser.parse_args(argv)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(lab_source(args.part))
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
