"""Type aliases shared by the whole library."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

#: A float64 array.
NDArrayFloat = npt.NDArray[np.float64]
#: An int64 array.
NDArrayInt = npt.NDArray[np.int64]
#: What every ``random_state`` accepts: an int (reproducible), a Generator (used as is), a SeedSequence, or None.
SeedLike = int | np.random.Generator | np.random.SeedSequence | None

__all__ = ["NDArrayFloat", "NDArrayInt", "SeedLike"]
