"""Drivers of the K-means foundations chapter (book/fedbook/foundations.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from fedbook.foundations import seeding_quality

from fedlib.cluster import KMeans
from fedlib.data import Dataset, make_blobs


def test_seeding_quality_does_not_depend_on_n_jobs_and_stays_above_one():
    datasets, X_used, fits = {}, {}, {}
    for name, (sizes, seed) in {"a": ((60, 40, 30), 0), "b": ((50, 50), 1)}.items():
        X, y = make_blobs(sizes, 2, cluster_std=0.3, random_state=seed)
        datasets[name] = Dataset(name=name, X=X, y=y, n_clusters=len(sizes), source="make_blobs")
        X_used[name] = X
        fits[name] = KMeans(len(sizes), n_init=5, random_state=seed).fit(X)
    one = seeding_quality(datasets, X_used, fits, n_reps=4, n_jobs=1, random_state=7)
    two = seeding_quality(datasets, X_used, fits, n_reps=4, n_jobs=2, random_state=7)
    pd.testing.assert_frame_equal(one, two)
    assert list(one.index) == ["a", "b"]
    assert np.all(one["K-means++ then Lloyd"] >= 1 - 1e-9) and np.all(one["K-means++ seeds (worst)"] >= 1 - 1e-9)


def test_dataset_profiles_do_not_depend_on_n_jobs():
    from fedbook.foundations import dataset_profiles

    datasets, X_used = {}, {}
    for name, (sizes, seed) in {"a": ((60, 40, 30), 0), "b": ((50, 50), 1)}.items():
        X, y = make_blobs(sizes, 2, cluster_std=0.3, random_state=seed)
        datasets[name] = Dataset(name=name, X=X, y=y, n_clusters=len(sizes), source="make_blobs")
        X_used[name] = X
    one = dataset_profiles(datasets, X_used, n_init=3, n_jobs=1, random_state=4)
    two = dataset_profiles(datasets, X_used, n_init=3, n_jobs=2, random_state=4)
    pd.testing.assert_frame_equal(one.table, two.table)
    assert all(one.fits[n].inertia_ == two.fits[n].inertia_ for n in datasets)
    assert [int(one.sizes[n].sum()) for n in datasets] == [130, 100]
