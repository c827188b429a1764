"""NAS-Bench-201: 4-node cells with one of 5 operations on each of 6 edges.

String format (the benchmark's)::

    |nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|skip_connect~2|

node 1 = op(node 0); node 2 = op(node 0) + op(node 1); node 3 = op(node 0) +
op(node 1) + op(node 2). An architecture is the tuple of the 6 operation names
in string order: edges (1<-0), (2<-0), (2<-1), (3<-0), (3<-1), (3<-2).

Op-on-node encoding (DiffusionNAG's), N = 8 nodes, V = 7 types
(`OP_NAMES`): node 0 is the input, nodes 1..6 are the six edges in string
order, node 7 is the output. Adjacency (`ADJACENCY`, fixed)::

    0 -> 1, 2, 4       the edges leaving cell node 0
    1 -> 3, 5          (1<-0) feeds the edges leaving cell node 1
    2, 3 -> 6          (2<-0) and (2<-1) feed the edge (3<-2)
    4, 5, 6 -> 7       the edges into cell node 3 feed the output

Validity: DiffusionNAG's rule (node 0 input, node 7 output, nodes 1..6 one of
the five operations) and the fixed adjacency above.

Sub-architectures (PNAG's scales, n = 3..8 nodes): the input, the first
n - 2 edge nodes in string order, and the output (growth order 0, 7, 1, 2,
..., 6). Wiring: the fixed adjacency among those nodes, plus an edge to the
output from every edge node none of whose readers is present yet (so every
node lies on an input-to-output path; at n = 3 the cell is input -> op ->
output). Valid when node 0 is the input, the last the output, the others
operations, and the wiring is exactly that.

`enumerate()` lists all 15,625 cells in the official NAS-Bench-201 index
order; that order is a permutation fixed by the benchmark, shipped here as
`nb201_index_order.npy` (one uint16 base-5 code per index, built from the
public index -> arch_str table; see BUILD_NOTES.md).
"""

from __future__ import annotations

import functools
import os
import re

import jax.numpy as jnp
import numpy as np

from neuroprog.pnag.spaces import base

OPERATIONS = ("none", "skip_connect", "nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3")
OP_NAMES = ("input", "output") + OPERATIONS
EDGES = ((1, 0), (2, 0), (2, 1), (3, 0), (3, 1), (3, 2))   # (to, from), string order
NUM_NODES = 8


def _adjacency() -> np.ndarray:
  adj = np.zeros((NUM_NODES, NUM_NODES), np.float32)
  for k, (to, frm) in enumerate(EDGES):
    node = k + 1
    if frm == 0:
      adj[0, node] = 1
    for k2, (to2, frm2) in enumerate(EDGES):   # edges leaving `to` read this edge
      if frm2 == to:
        adj[node, k2 + 1] = 1
    if to == 3:
      adj[node, NUM_NODES - 1] = 1
  return adj


ADJACENCY = _adjacency()
_TOKEN = re.compile(r"([^|~+]*)~([^|+]*)")


