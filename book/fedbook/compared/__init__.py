"""Forgetting, compared: every method that forgets on the same data, audited from the outside.

- :mod:`fedbook.compared.clustering`: MUFC, DC-KM, K-means++ seeding unlearning and retraining (of MUFC,
  K-FED and SecFC) on the same federated datasets, with outlier canaries at the forgotten client.
- :mod:`fedbook.compared.learning`: retraining, Liu et al.'s clustered unlearning, KNOT, FedEraser, rapid
  retraining and fine-tuning on the same federated images, with mislabelled canaries at the forgotten client.
- :mod:`fedbook.compared.summary`: the cost of forgetting against what an attack still detects, and the
  "which method when" table computed from both.
"""
