"""The papers' published numbers, as data, so that chapters print them beside ours and never type them.

- :mod:`fedlib.papers.mufc`: MUFC's Tables 1 and 2, speed-ups, its dataset table and client counts.
- :mod:`fedlib.papers.secfc`: SecFC's Tables 1-3, experimental settings and timing claim.
- :mod:`fedlib.papers.secagg_fu`: Liu et al. (TDSC 2025): the ParGen worked example, Remark 6, the settings of
  Figs. 4-5 and the claims made about them, and the experimental set-up.
- :mod:`fedlib.papers.knot`: Su & Li (INFOCOM 2023): Tables I and II, the quoted times and improvements, Fig. 4's
  proof of concept, the assignment's constants and the claims made in the text.
- :mod:`fedlib.papers.datasets`: shapes of the public datasets, for labelled stand-ins.

This package imports nothing else from fedlib but :class:`DatasetSpec`: every layer may use it.
"""

from fedlib.papers._spec import DatasetSpec

__all__ = ["DatasetSpec"]
