"""The search-space interface shared by NAS-Bench-201, MobileNetV3 and DARTS.

Every space represents an architecture as a fixed-size *op-on-node* graph:
`ops_NxV` (one-hot operation per node, float32) and `adj_NxN` (adj[i, j] = 1
when node i feeds node j, float32), with a node order fixed per space and
documented in its module. Architectures themselves are plain hashable Python
values (tuples or NamedTuples); `to_string`/`from_string` speak the
community's string format and `canonical` gives the string used to decide
whether two architectures are the same.

`is_valid(ops, adj)` is "decodes, and re-encoding the decoded architecture
gives back exactly (ops, adj)": one definition for every space, as strict as
each space's published rules plus a check that the wiring is the space's.

Sub-architectures (PNAG's scales). Each space fixes a *growth order* of its
N nodes; the sub-architecture of n nodes (n = `min_sub_nodes` .. N) lives on
the first n nodes of that order (`sub_nodes(n)`, sorted by node index), and
the sub-architecture of an architecture is `sub_graph(ops, adj, n)`: the
graph induced on those nodes, plus whatever wiring rule the space adds to
keep it a working network (documented per space). At n = N it is the
architecture itself. A graph on n nodes is a *valid sub-architecture*
(`is_valid_sub`) when it is the n-node sub-architecture of some valid
architecture; each space checks that by completing it (`_complete_sub`: the
missing nodes filled with fixed valid choices) and testing that the
completion is valid and gives the graph back, so validity at every scale
uses the space's own `decode`.
"""

from __future__ import annotations

import abc
from typing import Any, Optional, Sequence, Union

import numpy as np

Arch = Any
RngLike = Union[int, np.random.Generator, None]


def as_rng(rng: RngLike) -> np.random.Generator:
  if isinstance(rng, np.random.Generator):
    return rng
  return np.random.default_rng(rng)


def op_indices(ops: np.ndarray, num_ops: int, num_nodes: int) -> np.ndarray:
  """int [N] from int indices [N] or an exactly one-hot float matrix [N, V].

  Raises ValueError for other shapes, rows that are not one-hot, or indices
  outside 0..V-1.
  """
  ops = np.asarray(ops)
  if ops.shape == (num_nodes, num_ops):
    ok = np.all((ops == 0) | (ops == 1), axis=1) & (ops.sum(1) == 1)
    if not ok.all():
      raise ValueError(f"ops row {int(np.argmin(ok))} is not one-hot: "
                       f"{ops[int(np.argmin(ok))].tolist()}")
    return ops.argmax(1)
  if ops.shape == (num_nodes,) and np.issubdtype(ops.dtype, np.integer):
    if ops.min() < 0 or ops.max() >= num_ops:
      raise ValueError(f"op indices must lie in 0..{num_ops - 1}, got "
                       f"{ops.tolist()}")
    return ops
  raise ValueError(f"ops must be one-hot [{num_nodes}, {num_ops}] or int "
                   f"[{num_nodes}], got shape {ops.shape} ({ops.dtype}).")


