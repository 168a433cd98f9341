"""The wire format of SecAgg(+): messages, public parameters and a client's state as bytes, parsed strictly.

A party of a distributed round (a Flower node, say) keeps no Python objects
between stages: every message crosses the network as bytes, and a client
rebuilds itself from the bytes it stored at the end of its previous stage.
The bytes come from the network, so they are parsed field by field, never
unpickled, and anything that is not exactly what the writer produces is
refused with :class:`fedlib.exceptions.WireFormatError`.

Layout, version 1 (every integer little-endian, unsigned)::

    header   = b"FLSA" | version: u8 = 1 | tag: u8
    u8, u32  = 1 and 4 bytes;  u128 = 16 bytes
    key      = 32 raw bytes (an X25519 key or an AES / PRG seed)
    share    = 66 bytes: an element of GF(2^521 - 1), below the prime
    words    = count: u32 | count × u32 (a vector of Z_{2^32}; count checked against d)
    blob     = length: u32 | length bytes
    id       = u32, below the number of clients n

Lists of ids, or of records keyed by id, are ``count: u32`` followed by the
records in strictly increasing id order, so every object has one encoding
and ``from_bytes(to_bytes(x))`` re-encodes to the same bytes. Nothing may
follow the last field. The layouts of the messages, of the configuration and
of a client's state are in ``fedlib/secagg/_secagg.py``, next to the classes.
"""

from __future__ import annotations

import enum
import struct

import numpy as np

from fedlib.exceptions import WireFormatError
from fedlib.field import MERSENNE_521
from fedlib.secagg._crypto import KEY_BYTES

MAGIC = b"FLSA"
"""The first bytes of every encoding (FedLib SecAgg)."""

VERSION = 1
"""The version of the layout this module writes and the only one it reads."""

SHARE_BYTES = (MERSENNE_521.bit_length() + 7) // 8
"""Bytes of one Shamir share over GF(2^521 − 1)."""

U32_MAX = 2**32 - 1

_U8, _U32 = struct.Struct("<B"), struct.Struct("<I")
_HEADER = struct.Struct(f"<{len(MAGIC)}sBB")


class Tag(enum.IntEnum):
    """What an encoding holds: its byte after the version."""

    CONFIG = 1
    KEY_ADVERTISEMENT = 2
    ENCRYPTED_SHARE = 3
    MASKED_INPUT = 4
    UNMASKING_RESPONSE = 5
    CLIENT_STATE = 6


def _label(tag: int) -> str:
    try:
        return Tag(tag).name
    except ValueError:
        return f"unknown tag {tag}"


class Writer:
    """Appends fields to one encoding; refuses values the reader would refuse (``ValueError`` naming the field)."""

    def __init__(self, tag: Tag) -> None:
        self._parts = [_HEADER.pack(MAGIC, VERSION, int(tag))]

    def bytes(self) -> bytes:
        return b"".join(self._parts)

    def u8(self, value: int, what: str) -> None:
        value = int(value)
        if not 0 <= value <= 255:
            raise ValueError(f"{what} must lie in [0, 255] to be written as one byte, got {value}.")
        self._parts.append(_U8.pack(value))

    def u32(self, value: int, what: str) -> None:
        value = int(value)
        if not 0 <= value <= U32_MAX:
            raise ValueError(f"{what} must be a uint32 in [0, 2^32 - 1], got {value}.")
        self._parts.append(_U32.pack(value))

    def client(self, value: int, what: str, n_clients: int) -> None:
        value = int(value)
        if not 0 <= value < n_clients:
            raise ValueError(f"{what} must be a client id in [0, {n_clients}), got {value}.")
        self._parts.append(_U32.pack(value))

    def uint(self, value: int, n_bytes: int, what: str) -> None:
        value = int(value)
        if not 0 <= value < 256**n_bytes:
            raise ValueError(f"{what} must lie in [0, 2^{8 * n_bytes}), got {value}.")
        self._parts.append(value.to_bytes(n_bytes, "little"))

    def key(self, value: bytes, what: str) -> None:
        if not isinstance(value, bytes | bytearray) or len(value) != KEY_BYTES:
            raise ValueError(f"{what} must be {KEY_BYTES} bytes, got {_describe(value)}.")
        self._parts.append(bytes(value))

    def share(self, value: int, what: str) -> None:
        value = int(value)
        if not 0 <= value < MERSENNE_521:
            raise ValueError(f"{what} must be an element of GF(2^521 - 1), in [0, 2^521 - 1), got {value}.")
        self._parts.append(value.to_bytes(SHARE_BYTES, "little"))

    def blob(self, value: bytes, what: str) -> None:
        if not isinstance(value, bytes | bytearray):
            raise TypeError(f"{what} must be bytes, got {type(value).__name__}.")
        self.u32(len(value), f"the length of {what}")
        self._parts.append(bytes(value))

    def words(self, value: np.ndarray, what: str) -> None:
        array = np.asarray(value)
        if array.dtype != np.uint32 or array.ndim != 1:
            raise ValueError(
                f"{what} must be a one-dimensional uint32 array (words of Z_2^32), got dtype {array.dtype} and "
                f"shape {array.shape}."
            )
        self.u32(array.size, f"the length of {what}")
        self._parts.append(array.astype("<u4", copy=False).tobytes())

    def ids(self, values, what: str, n_clients: int) -> None:
        ids = [int(v) for v in values]
        outside = [i for i in ids if not 0 <= i < n_clients]
        if outside:  # before the int64 conversion, which would overflow on huge ids
            raise ValueError(f"{what} must be client ids in [0, {n_clients}), got {outside[:20]}.")
        ids = np.asarray(ids, dtype=np.int64)
        check_ascending_ids(ids, what, n_clients, error=ValueError)
        self.u32(ids.size, f"the number of {what}")
        self._parts.append(ids.astype("<u4").tobytes())


