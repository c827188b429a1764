"""Multi-scale quantization (MSQ) of an N x N feature map with one shared codebook.

For scales n_1 < ... < n_T = N: bring the residual down to n x n, replace
each position by its nearest code of the codebook Z [K, C], bring the codes
back up to N x N, add them to the running reconstruction and subtract them
from the residual. Token map t is the [n_t, n_t] array of code indices;
`accumulated[t]` is the reconstruction after scale t.

Two ways down and up, chosen per scale by `nodes`:

* `nodes=None` (the image pyramid): area-average down, bilinear up; scale t
  is a blurred version of the whole map.
* `nodes` = the sorted indices of n of the N graph nodes (the
  sub-architecture schedule): down keeps the n x n block of those nodes (a
  selection matrix P [n, N]: P e P^T), up puts the codes back at those
  entries and zeros elsewhere (P^T z P). Scale t then refines exactly the
  feature-map entries of an n_t-node sub-architecture, and the block of the
  accumulated map at those nodes (`pool(accumulated[t], n_t, nodes_t)`) is
  what decodes to it.

With `new_entries=True` (sub-architecture scales only) scale t quantizes
only the entries its new nodes add to the block: the n_1 x n_1 block at the
first scale, then the rows and columns of the nodes in node_sets[t] but not
in node_sets[t-1] (2 n_t - 1 entries when one node arrives). Every entry of
the map is then quantized exactly once, at the scale whose sub-architecture
first contains it, the token sequence has N^2 tokens in all instead of
sum n_t^2, and the block of the accumulated map at scale t's nodes is still
what decodes to its sub-architecture (`NewEntryLayout`). Entries are not
refined later, so a sub-architecture's wiring that changes as nodes arrive
(NB201 wires an edge node to the output until a reader of it is present)
has to come from the decoder, which reads each endpoint's row and column.

All functions are pure and work under `jit`/`vmap`; resampling is two small
matmuls with constant matrices, so it is exact and cheap for any n (also n
that do not divide N); the new-entry layout uses static gathers only.

Feature maps are channels-last, `e_BxNxNxC` (float32).
"""

from __future__ import annotations

import functools
from typing import NamedTuple, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np


@functools.lru_cache(maxsize=None)
def area_matrix(n_out: int, n_in: int) -> np.ndarray:
  """[n_out, n_in] adaptive average pooling (PyTorch's 'area' interpolation)."""
  m = np.zeros((n_out, n_in), np.float32)
  for i in range(n_out):
    lo, hi = (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)
    m[i, lo:hi] = 1.0 / (hi - lo)
  return m


@functools.lru_cache(maxsize=None)
def upsample_matrix(n_out: int, n_in: int) -> np.ndarray:
  """[n_out, n_in] bilinear interpolation, half-pixel centres, edges clamped."""
  m = np.zeros((n_out, n_in), np.float32)
  for i in range(n_out):
    x = (i + 0.5) * n_in / n_out - 0.5
    x = min(max(x, 0.0), n_in - 1.0)
    lo = int(np.floor(x))
    hi = min(lo + 1, n_in - 1)
    w = x - lo
    m[i, lo] += 1.0 - w
    m[i, hi] += w
  return m


def resample(x_BxHxHxC: jax.Array, m_OxH: np.ndarray) -> jax.Array:
  """Applies a resampling matrix to both spatial axes: [B, O, O, C]."""
  m = jnp.asarray(m_OxH)
  return jnp.einsum("ih,bhwc,jw->bijc", m, x_BxHxHxC, m)


@functools.lru_cache(maxsize=None)
def selection_matrix(nodes: tuple[int, ...], size: int) -> np.ndarray:
  """[n, size] 0/1 matrix P with P[i, nodes[i]] = 1 (keeps those rows)."""
  m = np.zeros((len(nodes), size), np.float32)
  m[np.arange(len(nodes)), np.asarray(nodes, int)] = 1.0
  return m