class SearchSpace(abc.ABC):
  """A NAS search space in the op-on-node encoding.

  Attributes:
    name: "nb201" | "mbv3" | "darts".
    op_names: the V node types; `ops_NxV[:, v]` is op_names[v].
    num_nodes: N.
  """
  name: str
  op_names: tuple[str, ...]
  num_nodes: int

  @property
  def num_ops(self) -> int:
    return len(self.op_names)

  # ---- strings ------------------------------------------------------------
  @abc.abstractmethod
  def from_string(self, s: str) -> Arch:
    """Parses the community string; ValueError names the bad token and its position."""

  @abc.abstractmethod
  def to_string(self, arch: Arch) -> str:
    """The community string of `arch`."""

  def canonical(self, arch: Arch) -> str:
    """The string that identifies `arch` up to representation-level symmetry."""
    return self.to_string(arch)

  # ---- graphs -------------------------------------------------------------
  @abc.abstractmethod
  def encode_indices(self, arch: Arch) -> tuple[np.ndarray, np.ndarray]:
    """(op index int32 [N], adjacency float32 [N, N]) of `arch`."""

  @abc.abstractmethod
  def decode_indices(self, ops_N: np.ndarray, adj_NxN: np.ndarray) -> Arch:
    """The architecture of a graph, or ValueError saying what is wrong."""

  def encode(self, arch: Arch) -> tuple[np.ndarray, np.ndarray]:
    """(ops one-hot float32 [N, V], adjacency float32 [N, N])."""
    idx, adj = self.encode_indices(arch)
    return np.eye(self.num_ops, dtype=np.float32)[idx], adj

  def encode_batch(self, archs: Sequence[Arch]) -> tuple[np.ndarray, np.ndarray]:
    """(op indices int32 [B, N], adjacency float32 [B, N, N])."""
    pairs = [self.encode_indices(a) for a in archs]
    return (np.stack([p[0] for p in pairs]).astype(np.int32),
            np.stack([p[1] for p in pairs]).astype(np.float32))

  def decode(self, ops: np.ndarray, adj: np.ndarray) -> Arch:
    """The inverse of `encode` (ops one-hot [N, V] or int [N]); ValueError if invalid."""
    idx = op_indices(ops, self.num_ops, self.num_nodes)
    adj = np.asarray(adj)
    if adj.shape != (self.num_nodes, self.num_nodes):
      raise ValueError(f"adj must be [{self.num_nodes}, {self.num_nodes}], got "
                       f"{adj.shape}.")
    if not np.all((adj == 0) | (adj == 1)):
      raise ValueError("adj must hold only 0 and 1.")
    arch = self.decode_indices(idx, adj)
    idx2, adj2 = self.encode_indices(arch)
    if not np.array_equal(idx2, idx):
      raise ValueError("ops do not re-encode to themselves.")
    if not np.array_equal(adj2, adj):
      bad = np.argwhere(adj2 != adj)[0]
      raise ValueError(f"adjacency entry {tuple(bad.tolist())} is "
                       f"{int(adj[tuple(bad)])}, the space's wiring needs "
                       f"{int(adj2[tuple(bad)])}.")
    return arch

  def project(self, op_logits_BxNxV, adj_logits_BxNxN):
    """The most probable *valid* graph of each row of decoder logits (jittable).

    Reads the decoder's outputs as independent distributions: a softmax over
    node types per node and a Bernoulli (sigmoid of the logit) per adjacency
    entry, and returns, among the graphs `is_valid` accepts, the one of highest
    joint log-probability. Since log sigmoid(l) - log sigmoid(-l) = l, that
    is the valid graph maximising sum_i log p_i(op_i) + sum of the logits of its
    edges. Each space's valid set factorises (NB201: per node; MBV3: per
    stage; DARTS: per intermediate node), so the search is exact and costs a
    few element-wise passes.

    Args:
      op_logits_BxNxV: float32 [B, N, V].
      adj_logits_BxNxN: float32 [B, N, N].

    Returns:
      (ops int32 [B, N], adj float32 [B, N, N]), every row valid. Pure jnp:
      works under `jit` and `vmap`.
    """
    raise NotImplementedError(f"{type(self).__name__} has no constrained decoder.")

  def _check_logits(self, op_logits_BxNxV, adj_logits_BxNxN) -> None:
    """ValueError unless the shapes are [B, N, V] and [B, N, N] of this space."""
    n, v = self.num_nodes, self.num_ops
    so, sa = tuple(op_logits_BxNxV.shape), tuple(adj_logits_BxNxN.shape)
    if len(so) != 3 or so[1:] != (n, v) or sa != (so[0], n, n):
      raise ValueError(f"{self.name} logits must be op [B, {n}, {v}] and adjacency "
                       f"[B, {n}, {n}], got {list(so)} and {list(sa)}.")

  def try_decode(self, ops: np.ndarray, adj: np.ndarray) -> Optional[Arch]:
    """`decode`, or None for an invalid graph."""
    try:
      return self.decode(ops, adj)
    except ValueError:
      return None

  def is_valid(self, ops: np.ndarray, adj: np.ndarray) -> bool:
    """Whether (ops, adj) is an architecture of this space (see module doc)."""
    return self.try_decode(ops, adj) is not None

  # ---- sub-architectures (module doc) ---------------------------------------
  min_sub_nodes: int = 3

  @property
  def growth_order(self) -> tuple[int, ...]:
    """The N node indices in the order the sub-architectures add them."""
    return tuple(range(self.num_nodes))

  def check_sub_size(self, n) -> int:
    """n as an int, or ValueError unless min_sub_nodes <= n <= N."""
    if (isinstance(n, bool) or not isinstance(n, (int, np.integer))
        or not self.min_sub_nodes <= n <= self.num_nodes):
      raise ValueError(f"{self.name} sub-architectures have {self.min_sub_nodes}.."
                       f"{self.num_nodes} nodes, got n={n!r}.")
    return int(n)

  def sub_nodes(self, n: int) -> tuple[int, ...]:
    """Sorted node indices (length n) of the n-node sub-architecture."""
    n = self.check_sub_size(n)
    return tuple(sorted(self.growth_order[:n]))

  def default_schedule(self) -> tuple[int, ...]:
    """PNAG's scale schedule: one node more per scale, min_sub_nodes .. N."""
    return tuple(range(self.min_sub_nodes, self.num_nodes + 1))

  def sub_graph(self, ops_BxN, adj_BxNxN, n: int):
    """(ops [B, n], adj [B, n, n]): the n-node sub-architectures of a batch.

    ops int [B, N] (indices), adj float [B, N, N]. numpy in, numpy out; jax
    arrays in, jax arrays out (jittable, n static). The base rule is the
    induced subgraph; spaces that need more wiring override this.
    """
    nodes = np.asarray(self.sub_nodes(n))
    return ops_BxN[:, nodes], adj_BxNxN[:, nodes][:, :, nodes]

  def _complete_sub(self, ops_n: np.ndarray, adj_nxn: np.ndarray, n: int):
    """(ops int [N], adj [N, N]): a full graph whose n-node sub-architecture
    should be (ops_n, adj_nxn), the missing nodes filled with fixed valid
    choices. Raises ValueError where no completion can be built."""
    raise NotImplementedError(f"{type(self).__name__} defines no sub-architectures.")

  def decode_sub(self, ops: np.ndarray, adj: np.ndarray):
    """A full architecture whose sub-architecture is (ops, adj) [n] / [n, n],
    or ValueError saying why (ops, adj) is not a valid sub-architecture."""
    idx = np.asarray(ops)
    n = idx.shape[0] if idx.ndim else -1
    n = self.check_sub_size(n)
    if n == self.num_nodes:
      return self.decode(ops, adj)
    idx = op_indices(idx, self.num_ops, n)
    adj = np.asarray(adj)
    if adj.shape != (n, n) or not np.all((adj == 0) | (adj == 1)):
      raise ValueError(f"adj of a {n}-node sub-architecture must be a 0/1 "
                       f"[{n}, {n}] matrix, got shape {adj.shape}.")
    full_ops, full_adj = self._complete_sub(idx, adj, n)
    arch = self.decode(full_ops, full_adj)
    so, sa = self.sub_graph(full_ops[None], full_adj[None], n)
    if not np.array_equal(so[0], idx):
      raise ValueError("ops are not those of a sub-architecture.")
    if not np.array_equal(sa[0], adj):
      bad = np.argwhere(sa[0] != adj)[0]
      raise ValueError(f"adjacency entry {tuple(bad.tolist())} is {int(adj[tuple(bad)])}, "
                       f"the sub-architecture's wiring needs {int(sa[0][tuple(bad)])}.")
    return arch

  def is_valid_sub(self, ops: np.ndarray, adj: np.ndarray) -> bool:
    """Whether (ops [n] or [n, V], adj [n, n]) is a valid n-node sub-architecture."""
    try:
      self.decode_sub(ops, adj)
      return True
    except ValueError:
      return False

  # ---- sampling -----------------------------------------------------------
  @abc.abstractmethod
  def sample(self, rng: RngLike, n: int) -> list[Arch]:
    """`n` architectures drawn uniformly from the (valid) space."""

  @property
  @abc.abstractmethod
  def size(self) -> int:
    """Number of distinct canonical architectures."""

  def __repr__(self) -> str:
    return (f"{type(self).__name__}(name={self.name!r}, N={self.num_nodes}, "
            f"V={self.num_ops}, size={self.size})")
