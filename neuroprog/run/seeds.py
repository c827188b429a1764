"""Many seeds as one leading axis: choosing a seed and slicing it out.

A multi-seed run keeps every parameter with a leading seed axis [S, ...]
(`parallel`); results list the seed values trained ("seeds") and per-seed
scores. A seed is chosen without looking at test (OOD) scores: the best mean
validation score when the run has validation data, else the best training
(ID) score.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import jax
import numpy as np


def select_index(val_scores: Sequence[float], id_scores: Sequence[float]) -> int:
  """Index of the seed with the best validation score (ties: the first), or of
  the best ID score when there are no validation scores."""
  scores = list(val_scores) or list(id_scores)
  if not scores:
    raise ValueError("no validation or ID scores to choose a seed from.")
  return int(np.argmax(scores))


def index_of(seeds: Sequence[int], seed: Optional[int], default: int = 0) -> int:
  """The position of seed value `seed` among a run's `seeds` (None: `default`).

  ValueError names the seeds the run trained when `seed` is not among them.
  """
  if seed is None:
    return default
  seeds = [int(s) for s in seeds]
  if seed not in seeds:
    raise ValueError(f"seed {seed!r} was not trained in this run; its seeds are {seeds}.")
  return seeds.index(int(seed))


def take(tree_S: Any, index: int) -> Any:
  """One seed's pytree from a pytree whose leaves have a leading seed axis [S, ...]."""
  n = jax.tree_util.tree_leaves(tree_S)[0].shape[0]
  if not 0 <= index < n:
    raise ValueError(f"seed index {index} is out of range 0..{n - 1}.")
  return jax.tree_util.tree_map(lambda a: a[index], tree_S)
