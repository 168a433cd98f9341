"""The API reference's Sphinx extension (book/_ext/fedlib_api.py) needs none of fedlib's optional extras.

``make book`` installs neither Flower nor Dask. The extension imports every public module of fedlib when
Sphinx starts; one whose dependency is missing is imported under autodoc's mock of ``autodoc_mock_imports``
(as autodoc imports it for its own page), and a missing dependency that is not mocked is a clear error.
Flower is installed where the tests run, so its absence is simulated by an import hook that refuses it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]

WITHOUT_FLOWER = """
import importlib.abc, json, sys
class NoFlower(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "flwr" or name.startswith("flwr."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, NoFlower())
sys.path.insert(0, "book/_ext")
import fedlib_api
mock = json.loads(sys.argv[1])
print(json.dumps(sorted(m.__name__ for m in fedlib_api.public_modules(mock))))
"""


def _run(mock: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", WITHOUT_FLOWER, mock], cwd=ROOT, capture_output=True, text=True)


def test_the_book_mocks_flower():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())["sphinx"]["config"]
    assert "flwr" in config["autodoc_mock_imports"]


def test_public_modules_without_flower_mocks_it_and_keeps_every_module():
    run = _run('["flwr"]')
    assert run.returncode == 0, run.stderr[-3000:]
    names = set(json.loads(run.stdout))
    assert {"fedlib.flower", "fedlib.learn", "fedlib.secagg", "fedlib.unlearn"} <= names


def test_public_modules_without_flower_and_without_its_mock_names_the_setting():
    run = _run("[]")
    assert run.returncode != 0
    assert "fedlib.flower" in run.stderr and "autodoc_mock_imports" in run.stderr and "flwr" in run.stderr
