"""Spend tables: a cost read off a token map as a sum over its tokens.

A generator with `GenConfig.budget_inputs` tells every token how much of the
requested cost the tokens before it have already spent. The spend of a
token map is the sum of `table[p, code_p]` over its positions, one fixed
number per (position, code), so the sampler carries it as one float per
architecture and teacher forcing computes it with one matmul.

The table is fitted once, before the generator trains, on the training
set's token maps: generation step g (in order) gets the ridge regression of
"cost of the sub-architecture after step g minus what steps < g already
predict" on the one-hot codes of step g's tokens. Fitting each step on the
residual of the steps before it keeps the running sum close to the true
cost at every step, not only at the end. A MobileNetV3 layer's MACs depend
only on its slot and type (each stage's widths are fixed), and a scale's
type token carries the type, so there the sum is nearly exact
(`SpendFit.r2`).

numpy throughout (it runs once, outside `jit`).
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from neuroprog.pnag import cost as cost_lib
from neuroprog.pnag import spaces


class SpendFit(NamedTuple):
  table: np.ndarray       # float32 [L, K]: spend of code k at position p
  r2: np.ndarray          # float64 [G]: R^2 of the running spend after each step
  max_abs_error: float    # largest |spend - cost| after the last step, cost units


def sub_costs(space_name: str, ops_TxN: np.ndarray, adj_TxNxN: np.ndarray,
              sizes: Sequence[int]) -> np.ndarray:
  """float64 [T, S]: the MACs of each architecture's n-node sub-architecture
  (completed by the space's fixed filler choices, `SearchSpace.decode_sub`)
  for every n in sizes; n = N is the architecture itself."""
  space = spaces.get(space_name)
  out = np.zeros((len(ops_TxN), len(sizes)))
  memo = {}
  for j, n in enumerate(sizes):
    so, sa = space.sub_graph(np.asarray(ops_TxN), np.asarray(adj_TxNxN), int(n))
    for i in range(len(so)):
      key = (n, so[i].tobytes(), sa[i].tobytes())
      if key not in memo:
        memo[key] = cost_lib.cost(space_name, space.decode_sub(so[i], sa[i])).macs
      out[i, j] = memo[key]
  return out


def fit_spend_table(tokens_TxL: np.ndarray, targets_TxG: np.ndarray,
                    counts: Sequence[int], codebook_size: int,
                    ridge: float = 1e-3) -> SpendFit:
  """Fits a spend table (module doc).

  tokens: int [T, L] training token maps; targets: float [T, G], the cost
  (in the units the generator reads) after each of the G generation steps;
  counts: tokens per step (sum L). ridge: added to the diagonal of each
  step's normal equations (codes a step never uses get spend 0)."""
  tokens = np.asarray(tokens_TxL)
  targets = np.asarray(targets_TxG, np.float64)
  t, l = tokens.shape
  counts = tuple(int(c) for c in counts)
  if sum(counts) != l or targets.shape != (t, len(counts)):
    raise ValueError(f"fit_spend_table: tokens {tokens.shape}, targets {targets.shape} and "
                     f"counts summing to {sum(counts)} (over {len(counts)} steps) disagree.")
  if tokens.min() < 0 or tokens.max() >= codebook_size:
    raise ValueError(f"fit_spend_table: codes must lie in 0..{codebook_size - 1}, got "
                     f"{tokens.min()}..{tokens.max()}.")
  k = codebook_size
  table = np.zeros((l, k))
  spent = np.zeros(t)
  r2 = np.zeros(len(counts))
  lo = 0
  for g, c in enumerate(counts):
    x = np.zeros((t, c * k))
    x[np.arange(t)[:, None], np.arange(c)[None, :] * k + tokens[:, lo:lo + c]] = 1.0
    y = targets[:, g] - spent
    w = np.linalg.solve(x.T @ x + ridge * np.eye(c * k), x.T @ y)
    table[lo:lo + c] = w.reshape(c, k)
    spent = spent + x @ w
    var = np.var(targets[:, g])
    r2[g] = 1.0 - np.mean((targets[:, g] - spent) ** 2) / var if var > 0 else 1.0
    lo += c
  return SpendFit(table.astype(np.float32), r2,
                  float(np.max(np.abs(spent - targets[:, -1]))))


def spend_of(table_LxK: np.ndarray, tokens_TxL: np.ndarray) -> np.ndarray:
  """float64 [T]: the spend of whole token maps under a table."""
  tokens = np.asarray(tokens_TxL)
  return np.asarray(table_LxK, np.float64)[np.arange(tokens.shape[1])[None], tokens].sum(-1)
