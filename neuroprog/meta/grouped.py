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

from neuroprog.meta import base, batched_init, static_rows


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


# std * N(0, 1); its draws are batched when init runs under batched_init.batched.
_normal = batched_init.normal


def _bucket_at(buckets, offset):
  for bk in buckets:
    if bk[0] <= offset < bk[0] + bk[1] * bk[2]:
      return bk
  raise ValueError(f"grouped: element offset {offset} is outside every bucket "
                   f"{buckets}")


def split_buckets(buckets, bounds):
  """A layout's buckets re-cut at finer element boundaries ("segments").

  bounds: sorted element offsets (0, ..., M) from `common_segments`. Returns
  one bucket (start, n_groups, size, group_start) per segment
  [bounds[i], bounds[i + 1]): a segment is either a run of whole equal-size
  groups or a part of one group (then n_groups = 1 and size = its length).
  """
  out = []
  for a, b in zip(bounds[:-1], bounds[1:]):
    start, n, size, g0 = _bucket_at(buckets, a)
    g_a, g_b = (a - start) // size, (b - 1 - start) // size
    if b > start + n * size:
      raise ValueError(f"split_buckets: segment [{a}, {b}) crosses the end of "
                       f"bucket {(start, n, size, g0)}")
    if g_a == g_b:                          # inside one group
      out.append((int(a), 1, int(b - a), int(g0 + g_a)))
    elif (a - start) % size or (b - start) % size:
      raise ValueError(f"split_buckets: segment [{a}, {b}) does not cut bucket "
                       f"{(start, n, size, g0)} at group boundaries")
    else:
      out.append((int(a), int((b - a) // size), int(size), int(g0 + g_a)))
  return tuple(out)


def common_segments(*bucket_sets):
  """Element boundaries (0, ..., M) at which every layout can be cut into
  runs of whole equal-size groups or parts of one group (`split_buckets`):
  all bucket starts, plus group boundaries wherever a cut of one layout
  falls inside a group of another. Few segments for nested groupings."""
  m = max(bk[0] + bk[1] * bk[2] for bk in bucket_sets[0])
  bounds = {0, m} | {bk[0] for buckets in bucket_sets for bk in buckets}
  changed = True
  while changed:
    changed = False
    cuts = sorted(bounds)
    for buckets in bucket_sets:
      for a, b in zip(cuts[:-1], cuts[1:]):
        start, _, size, _ = _bucket_at(buckets, a)
        if (a - start) % size == 0 and (b - start) % size == 0:
          continue
        # the first and last group boundaries inside (a, b), if any
        first = start + -(-(a - start) // size) * size
        last = start + ((b - start) // size) * size
        for c in (first, last):
          if a < c < b and c not in bounds:
            bounds.add(c)
            changed = True
  return tuple(sorted(bounds))


def _dense_rows(x_rows, kernel_GxDxF, bias_GxF, n, size, g0):
  """Rows of one bucket (n groups of `size` elements): [n * size, ..., D] ->
  [n * size, ..., F]; the group axis is a free reshape of the leading axis."""
  d_in, f = kernel_GxDxF.shape[1:]
  xb = x_rows.reshape(n, -1, d_in)
  if n == 1:
    yb = xb[0] @ kernel_GxDxF[g0] + bias_GxF[g0]
  else:
    yb = jax.lax.dot_general(xb, kernel_GxDxF[g0:g0 + n],
                             (((2,), (1,)), ((0,), (0,))))
    yb = yb + bias_GxF[g0:g0 + n][:, None, :]
  return yb.reshape(x_rows.shape[:-1] + (f,))


def bucketed_dense(x_MxBxD, kernel_GxDxF, bias_GxF, buckets):
  """Per-group x W_g + b_g, one batched matmul per bucket (see module doc).

  x: float32[M, B, D] in sorted order, or a tuple of segments (one array
  [m_s, B, D] per bucket of `buckets`, e.g. from `split_buckets`): then the
  result is a tuple too and no activation is sliced or concatenated, which on
  CPU costs as much as the matmuls themselves at D = 64 (BUILD_NOTES.md).
  """
  if isinstance(x_MxBxD, (tuple, list)):
    if len(x_MxBxD) != len(buckets):
      raise ValueError(f"bucketed_dense: {len(x_MxBxD)} segments for "
                       f"{len(buckets)} buckets")
    return tuple(_dense_rows(xs, kernel_GxDxF, bias_GxF, n, size, g0)
                 for xs, (_, n, size, g0) in zip(x_MxBxD, buckets))
  outs = [_dense_rows(x_MxBxD[start:start + n * size], kernel_GxDxF, bias_GxF,
                      n, size, g0)
          for start, n, size, g0 in buckets]
  return jnp.concatenate(outs, 0) if len(outs) > 1 else outs[0]


def segment_map(fn, x):
  """fn applied to an array, or to each segment of a tuple of segments."""
  if isinstance(x, (tuple, list)):
    return tuple(fn(xs) for xs in x)
  return fn(x)


class GroupedDense(nn.Module):
  """y_i = x_i W_{g(i)} + b_{g(i)} for elements i in GroupLayout order.

  Input float32[M, B, D_in] (sorted order), output float32[M, B, features];
  or tuples of segments matching `buckets` (see `bucketed_dense`).
  Parameters: kernel [G, D_in, features] (normal, std 1/sqrt(D_in)), bias
  [G, features] (zeros). Works under jit, vmap and grad.
  """
  buckets: tuple[tuple[int, int, int, int], ...]
  n_groups: int
  features: int

  @nn.compact
  def __call__(self, x_MxBxD):
    d_in = _last_dim(x_MxBxD)
    kernel = self.param("kernel", _normal(1 / np.sqrt(d_in)),
                        (self.n_groups, d_in, self.features))
    bias = self.param("bias", nn.initializers.zeros,
                      (self.n_groups, self.features))
    return bucketed_dense(x_MxBxD, kernel, bias, self.buckets)


def _per_element(x_GxBxF, buckets):
  """Each group's row broadcast over its contiguous elements: one
  [n * size, B, F] array per bucket. Its gradient is a plain reduction,
  unlike the scatter-add of a gather by group id."""
  b, f = x_GxBxF.shape[1:]
  return [jnp.broadcast_to(x_GxBxF[g0:g0 + n, None], (n, size, b, f)).reshape(n * size, b, f)
          for _, n, size, g0 in buckets]


class GroupedIntentEncoder(nn.Module):
  """First encoder layer: z_i = [u || pe_i] W_{g(i)} + b_{g(i)}.

  Computed as u W^u_g (once per group and intent, then broadcast to the
  group's elements) plus pe_i W^pe_g (once per element: pe is static and
  shared by all B intents), which is the same function as a group-tied dense
  layer on the concatenation at 1/B of the cost. u float32[B, F] ->
  float32[M, B, features] in sorted order, or with `segmented` a tuple with
  one [m_s, B, features] array per bucket (segment).

  Initialisation. Plain (balanced=False): both blocks of the kernel have std
  1 / sqrt(F + P), a standard init of the concatenation, under which each
  block's share of the output variance is its share of the input's squared
  norm: 30 positional features against 2 intent features of a few
  hundredths' spread leave the intent a few percent, and the generated θ
  hardly depends on it at init. balanced=True: the intent block has std
  sqrt(1 / 2F) and the positional block sqrt(1 / 2 mean_i |pe_i|^2), so for
  unit-variance (standardized) intents each block gives half of the output
  variance, whatever the number of positional features.

  film=True multiplies the result by (1 + u W^film_g), a group-tied FiLM
  gain of the intent. Without it the layer is additive in u and pe_i, so an
  element's state is f(pe_i) + g(u) until the nonlinearities mix them; the
  gain puts the products pe_i x u (e.g. token index x 1/p) into the first
  layer. W^film starts at zero, so the initial function (and θ) is the
  additive one's.

  learned=k > 0 makes the last k columns of pe a trainable parameter
  "pe_learned" float32[M, k] (sorted order), initialised to those columns:
  the initial function is unchanged, and each element gets k inputs of its
  own that training can move (an element-specific code, where the other
  parameters are all group-tied).
  """
  buckets: tuple[tuple[int, int, int, int], ...]
  n_groups: int
  pe: np.ndarray | None         # float32[M, P] sorted, or None
  features: int
  segmented: bool = False
  balanced: bool = False
  intent_weight: float = 0.5    # balanced: the intent's share of the output variance
  film: bool = False
  learned: int = 0              # trailing pe columns that are trainable

  @nn.compact
  def __call__(self, u_BxF):
    f_dim = u_BxF.shape[-1]
    p_dim = 0 if self.pe is None else self.pe.shape[-1]
    std = std_u = std_pe = 1 / np.sqrt(f_dim + p_dim)
    if self.balanced and self.pe is not None:
      w = self.intent_weight
      std_u = np.sqrt(w / f_dim)
      std_pe = np.sqrt((1 - w) / max(float(np.mean(np.sum(self.pe ** 2, -1))), 1e-12))
    w_u = self.param("kernel_intent", _normal(std_u),
                     (self.n_groups, f_dim, self.features))
    bias = self.param("bias", nn.initializers.zeros,
                      (self.n_groups, self.features))
    z_GxBxF = jnp.einsum("bf,gfe->gbe", u_BxF, w_u) + bias[:, None]
    z = _per_element(z_GxBxF, self.buckets)
    if self.pe is not None:
      w_pe = self.param("kernel_pe", _normal(std_pe),
                        (self.n_groups, p_dim, self.features))
      zero = jnp.zeros((self.n_groups, self.features), jnp.float32)
      pe_MxP = jnp.asarray(self.pe)
      if self.learned:
        if not 0 < self.learned <= p_dim:
          raise ValueError(f"GroupedIntentEncoder: learned={self.learned!r}; allowed: "
                           f"0..{p_dim} (the positional columns).")
        # Created after the kernels, so their initial values are as without it.
        init = np.asarray(self.pe[:, p_dim - self.learned:], np.float32)
        trained = self.param("pe_learned", lambda *_: jnp.asarray(init), init.shape)
        pe_MxP = jnp.concatenate([pe_MxP[:, :p_dim - self.learned], trained], -1)
      pe = tuple(pe_MxP[start:start + n * size][:, None]
                 for start, n, size, _ in self.buckets)
      z = [zs + ps for zs, ps in zip(z, bucketed_dense(pe, w_pe, zero, self.buckets))]
    if self.film:
      w_film = self.param("kernel_film", nn.initializers.zeros,
                          (self.n_groups, f_dim, self.features))
      gain_GxBxF = 1.0 + jnp.einsum("bf,gfe->gbe", u_BxF, w_film)
      z = [zs * gs for zs, gs in zip(z, _per_element(gain_GxBxF, self.buckets))]
    if self.segmented:
      return tuple(z)
    return jnp.concatenate(z, 0) if len(z) > 1 else z[0]


class GroupedEdgeInput(nn.Module):
  """First message layer: m_e = [x_e, h_s(e), h_r(e)] W_{g(e)} + b_{g(e)}.

  Computed without materialising the [E, B, 3D] concatenation (slow on CPU)
  or multiplying per edge by the node blocks: for each edge group g, the
  states of its distinct senders (receivers) are projected once by g's
  sender (receiver) block, then gathered per edge. Same function and init
  as a GroupedDense on the concatenation. x may be a tuple of segments
  matching `buckets` (the result is then a tuple too); h is one array.
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
    d_e, d_n = _last_dim(x_ExBxD), h_NxBxD.shape[-1]
    std = 1 / np.sqrt(d_e + 2 * d_n)
    shape = lambda d: (self.n_groups, d, self.features)
    w_e = self.param("kernel_edge", _normal(std), shape(d_e))
    w_s = self.param("kernel_sender", _normal(std), shape(d_n))
    w_r = self.param("kernel_receiver", _normal(std), shape(d_n))
    bias = self.param("bias", nn.initializers.zeros,
                      (self.n_groups, self.features))
    out = bucketed_dense(x_ExBxD, w_e, bias, self.buckets)
    take = static_rows.take_rows    # gathers whose gradients avoid scatter-add
    p_s = jnp.concatenate([take(h_NxBxD, s) @ w_s[g]
                           for g, s in enumerate(self.senders_of_group)], 0)
    p_r = jnp.concatenate([take(h_NxBxD, r) @ w_r[g]
                           for g, r in enumerate(self.receivers_of_group)], 0)
    if isinstance(out, tuple):
      return tuple(
          o + take(p_s, self.sender_slot[start:start + n * size])
          + take(p_r, self.receiver_slot[start:start + n * size])
          for o, (start, n, size, _) in zip(out, self.buckets))
    return out + take(p_s, self.sender_slot) + take(p_r, self.receiver_slot)


def _last_dim(x):
  return (x[0] if isinstance(x, (tuple, list)) else x).shape[-1]


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
        segment_map(self.activation, h))


def broadcast_intent(u_BxF: jax.Array, pe_MxP: np.ndarray | None, m: int):
  """[u || pe] for every element: float32[M, B, F (+ P)]."""
  b = u_BxF.shape[0]
  parts = [jnp.broadcast_to(u_BxF[None], (m,) + u_BxF.shape)]
  if pe_MxP is not None:
    parts.append(jnp.broadcast_to(jnp.asarray(pe_MxP)[:, None],
                                  (m, b, pe_MxP.shape[-1])))
  return jnp.concatenate(parts, -1)


class GroupedIntentGain(nn.Module):
  """A group-tied intent gain per element: g_i = 1 + φ(u) W_{g(i)}.

  φ(u) float32[B, hidden] is an intent trunk shared by all groups (two GELU
  layers, then a parameter-free layer norm, as Meta-MLP's trunk); W float32[G,
  hidden, features] starts at zero, so every gain starts at exactly 1.
  Multiplying a decoder's hidden activations a_i by g_i makes its output
  a_i w + (a_i ⊙ φ(u) W_g) w: every element's value becomes a combination of
  `features` intent basis functions with coefficients from the element's own
  state, the read-out Meta-MLP's last layer gives each θ entry, while all the
  weights stay group-tied (so automorphisms still fix θ without positional
  encodings).

  u float32[B, F] -> float32[M, B, features] in sorted order, or with
  `segmented` a tuple of one [m_s, B, features] array per bucket.
  """
  buckets: tuple[tuple[int, int, int, int], ...]
  n_groups: int
  features: int
  hidden: int
  segmented: bool = False

  @nn.compact
  def __call__(self, u_BxF):
    phi = nn.gelu(nn.Dense(self.hidden, name="trunk_0")(u_BxF))
    phi = nn.gelu(nn.Dense(self.hidden, name="trunk_1")(phi))
    phi = base.layer_norm(phi)
    w = self.param("kernel", nn.initializers.zeros,
                   (self.n_groups, self.hidden, self.features))
    gain = _per_element(1.0 + jnp.einsum("bh,ghf->gbf", phi, w), self.buckets)
    if self.segmented:
      return tuple(gain)
    return jnp.concatenate(gain, 0) if len(gain) > 1 else gain[0]
