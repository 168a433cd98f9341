"""The book's shared verdict rules: the difference test, the equivalence test and the paper-cell verdict."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from fedbook import INCONCLUSIVE, ONE_RUN, WITHIN_NOISE, compare_to_noise, verdict, within
from fedbook.knot import comparison
from fedbook.secagg_fu import learning
from hypothesis import given
from hypothesis import strategies as st

NAN = float("nan")
finite = st.floats(-1e6, 1e6)
noises = st.floats(0, 1e6)


def _above(x: float) -> float:
    return float(np.nextafter(x, math.inf))


def _below(x: float) -> float:
    return float(np.nextafter(x, -math.inf))


# --- compare_to_noise ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "reference", "noise", "expected"),
    [
        (0.25, 0.0, 0.25, WITHIN_NOISE),  # exactly at +noise: within
        (-0.25, 0.0, 0.25, WITHIN_NOISE),  # exactly at -noise: within
        (_above(0.25), 0.0, 0.25, "higher"),
        (_below(-0.25), 0.0, 0.25, "lower"),
        (87.5, 85.0, 2.5, WITHIN_NOISE),  # at the threshold around a reference
        (_above(87.5), 85.0, 2.5, "higher"),
        (82.5, 85.0, 2.5, WITHIN_NOISE),
        (_below(82.5), 85.0, 2.5, "lower"),
    ],
)
def test_compare_to_noise_at_the_threshold(value, reference, noise, expected):
    assert compare_to_noise(value, reference, noise=noise) == expected


def test_compare_to_noise_with_zero_noise_is_the_sign():
    assert compare_to_noise(5e-324, noise=0.0) == "higher"
    assert compare_to_noise(-5e-324, noise=0.0) == "lower"
    assert compare_to_noise(0.0, noise=0.0) == compare_to_noise(-0.0, noise=0.0) == WITHIN_NOISE
    assert compare_to_noise(3.0, 3.0, noise=0.0) == WITHIN_NOISE


@pytest.mark.parametrize(("value", "reference", "noise"), [(NAN, 0.0, 1.0), (1.0, NAN, 0.0), (5.0, 0.0, NAN)])
def test_compare_to_noise_shows_nothing_with_nan(value, reference, noise):
    assert compare_to_noise(value, reference, noise=noise) == WITHIN_NOISE


def test_compare_to_noise_infinite_noise_hides_every_difference_and_negative_noise_is_refused():
    assert compare_to_noise(1e300, noise=math.inf) == WITHIN_NOISE
    with pytest.raises(ValueError, match="non-negative"):
        compare_to_noise(1.0, noise=-0.1)


@given(finite, noises)
def test_compare_to_noise_is_the_absolute_difference_against_the_noise(value, noise):
    side = compare_to_noise(value, noise=noise)
    assert (side == WITHIN_NOISE) == (abs(value) <= noise)
    mirrored = {"higher": "lower", "lower": "higher", WITHIN_NOISE: WITHIN_NOISE}
    assert side == mirrored[compare_to_noise(-value, noise=noise)]
    if side != WITHIN_NOISE:
        assert (side == "higher") == (value > 0)


# --- within -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("difference", "margin", "noise", "expected"),
    [
        (1.0, 1.0, 0.0, True),  # exactly at the margin: within
        (-1.0, 1.0, 0.0, True),
        (_above(1.0), 1.0, 0.0, False),
        (0.5, 1.0, 0.5, True),  # interval touching the margin
        (-0.5, 1.0, 0.5 + 1e-9, False),
        (0.0, 0.0, 0.0, True),  # zero margin, zero noise: only no difference at all
        (5e-324, 0.0, 0.0, False),
    ],
)
def test_within_at_the_margin(difference, margin, noise, expected):
    assert within(difference, margin, noise=noise) is expected


@pytest.mark.parametrize(("difference", "margin", "noise"), [(NAN, 1.0, 0.0), (0.0, NAN, 0.0), (0.0, 1.0, NAN)])
def test_within_is_false_with_nan(difference, margin, noise):
    assert within(difference, margin, noise=noise) is False


@given(finite, noises, noises)
def test_a_match_within_a_margin_is_never_a_difference_beyond_it(difference, margin, noise):
    if within(difference, margin, noise=noise):
        assert compare_to_noise(difference, noise=margin) == WITHIN_NOISE
    assert within(difference, margin, noise=noise) == within(-difference, margin, noise=noise)


# --- verdict, built on both -------------------------------------------------------------------------------------


def test_verdict_at_the_difference_threshold():
    # se = 1, slack = 1: a gap of exactly 2 se + slack = 3 is not a difference, nor a match within 3
    assert verdict((103.0, 0.0), (100.0, 1.0), slack=1.0) == INCONCLUSIVE
    assert verdict((97.0, 0.0), (100.0, 1.0), slack=1.0) == INCONCLUSIVE
    assert verdict((_above(103.0), 0.0), (100.0, 1.0), slack=1.0) == "higher"
    assert verdict((_below(97.0), 0.0), (100.0, 1.0), slack=1.0) == "lower"


def test_verdict_at_the_match_margin():
    # gap 1 + 2 se = 3 = margin: the interval touches the margin, a match
    assert verdict((101.0, 0.0), (100.0, 1.0), slack=1.0) == "matches"
    assert verdict((101.0, 0.0), (100.0, 1.0), slack=1.0, margin=_below(3.0)) == INCONCLUSIVE


def test_verdict_with_zero_noise_and_zero_slack():
    assert verdict((1.0, 0.0), (1.0, 0.0), slack=0.0) == "matches"
    assert verdict((_above(1.0), 0.0), (1.0, 0.0), slack=0.0) == "higher"
    assert verdict((_below(1.0), 0.0), (1.0, 0.0), slack=0.0, margin=1.0) == "lower"


def test_verdict_with_nan_and_one_run():
    assert verdict((NAN, 1.0), (1.0, 0.0), slack=0.1, n_ours=5) == INCONCLUSIVE
    assert verdict((1.0, NAN), (1.0, 0.0), slack=0.1, n_ours=5) == INCONCLUSIVE
    assert verdict((1.0, 0.0), (1.0, NAN), slack=0.1, n_ours=5, n_published=5) == INCONCLUSIVE
    assert verdict((1.0, 0.0), (50.0, 0.0), slack=0.1, n_ours=1) == ONE_RUN


# --- the chapters' wrappers keep the rules' thresholds ------------------------------------------------------------


def test_sign_verdict_at_two_standard_errors():
    # std 1 over 4 runs: two standard errors are exactly 1
    assert comparison._sign_verdict(1.0, 1.0, 4, better="faster", worse="slower") == "no clear difference"
    assert comparison._sign_verdict(_above(1.0), 1.0, 4, better="faster", worse="slower") == "faster"
    assert comparison._sign_verdict(_below(-1.0), 1.0, 4, better="faster", worse="slower") == "slower"
    assert comparison._sign_verdict(NAN, 1.0, 4, better="faster", worse="slower") == "too few runs"
    assert comparison._sign_verdict(5.0, 0.0, 1, better="faster", worse="slower") == "too few runs"


def test_change_verdict_reads_the_seed_interval():
    # three seeds with mean -0.1 and sd 0.01: the 95% interval is -0.1 ± 0.025, below zero
    assert learning.change_verdict([-0.09, -0.10, -0.11], claimed="lower").startswith("supported: -0.100 ± 0.025")
    assert learning.change_verdict([-0.09, -0.10, -0.11], claimed="higher").startswith("contradicted")
    # the same mean with a seed-to-seed spread of 0.1 is no evidence either way
    assert learning.change_verdict([0.0, -0.1, -0.2], claimed="lower").startswith("no clear change")
    assert learning.change_verdict([-0.1], claimed="lower").startswith("not judged: 1 seed")


def _after(scheme, baseline):
    rows = [{"setting": name, "seed": seed, "accuracy after": value}
            for name, values in (("X", scheme), (learning.GLOBAL, baseline)) for seed, value in enumerate(values)]
    return pd.DataFrame(rows)


def test_comparable_is_an_equivalence_test_not_a_failure_to_find_a_difference():
    base = [0.80, 0.70, 0.75]
    # differences +0.005, -0.005, 0: the 90% interval is ±0.0084 around 0, inside ±0.02
    assert learning.comparable_verdict(_after([0.805, 0.695, 0.75], base), "X")["verdict"][0].startswith("supported")
    # differences 0.1, -0.1, 0: mean 0, no difference shown, but the interval is far wider than the margin
    assert learning.comparable_verdict(_after([0.9, 0.6, 0.75], base), "X")["verdict"][0].startswith("inconclusive")
    # worse by 0.1 at every seed: beyond the margin
    verdict = learning.comparable_verdict(_after([0.70, 0.60, 0.65], base), "X")["verdict"][0]
    assert verdict.startswith("contradicted: worse by more than 0.02")
    # the margin is the one fixed in advance unless another is named
    assert learning.comparable_verdict(_after([0.9, 0.6, 0.75], base), "X", margin=0.5)["verdict"][0].startswith(
        "supported")
