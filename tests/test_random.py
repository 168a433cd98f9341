"""fedlib's one randomness policy (fedlib/_random.py): one module, one parameter name, one default.

Every public callable of fedlib that makes a random choice takes ``random_state`` (not ``seed`` or ``rng``), with
the default ``None`` (scikit-learn's convention); the secure-aggregation functions whose randomness is key
material default to ``"secrets"`` (the operating system's CSPRNG). Child streams are derived in one way,
:func:`fedlib.utils.child_sequence`, which agrees with ``SeedSequence.spawn`` and does not consume its root.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import numpy as np
import pytest

from fedlib.utils import child_sequence, root_sequence, spawn_generators

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("fedlib.cluster", "fedlib.data", "fedlib.field", "fedlib.learn", "fedlib.plot", "fedlib.privacy",
            "fedlib.secagg", "fedlib.unlearn", "fedlib.base", "fedlib.utils")  # fmt: skip

#: Parameters that are keys, not random states: a PRG's seed is key material (secure aggregation).
KEY_SEEDS = {"fedlib.secagg.prg_words"}


def public_callables():
    """(qualified name, callable) of every public function, class and public method of fedlib."""
    seen = {}
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if inspect.isfunction(obj):
                seen[f"{package}.{name}"] = obj
            elif inspect.isclass(obj) and obj.__module__.startswith("fedlib"):
                seen[f"{package}.{name}"] = obj.__init__
                for attr, member in vars(obj).items():
                    if inspect.isfunction(member) and not attr.startswith("_"):
                        seen[f"{package}.{name}.{attr}"] = member
    return sorted(seen.items())


CALLABLES = public_callables()


def test_the_public_api_is_large_enough_to_mean_something():
    assert len(CALLABLES) > 200


@pytest.mark.parametrize(("name", "function"), CALLABLES, ids=[n for n, _ in CALLABLES])
def test_random_choices_take_random_state_defaulting_to_none(name, function):
    parameters = inspect.signature(function).parameters
    if name not in KEY_SEEDS:
        assert not {"seed", "rng"} & set(parameters), f"{name}: a random choice is named random_state"
    if "random_state" in parameters:
        default = parameters["random_state"].default
        assert default is inspect.Parameter.empty or default is None or default == "secrets", (
            f"{name}: random_state defaults to {default!r}; fedlib's default is None (key material: 'secrets')"
        )


def test_one_module_turns_random_state_into_streams():
    """Only fedlib/_random.py defines the conversions; nothing else builds a root from a Generator by itself."""
    defining = {}
    for path in sorted((ROOT / "fedlib").rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name in {
                "check_random_state", "root_sequence", "child_sequence", "spawn_generators"
            }:  # fmt: skip
                defining.setdefault(node.name, []).append(path.relative_to(ROOT).as_posix())
            if isinstance(node, ast.Attribute) and node.attr == "spawn" and path.name != "_random.py":
                pytest.fail(f"{path.relative_to(ROOT)} spawns streams itself; use fedlib.utils.child_sequence")
    assert defining == {name: ["fedlib/_random.py"] for name in defining} and len(defining) == 4


@pytest.mark.parametrize("seed", [0, 5, 2**40])
def test_children_are_those_of_seed_sequence_spawn_and_do_not_consume_the_root(seed):
    root = np.random.SeedSequence(seed)
    spawned = np.random.SeedSequence(seed).spawn(3)
    for i, child in enumerate(spawned):
        assert child_sequence(root, i).generate_state(4).tolist() == child.generate_state(4).tolist()
    first = [g.random() for g in spawn_generators(root, 3)]
    again = [g.random() for g in spawn_generators(root, 3)]
    assert first == again  # a SeedSequence passed twice gives the same streams twice


def test_a_generator_roots_the_streams_by_one_draw():
    parent, twin = np.random.default_rng(4), np.random.default_rng(4)
    assert root_sequence(parent).entropy == int(twin.integers(0, 2**63))
    assert parent.random() == twin.random()


def test_none_draws_fresh_entropy():
    assert root_sequence(None).entropy != root_sequence(None).entropy
