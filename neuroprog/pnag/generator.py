"""Stage 2 of PNAG: a decoder-only transformer over the token maps of all scales.

Sequence layout: the tokens of generation step 1, then those of step 2, ...
(block token maps: one step per scale of n_t^2 tokens, row-major,
L = sum n_t^2; new-entry tokens: two steps per scale, the new nodes' types
then their wiring, `GenConfig.tokens_per_step`, L = N^2). "Scale" below
means generation step. Position p of scale t reads

  * t = 1: a learned start vector;
  * t > 1: block tokens: the reconstruction accumulated after scale t-1,
    pooled to n_t x n_t and projected C -> d (VAR's next-scale input);
    new-entry tokens: the node context of the entry's two endpoints and of
    the sub-architecture so far, and the code of its twin in the previous
    scale (`model.context_inputs`; with `later_twins` / `between_types`
    C more each), projected 10C -> d,

plus a learned position embedding and a scale embedding, and predicts the code
index of its own position at scale t. The attention mask is block-causal: a
token sees every token of its own and earlier scales, so all tokens of a
scale are predicted in parallel (next-scale prediction).

Every block is AdaLN-Zero: LayerNorm without affine, then shift/scale from
the condition vector, and a gate (initialised to zero) on the residual
branch. The condition is a vector [B, cond_dim]; `None` means the learned
null condition, so unconditional sampling and classifier-free guidance use
the same network.

Sampling (`GeneratorModules.sample_scale`) keeps a key/value cache per block,
so each scale costs only its own tokens.

With `step_order="sequential"` the tokens of a step are drawn one at a time
(`GeneratorModules.sample_token`): token p also reads the code drawn at p - 1
and attends causally within its step (`attention_mask`), so a step's joint
distribution is exact rather than a product of independent tokens.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple, Optional, Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np


ATTENTIONS = ("causal", "scale")
STEP_ORDERS = ("parallel", "sequential")
TOKEN_INPUTS = ("codebook", "learned")


@dataclasses.dataclass(frozen=True)
class GenConfig:
  scales: tuple[int, ...]
  channels: int               # C of the feature map
  codebook_size: int          # K
  width: int = 64             # d
  depth: int = 2
  heads: int = 4
  mlp_ratio: int = 4
  cond_dim: int = 16
  # "causal": a token attends to every token of its own and earlier scales
  # (VAR's block-causal mask); "scale": only to its own scale. The next-scale
  # input already carries the reconstruction of all earlier scales, so
  # "scale" keeps what the generator reads and drops the attention cost from
  # (sum n_t^2)^2 to sum n_t^4, which decides the cost of one-node-per-scale
  # schedules on the larger spaces (N = 20, 22: L = 2,865 and 3,790 tokens).
  attention: str = "causal"
  # Tokens per generation step (None: one step per scale of n_t^2 tokens,
  # block token maps) and the width of the next-scale inputs (None:
  # channels); new-entry tokens set both: two steps per scale, the new nodes'
  # types then their wiring (msq.NewEntryLayout.group_counts, model.input_dim).
  tokens_per_step: Optional[tuple[int, ...]] = None
  input_dim: Optional[int] = None
  # "parallel": the tokens of a generation step are drawn independently given
  # everything before the step (next-scale prediction as VAR does it).
  # "sequential": within a step, token p also reads the code drawn at p - 1
  # (`prev` inputs) and attends causally to the step's earlier tokens, so a
  # step's tokens have an exact joint distribution. A joint choice spread
  # over several tokens needs it: a DARTS operation reading an intermediate
  # node has edges from both of that node's operations, two wiring tokens
  # that independent draws rarely set together.
  step_order: str = "parallel"
  # What a drawn token stands for where the generator reads it back (the
  # node context, the twins and the previous token of new-entry tokens):
  # "codebook": its code vector, the autoencoder's; "learned": a row of the
  # generator's own table `token_table` [K, C], trained with it, and, with
  # sequential steps, also the running sum of those rows over the step's
  # earlier tokens. Why: the context sums a node's row and column of codes,
  # and code vectors of absent edges are not zero, so one present edge moves
  # a node's row mean by a fraction of a code; a learned row can be zero for
  # "no edge" and make such sums count edges (the chain end of MBV3 is the
  # present layer with no outgoing edge yet; a DARTS operation has drawn its
  # input once the step's running sum holds an edge). The feature map and
  # the decoder still use the codebook.
  token_inputs: str = "codebook"
  # Sequential steps only: each token also reads the sum of the codes drawn
  # so far in its step (with "learned" token inputs this is always on). Why:
  # a DARTS operation's input is one choice spread over a step's wiring
  # tokens, so every later token must know whether an input has been drawn
  # yet; the previous code says so only for its neighbour, and one attention
  # head averages the step's earlier tokens rather than counting them. The
  # absent-edge codes add a vector fixed by the position, which the position
  # embedding can cancel, so what remains counts the present edges.
  step_sum: bool = False
  # New-entry tokens only: extra node-context inputs (`model.context_inputs`,
  # where the why is): the previous new node's later inputs, and the types
  # of the nodes between a wiring token's two endpoints.
  later_twins: bool = False
  between_types: bool = False
  # Budget inputs (sequential steps only): the condition's last entry is a
  # requested cost r (in the units of `spend_table`), and every position of
  # step g also reads [s, r - s, 1] through `budget_proj`, s = the spend so
  # far: sum of spend_table[p', code p'] over the tokens of steps < g (with
  # the null condition [s, 0, 0]). Why: AdaLN tells every token the total
  # request, but a cost is a sum over the layers drawn, and a token that
  # sees only its own step cannot know how much of the request earlier
  # steps have used; with the spend so far, the last layers can make up the
  # difference. spend_table [L, K] is a fixed parameter, fitted before
  # training (`budget.fit_spend_table`) and never updated by the optimizer
  # (its gradient is stopped).
  budget_inputs: bool = False

  def __post_init__(self):
    if self.tokens_per_step is not None:
      t = tuple(self.tokens_per_step)
      if not t or any(isinstance(p, bool) or not isinstance(p, (int, np.integer)) or p < 1
                      for p in t):
        raise ValueError(f"tokens_per_step={self.tokens_per_step!r} must be "
                         f"positive ints, one per generation step.")
      object.__setattr__(self, "tokens_per_step", tuple(int(p) for p in t))
    if self.step_order not in STEP_ORDERS:
      raise ValueError(f"generator step_order={self.step_order!r}; allowed: "
                       f"{list(STEP_ORDERS)}.")
    for k in ("step_sum", "later_twins", "between_types", "budget_inputs"):
      if not isinstance(getattr(self, k), (bool, np.bool_)):
        raise ValueError(f"generator {k}={getattr(self, k)!r} must be a bool.")
    if self.step_sum and self.step_order != "sequential":
      raise ValueError(f"generator step_sum=True needs step_order='sequential', got "
                       f"{self.step_order!r}.")
    if self.budget_inputs and self.step_order != "sequential":
      raise ValueError(f"generator budget_inputs=True needs step_order='sequential', got "
                       f"{self.step_order!r}.")
    if self.token_inputs not in TOKEN_INPUTS:
      raise ValueError(f"generator token_inputs={self.token_inputs!r}; allowed: "
                       f"{list(TOKEN_INPUTS)}.")
    if self.attention not in ATTENTIONS:
      raise ValueError(f"generator attention={self.attention!r}; allowed: "
                       f"{list(ATTENTIONS)}.")
    for k in ("channels", "codebook_size", "width", "depth", "heads", "mlp_ratio",
              "cond_dim"):
      if not isinstance(getattr(self, k), int) or getattr(self, k) < 1:
        raise ValueError(f"generator {k} must be a positive int, got {getattr(self, k)!r}.")
    if self.width % self.heads:
      raise ValueError(f"generator width {self.width} is not divisible by heads "
                       f"{self.heads}.")

  @property
  def counts(self) -> tuple[int, ...]:
    """Tokens of each generation step."""
    return self.tokens_per_step or tuple(n * n for n in self.scales)

  @property
  def seq_len(self) -> int:
    return sum(self.counts)

  @property
  def in_dim(self) -> int:
    """Width of the next-scale inputs the generator reads."""
    return self.input_dim or self.channels

  @property
  def offsets(self) -> tuple[int, ...]:
    """Start position of each scale in the sequence."""
    return tuple(int(x) for x in np.cumsum((0,) + self.counts[:-1]))

  @property
  def step_of(self) -> np.ndarray:
    """int [L]: the generation step of each position."""
    return np.repeat(np.arange(len(self.counts)), self.counts)

  @property
  def sequential(self) -> bool:
    return self.step_order == "sequential"

  @property
  def running_sum(self) -> bool:
    """Whether a sequential step's tokens also read the running sum of the
    step's earlier token embeddings (`previous_codes`): `step_sum`, or
    learned token inputs."""
    return self.sequential and (self.step_sum or self.token_inputs == "learned")

  @property
  def prev_dim(self) -> int:
    """Width of the `prev` inputs of a sequential generator: C, or 2 C with
    the running sum."""
    return 2 * self.channels if self.running_sum else self.channels


def attention_mask(cfg: GenConfig) -> np.ndarray:
  """bool [L, L] mask of teacher-forced "causal" attention (query, key):
  parallel steps see their own step whole and the steps before
  (`block_causal_mask`); sequential steps see every earlier token and
  themselves. ("scale" attention is `step_buckets`.)"""
  if cfg.sequential:
    return np.tril(np.ones((cfg.seq_len, cfg.seq_len), bool))
  return block_causal_mask(cfg.counts)


def previous_codes(codes_BxLxC: jax.Array, counts: Sequence[int],
                   running_sum: bool = False) -> jax.Array:
  """The `prev` inputs of a sequential generator under teacher forcing.

  float32 [B, L, C]: at each position the code of the step's previous
  token, zeros at the first token of each step. running_sum: [B, L, 2 C],
  followed by the sum of the codes of all the step's earlier tokens (zero at
  its first token), as the sampler carries it."""
  shifted = jnp.pad(codes_BxLxC, ((0, 0), (1, 0), (0, 0)))[:, :-1]
  first = np.zeros(sum(counts), bool)
  first[np.cumsum((0,) + tuple(counts[:-1]))] = True
  last = jnp.where(jnp.asarray(first)[None, :, None], 0.0, shifted)
  if not running_sum:
    return last
  # exclusive prefix sums within each step, as one matmul with a constant
  # [L, L] matrix (earlier positions of the same step)
  step = np.repeat(np.arange(len(counts)), counts)
  pos = np.arange(sum(counts))
  earlier = (step[:, None] == step[None, :]) & (pos[None, :] < pos[:, None])
  total = jnp.einsum("qk,bkc->bqc", jnp.asarray(earlier, codes_BxLxC.dtype), codes_BxLxC)
  return jnp.concatenate([last, total], -1)


class StepBuckets(NamedTuple):
  """Static layout for attention within each generation step at once
  (`step_buckets`; numpy, constants under `jit`).

  Steps are padded to a power-of-two size S_b and grouped by it, one bucket
  per size, the buckets' slots one after another (M slots in all).
  shapes: per bucket (G_b, S_b). mask: per bucket bool [G_b, S_b, S_b],
  which keys a query sees (the real tokens of its step; with sequential
  steps only those up to itself). source: int32 [M], the sequence position
  each slot holds (L where padded). slot: int32 [L], each position's slot.
  """
  shapes: tuple
  mask: tuple
  source: np.ndarray
  slot: np.ndarray


def step_buckets(counts: Sequence[int], sequential: bool) -> StepBuckets:
  """The `StepBuckets` of steps with `counts` tokens each."""
  offsets = np.cumsum((0,) + tuple(counts[:-1]))
  length = int(sum(counts))
  size_of = [1 << int(np.ceil(np.log2(p))) for p in counts]
  shapes, masks, sources, slot, start = [], [], [], np.zeros(length, np.int32), 0
  for size in sorted(set(size_of)):
    steps = [t for t, z in enumerate(size_of) if z == size]
    src = np.full((len(steps), size), length, np.int32)
    mask = np.zeros((len(steps), size, size), bool)
    for row, t in enumerate(steps):
      p = counts[t]
      src[row, :p] = offsets[t] + np.arange(p)
      mask[row, :, :p] = True
      if sequential:
        mask[row] &= np.tril(np.ones((size, size), bool))
      slot[offsets[t]:offsets[t] + p] = start + row * size + np.arange(p)
    shapes.append((len(steps), size))
    masks.append(mask)
    sources.append(src.reshape(-1))
    start += len(steps) * size
  return StepBuckets(tuple(shapes), tuple(masks), np.concatenate(sources), slot)


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2))
def _permute(x_BxNxD, forward, backward):
  """Rows of x [B, N, D] gathered at `forward` (int32 [M], values 0..N;
  N reads a zero row): [B, M, D]. `forward` must take each row of x at most
  once and `backward` (int32 [N], values 0..M) must give each row's place in
  the result (M where it is not taken), so that the gradient is the same
  kind of gather, not XLA:CPU's slow scatter-add."""
  b, _, d = x_BxNxD.shape
  return jnp.concatenate([x_BxNxD, jnp.zeros((b, 1, d), x_BxNxD.dtype)], 1)[:, forward]


