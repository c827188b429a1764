"""A trained PNAG system (both stages) and its jitted sampler.

`PNAG` bundles the search space, the two configs and the parameters; it is
what `neuroprog.pnag.load(workdir)` returns and what `sample` takes.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from neuroprog.pnag import autoencoder as ae_lib
from neuroprog.pnag import generator as gen_lib
from neuroprog.pnag import msq
from neuroprog.pnag import spaces


@dataclasses.dataclass(frozen=True)
class PNAG:
  """Search space, stage configs and parameters of a trained system.

  Attributes:
    space: the `SearchSpace`.
    ae_cfg, gen_cfg: stage-1 and stage-2 configs (static).
    ae_params: encoder/decoder parameters; codebook: float32 [K, C].
    gen_params: generator parameters.
  """
  space: spaces.SearchSpace
  ae_cfg: ae_lib.AEConfig
  gen_cfg: gen_lib.GenConfig
  ae_params: Any
  codebook: jax.Array
  gen_params: Any

  @property
  def autoencoder(self) -> ae_lib.Autoencoder:
    return autoencoder_for(self.ae_cfg)

  @property
  def generator(self) -> gen_lib.GeneratorModules:
    return generator_for(self.gen_cfg)


@functools.lru_cache(maxsize=None)
def autoencoder_for(cfg: ae_lib.AEConfig) -> ae_lib.Autoencoder:
  """The stage-1 functions of a config (cached, so jitted code is reused)."""
  return ae_lib.Autoencoder(cfg)


@functools.lru_cache(maxsize=None)
def generator_for(cfg: gen_lib.GenConfig) -> gen_lib.GeneratorModules:
  """The stage-2 module of a config (cached)."""
  return gen_lib.GeneratorModules(cfg)


def teacher_inputs(indices, codebook_KxC, scales, size, node_sets=None,
                   new_entries: bool = False, later_twins: bool = False,
                   between_types: bool = False) -> jax.Array:
  """Next-scale inputs float32 [B, L, C_in] for teacher forcing from token maps.

  codebook: the vectors the tokens stand for; for new-entry tokens pass
  `input_table` (the codebook, or the generator's learned table).

  Block tokens (new_entries False): position block t holds the reconstruction
  after scales < t brought down to n_t (`msq.pool` with scale t's node set,
  None on the pyramid; zeros for t = 0, which the generator ignores),
  C_in = C. New-entry tokens: generation step g (two per scale,
  `msq.NewEntryLayout.groups`) reads the node context after steps < g of each
  token's two endpoints and of the whole sub-architecture, and its twin's
  code (`context_inputs`), C_in = 10 C (C more for each of `later_twins`
  and `between_types`); zeros for g = 0.
  """
  b, c = indices[0].shape[0], codebook_KxC.shape[1]
  if new_entries:
    codes = jnp.concatenate([codebook_KxC[i] for i in indices], 1)      # [B, L, C]
    return new_entry_teacher_inputs(codes, msq.new_entry_layout(node_sets, size),
                                    later_twins, between_types)
  nsets = msq.per_scale_nodes(scales, node_sets)
  parts = [jnp.zeros((b, scales[0] ** 2, c))]
  f_hat = jnp.zeros((b, size, size, c))
  for t in range(1, len(scales)):
    f_hat = f_hat + msq.upsample(codebook_KxC[indices[t - 1]], size, nsets[t - 1])
    parts.append(msq.pool(f_hat, scales[t], nsets[t]).reshape(b, -1, c))
  return jnp.concatenate(parts, 1)


def new_entry_teacher_inputs(codes_BxLxC: jax.Array, lay: msq.NewEntryLayout,
                             later_twins: bool = False,
                             between_types: bool = False) -> jax.Array:
  """float32 [B, L, C_in]: `context_inputs` of every generation step at once,
  from the whole token sequence's codes [B, L, C] (teacher forcing).

  Equal to running `context_add` and `context_inputs` step by step, as the
  sampler does, but as a few segment sums, one cumulative sum over the steps
  and static gathers (`msq.NewEntryLayout.teacher_tables`): the step loop
  unrolled DARTS's 40 steps into hundreds of small XLA ops, which cost most of
  a generator training step and of its compile time. No gradient flows
  through here (the inputs are built from token indices).
  """
  tab = lay.teacher_tables
  b, length, c = codes_BxLxC.shape
  num_groups, n = len(lay.groups), lay.size
  codes_LxBxC = jnp.swapaxes(codes_BxLxC, 0, 1)
  inc = jnp.stack([jax.ops.segment_sum(codes_LxBxC, seg, tab.num_segments)[:-1]
                   for seg in (tab.row_segment, tab.col_segment, tab.diag_segment)], 1)
  # The context a step reads holds the codes of the steps before it: one
  # strictly lower-triangular [G, G] matmul (XLA's cumsum on CPU is a
  # quadratic reduce-window, several times slower).
  before_GxG = np.tril(np.ones((num_groups, num_groups), np.float32), -1)
  ctx = (before_GxG @ inc.reshape(num_groups, -1)).reshape(num_groups, n, 3, b, c)
  inv = 1.0 / tab.present
  node_scale = np.stack([inv, inv, np.ones_like(inv)], 1)[:, :, None, None]    # [L, 3, 1, 1]
  whole_scale = np.stack([inv * inv, inv * inv, inv], 1)[:, :, None, None]

  def three(x_Lx3xBxC):
    return jnp.swapaxes(x_Lx3xBxC, 1, 2).reshape(length, b, 3 * c)

  node_i = three(ctx[tab.group, tab.rows] * node_scale)                   # [L, B, 3 C]
  node_j = three(ctx[tab.group, tab.cols] * node_scale)
  whole = three(ctx.sum(1)[tab.group] * whole_scale)
  padded = jnp.concatenate([codes_LxBxC, jnp.zeros((1, b, c), codes_LxBxC.dtype)])
  twin = padded[tab.twin]                                                # [L, B, C]
  parts = [node_i, node_j, whole, twin]
  if later_twins:
    parts.append(jax.ops.segment_sum(twin[tab.later_from], tab.later_to, length))
  if between_types:
    # sums over node ranges as differences of exclusive prefix sums over the
    # nodes (a [N+1, N] matmul), not a scatter over (token, node) pairs
    before_N1xN = np.tril(np.ones((n + 1, n), np.float32), -1)
    prefix = jnp.einsum("mk,gkbc->gmbc", before_N1xN, ctx[:, :, 2])      # [G, N+1, B, C]
    total = prefix[tab.group, tab.between_high] - prefix[tab.group, tab.between_low]
    parts.append(total * tab.between_weight[:, None, None])
  return jnp.swapaxes(jnp.concatenate(parts, -1), 0, 1)


def input_dim(channels: int, new_entries: bool, later_twins: bool = False,
              between_types: bool = False) -> int:
  """Width C_in of the generator's next-scale inputs (`teacher_inputs`)."""
  if not new_entries:
    return channels
  return (10 + int(later_twins) + int(between_types)) * channels


def context_start(batch: int, size: int, channels: int) -> jax.Array:
  """The empty node context float32 [B, 3, N, C] (see `context_add`)."""
  return jnp.zeros((batch, 3, size, channels))


def context_add(ctx_Bx3xNxC: jax.Array, codes_BxGxC: jax.Array,
                lay: msq.NewEntryLayout, g: int) -> jax.Array:
  """Adds generation step g's codes to the node context: [:, 0] each node's
  row sum, [:, 1] its column sum, [:, 2] its diagonal code (matmuls with the
  layout's constant one-hot matrices; no scatter)."""
  m = jnp.asarray(lay.endpoint_matrices[g])
  return ctx_Bx3xNxC + jnp.einsum("knp,bpc->bknc", m, codes_BxGxC)


def context_inputs(ctx_Bx3xNxC: jax.Array, lay: msq.NewEntryLayout, g: int,
                   prev_scale_BxPxC: Optional[jax.Array] = None,
                   later_twins: bool = False, between_types: bool = False) -> jax.Array:
  """float32 [B, G_g, 10 C] (C more per option below): what token (i, j) of
  generation step g reads, from the context after steps < g: node i's (row
  mean, column mean, diagonal code), node j's, their mean over the nodes
  present, and the code of its twin (`msq.NewEntryLayout.twins`: the same
  entry of the previous scale's new node; zeros where there is none). The means are over the nodes of the
  sub-architecture being drawn (n_{t-1} for a types step, n_t for a wiring
  step, whose new nodes carry only their diagonal codes); a node not drawn
  yet has zero context. prev_scale: the codes of scale t-1's tokens
  [B, P_{t-1}, C] (None at t = 0). g >= 1.

  Why the twin: node means cannot say which node a choice concerns. A MBV3
  layer slot may hold a layer only if the previous slot does, and the
  second operation of a DARTS node must read another input than the first:
  both are the previous new node's entry at the same place.

  Options, each C more (in this order after the twin):
  later_twins: the sum of the twins of the step's later tokens in the same
    column (`msq.NewEntryLayout.later_twin_matrices`): whether the previous
    new node took an input listed after this one. The second operation of a
    DARTS node reads an input listed after the first's (genotypes list a
    node's two inputs in increasing order), so at every candidate it must
    know whether the first took a later one; its own twin says only whether
    the first took this one.
  between_types: the mean diagonal code of the sub-architecture's nodes
    between i and j (`msq.NewEntryLayout.between_matrices`): a MBV3
    chain edge i -> j exists only if every slot between them is empty, which
    the endpoints' own context cannot say."""
  b, _, n, c = ctx_Bx3xNxC.shape
  t, rows, cols, present = lay.groups[g]
  scale = jnp.asarray([1.0 / present, 1.0 / present, 1.0])[:, None, None]
  node = (ctx_Bx3xNxC * scale).transpose(0, 2, 1, 3).reshape(b, n, 3 * c)
  whole = jnp.broadcast_to(node.sum(1, keepdims=True) / present, (b, len(rows), 3 * c))
  if prev_scale_BxPxC is None:
    twin = jnp.zeros((b, len(rows), c), ctx_Bx3xNxC.dtype)
  else:   # index P_{t-1} is the zero slot
    padded = jnp.concatenate([prev_scale_BxPxC, jnp.zeros((b, 1, c), prev_scale_BxPxC.dtype)],
                             1)
    twin = padded[:, lay.twins[g]]
  parts = [node[:, rows], node[:, cols], whole, twin]
  if later_twins:
    parts.append(jnp.einsum("pq,bqc->bpc", jnp.asarray(lay.later_twin_matrices[g]), twin))
  if between_types:
    parts.append(jnp.einsum("pm,bmc->bpc", jnp.asarray(lay.between_matrices[g]),
                            ctx_Bx3xNxC[:, 2]))
  return jnp.concatenate(parts, -1)


def projected_context_inputs(ctx_Bx3xNxC: jax.Array, lay: msq.NewEntryLayout, g: int,
                             prev_scale_BxPxC: Optional[jax.Array], kernel_CinxD: jax.Array,
                             later_twins: bool = False,
                             between_types: bool = False) -> jax.Array:
  """float32 [B, G_g, D]: `context_inputs(...) @ kernel`, the sampler's form.

  Same arguments as `context_inputs`, plus the generator's input projection
  kernel [C_in, D] (C_in = `input_dim`). Every part of the context is linear
  in what it gathers, so each part is projected to D first (per node, per
  previous-scale token) and the projections are gathered and summed: the
  gathers and the concatenation then move D floats per token instead of
  C_in (10-12 C), which cost the sequential sampler more than its tokens'
  arithmetic.
  """
  b, _, n, c = ctx_Bx3xNxC.shape
  _, rows, cols, present = lay.groups[g]
  widths = [3 * c, 3 * c, 3 * c, c] + [c] * (int(later_twins) + int(between_types))
  if sum(widths) != kernel_CinxD.shape[0]:
    raise ValueError(f"kernel has {kernel_CinxD.shape[0]} input rows; the context of "
                     f"these options is {sum(widths)} wide.")
  k_rows, k_cols, k_whole, k_twin, *k_more = jnp.split(kernel_CinxD,
                                                       np.cumsum(widths)[:-1], 0)
  scale = jnp.asarray([1.0 / present, 1.0 / present, 1.0])[:, None, None]
  node = (ctx_Bx3xNxC * scale).transpose(0, 2, 1, 3).reshape(b, n, 3 * c)
  out = (node @ k_rows)[:, rows] + (node @ k_cols)[:, cols]
  out = out + (node.sum(1) / present @ k_whole)[:, None]
  if prev_scale_BxPxC is not None:   # else every twin is the zero slot
    # index P_{t-1} is the zero slot, as in `context_inputs`
    padded = jnp.concatenate([prev_scale_BxPxC, jnp.zeros((b, 1, c), out.dtype)], 1)
    out = out + (padded @ k_twin)[:, lay.twins[g]]
    if later_twins:
      out = out + jnp.einsum("pq,bqd->bpd", jnp.asarray(lay.later_twin_matrices[g]),
                             (padded @ k_more[0])[:, lay.twins[g]])
  if between_types:
    out = out + jnp.einsum("pm,bmd->bpd", jnp.asarray(lay.between_matrices[g]),
                           ctx_Bx3xNxC[:, 2] @ k_more[-1])
  return out


def flat_tokens(indices) -> jax.Array:
  """int32 [B, L]: the token maps of all scales, coarse to fine, row-major."""
  return jnp.concatenate([i.reshape(i.shape[0], -1) for i in indices], 1)


def split_tokens(tokens_BxL: jax.Array, shapes) -> list:
  """The inverse of `flat_tokens`. shapes: per scale, an int n (an n x n map)
  or a shape tuple (`AEConfig.token_shapes`). Returns per scale int32
  [B, *shape]."""
  out, lo = [], 0
  for shape in shapes:
    shape = (shape, shape) if isinstance(shape, (int, np.integer)) else tuple(shape)
    size = int(np.prod(shape))
    out.append(tokens_BxL[:, lo:lo + size].reshape((-1,) + shape))
    lo += size
  return out


def input_table(gen_cfg: gen_lib.GenConfig, gen_params, codebook_KxC) -> jax.Array:
  """float32 [K, C]: what each code index stands for where the generator
  reads drawn tokens back (`teacher_inputs` of new-entry tokens, twins,
  `teacher_previous`): the codebook, or the generator's learned
  `token_table` (`GenConfig.token_inputs`)."""
  if gen_cfg.token_inputs == "learned":
    return gen_params["token_table"]
  return codebook_KxC


def through_table(x_BxLxSK: jax.Array, table_KxC: jax.Array) -> jax.Array:
  """float32 [B, L, S C]: inputs built with the identity as codebook (S
  chunks of K per position) mapped to those built with `table`.

  `teacher_inputs` and `teacher_previous` are linear in the vectors the
  tokens stand for, chunk by chunk, so inputs computed once with
  codebook = eye(K) and then multiplied by a learned table equal the inputs
  computed with that table, and the gradient to the table is this one
  matmul instead of a backward pass through every generation step's context
  (which took XLA minutes to compile for DARTS's 40 steps)."""
  b, l, sk = x_BxLxSK.shape
  k, c = table_KxC.shape
  y = x_BxLxSK.reshape(b, l, sk // k, k) @ table_KxC
  return y.reshape(b, l, (sk // k) * c)


def teacher_previous(gen_cfg: gen_lib.GenConfig, tokens_BxL, table_KxC):
  """The `prev` inputs of a sequential generator under teacher forcing
  (float32 [B, L, prev_dim], `generator.previous_codes`; table: `input_table`);
  None for a parallel one."""
  if not gen_cfg.sequential:
    return None
  return gen_lib.previous_codes(table_KxC[tokens_BxL], gen_cfg.counts,
                                gen_cfg.running_sum)


def generator_loss(gen: gen_lib.GeneratorModules, params, inputs_BxLxC, tokens_BxL,
                   cond_BxC=None, drop_B=None, prev_BxLxC=None):
  """Mean token cross-entropy and token accuracy of teacher-forced next-scale
  prediction. cond_BxC: float32 [B, cond_dim] or None (null condition);
  drop_B: bool [B], rows trained on the null condition instead (CFG);
  prev_BxLxC: `teacher_previous` (sequential generators)."""
  toks = tokens_BxL if gen.cfg.budget_inputs else None
  logits = gen.apply({"params": params}, inputs_BxLxC, cond_BxC, drop_B, prev_BxLxC, toks)
  logp = jax.nn.log_softmax(logits)
  ce = -jnp.mean(jnp.take_along_axis(logp, tokens_BxL[..., None], -1))
  acc = jnp.mean(logits.argmax(-1) == tokens_BxL)
  return ce, acc


class Samples(NamedTuple):
  """What `sample` returns. archs[i] is None where the graph is invalid."""
  archs: list
  ops: np.ndarray        # int32 [n, N]
  adj: np.ndarray        # float32 [n, N, N]
  valid: np.ndarray      # bool [n]
  # With per_scale=True: bool [n, T], column t < T-1 whether scale t's
  # accumulated map, plainly decoded, is a valid n_t-node sub-architecture
  # (`SearchSpace.is_valid_sub`); column T-1 is `valid`. Else None.
  scale_valid: Optional[np.ndarray] = None


DECODES = ("valid", "argmax")


# Largest exponent the mean-shifted fast path lets through: exp(80) * K is
# finite in float32 for K up to 1e3.
_MAX_EXPONENT = 80.0


def draw_tokens(key: Optional[jax.Array], logits: jax.Array, temperature: float = 1.0,
                top_k: int = 0, uniform: Optional[jax.Array] = None) -> jax.Array:
  """One code index per row from softmax(logits / temperature): int32 [...].

  logits: float32 [..., K]. top_k > 0 keeps the k largest logits of each row.
  uniform: float32 [..., 1] in [0, 1), the draws to use instead of drawing
  them from `key` (the sequential sampler draws a whole step's at once:
  random bits per token cost more than the token's arithmetic). Works
  under `jit`; deterministic in `key` (or `uniform`).

  Inverse-CDF sampling with one uniform per row (`jax.random.categorical`
  draws K Gumbels per row, so random bits would dominate the sampler on CPU).
  The row sums (mean, CDF, count) are matmuls with constant matrices: XLA:CPU
  lowers sums and cumulative sums along a short last axis to slow
  reduce-windows (BUILD_NOTES.md, "bench_pnag"). Logits of -inf (masked codes) get
  probability 0. Softmax is shift-invariant, so the rows
  are shifted by their mean, and only if some logit lies more than
  _MAX_EXPONENT above its row mean (where exp would overflow) is the batch
  redone with the usual max shift, so the result is exact either way.
  """
  k = logits.shape[-1]
  upper = jnp.triu(jnp.ones((k, k), jnp.float32))
  z = logits.astype(jnp.float32) / temperature
  if top_k:
    top = jax.lax.top_k(z, top_k)[0]
    z = jnp.where(z < top[..., -1:], -jnp.inf, z)
    cdf = jnp.exp(z - top[..., :1]) @ upper
  else:
    cdf = jnp.exp(jnp.minimum(z - z @ jnp.full((k, 1), 1.0 / k, jnp.float32),
                              _MAX_EXPONENT)) @ upper
    # A clipped logit alone adds exp(_MAX_EXPONENT) to its row's total, so
    # this test catches every clipped row (and a few that merely come close);
    # written as "not below" so that a NaN total (a row mean of -inf, from
    # masked logits) takes the exact path too.
    fast_ok = jnp.all(cdf[..., -1] < np.exp(_MAX_EXPONENT))
    cdf = jax.lax.cond(
        fast_ok, lambda: cdf,
        lambda: jnp.exp(z - jnp.max(z, -1, keepdims=True)) @ upper)
  if uniform is None:
    uniform = jax.random.uniform(key, logits.shape[:-1] + (1,))
  u = uniform * cdf[..., -1:]
  below = (cdf < u).astype(jnp.float32) @ jnp.ones((k,), jnp.float32)
  return jnp.minimum(below, k - 1).astype(jnp.int32)


def _sample_graphs(ae_cfg, gen_cfg, n, temperature, top_k, guidance, space_name=None,
                   per_scale=False):
  """The jitted function (ae_params, codebook, gen_params, key, cond) -> (ops, adj).

  space_name None: plain decoding (argmax type per node, adjacency logit > 0);
  a space name: that space's constrained decoder (`SearchSpace.project`).
  per_scale: also return, for every scale t < T, the plain decoding of its
  accumulated map at its nodes: ((ops, adj), ((ops_t [n, n_t], adj_t
  [n, n_t, n_t]), ...)).
  """
  project = None if space_name is None else spaces.get(space_name).project
  ae = autoencoder_for(ae_cfg)
  gen = generator_for(gen_cfg)
  scales, size = gen_cfg.scales, ae_cfg.num_nodes
  new = ae_cfg.scale_tokens == "new"
  lay = msq.new_entry_layout(ae_cfg.node_sets, size) if new else None

  if gen_cfg.budget_inputs and not (new and gen_cfg.sequential):
    raise ValueError("budget_inputs are sampled only with new-entry tokens drawn "
                     "sequentially (scale_tokens='new', step_order='sequential').")

  def run(ae_params, codebook, gen_params, key, cond_BxC):
    guided = cond_BxC is not None and guidance != 1.0
    b = 2 * n if guided else n
    v = {"params": gen_params}
    # budget inputs: the spend of the tokens drawn so far ([n], shared by the
    # guided pair of rows) and which of the b rows are conditioned
    spent = jnp.zeros((n,))
    if guided:
      budget_cond = jnp.concatenate([cond_BxC, cond_BxC])
      has = jnp.concatenate([jnp.ones((n,)), jnp.zeros((n,))])
    else:
      budget_cond, has = cond_BxC, None
    cvec = gen.apply(v, cond_BxC, n, method=gen_lib.GeneratorModules.condition)
    if guided:   # classifier-free guidance: conditional and null rows together
      cnull = gen.apply(v, None, n, method=gen_lib.GeneratorModules.condition)
      cvec = jnp.concatenate([cvec, cnull])
    caches = gen_lib.empty_caches(gen_cfg, b)
    c = ae_cfg.channels
    # what the generator reads back for a drawn index (context, twins,
    # previous token); the feature map itself always takes the codebook
    table = input_table(gen_cfg, gen_params, codebook) if new else codebook

    def guide(logits):
      return logits[n:] + guidance * (logits[:n] - logits[n:]) if guided else logits

    def draw(step, x):   # the generator's logits for one step, then one code per token
      nonlocal caches
      if gen_cfg.sequential:
        return draw_sequential(step, x, projected=new)
      logits, caches = gen.apply(v, step, x, cvec, caches,
                                 method=gen_lib.GeneratorModules.sample_scale)
      return draw_tokens(jax.random.fold_in(key, step), guide(logits), temperature, top_k)

    def draw_sequential(step, x, projected=False):
      # One token at a time, each reading the last code, as a scan over the
      # step's tokens with fixed-size key/value buffers: one traced body per
      # step, so compile time does not grow with the number of tokens. The
      # step's inputs are embedded and its uniforms drawn before the scan,
      # so the body holds only what depends on the previous token.
      nonlocal caches
      count = gen_cfg.counts[step]
      earlier = (gen_lib.empty_caches(gen_cfg, b) if gen_cfg.attention == "scale"
                 else caches)   # "scale": a step attends only to itself
      e = gen.apply(v, step, x, b, projected, method=gen_lib.GeneratorModules.step_inputs)
      if gen_cfg.budget_inputs:
        s_b = jnp.concatenate([spent, spent]) if guided else spent
        e = e + gen.apply(v, s_b[:, None], budget_cond, has,
                          method=gen_lib.GeneratorModules.budget)
      # token p's uniforms from fold_in(step key, p), as drawn one token at a
      # time before, so a key gives the same samples; all at once, outside
      # the scan (random bits per token cost more than the token's arithmetic)
      step_key = jax.random.fold_in(key, step)
      uniforms = jax.vmap(lambda p: jax.random.uniform(jax.random.fold_in(step_key, p),
                                                       (n, 1)))(jnp.arange(count))

      def body(carry, inp):
        prev, bufs = carry
        p, e_p, u_p = inp
        logits, bufs = gen.apply(v, p, e_p[:, None], prev, cvec, earlier, bufs,
                                 method=gen_lib.GeneratorModules.sample_token)
        idx = draw_tokens(None, guide(logits), temperature, top_k, uniform=u_p[:, None])
        last = table[idx]
        if guided:
          last = jnp.concatenate([last, last])
        if gen_cfg.running_sum:   # [last code, sum of the step's codes so far]
          last = jnp.concatenate([last, prev[..., c:] + last], -1)
        return (last, bufs), idx[:, 0]

      # The scan runs in chunks whose buffers hold only the slots written so
      # far (`token_chunks`): a token reads its chunk's end, not the whole
      # step, and attention over the buffer is most of a token's memory
      # traffic. Masked slots weigh exactly zero either way.
      carry = (jnp.zeros((b, 1, gen_cfg.prev_dim)), gen_lib.empty_buffers(gen_cfg, b, 0))
      e_T = jnp.swapaxes(e, 0, 1)
      idx = []
      for lo, hi in token_chunks(count):
        prev, bufs = carry
        bufs = [tuple(jnp.pad(a, ((0, 0), (0, hi - a.shape[1]), (0, 0), (0, 0))) for a in kv)
                for kv in bufs]
        carry, idx_chunk = jax.lax.scan(
            body, (prev, bufs), (jnp.arange(lo, hi), e_T[lo:hi], uniforms[lo:hi]))
        idx.append(idx_chunk)
      bufs = carry[1]
      if gen_cfg.attention != "scale":
        caches = gen_lib.extend_caches(earlier, bufs)
      return jnp.concatenate(idx).T

    x = None
    inter = []
    if new:
      # New-entry tokens: the running node context and the codes so far; two
      # generation steps per scale (msq.NewEntryLayout.groups), the new
      # nodes' types, then their wiring, the scale's map complete after both.
      ctx, codes = context_start(n, size, c), []
      last_step = {t: g for g, (t, _, _, _) in enumerate(lay.groups)}   # scale -> its last step
      scale_codes = {}   # scale -> codes of its steps, [n, *, C] each
      for g, (t, _, _, _) in enumerate(lay.groups):
        if g > 0:
          prev = None if t == 0 else jnp.concatenate(scale_codes[t - 1], 1)
          if gen_cfg.sequential:   # in_proj applied before the gathers
            proj = gen_params["in_proj"]
            x = projected_context_inputs(ctx, lay, g, prev, proj["kernel"],
                                         gen_cfg.later_twins,
                                         gen_cfg.between_types) + proj["bias"]
          else:
            x = context_inputs(ctx, lay, g, prev, gen_cfg.later_twins, gen_cfg.between_types)
          if guided:
            x = jnp.concatenate([x, x])
        idx = draw(g, x)
        if gen_cfg.budget_inputs:
          spent = spent + gen.apply(v, idx, gen_cfg.offsets[g],
                                    method=gen_lib.GeneratorModules.spend)
        codes.append(codebook[idx])
        read = table[idx]
        scale_codes.setdefault(t, []).append(read)
        ctx = context_add(ctx, read, lay, g)
        if per_scale and g == last_step[t] and t < len(scales) - 1:
          inter.append(ae_lib.plain_decode(*ae.decode_map(
              ae_params, ae.scale_view(lay.to_map(codes, t), t))))
      f_final = lay.to_map(codes, len(scales) - 1)
    else:   # block tokens / the pyramid: the accumulated map itself
      f_hat = jnp.zeros((n, size, size, c))
      nsets = msq.per_scale_nodes(scales, ae_cfg.node_sets)
      for t, shape in enumerate(ae_cfg.token_shapes):
        if t > 0:
          if per_scale:
            inter.append(ae_lib.plain_decode(*ae.decode_map(
                ae_params, ae.scale_view(f_hat, t - 1))))
          x = msq.pool(f_hat, scales[t], nsets[t]).reshape(n, scales[t] ** 2, c)
          if guided:
            x = jnp.concatenate([x, x])
        idx = draw(t, x).reshape((n,) + shape)
        f_hat = f_hat + msq.upsample(codebook[idx], size, nsets[t])
      f_final = f_hat
    op_logits, adj_logits = ae.decode_map(ae_params, f_final)
    final = (project(op_logits, adj_logits) if project is not None
             else ae_lib.plain_decode(op_logits, adj_logits))
    return (final, tuple(inter)) if per_scale else final

  return run


def token_chunks(count: int, first: int = 8) -> list[tuple[int, int]]:
  """[(lo, hi), ...]: how the sequential sampler splits a step's `count`
  tokens into scans, ends at first, 2 first, 4 first, ..., and count; the
  tokens of chunk [lo, hi) attend over a buffer of hi slots. E.g. 42 tokens:
  (0, 8), (8, 16), (16, 32), (32, 42): 27 slots read per token on average
  instead of 42, at four scan bodies instead of one."""
  if count < 1 or first < 1:
    raise ValueError(f"token_chunks needs count, first >= 1, got {count}, {first}.")
  out, lo, hi = [], 0, first
  while lo < count:
    out.append((lo, min(hi, count)))
    lo, hi = hi, 2 * hi
  return out


@functools.lru_cache(maxsize=32)
def sampler(ae_cfg, gen_cfg, n: int, temperature: float = 1.0, top_k: int = 0,
            guidance: float = 1.0, space_name: Optional[str] = None,
            per_scale: bool = False):
  """`jit`-compiled graph sampler for a batch of n (cached per configuration).

  Returns f(ae_params, codebook, gen_params, key, cond [n, cond_dim] or None)
  -> (ops int32 [n, N], adj float32 [n, N, N]). Everything from the first
  scale's logits to the decoded graph is one XLA program. With `space_name`,
  graphs are decoded by that space's `project` (always valid); without, by
  plain argmax / threshold. The token maps drawn for a key are the same
  either way.
  """
  if temperature <= 0:
    raise ValueError(f"temperature must be > 0, got {temperature}.")
  if not 0 <= top_k <= gen_cfg.codebook_size:
    raise ValueError(f"top_k must lie in 0..{gen_cfg.codebook_size}, got {top_k}.")
  return jax.jit(_sample_graphs(ae_cfg, gen_cfg, n, temperature, top_k, guidance,
                                space_name, per_scale),
                 compiler_options=_sampler_compiler_options())


def _sampler_compiler_options() -> Optional[dict]:
  """Per-program XLA options for the sampler (None: the defaults).

  On CPU, XLA fuses matmuls with their element-wise neighbours into YNNPACK
  kernels, and for each such fusion it materialises every scalar constant
  (the attention scale, GELU's coefficients) as a full-size array, which
  costs the sampler more than the fusion saves; so those fusions are off for
  this one program (BUILD_NOTES.md, "bench_pnag"), and other programs keep
  XLA's defaults. Other backends ignore CPU options, so none
  are passed there.
  """
  if jax.default_backend() != "cpu":
    return None
  return {"xla_cpu_experimental_ynn_fusion_type": ""}


def sample(model: PNAG, key: jax.Array, n: int, condition=None, *,
           temperature: float = 1.0, top_k: int = 0, guidance: float = 1.0,
           decode: str = "argmax", batch_size: int = 4096,
           per_scale: bool = False) -> Samples:
  """Draws n architectures from a trained PNAG.

  Args:
    model: a trained `PNAG` (e.g. `neuroprog.pnag.load(workdir)`).
    key: a JAX PRNG key.
    n: number of architectures (drawn in jitted batches of `batch_size`).
    condition: None (the learned null condition) or float32 [n, cond_dim]
      (or [cond_dim], broadcast) for the conditional generator.
    temperature, top_k: sampling of each token (top_k 0: no truncation).
    guidance: classifier-free guidance scale (1.0: plain conditional).
    decode: "argmax" (default): the most probable type per node and every
      adjacency entry with logit > 0, as a generator's validity is usually
      measured (invalid graphs come back as None); "valid": each generated
      feature map is decoded to the most probable valid graph under the
      decoder's logits (`SearchSpace.project`), so every sample is an
      architecture of the space. Same key, same token maps.
    batch_size: architectures per jitted call.
    per_scale: also decode every intermediate scale plainly and check it with
      the space's `is_valid_sub` (`Samples.scale_valid`).

  Returns:
    `Samples(archs, ops, adj, valid, scale_valid)`; archs[i] is the decoded
    architecture, or None where the generated graph is not valid in the space.
  """
  if not isinstance(n, int) or n < 1:
    raise ValueError(f"n must be a positive int, got {n!r}.")
  if decode not in DECODES:
    raise ValueError(f"decode={decode!r}; allowed: {list(DECODES)}.")
  cond = None
  if condition is not None:
    cond = jnp.asarray(condition, jnp.float32)
    if cond.ndim == 1:
      cond = jnp.broadcast_to(cond, (n, cond.shape[0]))
    if cond.shape != (n, model.gen_cfg.cond_dim):
      raise ValueError(f"condition must be [{n}, {model.gen_cfg.cond_dim}] or "
                       f"[{model.gen_cfg.cond_dim}], got {tuple(cond.shape)}.")
  ops, adj, inter_valid = [], [], []
  space = model.space
  for i, lo in enumerate(range(0, n, batch_size)):
    m = min(batch_size, n - lo)
    fn = sampler(model.ae_cfg, model.gen_cfg, m, float(temperature), int(top_k),
                 float(guidance), space.name if decode == "valid" else None,
                 bool(per_scale))
    out = fn(model.ae_params, model.codebook, model.gen_params,
             jax.random.fold_in(key, i), None if cond is None else cond[lo:lo + m])
    if per_scale:
      out, inter = out
      inter_valid.append(np.array(
          [[space.is_valid_sub(o, a) for o, a in zip(np.asarray(ot), np.asarray(at))]
           for ot, at in inter], bool).reshape(len(inter), m).T)
    ops.append(np.asarray(out[0]))
    adj.append(np.asarray(out[1]))
  ops, adj = np.concatenate(ops), np.concatenate(adj)
  archs = [space.try_decode(o, a) for o, a in zip(ops, adj)]
  valid = np.array([a is not None for a in archs])
  scale_valid = None
  if per_scale:
    scale_valid = np.concatenate([np.concatenate(inter_valid), valid[:, None]], 1)
  return Samples(archs, ops, adj, valid, scale_valid)
