"""What federated protocols reveal by design: reconstruction attacks for the book's privacy sections.

- :func:`reconstruct_from_anchor_distances`: rebuild every point, up to a rigid
  motion, from its squared distances to a few of the points (at least d + 1 in
  general position). SecFC's server
  decodes exactly such distances, to the K-means++ seeds, during its private
  initialisation (:attr:`fedlib.secagg.SecFC.run_`).
- :func:`align`: the best rigid motion of a reconstruction onto the truth, and
  the RMS error that remains.

The attacks take decoded quantities as plain arrays: this package imports
nothing from the protocols it studies.
"""

from fedlib.privacy._trilateration import align, reconstruct_from_anchor_distances

__all__ = ["align", "reconstruct_from_anchor_distances"]
