"""Centralized clustering primitives shared by every chapter: K-means++, Lloyd, the K-means objective."""

from fedlib.cluster._accuracy import clustering_accuracy
from fedlib.cluster._baselines import BaselineFit, DCKMeans, kfed
from fedlib.cluster._distance import assign_to_nearest, squared_distances
from fedlib.cluster._distance_lloyd import LloydRun, centralized_lloyd
from fedlib.cluster._federated import FederatedClustering, one_shot_federated_kmeans
from fedlib.cluster._kmeanspp import draw_race_keys, kmeans_plusplus
from fedlib.cluster._lloyd import KMeans, LloydResult, lloyd
from fedlib.cluster._objective import kmeans_objective, loss_ratio, optimal_loss
from fedlib.cluster._quantize import UniformGrid
from fedlib.cluster._secfc import SecFC, default_colluders

__all__ = [
    "BaselineFit",
    "DCKMeans",
    "FederatedClustering",
    "KMeans",
    "LloydResult",
    "LloydRun",
    "SecFC",
    "UniformGrid",
    "assign_to_nearest",
    "centralized_lloyd",
    "clustering_accuracy",
    "default_colluders",
    "draw_race_keys",
    "kfed",
    "kmeans_objective",
    "kmeans_plusplus",
    "lloyd",
    "loss_ratio",
    "one_shot_federated_kmeans",
    "optimal_loss",
    "squared_distances",
]
