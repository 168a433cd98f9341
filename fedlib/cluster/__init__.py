"""Clustering without privacy, shared by every chapter.

- One K-means++ kernel (:func:`kmeans_plusplus`; coordinates or :class:`DistanceColumns`,
  exponential-race keys from :func:`draw_race_keys`, replayable prefix) and one Lloyd
  loop (:func:`lloyd` on coordinates, :func:`distance_lloyd` from a :class:`DistanceOracle`)
  with one result type, :class:`LloydResult`; :class:`KMeans`.
- SecFC's plaintext references: :func:`centralized_lloyd` on floats
  (:class:`FloatDistances`) or on quantized integers (:class:`PlainIntegerDistances`),
  with its center-separation initialisation (:func:`separate`).
- The K-means objective, nearest-centre or induced (:func:`kmeans_objective`), the loss
  ratio, clustering accuracy; squared distances and nearest-centre assignment; cluster
  sizes and sums from one sparse membership matrix.
- Federated estimators without privacy (:class:`OneShotFederatedKMeans`, :class:`KFED`),
  the shared local step (:func:`local_clusters`) and MUFC's quantization grid
  (:class:`UniformGrid`).
- KNOT's client-to-cluster assignment (Su & Li 2023): anchors and match ratings
  (:func:`cluster_anchors`, :func:`match_ratings`, :func:`round_ratings`) and the
  lexicographic minimum under cluster-size bounds, solved exactly as a big-integer
  min-cost flow (:func:`lexmin_assignment`, :func:`size_bounds`, :class:`Assignment`);
  the pieces of the paper's reduction to an LP, checkable exactly: its constraint
  matrix (:func:`assignment_constraints`), determinants of its square submatrices
  for total unimodularity (:func:`sample_subdeterminants`, :class:`SubdeterminantSample`,
  :func:`integer_determinant`), the separable surrogate and Meyer's λ-LP objective
  (:func:`separable_objective`, :func:`lambda_lp_objective`).

Of the rest of fedlib this package uses only :mod:`fedlib.field` (quantization into
integers and its overflow error); it imports nothing from :mod:`fedlib.secagg` or
:mod:`fedlib.unlearn`.
"""

from fedlib.cluster._accuracy import clustering_accuracy
from fedlib.cluster._assignment import (
    ASSIGNMENT_METHODS,
    Assignment,
    SubdeterminantSample,
    assignment_constraints,
    cluster_anchors,
    integer_determinant,
    lambda_lp_objective,
    lexmin_assignment,
    match_ratings,
    round_ratings,
    sample_subdeterminants,
    separable_objective,
    size_bounds,
)
from fedlib.cluster._distance import assign_to_nearest, nearest_centre_labels, row_norms_squared, squared_distances
from fedlib.cluster._distance_lloyd import (
    DistanceOracle,
    FloatDistances,
    OracleColumns,
    PlainIntegerDistances,
    assign_from_distances,
    centralized_lloyd,
    distance_lloyd,
    separate,
)
from fedlib.cluster._federated import FederatedClusteringMixin, OneShotFederatedKMeans, local_clusters
from fedlib.cluster._kfed import KFED
from fedlib.cluster._kmeanspp import (
    CoordinateColumns,
    DistanceColumns,
    draw_race_keys,
    kmeans_plusplus,
    kmeans_plusplus_indices,
)
from fedlib.cluster._lloyd import KMeans, LloydResult, lloyd
from fedlib.cluster._membership import cluster_sizes, cluster_sums, membership_matrix
from fedlib.cluster._objective import kmeans_objective, loss_ratio
from fedlib.cluster._quantize import UniformGrid

__all__ = [
    "ASSIGNMENT_METHODS",
    "KFED",
    "Assignment",
    "CoordinateColumns",
    "DistanceColumns",
    "DistanceOracle",
    "FederatedClusteringMixin",
    "FloatDistances",
    "KMeans",
    "LloydResult",
    "OneShotFederatedKMeans",
    "OracleColumns",
    "PlainIntegerDistances",
    "SubdeterminantSample",
    "UniformGrid",
    "assign_from_distances",
    "assign_to_nearest",
    "assignment_constraints",
    "centralized_lloyd",
    "cluster_anchors",
    "cluster_sizes",
    "cluster_sums",
    "clustering_accuracy",
    "distance_lloyd",
    "draw_race_keys",
    "integer_determinant",
    "kmeans_objective",
    "kmeans_plusplus",
    "kmeans_plusplus_indices",
    "lambda_lp_objective",
    "lexmin_assignment",
    "lloyd",
    "local_clusters",
    "loss_ratio",
    "match_ratings",
    "membership_matrix",
    "nearest_centre_labels",
    "round_ratings",
    "row_norms_squared",
    "sample_subdeterminants",
    "separable_objective",
    "separate",
    "size_bounds",
    "squared_distances",
]
