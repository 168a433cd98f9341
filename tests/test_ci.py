"""CI walks the paths users take: the README's commands in their order, and the Pages workflow's commands.

The published site is built by ``.github/workflows/book.yml`` on a fresh runner; CI cannot run GitHub's
runner, so it runs the same ``make`` commands on a fresh clone (``.ci/run``), at ``SCALE=ci``. These tests keep
the three in step: a command the workflow adds, or ``.ci/run`` drops, fails here.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / ".github" / "workflows" / "book.yml"
CI_RUN = ROOT / ".ci" / "run"


def _commands(text: str) -> list[str]:
    """The shell lines of ``text`` (comments and blank lines dropped, continuation lines joined)."""
    text = re.sub(r"\\\n\s*", " ", text)
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]


def _make(line: str, scale: str) -> tuple[str, ...] | None:
    """A ``make`` command as (target and variables, sorted), ``$SCALE`` read as ``scale``; None for another command.

    ``PYTHON=...`` is left out: it names the interpreter of the machine (the runner's ``python``), not what is built.
    """
    words = shlex.split(line.replace("$SCALE", scale).replace("${SCALE}", scale))
    if not words or words[0] != "make":
        return None
    kept = [w for w in words[1:] if not w.startswith("PYTHON=")]
    targets = [w for w in kept if "=" not in w and not w.startswith("-")] or ["book"]  # book is the default goal
    return tuple(sorted(targets + [w for w in kept if "=" in w]))


def workflow_steps() -> list[dict]:
    return yaml.safe_load(WORKFLOW.read_text())["jobs"]["build"]["steps"]


def workflow_make_commands(scale: str = "ci") -> list[tuple[str, ...]]:
    lines = [line for step in workflow_steps() for line in _commands(step.get("run", ""))]
    return [cmd for cmd in map(lambda line: _make(line, scale), lines) if cmd]


def ci_make_commands() -> list[tuple[str, ...]]:
    return [cmd for cmd in (_make(line, "ci") for line in _commands(CI_RUN.read_text())) if cmd]


def test_ci_runs_the_readmes_first_command_before_the_second():
    commands = ci_make_commands()
    assert commands[0] == ("SCALE=ci", "book"), commands  # `make book`, the README's first command, at SCALE=ci
    assert commands[-1] == ("test",), commands  # then `make test`
    readme = (ROOT / "README.md").read_text()
    assert "make book" in readme and "make test" in readme
    assert readme.index("make book") < readme.index("make test")


def test_the_pages_workflow_runs_the_commands_ci_runs():
    """Each ``make`` of the workflow's build job runs in CI (at SCALE=ci), in the same order, before ``make test``."""
    published = workflow_make_commands()
    assert published, "the workflow runs no make command"
    ci = ci_make_commands()
    before_test = ci[: ci.index(("test",))]
    assert published == before_test, f"workflow: {published}\n.ci/run: {before_test}"


def test_the_pages_workflow_uses_the_python_the_makefile_wants():
    setup = [s for s in workflow_steps() if s.get("uses", "").startswith("actions/setup-python")]
    versions = [s["with"]["python-version"] for s in setup]
    assert versions == ["3.11"]
    assert "python3.11" in (ROOT / "Makefile").read_text()
    assert 'requires-python = ">=3.11"' in (ROOT / "pyproject.toml").read_text()
