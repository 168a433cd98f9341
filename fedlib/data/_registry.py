"""Hash-checked access to the data files listed in the registry, ``fedlib/data/registry.csv``.

The registry is package data, read with :mod:`importlib.resources`, so that an
installed fedlib (``pip install .``, not only an editable checkout) finds it.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from fedlib._optional import import_optional
from fedlib.exceptions import ChecksumError, DataUnavailableError

#: The source checkout this module sits in, if any (a pyproject.toml beside the fedlib package).
_CHECKOUT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class RegistryEntry:
    """One row of the registry: a file, its SHA-256, size, public origin (None: mirror only) and licence."""

    file: str
    sha256: str
    bytes: int
    url: str | None
    licence: str


@lru_cache(maxsize=1)
def registry() -> dict[str, RegistryEntry]:
    """All registered data files, by file name.

    Read from the package's ``registry.csv`` (or from the file named by
    ``FEDLIB_REGISTRY``, for a registry kept elsewhere).

    Returns
    -------
    dict of str to RegistryEntry

    Examples
    --------
    >>> from fedlib.data import registry
    >>> files = registry()
    >>> "tinyshakespeare.txt" in files, files["tinyshakespeare.txt"].bytes
    (True, 1115394)
    >>> files["femnist_leaf_niid005_20shards.npz"].url is None  # served by the mirror only
    True
    """
    override = os.environ.get("FEDLIB_REGISTRY")
    if override:
        path = Path(override)
        if not path.is_file():
            raise FileNotFoundError(f"FEDLIB_REGISTRY names {path}, which is not a file.")
        text = path.read_text(encoding="utf-8")
    else:
        text = resources.files("fedlib.data").joinpath("registry.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    return {
        r["file"]: RegistryEntry(
            file=r["file"],
            sha256=r["sha256"].lower(),
            bytes=int(r["bytes"]),
            url=r["url"] or None,
            licence=r["licence"],
        )
        for r in rows
    }


def cache_dir() -> Path:
    """Download cache: ``FEDLIB_CACHE``; else ``data/cache`` of the source checkout (git-ignored); else the OS cache.

    Returns
    -------
    pathlib.Path
    """
    if os.environ.get("FEDLIB_CACHE"):
        return Path(os.environ["FEDLIB_CACHE"])
    if (_CHECKOUT / "pyproject.toml").is_file():
        return _CHECKOUT / "data" / "cache"
    pooch = import_optional("pooch", "data", feature="the OS data cache")
    return Path(pooch.os_cache("fedlib"))


def mirror_dir() -> Path | None:
    """Local mirror named by ``FEDLIB_DATA_MIRROR``, if set.

    Returns
    -------
    pathlib.Path or None
    """
    value = os.environ.get("FEDLIB_DATA_MIRROR")
    return Path(value) if value else None


def sha256_of(path: Path) -> str:
    """Hex SHA-256 of a file, read in 1 MiB blocks.

    Parameters
    ----------
    path : pathlib.Path
        The file.

    Returns
    -------
    str
    """
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify(path: Path, entry: RegistryEntry) -> Path:
    """Raise :class:`ChecksumError` unless ``path`` has the registered SHA-256.

    Parameters
    ----------
    path : pathlib.Path
        The copy to check.
    entry : RegistryEntry
        Its registry row.

    Returns
    -------
    pathlib.Path
        ``path``, verified.
    """
    actual = sha256_of(path)
    if actual != entry.sha256:
        raise ChecksumError(
            f"{entry.file}: SHA-256 mismatch for {path}: expected {entry.sha256}, got {actual}. "
            "The file is corrupted or not the registered version; delete it or restore the original."
        )
    return path


def fetch(file: str, *, download: bool = True) -> Path:
    """Path of a verified copy of the registered ``file``.

    Looks in the mirror (``FEDLIB_DATA_MIRROR``), then the cache, then downloads
    from the registered public origin with pooch. The SHA-256 is checked every
    time; a copy that fails the check raises :class:`~fedlib.exceptions.ChecksumError` rather than
    falling through to another source.

    Parameters
    ----------
    file : str
        A file name of the registry.
    download : bool, default=True
        Allow the download from the public origin (``FEDLIB_OFFLINE=1`` forbids it too).

    Returns
    -------
    pathlib.Path
        A verified copy.

    Raises
    ------
    KeyError
        If ``file`` is not registered.
    ChecksumError
        If a copy is found whose SHA-256 is not the registered one.
    DataUnavailableError
        If no copy can be had; the message lists what was tried.

    Examples
    --------
    With an empty mirror and cache and downloads disabled, no copy can be had:

    >>> import os
    >>> import tempfile
    >>> from unittest import mock
    >>> from fedlib.data import fetch
    >>> from fedlib.exceptions import DataUnavailableError
    >>> with tempfile.TemporaryDirectory() as empty, mock.patch.dict(
    ...     os.environ, {"FEDLIB_DATA_MIRROR": empty, "FEDLIB_CACHE": empty}
    ... ):
    ...     try:
    ...         fetch("tinyshakespeare.txt", download=False)
    ...     except DataUnavailableError as error:
    ...         print(type(error).__name__)
    DataUnavailableError
    """
    table = registry()
    if file not in table:
        raise KeyError(f"{file!r} is not in the data registry; known files: {sorted(table)}.")
    entry = table[file]
    tried: list[str] = []
    mirror = mirror_dir()
    if mirror is not None:
        candidate = mirror / file
        if candidate.is_file():
            return verify(candidate, entry)
        tried.append(f"mirror {candidate} (missing)")
    else:
        tried.append("mirror (FEDLIB_DATA_MIRROR not set)")
    cached = cache_dir() / file
    if cached.is_file():
        return verify(cached, entry)
    tried.append(f"cache {cached} (missing)")
    if os.environ.get("FEDLIB_OFFLINE") == "1":
        download = False
    if entry.url is None:
        tried.append("public origin (none: this file is derived and served by the mirror only)")
    elif not download:
        tried.append(f"public origin {entry.url} (downloads disabled: FEDLIB_OFFLINE=1 or download=False)")
    else:
        try:
            pooch = import_optional("pooch", "data", feature="downloading a registered data file")
            got = pooch.retrieve(
                entry.url,
                known_hash=f"sha256:{entry.sha256}",
                fname=file,
                path=cache_dir(),
                downloader=pooch.HTTPDownloader(timeout=60, progressbar=False),
                progressbar=False,
            )
            return verify(Path(got), entry)
        except ValueError as exc:  # pooch's own hash check
            if "hash" in str(exc).lower():
                raise ChecksumError(f"{file}: download from {entry.url} failed the SHA-256 check: {exc}") from exc
            tried.append(f"public origin {entry.url} ({exc})")
        except Exception as exc:  # network refused, timeout, HTTP error
            tried.append(f"public origin {entry.url} ({type(exc).__name__}: {exc})")
    raise DataUnavailableError(f"{file} could not be had; tried: " + "; ".join(tried) + ".")
