"""The cryptographic primitives of secure aggregation, from the ``cryptography`` package.

Bonawitz et al. (CCS'17, Sec. 3) build SecAgg from a key agreement, an
authenticated encryption scheme and a pseudorandom generator; Bell et al.
(CCS'20) keep them for SecAgg+. Here:

- key agreement: X25519, the shared secret run through HKDF-SHA256 with a
  purpose label, so that the mask seed and the encryption key of a pair differ;
- authenticated encryption: AES-256-GCM, with the sender, the recipient and the
  protocol round bound as associated data;
- PRG: the AES-256-CTR keystream of a 32-byte seed, read as ``uint32`` words.

Key material is drawn from the operating system (``random_state="secrets"``)
or, for a reproducible simulation, from a seeded numpy generator: the
protocol is the same, only the source of the bytes differs.
"""

from __future__ import annotations

import os

import numpy as np
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from fedlib._random import check_key_source
from fedlib._typing import SeedLike
from fedlib._validation import check_scalar
from fedlib.exceptions import TamperedMessageError

KEY_BYTES = 32
"""Length of every key, seed and public key (X25519, AES-256, PRG seeds)."""

_NONCE = bytes(16)
_ZEROS = b""


def random_bytes(n: int, random_state: SeedLike | str = "secrets") -> bytes:
    """``n`` random bytes, from the operating system or from a seeded generator.

    Parameters
    ----------
    n : int
        Number of bytes.
    random_state : "secrets", int, numpy.random.Generator or None, default="secrets"
        ``"secrets"``: :func:`os.urandom`, for real keys. Anything else goes
        through :func:`fedlib.utils.check_random_state` and gives a
        reproducible simulation (not for deployment).

    Returns
    -------
    bytes
        ``n`` bytes.

    Raises
    ------
    ValueError
        For a string other than ``"secrets"``.

    Examples
    --------
    >>> from fedlib.secagg import random_bytes
    >>> len(random_bytes(16))  # from os.urandom: a real key
    16
    >>> random_bytes(8, random_state=0) == random_bytes(8, random_state=0)  # a seeded simulation repeats
    True
    """
    n = check_scalar(n, "n", "int", min_val=0)
    source = check_key_source(random_state)
    return os.urandom(n) if isinstance(source, str) else source.bytes(n)


def generate_keypair(random_state: SeedLike | str = "secrets") -> tuple[X25519PrivateKey, bytes]:
    """An X25519 key pair.

    Parameters
    ----------
    random_state : "secrets", int, numpy.random.Generator or None, default="secrets"
        Source of the 32 private bytes (see :func:`random_bytes`).

    Returns
    -------
    private_key : cryptography X25519PrivateKey
        The secret key (its raw bytes are what Shamir shares).
    public_key : bytes
        The 32-byte public key, as sent to the server.

    Examples
    --------
    >>> from fedlib.secagg import generate_keypair
    >>> sk, pk = generate_keypair(random_state=0)
    >>> len(pk)
    32
    """
    private_key = X25519PrivateKey.from_private_bytes(random_bytes(KEY_BYTES, random_state))
    return private_key, public_bytes(private_key)


def public_bytes(private_key: X25519PrivateKey) -> bytes:
    """The raw 32-byte public key of an X25519 private key.

    Parameters
    ----------
    private_key : cryptography X25519PrivateKey
        The key.

    Returns
    -------
    bytes
        32 bytes.
    """
    return private_key.public_key().public_bytes_raw()


def private_bytes(private_key: X25519PrivateKey) -> bytes:
    """The raw 32 bytes of an X25519 private key (the secret that SecAgg Shamir-shares).

    Parameters
    ----------
    private_key : cryptography X25519PrivateKey
        The key.

    Returns
    -------
    bytes
        32 bytes.
    """
    return private_key.private_bytes_raw()


def agree(private_key: X25519PrivateKey | bytes, peer_public_key: bytes, purpose: bytes) -> bytes:
    """A 32-byte key shared by two parties: X25519, then HKDF-SHA256 labelled with ``purpose``.

    Parameters
    ----------
    private_key : cryptography X25519PrivateKey or bytes
        One's own secret key (raw 32 bytes accepted: the server uses
        reconstructed keys of dropped clients).
    peer_public_key : bytes
        The other party's 32-byte public key.
    purpose : bytes
        HKDF ``info``: distinct labels give independent keys from one agreement.

    Returns
    -------
    bytes
        32 bytes, the same for both parties.

    Raises
    ------
    ValueError
        If a key does not have 32 bytes.

    Examples
    --------
    >>> from fedlib.secagg import agree, generate_keypair
    >>> a, a_pk = generate_keypair(random_state=1)
    >>> b, b_pk = generate_keypair(random_state=2)
    >>> agree(a, b_pk, b"mask") == agree(b, a_pk, b"mask") != agree(a, b_pk, b"enc")
    True
    """
    if isinstance(private_key, bytes):
        if len(private_key) != KEY_BYTES:
            raise ValueError(f"an X25519 private key has {KEY_BYTES} bytes, got {len(private_key)}.")
        private_key = X25519PrivateKey.from_private_bytes(private_key)
    if len(peer_public_key) != KEY_BYTES:
        raise ValueError(f"an X25519 public key has {KEY_BYTES} bytes, got {len(peer_public_key)}.")
    shared = private_key.exchange(X25519PublicKey.from_public_bytes(peer_public_key))
    return HKDF(algorithm=hashes.SHA256(), length=KEY_BYTES, salt=None, info=purpose).derive(shared)


