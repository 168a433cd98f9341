"""Type aliases shared by the whole library."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

NDArrayFloat = npt.NDArray[np.float64]
NDArrayInt = npt.NDArray[np.int64]
SeedLike = int | np.random.Generator | np.random.SeedSequence | None

__all__ = ["NDArrayFloat", "NDArrayInt", "SeedLike"]
