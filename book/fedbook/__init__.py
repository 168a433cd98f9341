"""Experiment drivers shared by chapters and benchmarks: data preparation and repeated runs, no algorithms.

- :mod:`fedbook.foundations`: the book's datasets, K-means++ seeding quality, server weights.
- :mod:`fedbook.mufc`: MUFC's datasets, Tables 1-2 trials, removal sequences and sweeps.
- :mod:`fedbook.secfc`: SecFC's Tables 1-3, exactness runs, float-vs-quantized drift, timing sweeps.
- :mod:`fedbook.secagg_fu`: Liu et al.'s ParGen figures, errata and Monte Carlo; its ``protocol``
  module runs SecAgg+ inside a cluster (Fig. 3, thresholds, coalitions, dropouts, cost against k and N).
- :func:`glue_all`: glue a dict of computed values into a chapter with one call.
- :func:`readable`, :func:`cell`, :func:`short_float`: a results table as a chapter shows it (short text cells,
  a few significant digits, no NaN or tuples); the numbers stay in the frame the chapter computed.
- :func:`verdict`: the one rule by which every chapter compares its mean ± std with a paper's, built on the
  difference test :func:`compare_to_noise` (beyond the noise, and on which side) and the equivalence test
  :func:`within` (within a margin), which the chapters' other verdicts call; :func:`mean_cell` the way our
  cell is printed beside the paper's (one-run cells marked).

Drivers import only public names of the library.
"""

from fedbook._glue import glue_all
from fedbook._readable import cell, readable, short_float
from fedbook._verdict import INCONCLUSIVE, ONE_RUN, WITHIN_NOISE, compare_to_noise, mean_cell, verdict, within

__all__ = [
    "INCONCLUSIVE",
    "ONE_RUN",
    "WITHIN_NOISE",
    "cell",
    "compare_to_noise",
    "glue_all",
    "mean_cell",
    "readable",
    "short_float",
    "verdict",
    "within",
]