def prg_words(seed: bytes, n_words: int) -> np.ndarray:
    """Expand a 32-byte seed into ``n_words`` pseudorandom ``uint32`` words (AES-256-CTR keystream).

    Parameters
    ----------
    seed : bytes
        32 bytes, used as the AES-256 key with a zero counter block. A seed
        must mask one vector only: the protocol derives fresh seeds every round.
    n_words : int
        Vector length ``d``.

    Returns
    -------
    ndarray of uint32, shape (n_words,)
        Words uniform on ``Z_{2^32}`` to anyone without the seed. Writeable.

    Raises
    ------
    ValueError
        If the seed does not have 32 bytes.

    Examples
    --------
    >>> import numpy as np
    >>> from fedlib.secagg import prg_words
    >>> w = prg_words(bytes(32), 4)
    >>> w.dtype, bool(np.all(w == prg_words(bytes(32), 4)))
    (dtype('uint32'), True)
    """
    if len(seed) != KEY_BYTES:
        raise ValueError(f"a PRG seed has {KEY_BYTES} bytes, got {len(seed)}.")
    n_words = check_scalar(n_words, "n_words", "int", min_val=0)
    global _ZEROS
    if len(_ZEROS) < 4 * n_words:
        _ZEROS = bytes(4 * n_words)  # the plaintext of the keystream, allocated once
    buffer = bytearray(4 * n_words)
    encryptor = Cipher(algorithms.AES(seed), modes.CTR(_NONCE)).encryptor()
    encryptor.update_into(memoryview(_ZEROS)[: 4 * n_words], buffer)
    return np.frombuffer(buffer, dtype=np.uint32)


def _nonce(sender: int, recipient: int) -> bytes:
    # One key per pair of clients and round; the two directions get different nonces.
    return int(sender).to_bytes(6, "big") + int(recipient).to_bytes(6, "big")


def seal(key: bytes, plaintext: bytes, *, sender: int, recipient: int, context: bytes) -> bytes:
    """AES-256-GCM encryption of ``plaintext`` from ``sender`` to ``recipient``.

    Parameters
    ----------
    key : bytes
        32 bytes shared by sender and recipient (:func:`agree` with purpose ``b"enc"``).
    plaintext : bytes
        The message.
    sender, recipient : int
        Client ids; they fix the nonce and are authenticated.
    context : bytes
        Further associated data (protocol and round), authenticated.

    Returns
    -------
    bytes
        Ciphertext and 16-byte tag.

    Examples
    --------
    Client 1 seals a message for client 2 under the key their X25519 agreement gives both:

    >>> from fedlib.secagg import agree, generate_keypair, open_sealed, seal
    >>> sk1, pk1 = generate_keypair(random_state=1)
    >>> sk2, pk2 = generate_keypair(random_state=2)
    >>> box = seal(agree(sk1, pk2, b"enc"), b"my shares", sender=1, recipient=2, context=b"round 0")
    >>> len(box) - len(b"my shares")  # the AES-GCM tag
    16
    >>> open_sealed(agree(sk2, pk1, b"enc"), box, sender=1, recipient=2, context=b"round 0")
    b'my shares'
    """
    aad = _nonce(sender, recipient) + context
    return AESGCM(key).encrypt(_nonce(sender, recipient), plaintext, aad)


def open_sealed(key: bytes, ciphertext: bytes, *, sender: int, recipient: int, context: bytes) -> bytes:
    """Decrypt and authenticate a message made by :func:`seal`.

    Parameters
    ----------
    key : bytes
        The pair's 32-byte key.
    ciphertext : bytes
        As returned by :func:`seal`.
    sender, recipient : int
        Who the message claims to be from and to.
    context : bytes
        The associated data it was sealed with.

    Returns
    -------
    bytes
        The plaintext.

    Raises
    ------
    TamperedMessageError
        If the ciphertext was altered, or was sealed for another pair, another
        direction or another context (round): a semi-honest server cannot
        reroute shares unnoticed.

    Examples
    --------
    A message rerouted to another recipient fails authentication:

    >>> from fedlib.exceptions import TamperedMessageError
    >>> from fedlib.secagg import open_sealed, seal
    >>> key = bytes(32)
    >>> box = seal(key, b"secret", sender=1, recipient=2, context=b"round 0")
    >>> open_sealed(key, box, sender=1, recipient=2, context=b"round 0")
    b'secret'
    >>> try:
    ...     open_sealed(key, box, sender=1, recipient=3, context=b"round 0")
    ... except TamperedMessageError as error:
    ...     print(type(error).__name__)
    TamperedMessageError
    """
    aad = _nonce(sender, recipient) + context
    try:
        return AESGCM(key).decrypt(_nonce(sender, recipient), ciphertext, aad)
    except InvalidTag:
        raise TamperedMessageError(
            f"the share message from client {sender} to client {recipient} failed AES-GCM authentication: it was "
            "altered in transit or was not sealed for this pair, direction and round."
        ) from None
