"""The pinned environment is consistent: environment.yml mirrors requirements.txt, and both are exact pins."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def pins(lines):
    return {line.strip() for line in lines if line.strip() and not line.strip().startswith(("#", "-"))}


def test_requirements_are_exact_pins():
    reqs = pins((ROOT / "requirements.txt").read_text().splitlines())
    assert reqs and all("==" in r for r in reqs), [r for r in reqs if "==" not in r]


def test_environment_yml_lists_the_same_pins():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert pins(pip_section) == pins((ROOT / "requirements.txt").read_text().splitlines())
    assert any(d == "python=3.11" for d in env["dependencies"] if isinstance(d, str))


def test_constraints_pin_every_requirement():
    constraints = {line.split("==")[0].lower() for line in pins((ROOT / "constraints.txt").read_text().splitlines())}
    for requirement in pins((ROOT / "requirements.txt").read_text().splitlines()):
        name = requirement.split("==")[0].lower()
        assert name in constraints or name in {"setuptools"}, name


def test_optional_requirement_files_are_exact_pins_that_agree_with_the_constraints():
    """requirements-dask.txt, -flower.txt and -lab.txt: every package pinned, none against a constraint's pin."""
    constraints = dict(r.split("==") for r in pins((ROOT / "constraints.txt").read_text().splitlines()))
    constraints = {name.lower(): version for name, version in constraints.items()}
    for file in ("requirements-dask.txt", "requirements-flower.txt", "requirements-lab.txt"):
        reqs = pins((ROOT / file).read_text().splitlines())
        assert reqs and all("==" in r for r in reqs), (file, [r for r in reqs if "==" not in r])
        for requirement in reqs:
            name, version = requirement.split("==")
            name = name.split("[")[0].lower()
            assert constraints.get(name, version) == version, (file, requirement, constraints[name])
