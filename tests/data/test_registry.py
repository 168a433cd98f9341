"""Hash-checked data access: mirror, cache, corrupted copies, missing files, the safe unpickler."""

from __future__ import annotations

import io
import os
import pickle
import shutil

import numpy as np
import pytest

from fedlib import data
from fedlib.data._loaders import _NumpyOnlyUnpickler
from fedlib.data._registry import sha256_of

REAL_MIRROR = os.environ.get("FEDLIB_DATA_MIRROR")  # captured before any test changes it


@pytest.fixture
def empty_places(tmp_path, monkeypatch):
    """No mirror, an empty cache, and no downloads."""
    monkeypatch.setenv("FEDLIB_DATA_MIRROR", str(tmp_path / "mirror"))
    monkeypatch.setenv("FEDLIB_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FEDLIB_OFFLINE", "1")
    (tmp_path / "mirror").mkdir()
    return tmp_path


def test_registry_lists_every_loader_file():
    files = set(data.registry())
    assert {
        "celltype_processed.pkl",
        "covtype_kaggle_train.csv",
        "t10k-images-idx3-ubyte.gz",
        "t10k-labels-idx1-ubyte.gz",
        "tinyshakespeare.txt",
        "postures_partial.csv",
        "femnist_leaf_niid005_20shards.npz",
    } == files
    for entry in data.registry().values():
        assert len(entry.sha256) == 64
        assert entry.url is None or entry.url.startswith("https://")


def test_corrupted_mirror_copy_raises_naming_file_and_both_hashes(empty_places):
    entry = data.registry()["postures_partial.csv"]
    bad = empty_places / "mirror" / entry.file
    bad.write_bytes(b"Class,User\n1,0\n")
    with pytest.raises(data.ChecksumError) as info:
        data.load("postures_partial")
    message = str(info.value)
    assert entry.file in message and entry.sha256 in message and sha256_of(bad) in message


def test_corrupted_copy_is_not_replaced_by_a_standin(empty_places):
    (empty_places / "mirror" / "celltype_processed.pkl").write_bytes(b"not a pickle")
    with pytest.raises(data.ChecksumError):
        data.load_or_standin("celltype")


def test_missing_file_gives_clear_error_and_labelled_standin(empty_places):
    with pytest.raises(data.DataUnavailableError, match=r"covtype_kaggle_train\.csv could not be had; tried: mirror"):
        data.load("covtype")
    with pytest.warns(RuntimeWarning, match="stand-in"):
        ds = data.load_or_standin("covtype")
    assert ds.is_standin and ds.name.endswith("(stand-in)")
    assert ds.X.shape == (15120, 52)
    assert np.max(np.abs(ds.X)) <= 1.0


def test_derived_file_says_it_has_no_public_origin(empty_places):
    with pytest.raises(data.DataUnavailableError, match="derived and served by the mirror only"):
        data.fetch("femnist_leaf_niid005_20shards.npz")


def test_cache_copy_is_used_and_verified(empty_places, monkeypatch):
    source = _real_file("tinyshakespeare.txt")
    cache = empty_places / "cache"
    cache.mkdir()
    shutil.copy(source, cache / "tinyshakespeare.txt")
    assert data.fetch("tinyshakespeare.txt") == cache / "tinyshakespeare.txt"
    with open(cache / "tinyshakespeare.txt", "ab") as fh:
        fh.write(b"!")
    with pytest.raises(data.ChecksumError):
        data.fetch("tinyshakespeare.txt")


def _real_file(name):
    if not REAL_MIRROR or not os.path.isfile(os.path.join(REAL_MIRROR, name)):
        pytest.skip("no data mirror in this environment")
    return os.path.join(REAL_MIRROR, name)


def test_unknown_file_and_dataset():
    with pytest.raises(KeyError, match="not in the data registry"):
        data.fetch("nope.csv")
    with pytest.raises(KeyError, match="unknown dataset"):
        data.load("nope")


class _Evil:
    def __reduce__(self):
        import os

        return (os.system, ("echo pwned",))


def test_restricted_unpickler_refuses_other_globals():
    payload = pickle.dumps({"x": _Evil()})
    with pytest.raises(pickle.UnpicklingError, match="refused to load global"):
        _NumpyOnlyUnpickler(io.BytesIO(payload)).load()


def test_restricted_unpickler_rebuilds_numpy_arrays():
    arr = np.arange(6.0).reshape(2, 3)
    out = _NumpyOnlyUnpickler(io.BytesIO(pickle.dumps({"a": arr}, protocol=3))).load()
    np.testing.assert_array_equal(out["a"], arr)
