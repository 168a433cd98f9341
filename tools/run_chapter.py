"""Execute one chapter (a MyST Markdown notebook) with Papermill.

    python tools/run_chapter.py notebooks/foundations/kmeans.md OUT.ipynb -p scale ci -p seed 0

The chapter is converted with jupytext, executed by Papermill in its own folder,
and written to OUT only if every cell succeeded. On a cell error the failing
notebook is kept as OUT with the suffix ``.failed.ipynb`` and the message names
the chapter, the cell and the error.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path


def _parse_value(text: str):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def run_chapter(source: Path, output: Path, parameters: dict, *, timeout: int = 7200) -> None:
    import jupytext
    import papermill
    from papermill.exceptions import PapermillExecutionError

    notebook = jupytext.read(source)
    notebook.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
    output.parent.mkdir(parents=True, exist_ok=True)
    # Figures must reach the notebook as images: the kernel needs the inline backend, whatever the caller set.
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    os.environ.setdefault("FEDLIB_PROGRESS", "0")  # no progress bars in the rendered book
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    os.environ["FEDBOOK_CHAPTER"] = source.as_posix()  # names the chapter in fedbook.sweeps' log, when one is kept
    os.environ["FEDBOOK_CHAPTER_RUN"] = uuid.uuid4().hex  # and this execution of it (a rerun supersedes it)
    with tempfile.TemporaryDirectory() as tmp:
        converted = Path(tmp) / (source.stem + ".ipynb")
        jupytext.write(notebook, converted)
        partial = output.with_name(output.stem + ".partial.ipynb")
        start = time.perf_counter()
        try:
            papermill.execute_notebook(
                str(converted),
                str(partial),
                parameters=parameters,
                kernel_name="python3",
                cwd=str(source.parent.resolve()),
                progress_bar=False,
                execution_timeout=timeout,
            )
        except PapermillExecutionError as exc:
            failed = output.with_name(output.stem + ".failed.ipynb")
            partial.replace(failed)
            first_line = exc.source.strip().splitlines()[0] if exc.source.strip() else ""
            sys.exit(
                f"chapter {source} failed in cell {exc.cell_index} (execution count {exc.exec_count}, "
                f"starting `{first_line}`): {exc.ename}: {exc.evalue}\n"
                f"The executed notebook with the traceback is {failed}."
            )
        partial.replace(output)
    print(f"executed {source} -> {output} in {time.perf_counter() - start:.0f} s with {parameters}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=Path, help="chapter, a MyST Markdown notebook")
    parser.add_argument("output", type=Path, help="executed notebook to write (.ipynb)")
    parser.add_argument("-p", "--parameter", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"))
    parser.add_argument("--timeout", type=int, default=7200, help="seconds per cell")
    args = parser.parse_args(argv)
    parameters = {name: _parse_value(value) for name, value in args.parameter}
    run_chapter(args.source, args.output, parameters, timeout=args.timeout)


if __name__ == "__main__":
    main()