def _permute_fwd(x, forward, backward):
  return _permute(x, forward, backward), None


def _permute_bwd(forward, backward, _, g):
  return (_permute(g, backward, forward),)


_permute.defvjp(_permute_fwd, _permute_bwd)


def block_causal_mask(counts: Sequence[int]) -> np.ndarray:
  """bool [L, L]: query q may attend to key k iff scale(k) <= scale(q).
  counts: tokens per scale (`GenConfig.counts`)."""
  level = np.concatenate([np.full(p, t) for t, p in enumerate(counts)])
  return level[None, :] <= level[:, None]


def _modulate(x, shift, scale):
  return x * (1.0 + scale) + shift


def _attend_within_steps(qkv_BxLx3D, heads: int, steps: StepBuckets) -> jax.Array:
  """Attention restricted to each generation step (`StepBuckets`), from
  the concatenated queries, keys and values [B, L, 3 d]: [B, L, d].
  Steps of similar size are padded to one size and batched, so the cost is
  a few batched matmuls, not one small attention per step (DARTS has 40
  steps); the tokens move to the padded layout and back by two gathers."""
  b, l, d3 = qkv_BxLx3D.shape
  d = d3 // 3
  dh = d // heads
  x = _permute(qkv_BxLx3D, steps.source, steps.slot)           # [B, M, 3 d]
  outs, lo = [], 0
  for (g, size), mask in zip(steps.shapes, steps.mask):
    blk = x[:, lo:lo + g * size].reshape(b, g, size, 3, heads, dh)
    if heads == 1:   # [B, G, S, dh]: no transposes to pay for
      q, k, v = blk[:, :, :, 0, 0], blk[:, :, :, 1, 0], blk[:, :, :, 2, 0]
    else:            # [B, G, H, S, dh]
      q, k, v = (blk[:, :, :, i].transpose(0, 1, 3, 2, 4) for i in range(3))
      mask = mask[:, None]
    att = jnp.matmul(q, jnp.swapaxes(k, -1, -2)) / np.sqrt(dh)
    att = jax.nn.softmax(jnp.where(mask, att, -1e9), -1)
    y = jnp.matmul(att, v)
    if heads > 1:
      y = y.transpose(0, 1, 3, 2, 4)
    outs.append(y.reshape(b, g * size, d))
    lo += g * size
  return _permute(jnp.concatenate(outs, 1), steps.slot, steps.source)   # [B, L, d]


