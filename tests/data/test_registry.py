"""Hash-checked data access: mirror, cache, corrupted copies, missing files, the safe unpickler."""

from __future__ import annotations

import io
import os
import pickle
import shutil
from importlib import resources
from pathlib import Path

import numpy as np
import pooch
import pytest

from fedlib import data
from fedlib.data import _registry
from fedlib.data._loaders import _NumpyOnlyUnpickler
from fedlib.data._registry import sha256_of
from fedlib.exceptions import ChecksumError, DataUnavailableError

ROOT = Path(__file__).resolve().parents[2]

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
        "fashion-train-images-idx3-ubyte.gz",
        "fashion-train-labels-idx1-ubyte.gz",
        "fashion-t10k-images-idx3-ubyte.gz",
        "fashion-t10k-labels-idx1-ubyte.gz",
    } == files
    for entry in data.registry().values():
        assert len(entry.sha256) == 64
        assert entry.url is None or entry.url.startswith("https://")


def test_corrupted_mirror_copy_raises_naming_file_and_both_hashes(empty_places):
    entry = data.registry()["postures_partial.csv"]
    bad = empty_places / "mirror" / entry.file
    bad.write_bytes(b"Class,User\n1,0\n")
    with pytest.raises(ChecksumError) as info:
        data.load("postures_partial")
    message = str(info.value)
    assert entry.file in message and entry.sha256 in message and sha256_of(bad) in message


def test_corrupted_copy_is_not_replaced_by_a_standin(empty_places):
    (empty_places / "mirror" / "celltype_processed.pkl").write_bytes(b"not a pickle")
    with pytest.raises(ChecksumError):
        data.load_or_standin("celltype")


def test_missing_file_gives_clear_error_and_labelled_standin(empty_places):
    with pytest.raises(DataUnavailableError, match=r"covtype_kaggle_train\.csv could not be had; tried: mirror"):
        data.load("covtype")
    with pytest.warns(RuntimeWarning, match="stand-in"):
        ds = data.load_or_standin("covtype")
    assert ds.is_standin and ds.name.endswith("(stand-in)")
    assert ds.X.shape == (15120, 52)
    assert np.max(np.abs(ds.X)) <= 1.0


def test_derived_file_says_it_has_no_public_origin(empty_places):
    with pytest.raises(DataUnavailableError, match="derived and served by the mirror only"):
        data.fetch("femnist_leaf_niid005_20shards.npz")


def test_cache_copy_is_used_and_verified(empty_places, monkeypatch):
    source = _real_file("tinyshakespeare.txt")
    cache = empty_places / "cache"
    cache.mkdir()
    shutil.copy(source, cache / "tinyshakespeare.txt")
    assert data.fetch("tinyshakespeare.txt") == cache / "tinyshakespeare.txt"
    with open(cache / "tinyshakespeare.txt", "ab") as fh:
        fh.write(b"!")
    with pytest.raises(ChecksumError):
        data.fetch("tinyshakespeare.txt")


@pytest.fixture
def fresh_registry():
    """Forget the registry read so far, before and after the test (``registry()`` is cached)."""
    data.registry.cache_clear()
    yield
    data.registry.cache_clear()


def test_registry_is_package_data():
    assert (resources.files("fedlib.data") / "registry.csv").is_file()
    assert not (ROOT / "data" / "registry.csv").exists(), "the registry moved to fedlib/data/registry.csv"


def test_fedlib_registry_overrides_the_package_registry(tmp_path, monkeypatch, fresh_registry):
    other = tmp_path / "registry.csv"
    other.write_text("file,sha256,bytes,url,licence\nx.bin," + "AB" * 32 + ",3,,CC0\n", encoding="utf-8")
    monkeypatch.setenv("FEDLIB_REGISTRY", str(other))
    assert data.registry() == {
        "x.bin": _registry.RegistryEntry(file="x.bin", sha256="ab" * 32, bytes=3, url=None, licence="CC0")
    }


def test_fedlib_registry_naming_no_file_says_so(tmp_path, monkeypatch, fresh_registry):
    monkeypatch.setenv("FEDLIB_REGISTRY", str(tmp_path / "missing.csv"))
    with pytest.raises(FileNotFoundError, match=r"FEDLIB_REGISTRY names .*missing\.csv"):
        data.registry()


def test_cache_dir_defaults(tmp_path, monkeypatch):
    monkeypatch.delenv("FEDLIB_CACHE", raising=False)
    assert _registry.cache_dir() == ROOT / "data" / "cache"  # this source checkout
    monkeypatch.setattr(_registry, "_CHECKOUT", tmp_path)  # no pyproject.toml beside fedlib: an installed copy
    assert _registry.cache_dir() == Path(pooch.os_cache("fedlib"))
    monkeypatch.setenv("FEDLIB_CACHE", str(tmp_path / "elsewhere"))
    assert _registry.cache_dir() == tmp_path / "elsewhere"


def test_mirror_dir_is_fedlib_data_mirror(tmp_path, monkeypatch):
    monkeypatch.delenv("FEDLIB_DATA_MIRROR", raising=False)
    assert _registry.mirror_dir() is None
    monkeypatch.setenv("FEDLIB_DATA_MIRROR", str(tmp_path))
    assert _registry.mirror_dir() == tmp_path


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