def _is_all(nodes, size) -> bool:
  return nodes is not None and tuple(nodes) == tuple(range(size))


def pool(x_BxNxNxC: jax.Array, n: int, nodes: Optional[Sequence[int]] = None) -> jax.Array:
  """[B, n, n, C]: area average (nodes None) or the block of `nodes` (len n)."""
  size = x_BxNxNxC.shape[1]
  if n == size and (nodes is None or _is_all(nodes, size)):
    return x_BxNxNxC
  if nodes is None:
    return resample(x_BxNxNxC, area_matrix(n, size))
  return resample(x_BxNxNxC, selection_matrix(tuple(nodes), size))


def upsample(x_BxnxnxC: jax.Array, size: int,
             nodes: Optional[Sequence[int]] = None) -> jax.Array:
  """[B, size, size, C]: bilinear (nodes None), or the n x n block placed at
  the entries of `nodes` with zeros elsewhere."""
  n = x_BxnxnxC.shape[1]
  if n == size and (nodes is None or _is_all(nodes, size)):
    return x_BxnxnxC
  if nodes is None:
    return resample(x_BxnxnxC, upsample_matrix(size, n))
  return resample(x_BxnxnxC, selection_matrix(tuple(nodes), size).T)


def nearest_code(r_BxnxnxC: jax.Array, codebook_KxC: jax.Array) -> jax.Array:
  """Index int32 [B, n, n] (any leading shape: r [..., C] -> [...]) of the code
  nearest (L2) to each position."""
  d = (jnp.sum(r_BxnxnxC ** 2, -1, keepdims=True)
       - 2.0 * jnp.einsum("...c,kc->...k", r_BxnxnxC, codebook_KxC)
       + jnp.sum(codebook_KxC ** 2, -1))
  return jnp.argmin(d, -1).astype(jnp.int32)


