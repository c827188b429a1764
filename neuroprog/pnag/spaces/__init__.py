"""NAS search spaces in the op-on-node graph encoding: `get(name)`."""

from neuroprog.pnag.spaces.base import SearchSpace
from neuroprog.pnag.spaces.darts import DARTS, Genotype
from neuroprog.pnag.spaces.mbv3 import MBV3
from neuroprog.pnag.spaces.nb201 import NB201

_SPACES = {"nb201": NB201, "mbv3": MBV3, "darts": DARTS}
NAMES = tuple(_SPACES)


def get(name: str) -> SearchSpace:
  """The search space `name` in "nb201" | "mbv3" | "darts"; ValueError otherwise."""
  if name not in _SPACES:
    raise ValueError(f"Unknown search space {name!r}; allowed: {list(NAMES)}.")
  return _SPACES[name]()


__all__ = ["SearchSpace", "NB201", "MBV3", "DARTS", "Genotype", "get", "NAMES"]
