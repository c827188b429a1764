"""Neural graphs: a target network S* drawn as a graph over its neurons.

One node per neuron (input units, hidden units, residual-stream channels,
layer-norm outputs, per-head query/key/value channels, output units), one
edge per connection. A node carries its bias, an edge its weight: `node_slot`
and `edge_slot` index θ (-1 where an element carries no parameter). Every θ
index appears exactly once across the two arrays.

A tiny MLP, widths (2, 3, 1)::

    in0 ─┐  w[0,0..2]   ┌─ h0 (b0[0]) ─┐  w1[0,0]
         ├──────────────┼─ h1 (b0[1]) ─┼──────────── out0 (b1[0])
    in1 ─┘  w[1,0..2]   └─ h2 (b0[2]) ─┘
    (slot -1)           (hidden: one orbit)          (slot of b1)

The input→hidden edges of in0 form one orbit (hidden units permute), those of
in1 another; the three hidden→out edges one orbit.

A 1-layer pre-LN Transformer (d_model channels, H heads of C channels)::

    tok_v ──W_E[v,:]──▶ res0[j] ──g1[j]──▶ ln1[j] (b1) ──W_q──▶ q[h,c] (b_q)
    pos_l ──W_P[l,:]──▶    │                     ├──W_k──▶ k[h,c] (b_k) ◀─ q[h,c] (fixed, pairs q/k channel c)
                           │                     └──W_v──▶ v[h,c] (b_v) ──W_O──▶ res1[j] (b_O)
                           └──────────── fixed 1 ────────────────────────────────▶ res1[j]
    res1 ─g2─▶ ln2 (b) ─W1─▶ mlp[m] (b1) ─W2─▶ res2[j] (b2) ◀─fixed 1─ res1
    res2 ─gf─▶ lnf (b) ─W_U─▶ out[c] (b_U)

A CNN draws channels as nodes: input channels, each conv layer's channels
(bias on the node; they permute like hidden units), the outputs. The kernel
between input channel i and output channel j is one edge carrying a vector,
its k (1D) or k x k (2D) spatial entries, contiguous in θ (`edge_size`,
`edge_theta_index`); the head's weights are scalar edges.

Layer-norm gains are the diagonal edges res[j]→ln[j]; token and position
embeddings are edges from input nodes; residual paths are fixed edges of
weight 1 (slot -1). The seq2seq Transformer stacks an encoder drawn this way
(plus its final norm, the memory) and a decoder whose cross-attention keys and
values are edges from the memory nodes.

Groups. Each node block and edge block has a role (layer and kind); with
`grouping="role"` the group is the role. With `grouping="orbit"` the groups are
the orbits of the network's permutation symmetries (see `symmetry`): elements
that some automorphism maps onto each other share a group, others do not; e.g.
each token's embedding edges form their own group, because token ids are not
interchangeable, while the residual channels are.

Construction is plain numpy, done once per spec (cached) outside `jit`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Optional

import jraph
import numpy as np

from neuroprog import specs as specs_lib
from neuroprog.programs import layout as layout_lib

GROUPINGS = ("orbit", "role")
NODE_PE_DIM = 10
EDGE_PE_DIM = 2 * NODE_PE_DIM
_PE_FREQS = (1.0, 0.3)
# Columns of a node's positional encoding, by feature family: sin/cos of the
# index along both block axes, then the ramps (index / axis length).
PE_FEATURES = {"sincos": tuple(range(0, 8)), "ramp": (8, 9)}
DEFAULT_PE_FEATURES = "sincos+ramp"


@dataclasses.dataclass(frozen=True)
class Block:
  """A block of nodes with one role.

  ids: int array of node ids with the block's natural shape, e.g. (H, C).
  sym: one entry per axis: the name of the permutation factor acting on that
    axis, or None if the axis is fixed. An axis' factor is keyed by the name
    and the indices along the permuted axes before it, so sym=("head", "qk")
    means heads permute, and each head permutes its own q/k channels.
  """
  name: str
  ids: np.ndarray
  sym: tuple[Optional[str], ...]


def _all_pairs(src, dst):
  """(senders, receivers) of every pair src x dst, src-major (θ's C order)."""
  return np.repeat(src.reshape(-1), dst.size), np.tile(dst.reshape(-1), src.size)


class _Builder:
  """Accumulates nodes and edges in network order (numpy, static)."""

  def __init__(self, spec):
    self.entries = layout_lib.entries_by_name(spec)
    self.blocks: list[Block] = []
    self.roles: list[str] = []
    self._node_parts = []  # (role, slot[n], local[n, 2])
    self._edge_parts = []  # (role, senders, receivers, slot, size)
    self.n_nodes = 0

  def _role(self, name):
    if name not in self.roles:
      self.roles.append(name)
    return self.roles.index(name)

  def _slots(self, tensor, shape):
    if tensor is None:
      return np.full(math.prod(shape), -1, np.int64)
    e = self.entries[tensor]
    if e.shape != tuple(shape):
      raise AssertionError(f"{tensor}: layout {e.shape} vs graph {shape}")
    return e.offset + np.arange(e.size)

  def nodes(self, name, shape, sym=None, bias=None):
    shape = tuple(shape)
    n = math.prod(shape)
    ids = self.n_nodes + np.arange(n).reshape(shape)
    self.n_nodes += n
    local = np.zeros((n, 4), np.int64)
    idx = np.indices(shape).reshape(len(shape), n).T
    local[:, :idx.shape[1]] = idx
    local[:, 2:2 + len(shape)] = shape
    self._node_parts.append((self._role(name), self._slots(bias, shape), local))
    block = Block(name, ids, tuple(sym) if sym else (None,) * len(shape))
    self.blocks.append(block)
    return ids

  def dense(self, name, src, dst, weight=None):
    """All pairs src x dst; weight tensor has shape src.shape + dst.shape."""
    s, r = _all_pairs(src, dst)
    self._edge_parts.append(
        (self._role(name), s, r, self._slots(weight, src.shape + dst.shape), 1))

  def kernels(self, name, src, dst, weight):
    """All pairs src x dst, each edge carrying a vector: the kernel
    weight[i, j, ...] (weight has shape src.shape + dst.shape + kernel, so the
    kernel's entries are contiguous in θ; the edge's slot is the first)."""
    e = self.entries[weight]
    pairs = src.size * dst.size
    if e.shape[:2] != src.shape + dst.shape:
      raise AssertionError(f"{weight}: layout {e.shape} vs graph {src.shape + dst.shape}")
    size = e.size // pairs
    s, r = _all_pairs(src, dst)
    self._edge_parts.append(
        (self._role(name), s, r, e.offset + size * np.arange(pairs), size))

  def diag(self, name, src, dst, weight=None):
    """Elementwise pairs src[i] -> dst[i]; weight has shape src.shape."""
    assert src.shape == dst.shape
    self._edge_parts.append((self._role(name), src.reshape(-1),
                             dst.reshape(-1), self._slots(weight, src.shape), 1))

  def arrays(self):
    node_role = np.concatenate(
        [np.full(len(s), r) for r, s, _ in self._node_parts])
    node_slot = np.concatenate([s for _, s, _ in self._node_parts])
    node_local = np.concatenate([l for _, _, l in self._node_parts])
    edge_role = np.concatenate(
        [np.full(len(s), r) for r, s, _, _, _ in self._edge_parts])
    senders = np.concatenate([s for _, s, _, _, _ in self._edge_parts])
    receivers = np.concatenate([r for _, _, r, _, _ in self._edge_parts])
    edge_slot = np.concatenate([w for _, _, _, w, _ in self._edge_parts])
    edge_size = np.concatenate([np.full(len(s), k) for _, s, _, _, k in self._edge_parts])
    return (node_role, node_slot, node_local, edge_role, senders, receivers,
            edge_slot, edge_size)


def _ln(b, res, name, sym):
  ln = b.nodes(name, res.shape, sym, bias=f"{name}/b")
  b.diag(f"{name}/g", res, ln, weight=f"{name}/g")
  return ln


def _attention(b, res, x_q, x_kv, prefix, stream):
  """Q/K/V/O of one attention module; returns the new residual nodes."""
  e = b.entries[f"{prefix}/wq"]
  _, h, c = e.shape
  head = f"{prefix}/head"
  qk, vo = f"{prefix}/qk", f"{prefix}/vo"
  q = b.nodes(f"{prefix}/q", (h, c), (head, qk), bias=f"{prefix}/bq")
  k = b.nodes(f"{prefix}/k", (h, c), (head, qk), bias=f"{prefix}/bk")
  v = b.nodes(f"{prefix}/v", (h, c), (head, vo), bias=f"{prefix}/bv")
  b.dense(f"{prefix}/wq", x_q, q, weight=f"{prefix}/wq")
  b.dense(f"{prefix}/wk", x_kv, k, weight=f"{prefix}/wk")
  b.dense(f"{prefix}/wv", x_kv, v, weight=f"{prefix}/wv")
  # q·k pairs channel c of q with channel c of k: a fixed edge lets messages
  # carry that pairing (it is what ties their permutations together).
  b.diag(f"{prefix}/qk_pair", q, k)
  out = b.nodes(f"{prefix}/out", res.shape, (stream,), bias=f"{prefix}/bo")
  b.dense(f"{prefix}/wo", v, out, weight=f"{prefix}/wo")
  b.diag(f"{prefix}/residual", res, out)
  return out


def _mlp(b, res, x, prefix, stream):
  m = b.entries[f"{prefix}/b1"].shape[0]
  hid = b.nodes(f"{prefix}/hidden", (m,), (f"{prefix}/hidden",),
                bias=f"{prefix}/b1")
  b.dense(f"{prefix}/w1", x, hid, weight=f"{prefix}/w1")
  out = b.nodes(f"{prefix}/out", res.shape, (stream,), bias=f"{prefix}/b2")
  b.dense(f"{prefix}/w2", hid, out, weight=f"{prefix}/w2")
  b.diag(f"{prefix}/residual", res, out)
  return out


def _build_mlp(b, spec: specs_lib.MLPSpec):
  x = b.nodes("input", (spec.d_in,))
  n = len(spec.widths) - 1
  for i in range(n):
    last = i == n - 1
    name = "output" if last else f"l{i}/hidden"
    y = b.nodes(name, (spec.widths[i + 1],), None if last else (name,),
                bias=f"l{i}/b")
    b.dense(f"l{i}/w", x, y, weight=f"l{i}/w")
    x = y


def _build_transformer(b, spec: specs_lib.TransformerSpec):
  d, stream = spec.d_model, "res"
  tok = b.nodes("input/tok", (spec.vocab_size,))
  pos = b.nodes("input/pos", (spec.seq_len,))
  res = b.nodes("res0", (d,), (stream,))
  b.dense("embed/tok", tok, res, weight="embed/tok")
  b.dense("embed/pos", pos, res, weight="embed/pos")
  for l in range(spec.n_layers):
    p = f"L{l}"
    if spec.ln == "pre":
      x = _ln(b, res, f"{p}/ln1", (stream,))
      res = _attention(b, res, x, x, f"{p}/attn", stream)
      x = _ln(b, res, f"{p}/ln2", (stream,))
      res = _mlp(b, res, x, f"{p}/mlp", stream)
    elif spec.ln == "post":
      res = _attention(b, res, res, res, f"{p}/attn", stream)
      res = _ln(b, res, f"{p}/ln1", (stream,))
      res = _mlp(b, res, res, f"{p}/mlp", stream)
      res = _ln(b, res, f"{p}/ln2", (stream,))
    else:
      res = _attention(b, res, res, res, f"{p}/attn", stream)
      res = _mlp(b, res, res, f"{p}/mlp", stream)
  if spec.ln == "pre":
    res = _ln(b, res, "ln_f", (stream,))
  out = b.nodes("output", (spec.n_classes,), bias="unembed/b")
  b.dense("unembed/w", res, out, weight="unembed/w")


def _build_seq2seq(b, spec: specs_lib.Seq2SeqSpec):
  d = spec.d_model
  tok = b.nodes("enc/input/tok", (spec.vocab_size,))
  pos = b.nodes("enc/input/pos", (spec.max_len,))
  res = b.nodes("enc/res0", (d,), ("enc/res",))
  b.dense("enc/embed/tok", tok, res, weight="enc/embed/tok")
  b.dense("enc/embed/pos", pos, res, weight="enc/embed/pos")
  for l in range(spec.n_enc_layers):
    p = f"enc/L{l}"
    x = _ln(b, res, f"{p}/ln1", ("enc/res",))
    res = _attention(b, res, x, x, f"{p}/attn", "enc/res")
    x = _ln(b, res, f"{p}/ln2", ("enc/res",))
    res = _mlp(b, res, x, f"{p}/mlp", "enc/res")
  memory = _ln(b, res, "enc/ln_f", ("enc/res",))
  dpos = b.nodes("dec/input/pos", (spec.max_len,))
  g = b.nodes("dec/res0", (d,), ("dec/res",))
  b.dense("dec/embed/pos", dpos, g, weight="dec/embed/pos")
  for l in range(spec.n_dec_layers):
    p = f"dec/L{l}"
    x = _ln(b, g, f"{p}/ln1", ("dec/res",))
    g = _attention(b, g, x, x, f"{p}/attn", "dec/res")
    x = _ln(b, g, f"{p}/lnx", ("dec/res",))
    g = _attention(b, g, x, memory, f"{p}/cross", "dec/res")
    x = _ln(b, g, f"{p}/ln2", ("dec/res",))
    g = _mlp(b, g, x, f"{p}/mlp", "dec/res")
  g = _ln(b, g, "dec/ln_f", ("dec/res",))
  out = b.nodes("output", (spec.vocab_size,), bias="unembed/b")
  b.dense("unembed/w", g, out, weight="unembed/w")


def _build_cnn(b, spec: specs_lib.CNNSpec):
  x = b.nodes("input", (spec.in_channels,))
  for l in range(len(spec.channels)):
    # Channels of a conv layer permute like an MLP's hidden units; the
    # kernel positions inside an edge's vector never move.
    name = f"conv{l}/channel"
    y = b.nodes(name, (spec.channels[l],), (name,), bias=f"conv{l}/b")
    b.kernels(f"conv{l}/w", x, y, weight=f"conv{l}/w")
    x = y
  out = b.nodes("output", (spec.n_out,), bias="head/b")
  b.dense("head/w", x, out, weight="head/w")


def pe_columns(features: str = DEFAULT_PE_FEATURES) -> tuple[np.ndarray, np.ndarray]:
  """Column indices of the positional-encoding families named in `features`.

  Args:
    features: "+"-joined names from `PE_FEATURES` ("sincos", "ramp"), e.g.
      "sincos+ramp" (all NODE_PE_DIM columns) or "ramp".

  Returns:
    (node_cols int64[P], edge_cols int64[2P]): pass as
    `ng.node_pe[:, node_cols]` and `ng.edge_pe[:, edge_cols]` (the edge's
    sender columns, then its receiver columns). Plain numpy, outside jit.

  Raises:
    ValueError: an empty, unknown or repeated name.
  """
  names = features.split("+") if isinstance(features, str) else None
  if (not names or len(set(names)) != len(names)
      or any(n not in PE_FEATURES for n in names)):
    raise ValueError(f"pe_features={features!r}; allowed: a '+'-joined, "
                     f"non-repeating selection of {list(PE_FEATURES)}, "
                     f"e.g. {DEFAULT_PE_FEATURES!r} or 'ramp'.")
  node_cols = np.array(sorted(c for n in names for c in PE_FEATURES[n]))
  return node_cols, np.concatenate([node_cols, node_cols + NODE_PE_DIM])


def _sincos(i):
  i = i.astype(np.float32)[:, None]
  f = np.asarray(_PE_FREQS, np.float32)[None]
  return np.concatenate([np.sin(i * f), np.cos(i * f)], axis=1)


@dataclasses.dataclass(frozen=True, eq=False)
class NeuralGraph:
  """The neural graph of one spec. All arrays are static numpy.

  Attributes (N nodes, E edges, T = num_params(spec)):
    spec: the spec it draws.
    grouping: "orbit" or "role".
    graph: jraph.GraphsTuple, one graph: nodes = node_pe float32[N, 10],
      edges = edge_pe float32[E, 20], senders/receivers int32[E] (direction
      of the forward pass), n_node [1], n_edge [1], globals None.
    node_slot: int32[N], θ index of the node's bias or -1.
    edge_slot: int32[E], θ index of the edge's weight or -1 (input-free fixed
      edges: residual paths of weight 1, q/k channel pairings). An edge that
      carries a vector (a conv kernel between two channels) starts there.
    edge_size: int32[E], how many consecutive θ entries from edge_slot the
      edge carries: 1 for a scalar weight (and fixed edges), k (1D) or k^2
      (2D) for a kernel. `edge_theta_index` lists them.
    node_group, edge_group: int32[N], int32[E], group ids in
      0..num_node_groups-1 and 0..num_edge_groups-1, numbered by first
      appearance.
    node_role, edge_role: int32[N], int32[E] ids into `roles` (names such as
      "L0/attn/q" for nodes, "L0/attn/wq" for edges).
    node_pe, edge_pe: views of graph.nodes / graph.edges, the positional
      encodings float32[N, 10] / [E, 20]: sin/cos
      (frequencies 1, 0.3) of the node's index along each of up to two block
      axes, and each index as a fraction of its axis length (columns by
      family: `PE_FEATURES`, selected with `pe_columns`); an edge's is
      [pe(sender), pe(receiver)]. They break
      the symmetry on purpose; meta-learners add them at initialization only.
    blocks: the node blocks with their symmetry axes (used by `symmetry`).
  """
  spec: specs_lib.Spec
  grouping: str
  graph: jraph.GraphsTuple
  node_slot: np.ndarray
  edge_slot: np.ndarray
  node_group: np.ndarray
  edge_group: np.ndarray
  node_role: np.ndarray
  edge_role: np.ndarray
  roles: tuple[str, ...]
  blocks: tuple[Block, ...]
  edge_size: np.ndarray

  @property
  def max_edge_size(self) -> int:
    """K, the longest vector an edge carries (1 unless the target has kernels)."""
    return int(self.edge_size.max()) if len(self.edge_size) else 1

  def edge_theta_index(self) -> np.ndarray:
    """int64[E, K]: θ indices carried by each edge, -1 past its size or where
    it carries nothing (K = max_edge_size)."""
    k = np.arange(self.max_edge_size)
    idx = self.edge_slot[:, None].astype(np.int64) + k
    return np.where((self.edge_slot[:, None] >= 0) & (k < self.edge_size[:, None]), idx, -1)

  @property
  def node_pe(self) -> np.ndarray:
    """float32[N, 10]: `graph.nodes`."""
    return np.asarray(self.graph.nodes)

  @property
  def edge_pe(self) -> np.ndarray:
    """float32[E, 20]: `graph.edges`."""
    return np.asarray(self.graph.edges)

  @property
  def senders(self) -> np.ndarray:
    return np.asarray(self.graph.senders)

  @property
  def receivers(self) -> np.ndarray:
    return np.asarray(self.graph.receivers)

  @property
  def num_nodes(self) -> int:
    return len(self.node_slot)

  @property
  def num_edges(self) -> int:
    return len(self.edge_slot)

  @property
  def num_params(self) -> int:
    return layout_lib.num_params(self.spec)

  def groups(self, grouping: str) -> tuple[np.ndarray, np.ndarray]:
    """(node_group int32[N], edge_group int32[E]) of `grouping` on this same
    graph: its own arrays for its own grouping, else computed from its roles,
    blocks, senders and receivers (a role group is a union of orbits)."""
    if grouping not in GROUPINGS:
      raise ValueError(f"Unknown grouping {grouping!r}; allowed: {list(GROUPINGS)}.")
    if grouping == self.grouping:
      return self.node_group, self.edge_group
    return _groups(grouping, self.node_role, self.edge_role, self.blocks,
                   self.senders, self.receivers, self.num_nodes)

  @property
  def num_node_groups(self) -> int:
    return int(self.node_group.max()) + 1

  @property
  def num_edge_groups(self) -> int:
    return int(self.edge_group.max()) + 1


def _relabel(labels):
  """Group ids 0..G-1 in order of first appearance."""
  _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
  order = np.argsort(np.argsort(first))
  return order[inverse].astype(np.int32)


def _groups(grouping, node_role, edge_role, blocks, senders, receivers, n_nodes):
  """(node_group int32[N], edge_group int32[E]) of a grouping, numbered by
  first appearance."""
  if grouping == "role":
    return _relabel(node_role), _relabel(edge_role)
  from neuroprog.graphs import symmetry  # pylint: disable=g-import-not-at-top
  node_group, edge_group = symmetry.orbits(blocks, senders, receivers, n_nodes)
  # Orbits never cross roles (blocks map to themselves); keep roles apart
  # anyway so that fixed and parameter-carrying edges are never mixed.
  return (_relabel(node_role * (n_nodes + 1) + node_group),
          _relabel(edge_role * (len(senders) + 1) + edge_group))


@functools.lru_cache(maxsize=None)
def neural_graph(spec: specs_lib.Spec, grouping: str = "orbit") -> NeuralGraph:
  """Builds the neural graph of `spec` (cached per (spec, grouping)).

  Args:
    spec: MLPSpec, TransformerSpec, Seq2SeqSpec or CNNSpec.
    grouping: "orbit" (groups = orbits of the permutation symmetries) or
      "role" (one group per layer and role).

  Returns:
    A NeuralGraph; see its docstring for the arrays and their shapes. Numpy
    only: build it outside jit, close over it inside.
  """
  if grouping not in GROUPINGS:
    raise ValueError(f"Unknown grouping {grouping!r}; allowed: {list(GROUPINGS)}.")
  b = _Builder(spec)
  if isinstance(spec, specs_lib.MLPSpec):
    _build_mlp(b, spec)
  elif isinstance(spec, specs_lib.TransformerSpec):
    _build_transformer(b, spec)
  elif isinstance(spec, specs_lib.Seq2SeqSpec):
    _build_seq2seq(b, spec)
  elif isinstance(spec, specs_lib.CNNSpec):
    _build_cnn(b, spec)
  else:
    raise ValueError(
        f"Unknown spec type {type(spec).__name__}; allowed: MLPSpec, "
        "TransformerSpec, Seq2SeqSpec, CNNSpec.")
  (node_role, node_slot, node_local, edge_role, senders, receivers,
   edge_slot, edge_size) = b.arrays()
  # sin/cos of the index along each block axis, plus the index as a fraction
  # of the axis length (a ramp: lets a model compare positions, e.g. "input
  # i < n", in a way that extends to unseen intents).
  ramp = node_local[:, :2] / np.maximum(node_local[:, 2:4], 1)
  node_pe = np.concatenate(
      [_sincos(node_local[:, 0]), _sincos(node_local[:, 1]), ramp], 1)
  edge_pe = np.concatenate([node_pe[senders], node_pe[receivers]], 1)
  n_nodes, n_edges = len(node_slot), len(edge_slot)
  graph = jraph.GraphsTuple(
      nodes=node_pe.astype(np.float32), edges=edge_pe.astype(np.float32),
      senders=senders.astype(np.int32), receivers=receivers.astype(np.int32),
      n_node=np.array([n_nodes], np.int32), n_edge=np.array([n_edges], np.int32),
      globals=None)
  node_group, edge_group = _groups(grouping, node_role, edge_role, tuple(b.blocks),
                                   senders, receivers, n_nodes)
  return NeuralGraph(
      spec=spec, grouping=grouping, graph=graph,
      node_slot=node_slot.astype(np.int32), edge_slot=edge_slot.astype(np.int32),
      node_group=node_group, edge_group=edge_group,
      node_role=node_role.astype(np.int32), edge_role=edge_role.astype(np.int32),
      roles=tuple(b.roles), blocks=tuple(b.blocks), edge_size=edge_size.astype(np.int32))
