"""Group-tied layers: one weight matrix per group, applied without gathers.

Elements (nodes or edges of a neural graph) are sorted once, statically, so
that every group is a contiguous segment and groups of equal size sit next to
each other ("buckets"). A group-tied dense layer is then one batched matmul
per bucket::

    h[start : start + G_s * s]  ->  [G_s, s, B, D_in]  x  W[g0 : g0 + G_s]  [G_s, D_in, D_out]

so no weight matrix is ever gathered per element, and no element is padded.
Within a role all orbits have the same size, so a neural graph has only a few
distinct group sizes (SUMFIRST: 4 for edges; ADDMOD: 3). `jax.lax.ragged_dot`
would do the same job in one call, but on CPU it lowers to a dense product
over all groups (G times the work; measured in BUILD_NOTES.md).

States are laid out element-major, [M, B, D]: M elements in sorted order, B
programs (intents), D features.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np


@dataclasses.dataclass(frozen=True, eq=False)
class GroupLayout:
  """A static sort of M elements by group (numpy, built outside jit).

  order: int[M], sorted position -> original element index.
  rank: int[M], original element index -> sorted position.
  group_sorted: int[M], the (renumbered) group id of each sorted element.
  buckets: ((elem_start, n_groups, size, group_start), ...), hashable.
  n_groups: number of groups G; renumbered so that bucket groups are
    contiguous: group_start .. group_start + n_groups - 1.
  """
  order: np.ndarray
  rank: np.ndarray
  group_sorted: np.ndarray
  buckets: tuple[tuple[int, int, int, int], ...]
  n_groups: int

  @property
  def size(self) -> int:
    return len(self.order)


def group_layout(group: np.ndarray, order: np.ndarray | None = None) -> GroupLayout:
  """Sorts elements so that every group is one contiguous segment.

  Without `order`: by (group size, group id), keeping original order within a
  group, so equal-size groups form one bucket each. With `order` (a
  permutation of the elements in which every group is already contiguous,
  e.g. shared with a coarser grouping): that order, with buckets being the
  runs of consecutive equal-size groups.
  """
  group = np.asarray(group)
  ids, counts = np.unique(group, return_counts=True)
  size_of = dict(zip(ids.tolist(), counts.tolist()))
  if order is None:
    groups_sorted = sorted(ids.tolist(), key=lambda g: (size_of[g], g))
    order = np.concatenate([np.flatnonzero(group == g) for g in groups_sorted])
  order = np.asarray(order)
  seq = group[order]
  starts = np.r_[0, np.flatnonzero(np.diff(seq)) + 1]
  groups_sorted = seq[starts].tolist()
  if len(set(groups_sorted)) != len(groups_sorted):
    raise ValueError("group_layout: a group is not contiguous in the given order")
  new_id = {g: i for i, g in enumerate(groups_sorted)}
  rank = np.empty_like(order)
  rank[order] = np.arange(len(order))
  buckets, g0 = [], 0
  sizes = [size_of[g] for g in groups_sorted]
  while g0 < len(sizes):
    g1 = g0
    while g1 < len(sizes) and sizes[g1] == sizes[g0]:
      g1 += 1
    buckets.append((int(starts[g0]), g1 - g0, sizes[g0], g0))
    g0 = g1
  return GroupLayout(order=order, rank=rank,
                     group_sorted=np.array([new_id[g] for g in seq]),
                     buckets=tuple(buckets), n_groups=len(ids))


def nested_order(fine: np.ndarray, coarse: np.ndarray) -> np.ndarray:
  """An element order in which both groupings are contiguous (fine must
  refine coarse): coarse groups by (size, id), fine groups inside by id."""
  coarse_ids, counts = np.unique(coarse, return_counts=True)
  size = dict(zip(coarse_ids.tolist(), counts.tolist()))
  coarse_size = np.array([size[c] for c in coarse.tolist()])
  return np.lexsort((np.arange(len(fine)), fine, coarse, coarse_size))


class GroupedDense(nn.Module):
  """y_i = x_i W_{g(i)} + b_{g(i)} for elements i in GroupLayout order.

  Input float32[M, B, D_in] (sorted order), output float32[M, B, features].
  Parameters: kernel [G, D_in, features] (LeCun normal per group), bias
  [G, features]. Works under jit, vmap and grad.
  """
  buckets: tuple[tuple[int, int, int, int], ...]
  n_groups: int
  features: int
  kernel_scale: float = 1.0

  @nn.compact
  def __call__(self, x_MxBxD):
    d_in = x_MxBxD.shape[-1]
    std = self.kernel_scale / np.sqrt(d_in)
    kernel = self.param(
        "kernel", lambda k, s: std * jax.random.normal(k, s, jnp.float32),
        (self.n_groups, d_in, self.features))
    bias = self.param("bias", nn.initializers.zeros,
                      (self.n_groups, self.features))
    outs = []
    for start, n, size, g0 in self.buckets:
      # [M, B, D] rows of a bucket are contiguous: view as [G_s, s * B, D].
      xb = x_MxBxD[start:start + n * size].reshape(n, -1, d_in)
      if n == 1:
        yb = xb[0] @ kernel[g0] + bias[g0]
      else:
        yb = jax.lax.dot_general(xb, kernel[g0:g0 + n],
                                 (((2,), (1,)), ((0,), (0,))))
        yb = yb + bias[g0:g0 + n][:, None, :]
      outs.append(yb.reshape((n * size,) + x_MxBxD.shape[1:-1] + (self.features,)))
    return jnp.concatenate(outs, 0) if len(outs) > 1 else outs[0]


class GroupedMLP(nn.Module):
  """Two group-tied dense layers with an activation between."""
  buckets: tuple[tuple[int, int, int, int], ...]
  n_groups: int
  hidden: int
  features: int
  activation: Callable = nn.gelu

  @nn.compact
  def __call__(self, x):
    h = GroupedDense(self.buckets, self.n_groups, self.hidden)(x)
    return GroupedDense(self.buckets, self.n_groups, self.features)(
        self.activation(h))


def broadcast_intent(u_BxF: jax.Array, pe_MxP: np.ndarray | None, m: int):
  """[u || pe] for every element: float32[M, B, F (+ P)]."""
  b = u_BxF.shape[0]
  parts = [jnp.broadcast_to(u_BxF[None], (m,) + u_BxF.shape)]
  if pe_MxP is not None:
    parts.append(jnp.broadcast_to(jnp.asarray(pe_MxP)[:, None],
                                  (m, b, pe_MxP.shape[-1])))
  return jnp.concatenate(parts, -1)
