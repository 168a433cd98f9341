"""The papers' published numbers, as data, so that chapters print them beside ours and never type them.

- :mod:`fedbook.papers.mufc`: MUFC's Tables 1 and 2, speed-ups, trials and client counts; its table of datasets
  is :data:`fedlib.data.DATASET_SPECS` (the library's generators and stand-ins use it).
- :mod:`fedbook.papers.secfc`: SecFC's Tables 1-3, experimental settings and timing claim.
- :mod:`fedbook.papers.secagg_fu`: Liu et al. (TDSC 2025): the ParGen worked example, Remark 6, the settings of
  Figs. 4-5 and the claims made about them, and the experimental set-up.
- :mod:`fedbook.papers.knot`: Su & Li (INFOCOM 2023): Tables I and II, the quoted times and improvements, Fig. 4's
  proof of concept, the assignment's constants and the claims made in the text.

These modules hold data only: of fedlib they use :mod:`fedlib.data`'s dataset shapes.
"""
