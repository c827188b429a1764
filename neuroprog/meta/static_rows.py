"""Row gathers and segment sums over static indices, with no scatter anywhere.

The neural graph's index arrays (senders, receivers, θ slots) are numpy
constants, known when the program is traced. `x[idx]` and
`jax.ops.segment_sum(x, idx, n)` lower to a gather and a scatter-add, and each
one's gradient is the other. XLA:CPU runs scatter-add as an element-by-element
loop, and once the seeds of the main job are vmapped into the leading axis
every update window is strided (figures: BUILD_NOTES.md, "bench_meta",
"bench_seeds").

Here neither direction scatters. Most index arrays of a neural graph are
structured: a dense layer's edges list their senders as a tile or a repeat of
a range of nodes, and its receivers the other way round. Such patterns are
recognised statically (also blockwise: one pattern per group of a segment)
and become slices, broadcasts and reshape-sums, which XLA fuses with their
neighbours. Any other index array is a gather; a segment
sum over it gathers each output row's inputs from a static table and reduces
them, with rows bucketed by their count of inputs so nothing is padded.
`take_rows` and `sum_rows` are each other's transpose and say so through
`jax.custom_vjp`, so reverse-mode derivatives contain no scatter either.

Both work under `jit` and `vmap` and support reverse-mode differentiation
(`grad`, `vjp`) to any order; forward mode (`jvp`) is not defined, as for any
`custom_vjp` function. Summation order within an output row is the order of
`idx`, so results are deterministic.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np


class _SumPlan:
  """Static tables for sum_rows(x [K, ...], idx int[K], n) -> [n, ...].

  parts: ((table int[r_c, c]), ...), one per distinct count c > 0 of inputs
    per output row; table[j] lists the inputs of the j-th such row, in
    input order.
  source: int[n], the row of concat(part sums..., zero row) that each
    output row takes (rows without inputs take the trailing zero row).
  """

  def __init__(self, idx: np.ndarray, n: int):
    order = np.argsort(idx, kind="stable")
    counts = np.bincount(idx, minlength=n)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    parts, rows = [], []
    for c in np.unique(counts[counts > 0]):
      r = np.flatnonzero(counts == c)
      parts.append(order[starts[r][:, None] + np.arange(c)].astype(np.int32))
      rows.append(r)
    filled = sum(len(r) for r in rows)
    source = np.full(n, filled, np.int64)     # the zero row
    if rows:
      source[np.concatenate(rows)] = np.arange(filled)
    self.parts = tuple(parts)
    self.source = source.astype(np.int32)


@functools.lru_cache(maxsize=512)
def _plan(idx_bytes: bytes, n: int) -> _SumPlan:
  return _SumPlan(np.frombuffer(idx_bytes, np.int64), n)


def _check(idx, n, what):
  idx = np.asarray(idx)
  if idx.ndim != 1 or not np.issubdtype(idx.dtype, np.integer):
    raise ValueError(f"{what}: idx must be a 1-D integer numpy array, got "
                     f"{idx.dtype} of shape {idx.shape}.")
  if idx.size and (idx.min() < 0 or idx.max() >= n):
    raise ValueError(f"{what}: idx values must lie in 0..{n - 1}, got "
                     f"{int(idx.min())}..{int(idx.max())}.")
  return idx.astype(np.int64)


def _pattern(idx: np.ndarray):
  """The structure of a static index array, or None.

  ("range", start, k): idx = start .. start + k - 1.
  ("repeat", start, n, c): each of start .. start + n - 1, c times in a row.
  ("tile", start, n, c): the range start .. start + n - 1, c times over.
  """
  k = len(idx)
  if k == 0:
    return None
  start = int(idx[0])
  if np.array_equal(idx, start + np.arange(k)):
    return ("range", start, k)
  runs = np.flatnonzero(np.diff(idx) != 0)
  c = int(runs[0]) + 1 if len(runs) else k
  if k % c == 0 and np.array_equal(idx, np.repeat(start + np.arange(k // c), c)):
    return ("repeat", start, k // c, c)
  breaks = np.flatnonzero(np.diff(idx) < 0)
  n = int(breaks[0]) + 1 if len(breaks) else k
  if k % n == 0 and np.array_equal(idx, np.tile(start + np.arange(n), k // n)):
    return ("tile", start, n, k // n)
  return None


# Splits into more or shorter blocks than this are not worth a concatenation
# of that many pieces (and short blocks would match by chance).
_MAX_BLOCKS, _MIN_BLOCK = 16, 8


@functools.lru_cache(maxsize=512)
def _structure_of(idx_bytes: bytes):
  return _structure(np.frombuffer(idx_bytes, np.int64))


def _structure(idx: np.ndarray):
  """idx as b equal blocks that each have a `_pattern` (b as small as
  possible), e.g. one block per group of a segment whose groups are different
  dense layers; None when there is no such split."""
  k = len(idx)
  for b in range(1, min(_MAX_BLOCKS, max(k // _MIN_BLOCK, 1)) + 1):
    if k % b == 0:
      pats = [_pattern(block) for block in idx.reshape(b, k // b)]
      if all(p is not None for p in pats):
        return tuple(pats)
  return None


def _take_structured(x, blocks):
  parts = [_take_block(x, p) for p in blocks]
  return parts[0] if len(parts) == 1 else jnp.concatenate(parts, 0)


def _sum_structured(x, blocks, n_out):
  xs = jnp.split(x, len(blocks), 0) if len(blocks) > 1 else [x]
  out = _sum_block(xs[0], blocks[0], n_out)
  for x_b, p in zip(xs[1:], blocks[1:]):
    out = out + _sum_block(x_b, p, n_out)
  return out


def _take_block(x, pattern):
  kind, start = pattern[:2]
  if kind == "range":
    return x[start:start + pattern[2]]
  n, c = pattern[2:]
  rows = x[start:start + n]
  if kind == "repeat":
    out = jnp.broadcast_to(rows[:, None], (n, c) + x.shape[1:])
  else:
    out = jnp.broadcast_to(rows[None], (c, n) + x.shape[1:])
  return out.reshape((n * c,) + x.shape[1:])


def _sum_block(x, pattern, n_out):
  kind, start = pattern[:2]
  if kind == "range":
    s = x
  else:
    n, c = pattern[2:]
    if kind == "repeat":
      s = x.reshape((n, c) + x.shape[1:]).sum(1)
    else:
      s = x.reshape((c, n) + x.shape[1:]).sum(0)
  pad = [(start, n_out - start - s.shape[0])] + [(0, 0)] * (x.ndim - 1)
  return jnp.pad(s, pad)


def _gather(x, idx):
  return x.at[idx].get(mode="promise_in_bounds")   # idx is checked up front


def _sum_forward(x, plan: _SumPlan):
  sums = [_gather(x, t.reshape(-1)).reshape(t.shape + x.shape[1:]).sum(1)
          for t in plan.parts]
  stacked = jnp.concatenate(sums + [jnp.zeros((1,) + x.shape[1:], x.dtype)], 0)
  return _gather(stacked, plan.source)


def take_rows(x: jax.Array, idx: np.ndarray) -> jax.Array:
  """x[idx] along axis 0: x [M, ...], idx int[K] (numpy, values < M) -> [K, ...].

  Its gradient is `sum_rows(g, idx, M)`, computed without a scatter.
  """
  idx = _check(idx, x.shape[0], "take_rows")
  m = x.shape[0]
  blocks = _structure_of(idx.tobytes())   # idx is int64 after _check

  @jax.custom_vjp
  def f(x):
    return _take_structured(x, blocks) if blocks else _gather(x, idx)

  def fwd(x):
    return f(x), None

  def bwd(_, g):
    return (sum_rows(g, idx, m),)

  f.defvjp(fwd, bwd)
  return f(x)


def sum_rows(x: jax.Array, idx: np.ndarray, n: int) -> jax.Array:
  """Segment sum: out[i] = sum of x[k] over k with idx[k] == i.

  x [K, ...], idx int[K] (numpy, values < n) -> [n, ...] (rows no index
  names are 0). Equals `jax.ops.segment_sum(x, idx, n)` up to summation
  order; its gradient is `take_rows(g, idx)`.
  """
  idx = _check(idx, n, "sum_rows")
  if x.shape[0] != len(idx):
    raise ValueError(f"sum_rows: x has {x.shape[0]} rows but idx has "
                     f"{len(idx)} entries; they must match.")
  blocks = _structure_of(idx.tobytes())   # idx is int64 after _check
  plan = None if blocks else _plan(idx.tobytes(), int(n))

  @jax.custom_vjp
  def f(x):
    if blocks:
      return _sum_structured(x, blocks, n)
    return _sum_forward(x, plan)

  def fwd(x):
    return f(x), None

  def bwd(_, g):
    return (take_rows(g, idx),)

  f.defvjp(fwd, bwd)
  return f(x)
