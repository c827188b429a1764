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


def _normal(std):
  return lambda k, s: std * jax.random.normal(k, s, jnp.float32)


def bucketed_dense(x_MxBxD, kernel_GxDxF, bias_GxF, buckets):
  """Per-group x W_g + b_g, one batched matmul per bucket (see module doc)."""
  d_in, f = kernel_GxDxF.shape[1:]
  outs = []
  for start, n, size, g0 in buckets:
    # [M, B, D] rows of a bucket are contiguous: view as [G_s, s * B, D].
    xb = x_MxBxD[start:start + n * size].reshape(n, -1, d_in)
    if n == 1:
      yb = xb[0] @ kernel_GxDxF[g0] + bias_GxF[g0]
    else:
      yb = jax.lax.dot_general(xb, kernel_GxDxF[g0:g0 + n],
                               (((2,), (1,)), ((0,), (0,))))
      yb = yb + bias_GxF[g0:g0 + n][:, None, :]
    outs.append(yb.reshape((n * size,) + x_MxBxD.shape[1:-1] + (f,)))
  return jnp.concatenate(outs, 0) if len(outs) > 1 else outs[0]


class GroupedDense(nn.Module):
  """y_i = x_i W_{g(i)} + b_{g(i)} for elements i in GroupLayout order.

  Input float32[M, B, D_in] (sorted order), output float32[M, B, features].
  Parameters: kernel [G, D_in, features] (normal, std 1/sqrt(D_in)), bias
  [G, features] (zeros). Works under jit, vmap and grad.
  """
  buckets: tuple[tuple[int, int, int, int], ...]
  n_groups: int
  features: int

  @nn.compact
  def __call__(self, x_MxBxD):
    d_in = x_MxBxD.shape[-1]
    kernel = self.param("kernel", _normal(1 / np.sqrt(d_in)),
                        (self.n_groups, d_in, self.features))
    bias = self.param("bias", nn.initializers.zeros,
                      (self.n_groups, self.features))
    return bucketed_dense(x_MxBxD, kernel, bias, self.buckets)


class GroupedIntentEncoder(nn.Module):
  """First encoder layer: z_i = [u || pe_i] W_{g(i)} + b_{g(i)}.

  Computed as u W^u_g (once per group and intent, then broadcast to the
  group's elements) plus pe_i W^pe_g (once per element: pe is static and
  shared by all B intents), which is the same function as a group-tied dense
  layer on the concatenation at 1/B of the cost. u float32[B, F] ->
  float32[M, B, features] in sorted order.
  """
  buckets: tuple[tuple[int, int, int, int], ...]
  n_groups: int
  pe: np.ndarray | None         # float32[M, P] sorted, or None
  features: int

  @nn.compact
  def __call__(self, u_BxF):
    f_dim = u_BxF.shape[-1]
    p_dim = 0 if self.pe is None else self.pe.shape[-1]
    std = 1 / np.sqrt(f_dim + p_dim)
    w_u = self.param("kernel_intent", _normal(std),
                     (self.n_groups, f_dim, self.features))
    bias = self.param("bias", nn.initializers.zeros,
                      (self.n_groups, self.features))
    z_GxBxF = jnp.einsum("bf,gfe->gbe", u_BxF, w_u) + bias[:, None]
    # Broadcast each group's row over its contiguous elements (its gradient
    # is a plain reduction, unlike the scatter-add of a gather by group id).
    b, f = z_GxBxF.shape[1:]
    z = jnp.concatenate([
        jnp.broadcast_to(z_GxBxF[g0:g0 + n, None], (n, size, b, f)).reshape(n * size, b, f)
        for _, n, size, g0 in self.buckets], 0)
    if self.pe is not None:
      w_pe = self.param("kernel_pe", _normal(std),
                        (self.n_groups, p_dim, self.features))
      zero = jnp.zeros((self.n_groups, self.features), jnp.float32)
      z = z + bucketed_dense(jnp.asarray(self.pe)[:, None], w_pe, zero,
                             self.buckets)
    return z


class GroupedEdgeInput(nn.Module):
  """First message layer: m_e = [x_e, h_s(e), h_r(e)] W_{g(e)} + b_{g(e)}.

  Computed without materialising the [E, B, 3D] concatenation (slow on CPU)
  or multiplying per edge by the node blocks: for each edge group g, the
  states of its distinct senders (receivers) are projected once by g's
  sender (receiver) block, then gathered per edge. Same function and init
  as a GroupedDense on the concatenation.
  """
  buckets: tuple[tuple[int, int, int, int], ...]
  n_groups: int
  features: int
  senders_of_group: tuple        # per group: int array of distinct senders
  receivers_of_group: tuple
  sender_slot: np.ndarray        # int[E]: row of the edge's sender projection
  receiver_slot: np.ndarray

  @nn.compact
  def __call__(self, x_ExBxD, h_NxBxD):
    d_e, d_n = x_ExBxD.shape[-1], h_NxBxD.shape[-1]
    std = 1 / np.sqrt(d_e + 2 * d_n)
    shape = lambda d: (self.n_groups, d, self.features)
    w_e = self.param("kernel_edge", _normal(std), shape(d_e))
    w_s = self.param("kernel_sender", _normal(std), shape(d_n))
    w_r = self.param("kernel_receiver", _normal(std), shape(d_n))
    bias = self.param("bias", nn.initializers.zeros,
                      (self.n_groups, self.features))
    out = bucketed_dense(x_ExBxD, w_e, bias, self.buckets)
    p_s = jnp.concatenate([h_NxBxD[s] @ w_s[g]
                           for g, s in enumerate(self.senders_of_group)], 0)
    p_r = jnp.concatenate([h_NxBxD[r] @ w_r[g]
                           for g, r in enumerate(self.receivers_of_group)], 0)
    return out + p_s[self.sender_slot] + p_r[self.receiver_slot]


def endpoint_projection_index(group_sorted, endpoint):
  """For GroupedEdgeInput: per group the distinct endpoint nodes, and per
  edge the row of its endpoint in the concatenated projections."""
  per_group, slot, offset = [], np.zeros(len(endpoint), np.int64), 0
  for g in range(int(group_sorted.max()) + 1):
    idx = np.flatnonzero(group_sorted == g)
    uniq, inv = np.unique(endpoint[idx], return_inverse=True)
    per_group.append(uniq.astype(np.int32))
    slot[idx] = offset + inv
    offset += len(uniq)
  return tuple(per_group), slot.astype(np.int32)


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
