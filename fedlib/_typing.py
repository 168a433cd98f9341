"""Type aliases shared by the whole library."""

from __future__ import annotations

from typing import Union

import numpy as np
import numpy.typing as npt

NDArrayFloat = npt.NDArray[np.float64]
NDArrayInt = npt.NDArray[np.int64]
SeedLike = Union[int, np.random.Generator, np.random.SeedSequence, None]

__all__ = ["NDArrayFloat", "NDArrayInt", "SeedLike"]
