"""SecFC's published numbers (book/fedbook/papers/secfc.py) are self-consistent, as the chapters rely on them."""

from __future__ import annotations

from fedbook.papers import secfc


def test_accuracy_tables_share_their_settings():
    for table in (secfc.TABLE1, secfc.TABLE2):
        assert set(table) == {"Centralized Lloyd", "k-FED", "SecFC"}
        keys = {(k, kp) for k, setting in secfc.GAUSSIAN_SETTINGS.items() for kp in setting["k_primes"]}
        for cells in table.values():
            assert set(cells) == keys
            assert all(0.0 <= mean <= 100.0 and std >= 0.0 for mean, std in cells.values())
    mnist_keys = {(digit, kp) for digit in secfc.MNIST_DIGITS for kp in secfc.MNIST_K_PRIMES}
    assert all(set(cells) == mnist_keys for cells in secfc.TABLE3.values())


def test_centralized_lloyd_does_not_depend_on_k_prime():
    """k' only changes how the data are split over clients, which centralized Lloyd never sees."""
    for table in (secfc.TABLE1, secfc.TABLE2, secfc.TABLE3):
        by_first = {}
        for (first, _), cell in table["Centralized Lloyd"].items():
            by_first.setdefault(first, set()).add(cell)
        assert all(len(cells) == 1 for cells in by_first.values())


def test_settings_and_formatting():
    assert secfc.GAUSSIAN_SETTINGS[4]["n_clients"] == 10 and secfc.GAUSSIAN_SETTINGS[16]["n_samples"] == 16384
    assert secfc.TIMING_DEFAULTS["n_clients"] == 10 and secfc.N_FEATURES == 100 and secfc.SIGMAS == (1.0, 20.0)
    assert secfc.paper_cell(secfc.TABLE1["k-FED"][(4, 2)]) == "99.7 ± 2.1"
