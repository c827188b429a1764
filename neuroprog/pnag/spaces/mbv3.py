"""Once-for-all MobileNetV3: 5 stages of 2..4 inverted-residual layers.

Each present layer has a kernel size in {3, 5, 7} and an expand ratio in
{3, 4, 6}; stage depth is in {2, 3, 4}. An architecture is a 5-tuple of
stages, each a tuple of (kernel, expand) pairs of length = depth.

String format: OFA's subnet config as JSON, `{"ks": [20 ints], "e": [20 ints],
"d": [5 ints]}`, layer l of stage s at position 4 s + l. Entries of layers
beyond a stage's depth are ignored by OFA; `from_string` accepts any of the
allowed values or 0 there and `to_string` writes 0, so the string of an
architecture is canonical.

Op-on-node encoding, N = 20 nodes (layer slots, stage-major), V = 10 types:
`none` (slot unused) and `k{k}_e{e}` for the 9 layer types. adj[i, j] = 1
when j is the next present layer after present layer i (a chain through the
network across stages).

Validity: DiffusionNAG's rule (layers 1 and 2 of every stage present; layer 4
only if layer 3 is) and the chain adjacency of the present layers.

Sub-architectures (PNAG's scales, n = 3..20 nodes): the first n layer slots
(a prefix of the network: the stem-side layers, as a truncated network
would run them), with the chain adjacency of their present layers (the
induced subgraph). Valid when the slots in the prefix obey the stage rule
as far as they reach (layers 1 and 2 of a stage present where inside the
prefix; layer 4 only if layer 3) and the wiring is that chain; the first
present layer plays the input and the last the output.
"""

from __future__ import annotations

import json

import jax
import jax.numpy as jnp
import numpy as np

from neuroprog.pnag.spaces import base

KERNELS = (3, 5, 7)
EXPANDS = (3, 4, 6)
DEPTHS = (2, 3, 4)
NUM_STAGES, MAX_DEPTH = 5, 4
LAYER_TYPES = tuple((k, e) for k in KERNELS for e in EXPANDS)
OP_NAMES = ("none",) + tuple(f"k{k}_e{e}" for k, e in LAYER_TYPES)
NUM_NODES = NUM_STAGES * MAX_DEPTH