class NB201(base.SearchSpace):
  """The NAS-Bench-201 space (15,625 cells). Architectures: 6-tuples of op names."""
  name = "nb201"
  op_names = OP_NAMES
  num_nodes = NUM_NODES

  @property
  def size(self) -> int:
    return len(OPERATIONS) ** len(EDGES)

  def from_string(self, s: str) -> tuple[str, ...]:
    if not isinstance(s, str):
      raise ValueError(f"NB201 string must be a str, got {type(s).__name__}.")
    parts, pos = s.split("+"), 0
    if len(parts) != 3:
      raise ValueError(f"NB201 string {s!r} has {len(parts)} node groups "
                       "separated by '+'; a cell has 3.")
    ops = []
    for node, part in enumerate(parts, start=1):
      if not (part.startswith("|") and part.endswith("|")) or len(part) < 2:
        raise ValueError(f"NB201 node group {part!r} at position {pos} of {s!r} "
                         "must be '|op~j|...|'.")
      tokens = part[1:-1].split("|")
      if len(tokens) != node:
        raise ValueError(f"NB201 node group {part!r} at position {pos} of {s!r} "
                         f"has {len(tokens)} edges; node {node} has {node}.")
      tpos = pos + 1
      for j, tok in enumerate(tokens):
        m = _TOKEN.fullmatch(tok)
        if m is None:
          raise ValueError(f"NB201 token {tok!r} at position {tpos} of {s!r} is "
                           "not 'op~input'.")
        op, src = m.groups()
        if op not in OPERATIONS:
          raise ValueError(f"NB201 unknown operation {op!r} at position {tpos} of "
                           f"{s!r}; allowed: {list(OPERATIONS)}.")
        if src != str(j):
          raise ValueError(f"NB201 token {tok!r} at position {tpos} of {s!r} reads "
                           f"input {src!r}; edge {j} of node {node} reads input {j}.")
        ops.append(op)
        tpos += len(tok) + 1
      pos += len(part) + 1
    return tuple(ops)

  def to_string(self, arch) -> str:
    self._check(arch)
    o = arch
    return (f"|{o[0]}~0|+|{o[1]}~0|{o[2]}~1|+|{o[3]}~0|{o[4]}~1|{o[5]}~2|")

  def project(self, op_logits_BxNxV, adj_logits_BxNxN):
    """See `SearchSpace.project`: input and output at the ends, the most
    probable of the five operations on every edge node, the fixed wiring."""
    self._check_logits(op_logits_BxNxV, adj_logits_BxNxN)
    del adj_logits_BxNxN   # the wiring is the same for every cell
    b = op_logits_BxNxV.shape[0]
    mid = 2 + jnp.argmax(op_logits_BxNxV[:, 1:-1, 2:], -1).astype(jnp.int32)
    ops = jnp.concatenate([jnp.zeros((b, 1), jnp.int32), mid, jnp.ones((b, 1), jnp.int32)], 1)
    return ops, jnp.broadcast_to(jnp.asarray(ADJACENCY), (b, NUM_NODES, NUM_NODES))

  def _check(self, arch) -> None:
    if (not isinstance(arch, tuple) or len(arch) != len(EDGES)
        or any(o not in OPERATIONS for o in arch)):
      raise ValueError(f"NB201 architecture must be a 6-tuple of {list(OPERATIONS)}, "
                       f"got {arch!r}.")

  def encode_indices(self, arch):
    self._check(arch)
    idx = np.array([0] + [OP_NAMES.index(o) for o in arch] + [1], np.int32)
    return idx, ADJACENCY.copy()

  def decode_indices(self, ops_N, adj_NxN):
    if ops_N[0] != 0 or ops_N[-1] != 1:
      raise ValueError("node 0 must be 'input' and node 7 'output'.")
    mid = ops_N[1:-1]
    if np.any(mid < 2):
      raise ValueError(f"nodes 1..6 must be operations, got "
                       f"{[OP_NAMES[i] for i in mid]}.")
    return tuple(OP_NAMES[i] for i in mid)

  @property
  def growth_order(self):
    return (0, NUM_NODES - 1) + tuple(range(1, NUM_NODES - 1))

  def sub_graph(self, ops_BxN, adj_BxNxN, n):
    """Induced subgraph plus an edge dangling edge node -> output (module doc)."""
    ops, adj = super().sub_graph(ops_BxN, adj_BxNxN, n)
    if n == NUM_NODES:
      return ops, adj
    xp = np if isinstance(adj, np.ndarray) else jnp
    nodes = np.asarray(self.sub_nodes(n))
    reads_full = adj_BxNxN[:, nodes[1:-1]].sum(-1) > 0        # [B, n-2]
    reads_sub = adj[:, 1:-1].sum(-1) > 0
    dangling = (reads_full & ~reads_sub).astype(adj.dtype)
    to_out = np.zeros((n,), np.float32)
    to_out[-1] = 1.0
    pad = xp.concatenate([xp.zeros_like(dangling[:, :1]), dangling,
                          xp.zeros_like(dangling[:, :1])], 1)   # [B, n]
    return ops, xp.maximum(adj, pad[:, :, None] * to_out)

  def _complete_sub(self, ops_n, adj_nxn, n):
    ops = np.full(NUM_NODES, OP_NAMES.index("none"), np.int32)
    ops[[0, NUM_NODES - 1]] = (0, 1)
    ops[list(self.sub_nodes(n))] = ops_n
    return ops, ADJACENCY.copy()

  def sample(self, rng, n):
    codes = base.as_rng(rng).integers(0, self.size, n)
    return [self.from_code(int(c)) for c in codes]

  # ---- the benchmark's index ----------------------------------------------
  @staticmethod
  def to_code(arch) -> int:
    """Base-5 code: sum of OPERATIONS.index(op_k) * 5**(5 - k)."""
    return sum(OPERATIONS.index(o) * 5 ** (5 - k) for k, o in enumerate(arch))

  @staticmethod
  def from_code(code: int) -> tuple[str, ...]:
    if not 0 <= code < 5 ** 6:
      raise ValueError(f"NB201 code {code} outside 0..{5 ** 6 - 1}.")
    return tuple(OPERATIONS[(code // 5 ** (5 - k)) % 5] for k in range(6))

  def enumerate(self) -> list[tuple[str, ...]]:
    """All 15,625 architectures, position i = NAS-Bench-201 index i."""
    return [self.from_code(int(c)) for c in _index_order()]

  def index_of(self, arch) -> int:
    """The NAS-Bench-201 index of `arch`."""
    self._check(arch)
    return int(_code_to_index()[self.to_code(arch)])


@functools.lru_cache(maxsize=1)
def _index_order() -> np.ndarray:
  path = os.path.join(os.path.dirname(__file__), "nb201_index_order.npy")
  order = np.load(path)
  if order.shape != (5 ** 6,) or len(np.unique(order)) != 5 ** 6:
    raise RuntimeError(f"{path} is damaged: expected a permutation of 0..15624.")
  return order


@functools.lru_cache(maxsize=1)
def _code_to_index() -> np.ndarray:
  inv = np.empty(5 ** 6, np.int64)
  inv[_index_order()] = np.arange(5 ** 6)
  return inv
