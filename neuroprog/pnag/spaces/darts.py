"""DARTS: a normal and a reduction cell, 4 intermediate nodes each.

Intermediate node i (0..3) sums two operations, each applied to one of its
inputs j in 0..i+1 (0 = c_{k-2}, 1 = c_{k-1}, j >= 2 = intermediate j-2);
the cell output concatenates the 4 intermediate nodes. The DARTS derivation
rules, used as validity: the two inputs of a node are distinct and neither
operation is `none`.

String format (DARTS's genotypes)::

    Genotype(normal=[('sep_conv_3x3', 0), ('sep_conv_3x3', 1), ...8 pairs],
             normal_concat=range(2, 6), reduce=[...8 pairs], reduce_concat=range(2, 6))

`concat` may also be written [2, 3, 4, 5]; any other value is rejected.
An architecture is a `Genotype` of two 8-tuples of (op, input) pairs, pairs
2i and 2i+1 belonging to node i. `canonical` sorts the two pairs of each node
(their sum does not depend on the order).

Op-on-node encoding, N = 22 nodes: per cell (offset 0 normal, 11 reduce)
node 0 = c_{k-2}, node 1 = c_{k-1}, nodes 2 + 2i, 3 + 2i = the two operations
of intermediate i, node 10 = output. An operation reading input j < 2 has the
edge j -> it; one reading intermediate m has edges from both operations of m;
all 8 operations feed the output. V = 11 types: `c_k-2`, `c_k-1`, `output`
and the 8 DARTS primitives.

Sub-architectures (PNAG's scales, n = 3..22 nodes): the normal cell grows
first, then the reduction cell; each cell brings its two inputs and its
output, then its operations in genotype order (growth order 0, 1, 10, 2, ...,
9, 11, 12, 21, 13, ..., 20). The wiring is the induced subgraph: an
operation reads a cell input or both operations of an earlier intermediate
node (already present) and feeds its cell's output. Valid when every present
node has its fixed type or a primitive other than `none`, every present
operation reads one allowed input, the two operations of an intermediate
node (when both are present) read distinct inputs, and the wiring is that of
those choices. At n = 3 the normal cell has no operation yet.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from neuroprog.pnag.spaces import base

PRIMITIVES = ("none", "max_pool_3x3", "avg_pool_3x3", "skip_connect",
              "sep_conv_3x3", "sep_conv_5x5", "dil_conv_3x3", "dil_conv_5x5")
OP_NAMES = ("c_k-2", "c_k-1", "output") + PRIMITIVES
NUM_INTERMEDIATE = 4
CELL_NODES = 2 + 2 * NUM_INTERMEDIATE + 1
NUM_NODES = 2 * CELL_NODES
_FIRST_PRIMITIVE = 3


class Genotype(NamedTuple):
  normal: tuple[tuple[str, int], ...]     # 8 (op, input) pairs
  reduce: tuple[tuple[str, int], ...]     # 8 (op, input) pairs


_PAIR = re.compile(r"\(\s*'([^']*)'\s*,\s*(-?\d+)\s*\)")
_CONCAT = re.compile(r"range\(\s*2\s*,\s*6\s*\)|\[\s*2\s*,\s*3\s*,\s*4\s*,\s*5\s*\]")
_FIELD = re.compile(r"\s*(normal|normal_concat|reduce|reduce_concat)\s*=\s*")


def _cell_sources(i: int) -> list[int]:
  return list(range(i + 2))


class DARTS(base.SearchSpace):
  """The DARTS space (about 1e18 genotypes up to pair order)."""
  name = "darts"
  op_names = OP_NAMES
  num_nodes = NUM_NODES

  @property
  def size(self) -> int:
    per_cell = 1
    for i in range(NUM_INTERMEDIATE):
      n_in = i + 2
      per_cell *= n_in * (n_in - 1) // 2 * (len(PRIMITIVES) - 1) ** 2
    return per_cell ** 2

  # ---- strings ------------------------------------------------------------
  def from_string(self, s: str) -> Genotype:
    if not isinstance(s, str):
      raise ValueError(f"DARTS genotype must be a str, got {type(s).__name__}.")
    text = s.strip()
    if not (text.startswith("Genotype(") and text.endswith(")")):
      raise ValueError(f"DARTS genotype {s!r} must read 'Genotype(normal=[...], "
                       "normal_concat=..., reduce=[...], reduce_concat=...)'.")
    offset = s.index("Genotype(") + len("Genotype(")
    body, pos, fields = s[offset:s.rindex(")")], 0, {}
    while pos < len(body):
      m = _FIELD.match(body, pos)
      if m is None:
        raise ValueError(f"DARTS genotype: unexpected token {body[pos:pos + 20]!r} at "
                         f"position {offset + pos} of {s!r}.")
      name, pos = m.group(1), m.end()
      if name in fields:
        raise ValueError(f"DARTS genotype: field {name!r} repeated at position "
                         f"{offset + m.start(1)}.")
      if name.endswith("concat"):
        c = _CONCAT.match(body, pos)
        if c is None:
          raise ValueError(f"DARTS genotype: {name} at position {offset + pos} must be "
                           f"range(2, 6) or [2, 3, 4, 5], got {body[pos:pos + 16]!r}.")
        fields[name], pos = True, c.end()
      else:
        if body[pos:pos + 1] != "[":
          raise ValueError(f"DARTS genotype: {name} at position {offset + pos} must be "
                           "a list '[...]'.")
        end = body.find("]", pos)
        if end < 0:
          raise ValueError(f"DARTS genotype: {name} list at position {offset + pos} "
                           "is not closed.")
        fields[name] = self._parse_pairs(body[pos + 1:end], offset + pos + 1, name, s)
        pos = end + 1
      m = re.compile(r"\s*(,|$)").match(body, pos)
      if m is None or (m.group(1) == "" and m.end() < len(body)):
        raise ValueError(f"DARTS genotype: unexpected token {body[pos:pos + 20]!r} at "
                         f"position {offset + pos} of {s!r}.")
      pos = m.end()
    missing = {"normal", "normal_concat", "reduce", "reduce_concat"} - set(fields)
    if missing:
      raise ValueError(f"DARTS genotype {s!r} lacks field(s) {sorted(missing)}.")
    g = Genotype(fields["normal"], fields["reduce"])
    self._check(g)
    return g

  def _parse_pairs(self, text, base_pos, name, s):
    pairs, pos = [], 0
    while True:
      while pos < len(text) and text[pos] in " \t\n,":
        pos += 1
      if pos >= len(text):
        break
      m = _PAIR.match(text, pos)
      if m is None:
        raise ValueError(f"DARTS genotype: {name} token {text[pos:pos + 24]!r} at "
                         f"position {base_pos + pos} is not ('op', input).")
      op, j = m.group(1), int(m.group(2))
      k = len(pairs)
      if op not in PRIMITIVES or op == "none":
        raise ValueError(f"DARTS genotype: {name} operation {op!r} at position "
                         f"{base_pos + m.start(1)}; allowed: {list(PRIMITIVES[1:])}.")
      if k < 2 * NUM_INTERMEDIATE and j not in _cell_sources(k // 2):
        raise ValueError(f"DARTS genotype: {name} input {j} at position "
                         f"{base_pos + m.start(2)} for node {k // 2}; allowed: "
                         f"{_cell_sources(k // 2)}.")
      pairs.append((op, j))
      pos = m.end()
    if len(pairs) != 2 * NUM_INTERMEDIATE:
      raise ValueError(f"DARTS genotype: {name} has {len(pairs)} (op, input) pairs; "
                       f"a cell has {2 * NUM_INTERMEDIATE}.")
    return tuple(pairs)

  def to_string(self, g: Genotype) -> str:
    self._check(g)
    fmt = lambda pairs: "[" + ", ".join(f"('{o}', {j})" for o, j in pairs) + "]"
    return (f"Genotype(normal={fmt(g.normal)}, normal_concat=range(2, 6), "
            f"reduce={fmt(g.reduce)}, reduce_concat=range(2, 6))")

  def canonical(self, g: Genotype) -> str:
    self._check(g)
    def sort(pairs):
      out = []
      for i in range(NUM_INTERMEDIATE):
        out += sorted(pairs[2 * i:2 * i + 2], key=lambda p: (p[1], p[0]))
      return tuple(out)
    return self.to_string(Genotype(sort(g.normal), sort(g.reduce)))

  def _check(self, g) -> None:
    if not isinstance(g, Genotype):
      raise ValueError(f"DARTS architecture must be a Genotype, got {g!r}.")
    for name, pairs in (("normal", g.normal), ("reduce", g.reduce)):
      if len(pairs) != 2 * NUM_INTERMEDIATE:
        raise ValueError(f"DARTS {name} cell needs 8 (op, input) pairs, got {len(pairs)}.")
      for k, (op, j) in enumerate(pairs):
        if op not in PRIMITIVES[1:]:
          raise ValueError(f"DARTS {name} pair {k}: operation {op!r}; allowed: "
                           f"{list(PRIMITIVES[1:])}.")
        if j not in _cell_sources(k // 2):
          raise ValueError(f"DARTS {name} pair {k}: input {j}; node {k // 2} allows "
                           f"{_cell_sources(k // 2)}.")
      for i in range(NUM_INTERMEDIATE):
        if pairs[2 * i][1] == pairs[2 * i + 1][1]:
          raise ValueError(f"DARTS {name} node {i}: both operations read input "
                           f"{pairs[2 * i][1]}; DARTS nodes take two distinct inputs.")

  # ---- graphs -------------------------------------------------------------
  def encode_indices(self, g: Genotype):
    self._check(g)
    idx = np.zeros(NUM_NODES, np.int32)
    adj = np.zeros((NUM_NODES, NUM_NODES), np.float32)
    for c, pairs in enumerate((g.normal, g.reduce)):
      o = c * CELL_NODES
      idx[o], idx[o + 1], idx[o + CELL_NODES - 1] = 0, 1, 2
      for k, (op, j) in enumerate(pairs):
        node = o + 2 + k
        idx[node] = OP_NAMES.index(op)
        for src in self._source_nodes(j):
          adj[o + src, node] = 1
        adj[node, o + CELL_NODES - 1] = 1
    return idx, adj

  @staticmethod
  def _source_nodes(j: int) -> tuple[int, ...]:
    return (j,) if j < 2 else (2 + 2 * (j - 2), 3 + 2 * (j - 2))

  def decode_indices(self, ops_N, adj_NxN):
    cells = []
    for c in range(2):
      o = c * CELL_NODES
      if tuple(ops_N[[o, o + 1, o + CELL_NODES - 1]]) != (0, 1, 2):
        raise ValueError(f"cell {c}: nodes 0, 1, 10 must be c_k-2, c_k-1, output.")
      pairs = []
      for k in range(2 * NUM_INTERMEDIATE):
        node = o + 2 + k
        op = int(ops_N[node])
        if op <= _FIRST_PRIMITIVE:
          raise ValueError(f"cell {c} node {2 + k}: {OP_NAMES[op]!r} is not an "
                           "allowed operation.")
        preds = tuple(np.flatnonzero(adj_NxN[o:o + CELL_NODES, node]).tolist())
        j = next((j for j in _cell_sources(k // 2) if self._source_nodes(j) == preds),
                 None)
        if j is None:
          raise ValueError(f"cell {c} node {2 + k}: predecessors {list(preds)} are not "
                           f"one input of intermediate node {k // 2}.")
        pairs.append((OP_NAMES[op], j))
      for i in range(NUM_INTERMEDIATE):
        if pairs[2 * i][1] == pairs[2 * i + 1][1]:
          raise ValueError(f"cell {c} intermediate {i}: both operations read "
                           f"input {pairs[2 * i][1]}.")
      cells.append(tuple(pairs))
    return Genotype(*cells)

  def project(self, op_logits_BxNxV, adj_logits_BxNxN):
    """See `SearchSpace.project`. Per cell: the fixed input and output nodes,
    the most probable primitive other than `none` on every operation node,
    and for each intermediate node the pair of distinct inputs whose implied
    edges (j -> op for a cell input, both operations of m -> op for
    intermediate m) have the largest summed logits; the edges into the output
    are fixed."""
    self._check_logits(op_logits_BxNxV, adj_logits_BxNxN)
    b = op_logits_BxNxV.shape[0]
    allowed = _FIRST_PRIMITIVE + 1      # first index after `none`
    best_prim = allowed + jnp.argmax(op_logits_BxNxV[..., allowed:], -1).astype(jnp.int32)
    fixed = np.zeros(NUM_NODES, np.int32)
    adj = np.zeros((NUM_NODES, NUM_NODES), np.float32)
    is_op = np.zeros(NUM_NODES, bool)
    for c in range(2):
      o = c * CELL_NODES
      fixed[[o, o + 1, o + CELL_NODES - 1]] = (0, 1, 2)
      is_op[o + 2:o + CELL_NODES - 1] = True
      adj[o + 2:o + CELL_NODES - 1, o + CELL_NODES - 1] = 1
    ops = jnp.where(jnp.asarray(is_op)[None], best_prim, jnp.asarray(fixed)[None])
    adj = jnp.broadcast_to(jnp.asarray(adj), (b, NUM_NODES, NUM_NODES))
    for c in range(2):
      o = c * CELL_NODES
      for i in range(NUM_INTERMEDIATE):
        srcs = _cell_sources(i)
        nodes = (o + 2 + 2 * i, o + 3 + 2 * i)
        # s[node][:, j]: summed logits of the edges that input j implies
        s = [jnp.stack([sum(adj_logits_BxNxN[:, o + src, n] for src in self._source_nodes(j))
                        for j in srcs], -1) for n in nodes]
        pair = s[0][:, :, None] + s[1][:, None, :]                      # [B, J, J]
        pair = jnp.where(jnp.eye(len(srcs), dtype=bool)[None], -jnp.inf, pair)
        flat = jnp.argmax(pair.reshape(b, -1), -1)
        choice = (flat // len(srcs), flat % len(srcs))
        for n, j in zip(nodes, choice):
          for jj in srcs:
            for src in self._source_nodes(jj):
              adj = adj.at[:, o + src, n].set((j == jj).astype(jnp.float32))
    return ops.astype(jnp.int32), adj

  @property
  def growth_order(self):
    order = []
    for c in range(2):
      o = c * CELL_NODES
      order += [o, o + 1, o + CELL_NODES - 1] + list(range(o + 2, o + CELL_NODES - 1))
    return tuple(order)

  def _complete_sub(self, ops_n, adj_nxn, n):
    nodes = list(self.sub_nodes(n))
    present = np.zeros(NUM_NODES, bool)
    present[nodes] = True
    ops = np.full(NUM_NODES, OP_NAMES.index("sep_conv_3x3"), np.int32)
    adj = np.zeros((NUM_NODES, NUM_NODES), np.float32)
    for c in range(2):
      o = c * CELL_NODES
      ops[[o, o + 1, o + CELL_NODES - 1]] = (0, 1, 2)
    ops[nodes] = ops_n
    adj[np.ix_(nodes, nodes)] = adj_nxn
    for c in range(2):
      o = c * CELL_NODES
      for i in range(NUM_INTERMEDIATE):
        pair = (o + 2 + 2 * i, o + 3 + 2 * i)
        for k, node in enumerate(pair):
          if present[node]:
            continue
          partner = pair[1 - k]
          preds = tuple(np.flatnonzero(adj[o:o + CELL_NODES, partner]).tolist())
          taken = next((j for j in _cell_sources(i) if self._source_nodes(j) == preds), None)
          j = 1 if taken == 0 else 0
          for src in self._source_nodes(j):
            adj[o + src, node] = 1
          adj[node, o + CELL_NODES - 1] = 1
    return ops, adj

  def sample(self, rng, n):
    rng = base.as_rng(rng)
    ops = PRIMITIVES[1:]
    def cell():
      pairs = []
      for i in range(NUM_INTERMEDIATE):
        a, b = sorted(rng.choice(i + 2, size=2, replace=False).tolist())
        pairs += [(ops[rng.integers(len(ops))], a), (ops[rng.integers(len(ops))], b)]
      return tuple(pairs)
    return [Genotype(cell(), cell()) for _ in range(n)]