def _attend_buffer(qkv_Bx1x3D: jax.Array, heads: int, cache, buffer):
  """One query per row against its step's key/value buffer: ([B, 1, D], buffer).

  qkv: float32 [B, 1, 3D] (D = heads x dh). cache: (k, v [H, P, dh, B]) of
  the earlier steps the query also attends to, or (None, None) / None;
  buffer: (k, v [H, S, dh, B], slot int32 scalar). Writes this position's
  key and value at `slot`, attends to the cache and to slots <= slot, and
  returns (y [B, 1, D], (k, v) the updated buffer).

  Batch-last layout and element-wise products: a token's attention is B tiny
  [1, dh] x [dh, S] products, which XLA:CPU runs as a batched matmul several
  times slower than multiply-and-sum over arrays whose last axis is the batch
  (BUILD_NOTES.md, "PNAG: a faster sequential sampler"); the buffer update
  writes one contiguous [dh, B] slice per head.
  """
  b, _, three_d = qkv_Bx1x3D.shape
  d = three_d // 3
  dh = d // heads
  q, k, v = (a.T.reshape(heads, dh, b) for a in jnp.split(qkv_Bx1x3D[:, 0], 3, -1))
  kbuf, vbuf, slot = buffer
  kbuf = jax.lax.dynamic_update_slice_in_dim(kbuf, k[:, None], slot, 1)
  vbuf = jax.lax.dynamic_update_slice_in_dim(vbuf, v[:, None], slot, 1)
  keys, values = kbuf, vbuf
  seen = jnp.arange(kbuf.shape[1]) <= slot                     # [S]
  if cache is not None and cache[0] is not None:
    seen = jnp.concatenate([jnp.ones((cache[0].shape[1],), bool), seen])
    keys = jnp.concatenate([cache[0], keys], 1)
    values = jnp.concatenate([cache[1], values], 1)
  score = (q[:, None] * keys).sum(2) / np.sqrt(dh)              # [H, P + S, B]
  score = jnp.where(seen[None, :, None], score, -1e9)
  weight = jnp.exp(score - score.max(1, keepdims=True))
  y = (weight[:, :, None] * values).sum(1) / weight.sum(1)[:, None]   # [H, dh, B]
  return y.reshape(d, b).T[:, None], (kbuf, vbuf)