class Reader:
    """Reads the fields of one encoding in order; every read checks its bound, :meth:`end` that nothing is left.

    Parameters
    ----------
    data : bytes, bytearray or memoryview
        The encoding.
    tag : Tag
        What it must hold.
    """

    def __init__(self, data, tag: Tag) -> None:
        if not isinstance(data, bytes | bytearray | memoryview):
            raise TypeError(f"a {tag.name} encoding must be bytes, got {type(data).__name__}.")
        self._data = memoryview(data).cast("B")
        self._at = 0
        self.tag = tag
        raw = self._take(_HEADER.size, "the header (magic, version, tag)")
        magic, version, found = _HEADER.unpack(raw)
        if magic != MAGIC:
            raise WireFormatError(
                f"these bytes do not start with {MAGIC!r} (got {bytes(magic)!r}): not a fedlib SecAgg encoding."
            )
        if version != VERSION:
            raise WireFormatError(
                f"wire format version {version} is not supported: this fedlib reads version {VERSION}."
            )
        if found != tag:
            raise WireFormatError(
                f"expected a {tag.name} encoding (tag {int(tag)}), got {_label(found)} (tag {found})."
            )

    def _take(self, n_bytes: int, what: str) -> memoryview:
        left = len(self._data) - self._at
        if n_bytes > left:
            raise WireFormatError(
                f"truncated {self.tag.name} encoding: {what} needs {n_bytes} bytes at offset {self._at}, only {left} "
                "are left."
            )
        out = self._data[self._at : self._at + n_bytes]
        self._at += n_bytes
        return out

    def u8(self, what: str, *, most: int = 255) -> int:
        value = self._take(1, what)[0]
        if value > most:
            raise WireFormatError(f"{what} is {value}, above its largest value {most}.")
        return value

    def u32(self, what: str, *, below: int | None = None) -> int:
        (value,) = _U32.unpack(self._take(4, what))
        if below is not None and value >= below:
            raise WireFormatError(f"{what} is {value}, outside [0, {below}).")
        return value

    def uint(self, n_bytes: int, what: str) -> int:
        return int.from_bytes(self._take(n_bytes, what), "little")

    def client(self, what: str, n_clients: int) -> int:
        return self.u32(what, below=n_clients)

    def key(self, what: str) -> bytes:
        return bytes(self._take(KEY_BYTES, what))

    def share(self, what: str) -> int:
        value = int.from_bytes(self._take(SHARE_BYTES, what), "little")
        if value >= MERSENNE_521:
            raise WireFormatError(f"{what} is not an element of GF(2^521 - 1): it is at least the prime 2^521 - 1.")
        return value

    def blob(self, what: str, *, length: int | None = None) -> bytes:
        size = self.u32(f"the length of {what}")
        if length is not None and size != length:
            raise WireFormatError(f"{what} has {size} bytes; it must have exactly {length}.")
        return bytes(self._take(size, what))

    def count(self, what: str, *, record_bytes: int, most: int | None = None) -> int:
        """A record count, checked against ``most`` and against the bytes left (before anything is allocated)."""
        size = self.u32(f"the number of {what}")
        if most is not None and size > most:
            raise WireFormatError(f"{size} {what}: at most {most} are possible.")
        left = len(self._data) - self._at
        if size * record_bytes > left:
            raise WireFormatError(
                f"truncated {self.tag.name} encoding: {size} {what} need {size * record_bytes} bytes at offset "
                f"{self._at}, only {left} are left."
            )
        return size

    def words(self, what: str, *, length: int) -> np.ndarray:
        size = self.count(what, record_bytes=4)
        if size != length:
            raise WireFormatError(f"{what} has {size} words; vector_length is d={length}.")
        return np.frombuffer(self._take(4 * size, what), dtype="<u4").astype(np.uint32)

    def ids(self, what: str, n_clients: int) -> np.ndarray:
        size = self.count(what, record_bytes=4, most=n_clients)
        ids = np.frombuffer(self._take(4 * size, what), dtype="<u4").astype(np.int64)
        check_ascending_ids(ids, what, n_clients)
        return ids

    def end(self) -> None:
        left = len(self._data) - self._at
        if left:
            raise WireFormatError(
                f"{left} bytes follow the end of the {self.tag.name} encoding (at offset {self._at}): nothing may."
            )


def check_ascending_ids(
    ids: np.ndarray, what: str, n_clients: int, *, error: type[Exception] = WireFormatError
) -> None:
    """Refuse ids outside ``[0, n)``, repeated, or out of order: one encoding per object."""
    outside = ids[(ids < 0) | (ids >= n_clients)]
    if outside.size:
        raise error(f"{what} must be client ids in [0, {n_clients}), got {outside[:20].tolist()}.")
    if np.any(np.diff(ids) <= 0):
        raise error(f"{what} must be strictly increasing client ids (each once, in order), got {ids[:20].tolist()}.")


def _describe(value) -> str:
    return f"{len(value)} bytes" if isinstance(value, bytes | bytearray) else type(value).__name__