class MBV3(base.SearchSpace):
  """OFA MobileNetV3 (sum over stages of 9^d: about 2e19 architectures)."""
  name = "mbv3"
  op_names = OP_NAMES
  num_nodes = NUM_NODES

  @property
  def size(self) -> int:
    return sum(9 ** d for d in DEPTHS) ** NUM_STAGES

  def _check(self, arch) -> None:
    ok = isinstance(arch, tuple) and len(arch) == NUM_STAGES and all(
        isinstance(st, tuple) and len(st) in DEPTHS
        and all(isinstance(l, tuple) and l in LAYER_TYPES for l in st) for st in arch)
    if not ok:
      raise ValueError(f"MBV3 architecture must be 5 stages of 2..4 (kernel, "
                       f"expand) pairs from {list(LAYER_TYPES)}, got {arch!r}.")

  def from_string(self, s: str):
    try:
      cfg = json.loads(s)
    except (TypeError, json.JSONDecodeError) as e:
      pos = getattr(e, "pos", 0)
      raise ValueError(f"MBV3 string is not JSON: {str(e)} (position {pos} of "
                       f"{s!r}).") from None
    if not isinstance(cfg, dict) or set(cfg) != {"ks", "e", "d"}:
      raise ValueError(f"MBV3 config must have exactly the keys 'ks', 'e', 'd', got "
                       f"{sorted(cfg) if isinstance(cfg, dict) else type(cfg).__name__}.")
    for key, n in (("ks", NUM_NODES), ("e", NUM_NODES), ("d", NUM_STAGES)):
      if not isinstance(cfg[key], list) or len(cfg[key]) != n:
        raise ValueError(f"MBV3 '{key}' must be a list of {n} ints, got {cfg[key]!r}.")
    stages = []
    for st in range(NUM_STAGES):
      d = cfg["d"][st]
      if d not in DEPTHS:
        raise ValueError(f"MBV3 bad depth {d!r} at 'd' position {st}; allowed: "
                         f"{list(DEPTHS)}.")
      layers = []
      for l in range(MAX_DEPTH):
        pos = st * MAX_DEPTH + l
        for key, allowed in (("ks", KERNELS), ("e", EXPANDS)):
          v = cfg[key][pos]
          if v not in allowed and not (l >= d and v == 0):
            raise ValueError(f"MBV3 bad value {v!r} at '{key}' position {pos}; "
                             f"allowed: {list(allowed)}" + (" or 0" if l >= d else "") + ".")
        if l < d:
          layers.append((cfg["ks"][pos], cfg["e"][pos]))
      stages.append(tuple(layers))
    return tuple(stages)

  def to_string(self, arch) -> str:
    self._check(arch)
    ks, e = [0] * NUM_NODES, [0] * NUM_NODES
    for st, layers in enumerate(arch):
      for l, (k, x) in enumerate(layers):
        ks[st * MAX_DEPTH + l], e[st * MAX_DEPTH + l] = k, x
    return json.dumps({"ks": ks, "e": e, "d": [len(st) for st in arch]})

  def encode_indices(self, arch):
    self._check(arch)
    idx = np.zeros(NUM_NODES, np.int32)
    for st, layers in enumerate(arch):
      for l, layer in enumerate(layers):
        idx[st * MAX_DEPTH + l] = 1 + LAYER_TYPES.index(layer)
    return idx, _chain(idx)

  def decode_indices(self, ops_N, adj_NxN):
    stages = []
    for st in range(NUM_STAGES):
      present = ops_N[st * MAX_DEPTH:(st + 1) * MAX_DEPTH] > 0
      if not (present[0] and present[1]):
        raise ValueError(f"stage {st}: layers 1 and 2 must be present.")
      if present[3] and not present[2]:
        raise ValueError(f"stage {st}: layer 4 is present without layer 3.")
      stages.append(tuple(LAYER_TYPES[i - 1] for i in
                          ops_N[st * MAX_DEPTH:(st + 1) * MAX_DEPTH] if i > 0))
    return tuple(stages)

  def project(self, op_logits_BxNxV, adj_logits_BxNxN):
    """See `SearchSpace.project`. Per stage, the depth d in {2, 3, 4} whose
    slots (the d most probable layer types, then `none`) and chain edges
    (inside the stage, and from its last layer to the next stage's first)
    score highest; stages are independent given their depths."""
    self._check_logits(op_logits_BxNxV, adj_logits_BxNxN)
    logp = op_logits_BxNxV - jax.nn.logsumexp(op_logits_BxNxV, -1, keepdims=True)
    b = logp.shape[0]
    best_type = 1 + jnp.argmax(logp[..., 1:], -1).astype(jnp.int32)        # [B, N]
    present_lp = jnp.max(logp[..., 1:], -1)
    none_lp = logp[..., 0]
    ops, adj = [], jnp.zeros((b, NUM_NODES, NUM_NODES), jnp.float32)
    slot = jnp.arange(MAX_DEPTH)
    for st in range(NUM_STAGES):
      o = st * MAX_DEPTH
      scores = []
      for d in DEPTHS:
        sc = present_lp[:, o:o + d].sum(-1) + none_lp[:, o + d:o + MAX_DEPTH].sum(-1)
        sc = sc + sum(adj_logits_BxNxN[:, o + l, o + l + 1] for l in range(d - 1))
        if st + 1 < NUM_STAGES:
          sc = sc + adj_logits_BxNxN[:, o + d - 1, o + MAX_DEPTH]
        scores.append(sc)
      depth = jnp.asarray(DEPTHS)[jnp.argmax(jnp.stack(scores, -1), -1)]     # [B]
      ops.append(jnp.where(slot[None] < depth[:, None], best_type[:, o:o + MAX_DEPTH], 0))
      for l in range(MAX_DEPTH - 1):      # chain inside the stage
        adj = adj.at[:, o + l, o + l + 1].set((l + 1 < depth).astype(jnp.float32))
      if st + 1 < NUM_STAGES:             # last layer -> next stage's first
        for l in range(DEPTHS[0] - 1, MAX_DEPTH):
          adj = adj.at[:, o + l, o + MAX_DEPTH].set((depth == l + 1).astype(jnp.float32))
    return jnp.concatenate(ops, 1).astype(jnp.int32), adj

  def _complete_sub(self, ops_n, adj_nxn, n):
    ops = np.zeros(NUM_NODES, np.int32)
    ops[:n] = ops_n
    for slot in range(n, NUM_NODES):     # layers 1, 2 present, 3, 4 absent
      ops[slot] = 1 if slot % MAX_DEPTH < 2 else 0
    return ops, _chain(ops)

  def sample(self, rng, n):
    # Uniform over architectures: a stage of depth d has 9^d configurations,
    # so depth 2 is 81 / 7,371 = 1.1% of stages.
    w = np.array([9.0 ** d for d in DEPTHS])
    return self._sample(rng, n, w / w.sum())

  def sample_subnets(self, rng, n: int) -> list:
    """`n` architectures as OFA draws random subnets (its
    `sample_active_subnet`): each stage's depth uniform in {2, 3, 4}, each
    layer's kernel and expand ratio uniform. Not uniform over architectures:
    a depth-2 stage is a third of stages instead of 1.1%."""
    return self._sample(rng, n, np.full(len(DEPTHS), 1.0 / len(DEPTHS)))

  def _sample(self, rng, n, depth_probs):
    rng = base.as_rng(rng)
    depths = rng.choice(DEPTHS, size=(n, NUM_STAGES), p=depth_probs)
    types = rng.integers(0, len(LAYER_TYPES), size=(n, NUM_STAGES, MAX_DEPTH))
    return [tuple(tuple(LAYER_TYPES[types[i, s, l]] for l in range(depths[i, s]))
                  for s in range(NUM_STAGES)) for i in range(n)]


def _chain(idx: np.ndarray) -> np.ndarray:
  adj = np.zeros((NUM_NODES, NUM_NODES), np.float32)
  present = np.flatnonzero(idx > 0)
  adj[present[:-1], present[1:]] = 1
  return adj