class Block(nn.Module):
  width: int
  heads: int
  mlp_ratio: int

  @nn.compact
  def __call__(self, x_BxLxD, c_BxD, mask_LxL=None, cache=None, buffer=None,
               steps: Optional[StepBuckets] = None):
    """Returns (x, cache). With a cache (k, v [B, H, P, dh] of the P earlier
    positions, or (None, None)) the queries attend to those and to themselves,
    and the returned cache holds all P + L positions.

    buffer (k, v [H, S, dh, B], p int32 scalar, may be traced): one query
    (L = 1) at slot p of a fixed-size buffer of its step's S tokens; its key
    and value are written at p, it attends to the cache (here k, v
    [H, P, dh, B] or (None, None)) and to slots <= p, and (x, (k, v)) comes
    back with the updated buffer (`_attend_buffer`, `sample_token`).

    steps (`StepBuckets`): each query attends only within its own generation
    step, all steps at once (teacher forcing with attention="scale")."""
    b, l, d = x_BxLxD.shape
    h, dh = self.heads, self.width // self.heads
    mod = nn.Dense(6 * d, kernel_init=nn.initializers.zeros, name="ada")(nn.silu(c_BxD))
    sh1, sc1, g1, sh2, sc2, g2 = jnp.split(mod[:, None, :], 6, -1)
    y = _modulate(nn.LayerNorm(use_scale=False, use_bias=False, name="ln1")(x_BxLxD), sh1, sc1)
    # Heads-major layout and plain matmuls: several times faster on XLA:CPU
    # than the equivalent 4-D einsums.
    qkv = nn.Dense(3 * d, name="qkv")(y)
    if steps is not None:
      y = _attend_within_steps(qkv, h, steps)
      return self._finish(x_BxLxD, y, sh2, sc2, g1, g2), cache
    if buffer is not None:
      y, cache = _attend_buffer(qkv, h, cache, buffer)
      return self._finish(x_BxLxD, y, sh2, sc2, g1, g2), cache
    if h == 1:   # [B, 1, L, dh] is a reshape: no transposes to pay for
      q, k, v = (a[:, None] for a in jnp.split(qkv, 3, -1))
    else:
      qkv = qkv.reshape(b, l, 3, h, dh).transpose(2, 0, 3, 1, 4)
      q, k, v = qkv[0], qkv[1], qkv[2]                    # [B, H, L, dh]
    if cache is not None:
      if cache[0] is not None:     # keys/values of the earlier scales
        k = jnp.concatenate([cache[0], k], 2)
        v = jnp.concatenate([cache[1], v], 2)
      cache = (k, v)
    att = jnp.matmul(q, jnp.swapaxes(k, -1, -2)) / np.sqrt(dh)
    if mask_LxL is not None:
      att = jnp.where(mask_LxL, att, -1e9)
    att = jax.nn.softmax(att, -1)
    y = jnp.matmul(att, v).transpose(0, 2, 1, 3).reshape(b, l, d)
    return self._finish(x_BxLxD, y, sh2, sc2, g1, g2), cache

  def _finish(self, x_BxLxD, y_BxLxD, sh2, sc2, g1, g2):
    """The output projection's residual, then the MLP's."""
    d = x_BxLxD.shape[-1]
    x = x_BxLxD + g1 * nn.Dense(d, name="proj")(y_BxLxD)
    y = _modulate(nn.LayerNorm(use_scale=False, use_bias=False, name="ln2")(x), sh2, sc2)
    y = nn.Dense(d, name="mlp_out")(nn.gelu(nn.Dense(self.mlp_ratio * d, name="mlp_in")(y)))
    return x + g2 * y


