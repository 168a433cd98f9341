"""fedlib: federated clustering, secure aggregation and federated unlearning, written for the book."""

__version__ = "0.1.0"
