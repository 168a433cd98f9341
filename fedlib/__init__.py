"""fedlib: federated clustering, secure aggregation and federated unlearning, written for the book.

Subpackages, lowest layer first (each imports only from the ones before it), on
:mod:`fedlib.exceptions` (every exception) and :mod:`fedlib.base` (the contract of every
method that forgets: ``unlearn`` and its :class:`~fedlib.base.UnlearningReport`):

- :mod:`fedlib.field`: exact arithmetic over GF(p): int64 residues below 2**50,
  Python integers above, the Lagrange code (LCC, Shamir sharing) and the
  power-sum decoder of MUFC's SCMA.
- :mod:`fedlib.cluster`: clustering without privacy: K-means++, Lloyd on
  coordinates or from distances, the K-means objective, accuracy, one-shot
  federated K-means, K-FED and MUFC's quantization grid.
- :mod:`fedlib.learn`: federated learning with torch on the CPU: seeded models,
  vectorised local SGD, FedAvg over a pluggable aggregator and KNOT's
  asynchronous clustered trainer.
- :mod:`fedlib.secagg`: SCMA (MUFC Alg. 2) with zero-sum masks, LCC sharing of
  data points and SecFC (SecFC Alg. 1) with its overflow bound.
- :mod:`fedlib.unlearn`: exact unlearning: of K-means++ seeding (MUFC Alg. 3),
  of federated clusters (MUFC Alg. 4; the DC-KM baseline), and an audit.
- :mod:`fedlib.audit`: forgetting tested from the outside: canaries,
  membership inference (loss threshold, LiRA with shadow models) and
  checks of exactness against retraining.

Beside them:

- :mod:`fedlib.privacy`: what a protocol reveals by design: reconstruction of
  the data from SecFC's decoded seed distances.
- :mod:`fedlib.data`: datasets (hash-checked files, generators, labelled
  stand-ins, published shapes) and client partitions.
- :mod:`fedlib.plot`: one figure style for every chapter;
  :mod:`fedlib.utils`: the public seed, scalar-check and progress helpers.

fedlib holds algorithms only. The experiments that reproduce the papers, their
published numbers and the benchmark helpers live beside the book (``book/fedbook``)
and are never imported here.
"""

__version__ = "0.1.0"
