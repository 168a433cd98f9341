"""fedlib installs as a package: a non-editable ``pip install .`` in a fresh environment works, registry included."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Import name -> distribution name, where they differ.
DISTRIBUTIONS = {"sklearn": "scikit-learn", "flint": "python-flint"}


def third_party_imports() -> set[str]:
    """Top-level modules imported anywhere in fedlib that are neither fedlib nor the standard library."""
    found = set()
    for path in (ROOT / "fedlib").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return {m for m in found if m != "fedlib" and m != "__future__" and m not in sys.stdlib_module_names}


def test_every_import_is_a_declared_dependency():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {re.split(r"[<>=!~ \[]", d, maxsplit=1)[0].lower() for d in project["dependencies"]}
    missing = sorted(m for m in third_party_imports() if DISTRIBUTIONS.get(m, m).lower() not in declared)
    assert not missing, f"fedlib imports {missing} but pyproject.toml does not declare them"


@pytest.mark.install
@pytest.mark.xdist_group("install")
def test_non_editable_install_in_a_fresh_environment(tmp_path):
    """``pip install .`` into a new venv, then use fedlib from outside the checkout: no repository paths needed."""
    # Build from a copy of the package sources, so that the build leaves nothing in the checkout.
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "fedlib", source / "fedlib", ignore=shutil.ignore_patterns("__pycache__"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(source),
         "-c", str(ROOT / "constraints.txt")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert install.returncode == 0, install.stderr[-4000:]
    script = (
        "import sys, sysconfig\n"
        "from pathlib import Path\n"
        "import fedlib, fedlib.data, numpy as np\n"
        "from fedlib.cluster import KMeans\n"
        "from fedlib.data._registry import cache_dir\n"
        "site = Path(sysconfig.get_paths()['purelib']).resolve()\n"
        "assert Path(sys.prefix).resolve() == Path(sys.argv[1]).resolve(), sys.prefix\n"
        "assert Path(fedlib.__file__).resolve().is_relative_to(site), (fedlib.__file__, site)\n"
        "table = fedlib.data.registry()\n"
        "assert 'celltype_processed.pkl' in table, sorted(table)\n"
        "assert cache_dir().is_relative_to(Path.home()), cache_dir()  # the OS cache, not a checkout's data/cache\n"
        "X = np.array([[0.0], [0.1], [5.0], [5.1]])\n"
        "print(sorted(KMeans(2, n_init=1, random_state=0).fit(X).cluster_centers_.ravel().round(2).tolist()))\n"
    )
    run = subprocess.run(
        [str(python), "-c", script, str(venv)], cwd=tmp_path, capture_output=True, text=True,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-4000:]
    assert run.stdout.strip() == "[0.05, 5.05]"
