"""The book's Flower app (book/flower_app, shown on the "rerunning" page) runs and equals fedlib's simulator."""

from __future__ import annotations

import importlib.util
import os
import re
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

if importlib.util.find_spec("flwr") is None:  # make test installs it (requirements-flower.txt)
    if os.environ.get("CI"):
        raise ImportError("Flower is missing: make test installs requirements-flower.txt")
    pytest.skip("Flower is not installed (pip install -r requirements-flower.txt)", allow_module_level=True)

APP = Path(__file__).resolve().parents[2] / "book" / "flower_app"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """The app's modules, importable here and in Ray's workers, and its settings from its pyproject.toml."""
    pytest.importorskip("fedlib.data")
    path = os.pathsep.join(p for p in (str(APP), os.environ.get("PYTHONPATH")) if p)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", path)  # Ray's workers import the app's modules from here
        patch.syspath_prepend(str(APP))
        from fedlib_flower_app import client_app, server_app, task

        config = tomllib.loads((APP / "pyproject.toml").read_text())["tool"]["flwr"]["app"]["config"]
        yield client_app, server_app, task, config


def test_the_books_flower_app_trains_forgets_and_equals_the_simulator(app, capsys, restored_environment):
    from flwr.serverapp import ServerApp
    from flwr.simulation import run_simulation

    from fedlib.unlearn import ClusteredUnlearning

    client_app, server_app, task, config = app
    systems = []
    server = ServerApp()

    @server.main()
    def main(grid, context):
        systems.append(server_app.run(grid, config))

    with restored_environment():
        run_simulation(
            server, client_app.app, num_supernodes=int(config["num-clients"]),
            backend_config={"client_resources": {"num_cpus": 1}, "init_args": {"num_cpus": 2}},
        )  # fmt: skip
    assert "ray" not in os.environ.get("PYTHONPATH", "")  # Ray's settings do not outlive the run
    assert len(systems) == 1, "the ServerApp failed (see the log above)"
    printed = capsys.readouterr().out
    trained = r"2 clusters of \[5, 5\] clients trained on Flower nodes; majority-vote test accuracy 0\.\d{3}"
    forgot = rf"forgot client {config['forget']}: retrained cluster \d \(4 clients, {config['rounds']} rounds\)"
    assert re.search(trained, printed) and re.search(forgot, printed), printed

    # the same system trained in this process on the same images: the same cluster models, bit for bit
    n = int(config["num-clients"])
    shares = [task.client_data(u, n) for u in range(n)]
    X, y = np.concatenate([s[0] for s in shares]), np.concatenate([s[1] for s in shares])
    parts = np.split(np.arange(len(y)), np.cumsum([len(s[1]) for s in shares])[:-1])
    flower = systems[0]
    ours = ClusteredUnlearning(
        task.MODEL, cluster_size=int(config["cluster-size"]), rounds=int(config["rounds"]), local=flower.local,
        random_state=int(config["seed"]), method=flower.method,
    ).fit(X, y, parts=parts)  # fmt: skip
    ours.unlearn(clients=[int(config["forget"])])
    for a, b in zip(ours.trainers_, flower.trainers_, strict=True):
        assert np.array_equal(a.params_, b.params_)
    assert sys.modules["fedlib_flower_app.task"] is task
