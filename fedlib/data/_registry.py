"""Hash-checked access to the data files listed in ``data/registry.csv``."""

from __future__ import annotations

import csv
import hashlib
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

_REPO_ROOT = Path(__file__).resolve().parents[2]
_REGISTRY_CSV = _REPO_ROOT / "data" / "registry.csv"


class DataUnavailableError(FileNotFoundError):
    """A registered data file is in neither the mirror nor the cache and cannot be fetched."""


class ChecksumError(ValueError):
    """A data file's SHA-256 differs from the registry's; the file is not used."""


@dataclass(frozen=True)
class RegistryEntry:
    """One row of ``data/registry.csv``."""

    file: str
    sha256: str
    bytes: int
    url: str | None
    licence: str


@lru_cache(maxsize=1)
def registry() -> dict[str, RegistryEntry]:
    """All registered data files, by file name."""
    path = Path(os.environ.get("FEDLIB_REGISTRY", _REGISTRY_CSV))
    if not path.is_file():
        raise FileNotFoundError(
            f"data registry not found at {path}; install fedlib from its repository "
            "(pip install -e .) or set FEDLIB_REGISTRY to the path of data/registry.csv."
        )
    with path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
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
    """Download cache: ``FEDLIB_CACHE`` or ``data/cache`` in the repository (git-ignored)."""
    return Path(os.environ.get("FEDLIB_CACHE", _REPO_ROOT / "data" / "cache"))


def mirror_dir() -> Path | None:
    """Local mirror named by ``FEDLIB_DATA_MIRROR``, if set."""
    value = os.environ.get("FEDLIB_DATA_MIRROR")
    return Path(value) if value else None


def sha256_of(path: Path) -> str:
    """Hex SHA-256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify(path: Path, entry: RegistryEntry) -> Path:
    """Raise :class:`ChecksumError` unless ``path`` has the registered SHA-256."""
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
    time; a copy that fails the check raises :class:`ChecksumError` rather than
    falling through to another source.
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
            import pooch

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
