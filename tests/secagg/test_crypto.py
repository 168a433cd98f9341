"""Primitives of SecAgg (fedlib/secagg/_crypto.py): X25519+HKDF agreement, AES-CTR PRG, AES-GCM sealing."""

from __future__ import annotations

import numpy as np
import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import chisquare

from fedlib.exceptions import TamperedMessageError
from fedlib.secagg import agree, generate_keypair, open_sealed, prg_words, random_bytes, seal


@given(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1))
def test_both_parties_derive_the_same_key_and_purposes_differ(seed_a, seed_b):
    a, a_pk = generate_keypair(seed_a)
    b, b_pk = generate_keypair(seed_b)
    mask = agree(a, b_pk, b"mask")
    assert mask == agree(b, a_pk, b"mask") and len(mask) == 32
    assert mask != agree(a, b_pk, b"enc")
    assert agree(a.private_bytes_raw(), b_pk, b"mask") == mask  # the server's path, from rebuilt raw bytes


def test_keys_are_reproducible_from_a_seed_and_fresh_from_the_os():
    assert generate_keypair(3)[1] == generate_keypair(3)[1] != generate_keypair(4)[1]
    assert generate_keypair("secrets")[1] != generate_keypair("secrets")[1]
    with pytest.raises(ValueError, match="secrets"):
        random_bytes(4, "urandom")


def test_prg_is_the_aes_ctr_keystream():
    """Independent oracle: encrypt zeros with AES-256-CTR from a zero counter, read little-endian words."""
    seed = bytes(range(32))
    expected = Cipher(algorithms.AES(seed), modes.CTR(bytes(16))).encryptor().update(bytes(4 * 1000))
    assert prg_words(seed, 1000).tobytes() == expected
    assert np.array_equal(prg_words(seed, 10), prg_words(seed, 1000)[:10])
    with pytest.raises(ValueError, match="32 bytes"):
        prg_words(bytes(16), 4)


def test_prg_words_look_uniform():
    words = prg_words(random_bytes(32, 0), 160_000)
    assert chisquare(np.bincount(words >> 28, minlength=16)).pvalue > 1e-4  # top nibble
    assert chisquare(np.bincount(words & 15, minlength=16)).pvalue > 1e-4  # bottom nibble


def test_sealed_messages_open_only_for_their_pair_direction_and_context():
    key = random_bytes(32, 1)
    box = seal(key, b"share", sender=1, recipient=2, context=b"round 0")
    assert open_sealed(key, box, sender=1, recipient=2, context=b"round 0") == b"share"
    tampered = bytearray(box)
    tampered[0] ^= 1
    for kwargs, ciphertext in [
        (dict(sender=1, recipient=2, context=b"round 0"), bytes(tampered)),
        (dict(sender=2, recipient=1, context=b"round 0"), box),  # reflected back
        (dict(sender=1, recipient=3, context=b"round 0"), box),  # misaddressed
        (dict(sender=1, recipient=2, context=b"round 1"), box),  # replayed in another round
    ]:
        with pytest.raises(TamperedMessageError, match="authentication"):
            open_sealed(key, ciphertext, **kwargs)
    with pytest.raises(TamperedMessageError):
        open_sealed(random_bytes(32, 2), box, sender=1, recipient=2, context=b"round 0")