class NewEntryLayout:
  """Where the tokens of `new_entries` quantization sit (module doc).

  Built from the per-scale node sets of an N-node map (`new_entry_layout`,
  cached). Scale t has P_t tokens, at the flat map positions `positions[t]`
  (int [P_t], i * N + j): first the diagonal entries of the nodes it adds
  (their types), then its other new entries (their wiring), each part
  row-major. The token sequence is the scales' tokens one after another
  (L = N^2 in all, `offsets[t]` where scale t starts).

  Generation takes two steps per scale, `groups`: the new nodes' diagonal
  entries, then the rest, so a node's edges are drawn knowing its type
  (tokens of one step are drawn independently of each other; MBV3's chain
  edge into a layer exists only if the layer does).

  Attributes:
    size: N. node_sets: per scale, the sorted node indices.
    counts: (P_1, ..., P_T). offsets: start of each scale in the sequence.
    positions, rows, cols: per scale, int [P_t]: flat position, row i, col j.
    map_index: per scale t, int [N * N]: for each map entry its index in the
      sequence of scales 0..t, or L_t (= offsets[t] + P_t, a zero slot) where
      the entry lies outside scale t's block.
    groups: per generation step g, (scale t, rows [G_g], cols [G_g], number
      of nodes whose context it reads: n_{t-1} for a types step (0 at t = 0),
      n_t for a wiring step). group_counts: (G_1, ..., G_{2T}).
    twins: per generation step g, int [G_g]: for each token (i, j) of scale
      t, the index among scale t-1's P_{t-1} tokens of its twin, the entry
      with t's new nodes replaced by t-1's (the previous node's type for a
      type token; whether the same node fed the previous node, for a wiring
      token), or P_{t-1} (none) at t = 0 and where the two scales add
      different numbers of nodes.
  """

  def __init__(self, node_sets, size: int):
    self.size, self.node_sets = size, tuple(tuple(s) for s in node_sets)
    positions, seen, groups = [], np.zeros((size, size), bool), []
    prev = 0
    for t, nodes in enumerate(self.node_sets):
      block = np.zeros((size, size), bool)
      block[np.ix_(nodes, nodes)] = True
      if np.any(seen & ~block):
        raise ValueError(f"node set {nodes} drops nodes of an earlier scale; "
                         "new-entry tokens need nested node sets.")
      new = np.flatnonzero(block & ~seen)
      diag = new[new // size == new % size]
      rest = new[new // size != new % size]
      positions.append(np.concatenate([diag, rest]))
      groups.append((t, diag // size, diag % size, prev))
      groups.append((t, rest // size, rest % size, len(nodes)))
      seen |= block
      prev = len(nodes)
    self.positions = tuple(positions)
    self.rows = tuple(p // size for p in positions)
    self.cols = tuple(p % size for p in positions)
    self.counts = tuple(len(p) for p in positions)
    self.offsets = tuple(int(x) for x in np.cumsum((0,) + self.counts[:-1]))
    self.groups = tuple(groups)
    self.group_counts = tuple(len(g[1]) for g in groups)
    seq = np.full(size * size, -1)
    map_index = []
    for t, p in enumerate(positions):
      seq[p] = self.offsets[t] + np.arange(len(p))
      end = self.offsets[t] + self.counts[t]
      map_index.append(np.where(seq >= 0, seq, end))
    self.map_index = tuple(map_index)
    # Twins: token (i, j) of scale t corresponds to the entry of scale t - 1
    # with t's new nodes replaced by t - 1's (in order, when both scales add
    # as many nodes): what the previous new node drew at the same place.
    twins = []
    for t_g, rows, cols, _ in self.groups:
      p_prev = self.counts[t_g - 1] if t_g else 0
      idx = np.full(len(rows), p_prev)
      if t_g:
        new_t = sorted(set(self.node_sets[t_g]) - set(self.node_sets[t_g - 1]))
        new_p = sorted(set(self.node_sets[t_g - 1])
                       - set(self.node_sets[t_g - 2] if t_g > 1 else ()))
        if len(new_t) == len(new_p):
          swap = dict(zip(new_t, new_p))
          local = {int(q): k for k, q in enumerate(self.positions[t_g - 1])}
          idx = np.array([local.get(swap.get(int(r), int(r)) * size + swap.get(int(c), int(c)),
                                    p_prev) for r, c in zip(rows, cols)], int)
      twins.append(idx)
    self.twins = tuple(twins)

  @functools.cached_property
  def endpoint_matrices(self):
    """Per generation step g, float32 [3, N, G_g]: token p's row node, its
    column node, and (for a diagonal entry) its node, as one-hot columns.
    Summing codes [B, G_g, C] through them gives each node's row sum, column
    sum and diagonal code: the running node context (`model.context_add`)."""
    out = []
    for _, rows, cols, _ in self.groups:
      m = np.zeros((3, self.size, len(rows)), np.float32)
      p = np.arange(len(rows))
      m[0, rows, p] = 1.0
      m[1, cols, p] = 1.0
      m[2, rows[rows == cols], p[rows == cols]] = 1.0
      out.append(m)
    return tuple(out)

  @functools.cached_property
  def later_twin_matrices(self):
    """Per generation step g, float32 [G_g, G_g]: entry (p, q) is 1 when
    token q has p's column and a larger row (an input of the same node
    listed after p's). Applied to the step's twin codes it gives each token
    (i, j) the sum of what the previous new node drew at its later inputs
    (`model.context_inputs`, `later_twins`)."""
    out = []
    for _, rows, cols, _ in self.groups:
      out.append(((cols[None, :] == cols[:, None]) & (rows[None, :] > rows[:, None]))
                 .astype(np.float32))
    return tuple(out)

  @functools.cached_property
  def between_matrices(self):
    """Per generation step g, float32 [G_g, N]: entry (p, m) is 1 / b_p when
    node m is one of the b_p nodes of the step's scale that lie strictly
    between token p's row and column nodes in index order (a zero row where
    there are none). Applied to the nodes' diagonal codes it gives each token
    (i, j) the mean type of the nodes between i and j (`model.context_inputs`,
    `between_types`): a mean, not a sum, so "every node between is empty"
    reads the same vector whatever their number."""
    out = []
    for t, rows, cols, _ in self.groups:
      member = np.zeros(self.size, bool)
      member[list(self.node_sets[t])] = True
      m = np.arange(self.size)
      lo, hi = np.minimum(rows, cols)[:, None], np.maximum(rows, cols)[:, None]
      inside = ((m[None] > lo) & (m[None] < hi) & member[None]).astype(np.float32)
      out.append(inside / np.maximum(inside.sum(1, keepdims=True), 1.0))
    return tuple(out)

  @functools.cached_property
  def teacher_tables(self) -> "TeacherTables":
    """The static index arrays that build every token's `model.context_inputs`
    at once under teacher forcing (`model.teacher_inputs`), instead of one
    generation step after another (see `TeacherTables`)."""
    size, num_groups = self.size, len(self.groups)
    group, rows, cols, present = [], [], [], []
    for g, (_, r, c, n) in enumerate(self.groups):
      group.append(np.full(len(r), g))
      rows.append(r)
      cols.append(c)
      present.append(np.full(len(r), max(n, 1)))
    group, rows, cols = (np.concatenate(a).astype(np.int32) for a in (group, rows, cols))
    present = np.concatenate(present).astype(np.float32)
    length = len(group)
    dump = num_groups * size          # the segment that collects non-diagonal tokens
    diag_segment = np.where(rows == cols, group * size + rows, dump).astype(np.int32)
    # twin of token l as an index into the whole sequence; L (a zero slot)
    # where it has none (scale 0, or scales adding different node counts)
    twin, start = np.full(length, length, np.int32), 0
    for g, (t, r, _, _) in enumerate(self.groups):
      local = self.twins[g]
      if t > 0:
        has = local < self.counts[t - 1]
        twin[start:start + len(r)][has] = self.offsets[t - 1] + local[has]
      start += len(r)
    later_to, later_from, start = [], [], 0
    for g, (_, r, _, _) in enumerate(self.groups):
      p, q = np.nonzero(self.later_twin_matrices[g])
      later_to.append(start + p)
      later_from.append(start + q)
      start += len(r)
    between = np.concatenate(self.between_matrices)                  # [L, N]
    cat = lambda parts, dt: np.concatenate(parts).astype(dt)
    return TeacherTables(
        group=group, rows=rows, cols=cols, present=present,
        row_segment=(group * size + rows).astype(np.int32),
        col_segment=(group * size + cols).astype(np.int32),
        diag_segment=diag_segment, num_segments=dump + 1, twin=twin,
        later_to=cat(later_to, np.int32), later_from=cat(later_from, np.int32),
        between_low=(np.minimum(rows, cols) + 1).astype(np.int32),
        between_high=np.maximum(rows, cols).astype(np.int32),
        between_weight=between.max(1).astype(np.float32))

  def to_map(self, parts, t: int) -> jax.Array:
    """[B, N, N, C]: the map holding the first L_t tokens of the sequence
    (parts: consecutive [B, *, C] pieces of it, per scale or per step, at
    least L_t tokens in all) at their positions and zeros elsewhere (one
    static gather)."""
    parts = list(parts)
    b, c = parts[0].shape[0], parts[0].shape[-1]
    end = self.offsets[t] + self.counts[t]
    flat = jnp.concatenate(parts, 1)[:, :end]
    flat = jnp.concatenate([flat, jnp.zeros((b, 1, c), flat.dtype)], 1)
    return flat[:, self.map_index[t]].reshape(b, self.size, self.size, c)


class TeacherTables(NamedTuple):
  """Static per-token index arrays of a `NewEntryLayout` (L tokens, G
  generation steps, N nodes; numpy, so they are constants under `jit`).

  group, rows, cols: int32 [L], each token's generation step and endpoints.
  present: float32 [L], the number of nodes its step's context reads (at
    least 1; the divisor of its means).
  row_segment, col_segment: int32 [L], g * N + node: where the token adds its
    code to the row and column sums of step g's increment. diag_segment:
    the same for diagonal codes, num_segments - 1 (a discarded segment) for
    wiring tokens. num_segments: G * N + 1.
  twin: int32 [L], the twin's index in the sequence, or L (none).
  later_to, later_from: int32 [E]: token later_to sums the twin of token
    later_from (`NewEntryLayout.later_twin_matrices`, all steps at once).
  between_low, between_high, between_weight: [L] int32, int32, float32: the
    nodes strictly between a token's endpoints are between_low ..
    between_high - 1, and their mean diagonal code is between_weight times
    their sum (1 / their number among the step's scale's nodes, 0 for none;
    `NewEntryLayout.between_matrices`). Nodes outside that scale have not
    been drawn yet, so their context is zero and the plain sum over the
    index range is the sum over the scale's nodes.
  """
  group: np.ndarray
  rows: np.ndarray
  cols: np.ndarray
  present: np.ndarray
  row_segment: np.ndarray
  col_segment: np.ndarray
  diag_segment: np.ndarray
  num_segments: int
  twin: np.ndarray
  later_to: np.ndarray
  later_from: np.ndarray
  between_low: np.ndarray
  between_high: np.ndarray
  between_weight: np.ndarray


def new_entry_layout(node_sets, size: int) -> NewEntryLayout:
  """The `NewEntryLayout` of nested node sets (any sequences of ints; one
  instance per distinct value, cached). ValueError for None (the image
  pyramid has no new entries) or node sets that are not nested."""
  if node_sets is None:
    raise ValueError("new_entries quantization needs sub-architecture node sets "
                     "(node_sets=None is the image pyramid).")
  return _cached_layout(tuple(tuple(int(i) for i in s) for s in node_sets), int(size))


@functools.lru_cache(maxsize=None)
def _cached_layout(node_sets, size):
  return NewEntryLayout(node_sets, size)


class MSQOutput(NamedTuple):
  indices: tuple        # per scale t: int32 [B, n_t, n_t] ([B, P_t] with new_entries)
  residuals: tuple      # per scale t: float32 [B, n_t, n_t, C] ([B, P_t, C]), residual quantized
  codes: tuple          # per scale t: float32, indices' shape + [C], Z[indices]
  accumulated: tuple    # per scale t: float32 [B, N, N, C], reconstruction after t
  accumulated_st: tuple  # the same values with straight-through gradients


def per_scale_nodes(scales, node_sets):
  """node_sets, or (None,) * T on the image pyramid: what `pool` and
  `upsample` take at each scale."""
  if node_sets is None:
    return (None,) * len(scales)
  if len(node_sets) != len(scales):
    raise ValueError(f"{len(node_sets)} node sets for {len(scales)} scales.")
  return node_sets


def quantize(e_BxNxNxC: jax.Array, codebook_KxC: jax.Array,
             scales: Sequence[int], node_sets=None, new_entries: bool = False
             ) -> MSQOutput:
  """Residual multi-scale quantization of `e`.

  node_sets: None (image pyramid) or, per scale t, the sorted node indices
  (length n_t) of its sub-architecture (module doc).
  new_entries: quantize only the entries each scale adds (needs node_sets;
  module doc); indices are then [B, P_t] in `NewEntryLayout` order.

  `accumulated[t]` is built from the codes themselves (gradients reach the
  codebook); `accumulated_st[t]` has the same values but passes gradients to
  `e` through each scale's pooling and upsampling (a straight-through
  estimator per scale: r + stop_gradient(z - r)), so a loss on the coarse
  reconstruction asks the *coarse* content of e to change. At the last scale
  (n = N) `accumulated_st[-1]` has gradient identity with respect to e.
  """
  size = e_BxNxNxC.shape[1]
  sg = jax.lax.stop_gradient
  if new_entries:
    return _quantize_new(e_BxNxNxC, codebook_KxC, new_entry_layout(node_sets, size))
  f_hat = jnp.zeros_like(e_BxNxNxC)
  f_st = jnp.zeros_like(e_BxNxNxC)
  out = ([], [], [], [], [])
  for n, nodes in zip(scales, per_scale_nodes(scales, node_sets)):
    r = pool(e_BxNxNxC - f_st, n, nodes)
    idx = nearest_code(r, codebook_KxC)
    z = codebook_KxC[idx]
    f_hat = f_hat + upsample(z, size, nodes)
    f_st = f_st + upsample(r + sg(z - r), size, nodes)
    for lst, v in zip(out, (idx, r, z, f_hat, f_st)):
      lst.append(v)
  return MSQOutput(*map(tuple, out))


def _quantize_new(e_BxNxNxC, codebook_KxC, lay: NewEntryLayout) -> MSQOutput:
  """`quantize` with new_entries: each entry once, at its first scale. Its
  residual is e itself there (no earlier scale wrote it)."""
  sg = jax.lax.stop_gradient
  b, n, _, c = e_BxNxNxC.shape
  e_flat = e_BxNxNxC.reshape(b, n * n, c)
  out = ([], [], [], [], [])
  codes, st = [], []
  for t, pos in enumerate(lay.positions):
    r = e_flat[:, pos]
    idx = nearest_code(r, codebook_KxC)
    z = codebook_KxC[idx]
    codes.append(z)
    st.append(r + sg(z - r))
    for lst, v in zip(out, (idx, r, z, lay.to_map(codes, t), lay.to_map(st, t))):
      lst.append(v)
  return MSQOutput(*map(tuple, out))


def reconstruct(indices: Sequence[jax.Array], codebook_KxC: jax.Array,
                size: int, node_sets=None, new_entries: bool = False) -> jax.Array:
  """The accumulated map [B, size, size, C] from per-scale token maps."""
  if new_entries:
    return new_entry_layout(node_sets, size).to_map([codebook_KxC[i] for i in indices],
                                           len(indices) - 1)
  f_hat = 0.0
  for idx, nodes in zip(indices, per_scale_nodes(indices, node_sets)):
    f_hat = f_hat + upsample(codebook_KxC[idx], size, nodes)
  return f_hat


def check_node_sets(node_sets, scales: Sequence[int], size: int) -> tuple:
  """Validates per-scale node sets: node_sets[t] is n_t sorted distinct
  indices in 0..size-1, and the last is every node. Returns them as tuples."""
  if len(node_sets) != len(scales):
    raise ValueError(f"node_sets has {len(node_sets)} entries for the "
                     f"{len(scales)} scales {tuple(scales)}.")
  out = []
  for t, (nodes, n) in enumerate(zip(node_sets, scales)):
    nodes = tuple(int(i) for i in nodes)
    if (len(nodes) != n or any(a >= b for a, b in zip(nodes, nodes[1:]))
        or (nodes and (nodes[0] < 0 or nodes[-1] >= size))):
      raise ValueError(f"node_sets[{t}]={nodes} must be {n} increasing node "
                       f"indices in 0..{size - 1} (scale {t} has n={n}).")
    out.append(nodes)
  if out[-1] != tuple(range(size)):
    raise ValueError(f"the last node set must be every node 0..{size - 1}, "
                     f"got {out[-1]}.")
  return tuple(out)


def check_scales(scales: Sequence[int], size: int) -> tuple[int, ...]:
  """Validates a scale schedule: strictly increasing positive ints ending at `size`."""
  scales = tuple(scales)
  if (not scales or any(not isinstance(n, int) or n < 1 for n in scales)
      or any(a >= b for a, b in zip(scales, scales[1:])) or scales[-1] != size):
    raise ValueError(f"scales must be strictly increasing positive ints ending at "
                     f"N={size}, got {scales}.")
  return scales
