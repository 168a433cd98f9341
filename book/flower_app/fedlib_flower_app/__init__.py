"""fedlib's clustered federated unlearning as a Flower app (see ``pyproject.toml``)."""