class GeneratorModules(nn.Module):
  cfg: GenConfig

  def setup(self):
    c = self.cfg
    self.start = self.param("start", nn.initializers.normal(0.02), (c.width,))
    self.pos = self.param("pos", nn.initializers.normal(0.02), (c.seq_len, c.width))
    self.level = self.param("level", nn.initializers.normal(0.02), (len(c.counts), c.width))
    self.null_condition = self.param("null_condition", nn.initializers.normal(0.02),
                                     (c.cond_dim,))
    self.in_proj = nn.Dense(c.width)
    if c.token_inputs == "learned":
      self.token_table = self.param("token_table", nn.initializers.normal(1.0),
                                    (c.codebook_size, c.channels))
    if c.sequential:
      self.prev_proj = nn.Dense(c.width)
    if c.budget_inputs:
      self.spend_table = self.param("spend_table", nn.initializers.zeros,
                                    (c.seq_len, c.codebook_size))
      self.budget_proj = nn.Dense(c.width)
    self.cond_in = nn.Dense(c.width)
    self.blocks = [Block(c.width, c.heads, c.mlp_ratio, name=f"block_{i}")
                   for i in range(c.depth)]
    self.final_ada = nn.Dense(2 * c.width, kernel_init=nn.initializers.zeros)
    self.final_ln = nn.LayerNorm(use_scale=False, use_bias=False)
    self.head = nn.Dense(c.codebook_size)

  def condition(self, cond_BxC: Optional[jax.Array], batch: int,
                drop_B: Optional[jax.Array] = None) -> jax.Array:
    """[B, d] condition embedding; None means the null condition. drop_B
    (bool [B]) swaps single rows for the null condition: classifier-free
    guidance training drops the condition of a random share of examples."""
    null = jnp.broadcast_to(self.null_condition, (batch, self.cfg.cond_dim))
    if cond_BxC is None:
      cond_BxC = null
    elif drop_B is not None:
      cond_BxC = jnp.where(drop_B[:, None], null, cond_BxC)
    return self.cond_in(cond_BxC)

  def budget(self, spent_BxP: jax.Array, cond_BxC: Optional[jax.Array],
             has_B: Optional[jax.Array] = None) -> jax.Array:
    """float32 [B, P, d]: the budget inputs of P positions (`budget_inputs`).

    spent: float32 [B, P], the spend so far at each position; cond: the
    condition [B, cond_dim] whose last entry is the requested cost, or None
    (null condition); has: float32 [B], 1 where the row is conditioned, 0
    where it reads the null condition (default: all 1 with a condition)."""
    b = spent_BxP.shape[0]
    if cond_BxC is None:
      req, has = jnp.zeros((b,)), jnp.zeros((b,))
    else:
      req = cond_BxC[:, -1]
      has = jnp.ones((b,)) if has_B is None else has_B
    feats = jnp.stack([spent_BxP, has[:, None] * (req[:, None] - spent_BxP),
                       jnp.broadcast_to(has[:, None], spent_BxP.shape)], -1)
    return self.budget_proj(feats)

  def _token_spend(self, codes_BxP: jax.Array, offset: int = 0) -> jax.Array:
    """float32 [B, P]: each token's entry of the fixed `spend_table`, for P
    consecutive positions offset.. (int32 codes [B, P])."""
    p = codes_BxP.shape[1]
    table = jax.lax.stop_gradient(self.spend_table)[offset:offset + p]     # [P, K]
    return table[jnp.arange(p)[None, :], codes_BxP]

  def spend(self, codes_BxP: jax.Array, offset: int = 0) -> jax.Array:
    """float32 [B]: the summed spend of P consecutive tokens at positions
    offset.. (int32 codes [B, P])."""
    return jnp.sum(self._token_spend(codes_BxP, offset), -1)

  def step_inputs(self, t: int, x_BxPxC: Optional[jax.Array], batch: int,
                  projected: bool = False) -> jax.Array:
    """float32 [B, P, d]: what the P = counts[t] positions of step t read,
    before a sequential generator adds the previous code's term
    (`sample_token`): the start vector (t = 0) or in_proj(x), plus the
    position and step embeddings.

    x: float32 [B, P, C_in] the step's next-scale inputs (None for t = 0);
    with projected=True, x is in_proj(x) already, [B, P, d] (the sampler
    projects before gathering: `model.projected_context_inputs`)."""
    c = self.cfg
    size = c.counts[t]
    pos = self.pos[c.offsets[t]:c.offsets[t] + size]
    if t == 0:
      x = jnp.broadcast_to(self.start, (batch, size, c.width))
    elif not projected:
      x = self.in_proj(x_BxPxC)
    else:
      x = x_BxPxC
    return x + pos + self.level[t]

  def _spent(self, tokens_BxL: jax.Array) -> jax.Array:
    """float32 [B, L]: the spend so far at each position under teacher
    forcing: the spend of every token of the earlier steps, as one matmul
    with a constant [L, L] matrix."""
    step_of = self.cfg.step_of
    earlier = (step_of[None, :] < step_of[:, None]).astype(np.float32)
    return self._token_spend(tokens_BxL) @ jnp.asarray(earlier).T

  def _head(self, x, c_BxD):
    sh, sc = jnp.split(self.final_ada(nn.silu(c_BxD))[:, None, :], 2, -1)
    return self.head(_modulate(self.final_ln(x), sh, sc))

  def __call__(self, inputs_BxLxC: jax.Array, cond_BxC: Optional[jax.Array] = None,
               drop_B: Optional[jax.Array] = None, prev_BxLxC: Optional[jax.Array] = None,
               tokens_BxL: Optional[jax.Array] = None):
    """Teacher-forced logits [B, L, K]. inputs: next-scale inputs at every
    position (rows of scale 1 are ignored: they read the start vector);
    drop_B: rows whose condition is replaced by the null one (see condition);
    prev: float32 [B, L, C] (2 C with `running_sum`), the previous token's
    code within its step (`previous_codes`), required with
    step_order="sequential", else unused; tokens: int32 [B, L], the
    teacher tokens, required with `budget_inputs` (their spend so far)."""
    c = self.cfg
    b = inputs_BxLxC.shape[0]
    cvec = self.condition(cond_BxC, b, drop_B)
    # `_embed` of every step at once: the first step reads the start vector
    step_of = c.step_of
    x = jnp.where((step_of == 0)[None, :, None], self.start, self.in_proj(inputs_BxLxC))
    if c.sequential:
      if prev_BxLxC is None:
        raise ValueError("a sequential generator needs the previous codes (prev).")
      x = x + self.prev_proj(prev_BxLxC)
    if c.budget_inputs:
      if tokens_BxL is None:
        raise ValueError("a generator with budget_inputs needs the teacher tokens.")
      x = x + self.budget(self._spent(tokens_BxL), cond_BxC,
                          None if drop_B is None else 1.0 - drop_B.astype(jnp.float32))
    x = x + self.pos + self.level[step_of]
    if c.attention == "scale":   # each step on its own: no L x L matrices
      steps = step_buckets(c.counts, c.sequential)
      for blk in self.blocks:
        x, _ = blk(x, cvec, steps=steps)
      return self._head(x, cvec)
    mask = jnp.asarray(attention_mask(c))
    for blk in self.blocks:
      x, _ = blk(x, cvec, mask)
    return self._head(x, cvec)

  def sample_scale(self, t: int, x_BxPxC, cvec_BxD, caches):
    """Logits [B, n_t^2, K] of scale t given the caches of scales < t (with
    attention="scale" nothing is cached: the caches come back unchanged)."""
    b = cvec_BxD.shape[0]
    x = self.step_inputs(t, x_BxPxC, b)
    new = []
    for blk, cache in zip(self.blocks, caches):
      if self.cfg.attention == "scale":
        x, _ = blk(x, cvec_BxD)
      else:
        x, cache = blk(x, cvec_BxD, None, cache)
      new.append(cache)
    return self._head(x, cvec_BxD), new

  def sample_token(self, p, e_Bx1xD, prev_Bx1xC, cvec_BxD, caches, buffers):
    """Sequential generators: logits [B, 1, K] of token p of its step.

    p: int32 scalar, the token's slot in its step (may be traced: the
    sampler scans over a step's tokens). e: float32 [B, 1, d], its row of
    `step_inputs`; prev: the code drawn at p - 1 (zeros for p = 0), and with
    `running_sum` the sum of the step's codes drawn so far. caches: per
    block, keys/values of the earlier steps it attends to ("causal"
    attention: k, v [H, P, dh, B] from `extend_caches`; (None, None) for
    none), left unchanged; buffers: per block (k, v [H, S, dh, B]) of this
    step's S tokens (`empty_buffers`), slot p written. Returns (logits,
    buffers).
    """
    if prev_Bx1xC is None:
      raise ValueError("a sequential generator needs the previous codes (prev).")
    x = e_Bx1xD + self.prev_proj(prev_Bx1xC)
    new = []
    for blk, cache, buf in zip(self.blocks, caches, buffers):
      x, buf = blk(x, cvec_BxD, None, cache, (buf[0], buf[1], p))
      new.append(buf)
    return self._head(x, cvec_BxD), new


