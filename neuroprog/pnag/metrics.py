"""Validity, uniqueness and novelty of generated architectures (DiffusionNAG's definitions).

Given n generated graphs:

  validity   = (# valid graphs) / n
  uniqueness = (# distinct canonical strings among the valid) / (# valid)
  novelty    = (# of those distinct valid architectures absent from the
                training set) / (# distinct valid)

A graph is valid when `space.is_valid(ops, adj)` (see `spaces.base`).
Uniqueness and novelty are 0 when nothing is valid. Note that for i.i.d.
samples uniqueness is bounded by the size of the space: n draws from a
uniform distribution over S architectures leave on average
S * (1 - (1 - 1/S)^n) distinct ones (`expected_unique_uniform`), and no
distribution does better in expectation. For NB201 (S = 15,625) and n = 1,000
that is 968.7 of 1,000 (96.87%).
"""

from __future__ import annotations

import math
from typing import Iterable, NamedTuple, Optional, Sequence


class GenerationMetrics(NamedTuple):
  validity: float
  uniqueness: float
  novelty: float
  num_samples: int
  num_valid: int
  num_unique: int
  num_novel: int


def evaluate(space, archs: Sequence, train_canonical: Optional[Iterable[str]] = None
             ) -> GenerationMetrics:
  """Metrics of generated architectures.

  Args:
    space: the `SearchSpace` (for `canonical`).
    archs: decoded architectures, None where the graph was invalid (as in
      `Samples.archs`).
    train_canonical: canonical strings of the training set; None: novelty is
      reported as 1.0 (nothing to compare with).
  """
  n = len(archs)
  if n == 0:
    raise ValueError("no samples to evaluate.")
  valid = [space.canonical(a) for a in archs if a is not None]
  unique = set(valid)
  if train_canonical is None:
    novel = len(unique)
  else:
    train = train_canonical if isinstance(train_canonical, (set, frozenset)) else set(train_canonical)
    novel = sum(1 for s in unique if s not in train)
  return GenerationMetrics(
      validity=len(valid) / n,
      uniqueness=len(unique) / len(valid) if valid else 0.0,
      novelty=novel / len(unique) if unique else 0.0,
      num_samples=n, num_valid=len(valid), num_unique=len(unique), num_novel=novel)


def expected_unique_uniform(space_size: int, n: int) -> float:
  """Expected distinct architectures among n uniform draws from space_size."""
  # -expm1(n log1p(-1/S)) = 1 - (1 - 1/S)^n, accurate also for huge S.
  return -space_size * math.expm1(n * math.log1p(-1.0 / space_size))