def init_params(cfg: GenConfig, key: jax.Array):
  """Fresh generator parameters of a config (from zero inputs of batch 1)."""
  x = jnp.zeros((1, cfg.seq_len, cfg.in_dim))
  prev = jnp.zeros((1, cfg.seq_len, cfg.prev_dim)) if cfg.sequential else None
  toks = jnp.zeros((1, cfg.seq_len), jnp.int32) if cfg.budget_inputs else None
  cond = jnp.zeros((1, cfg.cond_dim)) if cfg.budget_inputs else None
  return GeneratorModules(cfg).init(key, x, cond, None, prev, toks)["params"]


def empty_buffers(cfg: GenConfig, batch: int, size: int):
  """Zero key/value buffers for `sample_token`, one (k, v) float32
  [H, size, dh, B] per block (batch last: `_attend_buffer`)."""
  shape = (cfg.heads, size, cfg.width // cfg.heads, batch)
  return [(jnp.zeros(shape), jnp.zeros(shape)) for _ in range(cfg.depth)]


def extend_caches(caches, buffers):
  """The caches of the earlier steps followed by a finished step's buffers
  (sequential sampling: k, v [H, P, dh, B], positions on axis 1)."""
  return [(k, v) if c is None else (jnp.concatenate([c, k], 1), jnp.concatenate([cv, v], 1))
          for (c, cv), (k, v) in zip(caches, buffers)]


def empty_caches(cfg: GenConfig, batch: int):
  """Empty key/value caches, one per block; they grow by concatenation, one
  scale at a time (cheaper on CPU than updating a preallocated buffer)."""
  del batch
  return [(None, None) for _ in range(cfg.depth)]
