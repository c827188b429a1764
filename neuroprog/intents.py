"""Intents given as examples: a few (input grid, output grid) pairs -> u.

A label intent is a feature vector the task computes from a name it knows
(`Task.features`: 1D-ARC's one-hot family and parameter). An example intent is
what a user with a new task actually has: k support pairs. `ExampleSetEncoder`
reads them and returns the intent vector u float32[B, F_u] that any
meta-learner reads in place of the label features; `ExampleIntentModel` wraps a
meta-learner with it, so the pair (encoder, learner) trains end to end through
`execute` and the family and parameter are never an input.

Shapes. A batch of support sets is a `SupportSet`: x and y int32[B, K, L]
(grids padded with the task's pad token to L = the target's max_len) and mask
bool[B, K] (True for the pairs that are there; k = mask.sum(-1) may differ per
row, 1 <= k <= K). Everything here is pure jnp and jittable; the Python
checks in `check_pairs` run before any array is built.

Why this encoder. Whether a pair is a shift, a flip or a recolour is a
relation between cells at different positions of the input and the output, so
each pair is read by self-attention over its 2L cells (input then output,
each with its position and side), then pooled over its cells. The set of pairs
is pooled by a masked mean: invariant to the order of the pairs by
construction, and defined for any k.

The direct baseline's few-shot form, `InContextModel`, reads the support
pairs and each query grid itself (cross-attention to the support cells) and
emits no θ; with config.intent="examples" it is the run's "direct" entry.

Label readout (both models, `label_dim` > 0). A linear head from the intent
representation (the encoder's u; the in-context model's pooled support memory)
to the task's label features float32[B, F], trained as an auxiliary loss
(`label_loss`, weighted by `label_weight`) on training intents only. The
label never enters the forward pass that makes θ or the outputs; it is a
training target that asks the representation to carry the family and the
parameter as linear coordinates, which the end-to-end gradient through a
tied hypernetwork delivers to the encoder only weakly.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, NamedTuple, Optional, Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from neuroprog import meta, specs as specs_lib

MAX_SHOTS = 5
# Options of the encoder (config.intent_encoder): the same encoder serves every
# meta-learner of a run, so their comparison stays capacity-matched.
# pair_stats (0 or 1): add `pair_relations` to every pair's pooled vector.
ENCODER_DEFAULTS = {"width": 32, "heads": 4, "layers": 1, "out_dim": 16, "pair_stats": 0}
# Offsets -MAX_OFFSET..MAX_OFFSET of the occupancy cross-correlation.
MAX_OFFSET = 8
# Sharpness of the soft argmax over that correlation: a neighbouring offset of
# a bar of length l scores (l - 1) / l, so at 50 it weighs at most e^-50/l.
OFFSET_SHARPNESS = 50.0


class SupportSet(NamedTuple):
  """x, y: int32[B, K, L] padded grids; mask: bool[B, K], True where a pair is."""
  x: jax.Array
  y: jax.Array
  mask: jax.Array


def pair_relations(x, y, pad: int, n_colours: int = 10) -> jax.Array:
  """Fixed statistics of a pair's relation: x, y int[..., L] -> float32[..., S].

  S = 2 * MAX_OFFSET + 1 + 2 * n_colours + 4. Occupied cells are those that are
  neither background (0) nor padding. Per pair:
    - occupancy cross-correlation c_d, d = -MAX_OFFSET..MAX_OFFSET: the share
      of the output's occupied cells i whose input cell i - d is occupied;
    - displacement / 10: the soft argmax of c_d (sum_d d softmax(50 c)_d);
    - occupancy ratio: occupied output cells / occupied input cells;
    - colour histograms of the occupied input and output cells (n_colours - 1
      each, shares) and their mean colours / n_colours;
    - the share of cells that change, and the grid length / L.

  Why these: a shift, a stretch or a recolour is a relation between cells at
  different positions of input and output, which self-attention over
  learned absolute positions must discover; these give it as numbers, and the
  displacement and ratio are linear in a move's amount and a scale's factor,
  so a learner reading them can interpolate to amounts it was not trained on.
  No parameters, so the statistic is the same for every meta-learner.
  """
  length = x.shape[-1]
  present = (x != pad).astype(jnp.float32)
  occ_x = ((x != 0) & (x != pad)).astype(jnp.float32)
  occ_y = ((y != 0) & (y != pad)).astype(jnp.float32)
  n_x = jnp.maximum(occ_x.sum(-1), 1.0)
  n_y = jnp.maximum(occ_y.sum(-1), 1.0)
  m = MAX_OFFSET
  padded = jnp.pad(occ_x, [(0, 0)] * (x.ndim - 1) + [(m, m)])
  offsets = np.arange(-m, m + 1)
  # corr[..., j]: input shifted right by offsets[j], i.e. x[i - d] at cell i.
  corr = jnp.stack([(occ_y * padded[..., m - d:m - d + length]).sum(-1) for d in offsets],
                   -1) / n_y[..., None]
  shift = (jax.nn.softmax(OFFSET_SHARPNESS * corr, -1) * offsets).sum(-1)
  colours = jnp.arange(1, n_colours)
  hist_x = (x[..., None] == colours).astype(jnp.float32).sum(-2) / n_x[..., None]
  hist_y = (y[..., None] == colours).astype(jnp.float32).sum(-2) / n_y[..., None]
  changed = ((x != y) & (x != pad)).astype(jnp.float32).sum(-1) / jnp.maximum(
      present.sum(-1), 1.0)
  scalars = jnp.stack([
      shift / 10.0, occ_y.sum(-1) / n_x,
      (hist_x * colours).sum(-1) / n_colours, (hist_y * colours).sum(-1) / n_colours,
      changed, present.sum(-1) / length], -1)
  return jnp.concatenate([corr, hist_x, hist_y, scalars], -1)


# Output gain of the gated parameter head. The weights that read a parameter
# feature (k / 10) off the pair statistics are O(0.1-1) (a move's
# displacement / 10 is k / 10; a stretch's occupancy ratio is k), and Adam
# moves a weight by about the learning rate per step, so from a zero start
# they would take thousands of steps at 3e-4; with the gain they take hundreds.
PARAM_HEAD_GAIN = 10.0


def mean_pair_relations(support: SupportSet, pad: int, n_colours: int = 10) -> jax.Array:
  """`pair_relations` averaged over the present pairs of each support set:
  float32[B, S] for B support sets."""
  stats_BxKxS = pair_relations(support.x, support.y, pad, n_colours)
  m_BxKx1 = support.mask.astype(jnp.float32)[..., None]
  return (stats_BxKxS * m_BxKx1).sum(1) / jnp.maximum(m_BxKx1.sum(1), 1.0)


class ExampleSetEncoder(nn.Module):
  """SupportSet -> u float32[B, out_dim] (layer-normed: unit scale, like the
  label features the meta-learners are initialised for).

  pair_stats: with 1, every pair's pooled vector is concatenated with
  `pair_relations` of the pair before the pair projection.
  """
  vocab_size: int
  max_len: int
  pad: int
  width: int = 32
  heads: int = 4
  layers: int = 1
  out_dim: int = 16
  pair_stats: int = 0

  def __post_init__(self):
    # pair_relations reads the colours as the tokens below the pad.
    if self.pair_stats and self.pad != self.vocab_size - 1:
      raise ValueError(f"intent_encoder.pair_stats reads colours 0..vocab_size - 2 with the "
                       f"pad last; got pad={self.pad}, vocab_size={self.vocab_size}.")
    super().__post_init__()

  @nn.compact
  def __call__(self, support: SupportSet) -> jax.Array:
    x, y, mask = support
    b, k, length = x.shape
    w = self.width
    tok = nn.Embed(self.vocab_size, w, name="token")
    pos = self.param("position", nn.initializers.normal(0.02), (length, w))
    side = self.param("side", nn.initializers.normal(0.02), (2, w))
    cells = jnp.concatenate([tok(x) + pos + side[0], tok(y) + pos + side[1]], 2)
    cells = cells.reshape(b * k, 2 * length, w)                       # [B*K, 2L, W]
    present = jnp.concatenate([x != self.pad, y != self.pad], 2).reshape(b * k, 2 * length)
    attn_mask = present[:, None, None, :] & present[:, None, :, None]
    for i in range(self.layers):
      h = nn.LayerNorm(name=f"ln_attn_{i}")(cells)
      cells = cells + nn.MultiHeadDotProductAttention(
          num_heads=self.heads, qkv_features=w, name=f"attn_{i}")(h, h, mask=attn_mask)
      h = nn.LayerNorm(name=f"ln_mlp_{i}")(cells)
      cells = cells + nn.Dense(w, name=f"mlp_out_{i}")(
          nn.gelu(nn.Dense(2 * w, name=f"mlp_in_{i}")(h)))
    weight = present.astype(cells.dtype)[..., None]
    pair = (cells * weight).sum(1) / jnp.maximum(weight.sum(1), 1.0)   # [B*K, W]
    pair = nn.LayerNorm(name="ln_pair")(pair)
    if self.pair_stats:
      stats = pair_relations(x, y, self.pad, self.vocab_size - 1)       # [B, K, S]
      pair = jnp.concatenate([pair, stats.reshape(b * k, -1)], -1)
    pair = nn.Dense(w, name="pair")(pair).reshape(b, k, w)
    pair = nn.gelu(pair)
    m = mask.astype(pair.dtype)[..., None]
    pooled = (pair * m).sum(1) / jnp.maximum(m.sum(1), 1.0)           # [B, W]
    u = nn.Dense(self.out_dim, name="out")(nn.gelu(nn.Dense(w, name="set")(pooled)))
    return nn.LayerNorm(use_scale=False, use_bias=False, name="ln_out")(u)


class MemoryAttention(nn.Module):
  """Query grids x float32[B, n, L, d] attend to their intent's memory
  float32[B, M, d] (present bool[B, M]) -> float32[B, n, L, d].

  Parameters and result are those of flax's MultiHeadDotProductAttention on
  the memory broadcast to each of the n grids, but the memory's keys and values
  are projected once per intent and shared by its grids; broadcasting first
  would repeat that projection n times (most of a step's FLOPs at n = 32).
  """
  num_heads: int

  @nn.compact
  def __call__(self, x, memory, present):
    d = x.shape[-1]
    dh = d // self.num_heads
    proj = functools.partial(nn.DenseGeneral, features=(self.num_heads, dh))
    q = proj(name="query")(x)                                           # [B, n, L, H, dh]
    k, v = proj(name="key")(memory), proj(name="value")(memory)         # [B, M, H, dh]
    logits = jnp.einsum("bnlhc,bmhc->bnlhm", q / np.sqrt(dh).astype(q.dtype), k)
    logits = jnp.where(present[:, None, None, None, :], logits, jnp.finfo(logits.dtype).min)
    out = jnp.einsum("bnlhm,bmhc->bnlhc", jax.nn.softmax(logits, -1), v)
    return nn.DenseGeneral(d, axis=(-2, -1), name="out")(out)


class InContextTransformer(nn.Module):
  """The in-context direct baseline: (SupportSet, query grids int[B, n, L]) ->
  logits float32[B, n, L, vocab_size], no θ in between.

  The support cells of an intent (input and output of every present pair,
  each cell with its position and side) are encoded once, by `n_layers`
  pre-LN self-attention blocks, into a memory; each query grid is read by
  `n_layers` blocks of self-attention over its own cells, cross-attention to
  its intent's memory and an MLP, and answered per cell. No pair index is
  embedded, so the model is invariant to the order of the pairs, as the
  example-set encoder is. Padding cells and absent pairs are masked.
  """
  vocab_size: int
  max_len: int
  pad: int
  d_model: int
  n_heads: int
  n_layers: int
  mlp_ratio: int
  label_dim: int = 0

  def _block(self, h, mask, name, memory=None, present=None):
    d = self.d_model
    x = nn.LayerNorm(name=f"{name}_ln_self")(h)
    h = h + nn.MultiHeadDotProductAttention(num_heads=self.n_heads, name=f"{name}_self")(
        x, x, mask=mask)
    if memory is not None:
      x = nn.LayerNorm(name=f"{name}_ln_cross")(h)
      h = h + MemoryAttention(num_heads=self.n_heads, name=f"{name}_cross")(
          x, memory, present)
    x = nn.LayerNorm(name=f"{name}_ln_mlp")(h)
    return h + nn.Dense(d, name=f"{name}_mlp_out")(
        nn.gelu(nn.Dense(self.mlp_ratio * d, name=f"{name}_mlp_in")(x)))

  @nn.compact
  def __call__(self, support: SupportSet, tokens, return_labels: bool = False):
    """logits float32[B, n, L, vocab]; with return_labels (needs label_dim > 0)
    also the label readout float32[B, label_dim] of the pooled memory."""
    sx, sy, pair_mask = support
    b, k, length = sx.shape
    d = self.d_model
    tok = nn.Embed(self.vocab_size, d, name="token")
    pos = self.param("position", nn.initializers.normal(1.0), (length, d))
    side = self.param("side", nn.initializers.normal(1.0), (3, d))   # in, out, query
    mem = jnp.concatenate([tok(sx) + pos + side[0], tok(sy) + pos + side[1]], 2)
    mem = mem.reshape(b, 2 * k * length, d)
    present = (jnp.concatenate([sx != self.pad, sy != self.pad], 2)
               & pair_mask[..., None]).reshape(b, 2 * k * length)
    for i in range(self.n_layers):
      mem = self._block(mem, present[:, None, None, :] & present[:, None, :, None],
                        f"memory_{i}")
    mem = nn.LayerNorm(name="memory_ln")(mem)
    h = tok(tokens) + pos + side[2]                                   # [B, n, L, d]
    keep = tokens != self.pad
    for i in range(self.n_layers):
      h = self._block(h, keep[..., None, None, :], f"query_{i}", mem, present)
    logits = nn.Dense(self.vocab_size, name="out")(nn.LayerNorm(name="query_ln")(h))
    if not return_labels:
      return logits
    if not self.label_dim:
      raise ValueError("return_labels needs label_dim > 0.")
    weight = present.astype(mem.dtype)[..., None]
    pooled = (mem * weight).sum(1) / jnp.maximum(weight.sum(1), 1.0)  # [B, d]
    return logits, nn.Dense(self.label_dim, name="label_head")(pooled)


@dataclasses.dataclass(frozen=True, eq=False)
class InContextModel:
  """The direct baseline for example intents: reads the support pairs and
  the query grids itself (`InContextTransformer`), emits no θ.

  params: {"net": the transformer's params}. config: its options (the direct
  baseline's token keys: d_model, n_heads, n_layers, mlp_ratio).
  label_weight: weight of the label-readout loss (`label_loss`); the net's
  label_dim is the task's feature width when it is > 0, else 0. label_units:
  per-feature multipliers of that loss's error (`label_error`); None: 1.
  """
  name: str
  spec: specs_lib.Spec
  config: Any
  net: InContextTransformer
  shots: int
  label_weight: float = 0.0
  label_units: Optional[tuple[float, ...]] = None
  is_direct = True

  def _init(self, key, probe: SupportSet):
    x = jnp.zeros((1, 1, self.net.max_len), jnp.int32)
    return {"net": self.net.init(key, jax.tree_util.tree_map(lambda a: a[:1], probe),
                                 x, return_labels=bool(self.net.label_dim))["params"]}

  def label_prediction(self, params, support: SupportSet) -> jax.Array:
    """The label readout float32[B, F] of B support sets (label_dim > 0)."""
    x = jnp.zeros((support.x.shape[0], 1, self.net.max_len), jnp.int32)
    return self.net.apply({"params": params["net"]}, support, x, return_labels=True)[1]

  def outputs_and_labels(self, params, support: SupportSet, x):
    """(logits float32[B, n, L, vocab], label readout float32[B, F]) in one
    pass, so that training with the readout encodes the memory once."""
    return self.net.apply({"params": params["net"]}, support, x, return_labels=True)

  @functools.cached_property
  def _jit_init(self):
    return jax.jit(self._init)

  def init(self, key, probe: SupportSet):
    return self._jit_init(key, probe)

  def _apply(self, params, support: SupportSet, x):
    return self.net.apply({"params": params["net"]}, support, x)

  @functools.cached_property
  def _jit_apply(self):
    return jax.jit(self._apply)

  def apply(self, params, support: SupportSet, x):
    """logits float32[B, n, L, vocab] for query grids x int[B, n, L]."""
    return self._jit_apply(params, support, x)

  def num_params(self) -> int:
    probe = SupportSet(*(jnp.zeros((1, self.shots, self.net.max_len), jnp.int32),) * 2,
                       jnp.ones((1, self.shots), bool))
    shapes = jax.eval_shape(self._init, jax.random.key(0), probe)
    return int(sum(np.prod(a.shape) for a in jax.tree_util.tree_leaves(shapes)))


def in_context(name: str, spec: specs_lib.Spec, shots: int, config, *, pad: int,
               label_dim: int = 0, label_weight: float = 0.0,
               label_units=None) -> InContextModel:
  """The in-context direct baseline for `spec` (a Seq2SeqSpec) reading `shots`
  pairs; config: the direct baseline's token options (`meta.direct`).
  label_dim, label_weight: the label readout (F, its loss weight; both 0: none);
  label_units: F multipliers of the readout's error (`label_error`) or None."""
  _check_grid_target(spec, shots)
  label_dim, label_weight = _check_label_readout(label_dim, label_weight)
  label_units = _check_label_units(label_units, label_dim)
  if config["d_model"] % config["n_heads"]:
    raise ValueError(f"{name}: d_model={config['d_model']} is not divisible by "
                     f"n_heads={config['n_heads']}.")
  net = InContextTransformer(vocab_size=spec.vocab_size, max_len=spec.max_len, pad=pad,
                             d_model=int(config["d_model"]), n_heads=int(config["n_heads"]),
                             n_layers=int(config["n_layers"]),
                             mlp_ratio=int(config["mlp_ratio"]), label_dim=label_dim)
  return InContextModel(name=name, spec=spec, config=config, net=net, shots=int(shots),
                        label_weight=label_weight, label_units=label_units)


def check_label_weight(value, name: str = "intent label loss weight") -> float:
  """The readout loss weight as a float, or ValueError naming `name` and what
  is allowed (a finite number >= 0)."""
  if isinstance(value, bool) or not isinstance(value, (int, float)) \
      or not np.isfinite(value) or value < 0:
    raise ValueError(f"{name}={value!r}; allowed: a number >= 0.")
  return float(value)


# How a hypernetwork reads the label readout with label_input (ExampleIntentModel).
LABEL_FEEDS = ("joint", "detached", "snapped", "teacher")


def check_label_feed(feed, label_input: bool, can_snap: bool,
                     name: str = "label feed") -> str:
  """`feed` if it is one of LABEL_FEEDS and usable, else ValueError naming it."""
  if feed not in LABEL_FEEDS:
    raise ValueError(f"{name}={feed!r}; allowed: {list(LABEL_FEEDS)}.")
  if feed != "joint" and not label_input:
    raise ValueError(f"{name}={feed!r} says how the hypernetworks read the label readout; "
                     "it needs the label readout as their input (label_input=True).")
  if feed in ("snapped", "teacher") and not can_snap:
    raise ValueError(f"{name}={feed!r} needs the task's snap_features (the features of "
                     "the nearest intent); this task has none.")
  return feed


def _check_label_readout(label_dim, label_weight) -> tuple[int, float]:
  label_weight = check_label_weight(label_weight)
  if isinstance(label_dim, bool) or not isinstance(label_dim, (int, np.integer)) \
      or label_dim < 0:
    raise ValueError(f"label_dim={label_dim!r}; allowed: an int >= 0.")
  if label_weight > 0 and not label_dim:
    raise ValueError("an intent label loss needs the task's label features (label_dim > 0).")
  return (int(label_dim) if label_weight > 0 else 0), float(label_weight)


def _check_label_units(units, label_dim: int):
  """units as a tuple of label_dim positive floats, None as None; else ValueError."""
  if units is None:
    return None
  units = tuple(float(u) for u in units)
  if len(units) != label_dim or not all(np.isfinite(u) and u > 0 for u in units):
    raise ValueError(f"label_units={units!r}; allowed: None, or {label_dim} positive numbers "
                     "(one per label feature).")
  return units


def label_loss(model, params, support: SupportSet, labels_BxF) -> jax.Array:
  """Mean over the B support sets of the squared error, summed over the F
  features (each times the model's label_units, if any), of the model's label
  readout against the label features float32[B, F] of their intents.
  float32[]; 0 for a model without a readout."""
  if not getattr(model, "label_weight", 0.0):
    return jnp.zeros((), jnp.float32)
  return label_error(model.label_prediction(params, support), labels_BxF,
                     model.label_units)


def label_error(pred_BxF, labels_BxF, units_F=None) -> jax.Array:
  """float32[]: squared error summed over the F features, mean over B; with
  units_F (F multipliers, e.g. a task's `label_units`) each feature's error is
  first multiplied by its unit, so an error is counted in the intent's units."""
  diff_BxF = pred_BxF - labels_BxF
  if units_F is not None:
    diff_BxF = diff_BxF * jnp.asarray(units_F, diff_BxF.dtype)
  return jnp.square(diff_BxF).sum(-1).mean()


def _check_grid_target(spec, shots):
  if not isinstance(spec, specs_lib.Seq2SeqSpec):
    raise ValueError(f"example intents need a grid-to-grid target (Seq2SeqSpec), got "
                     f"{type(spec).__name__}.")
  if isinstance(shots, bool) or not isinstance(shots, (int, np.integer)) \
      or not 1 <= shots <= MAX_SHOTS:
    raise ValueError(f"shots={shots!r}; allowed: 1..{MAX_SHOTS}.")


def encoder_config(options=None) -> dict:
  """ENCODER_DEFAULTS updated by `options`; ValueError names an unknown key or
  a bad value."""
  out = dict(ENCODER_DEFAULTS)
  for key, value in dict(options or {}).items():
    if key not in ENCODER_DEFAULTS:
      raise ValueError(f"intent_encoder: unknown option {key!r}; allowed: "
                       f"{sorted(ENCODER_DEFAULTS)}.")
    if key == "pair_stats":
      if isinstance(value, bool) or value not in (0, 1):
        raise ValueError(f"intent_encoder.pair_stats={value!r}; allowed: 0 or 1.")
    elif isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
      raise ValueError(f"intent_encoder.{key}={value!r}; allowed: a positive int.")
    out[key] = int(value)
  if out["width"] % out["heads"]:
    raise ValueError(f"intent_encoder: width {out['width']} is not divisible by "
                     f"heads {out['heads']}.")
  return out


def check_pairs(pairs, *, max_len: int, n_colours: int = 10,
                same_length: bool = True) -> list[tuple[np.ndarray, np.ndarray]]:
  """The support pairs as int arrays, or ValueError naming what is wrong.

  pairs: a sequence of 1 to MAX_SHOTS (input, output) pairs; each grid a
  sequence of colours 0..n_colours-1 (a one-row grid [[...]] is accepted, as
  the official 1D-ARC files store them), at most max_len cells; with
  same_length, input and output of a pair have the same length (every 1D-ARC
  family requires it).
  """
  if isinstance(pairs, (str, bytes)) or not isinstance(pairs, Sequence):
    raise ValueError(f"intent pairs: expected a list of (input, output) pairs, got "
                     f"{type(pairs).__name__}.")
  if not 1 <= len(pairs) <= MAX_SHOTS:
    raise ValueError(f"intent pairs: got {len(pairs)} pairs; allowed: 1..{MAX_SHOTS}.")
  out = []
  for i, pair in enumerate(pairs):
    if isinstance(pair, dict):
      pair = (pair.get("input"), pair.get("output"))
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
      raise ValueError(f"intent pairs[{i}]: expected (input, output), got {pair!r}.")
    grids = []
    for side, grid in zip(("input", "output"), pair):
      g = np.asarray(grid)
      if g.ndim == 2 and g.shape[0] == 1:
        g = g[0]
      if g.ndim != 1 or g.size == 0 or not np.issubdtype(g.dtype, np.integer):
        raise ValueError(f"intent pairs[{i}] {side}: expected a non-empty row of int "
                         f"colours, got shape {g.shape} dtype {g.dtype}.")
      if g.size > max_len:
        raise ValueError(f"intent pairs[{i}] {side}: {g.size} cells; the target reads at "
                         f"most max_len={max_len}.")
      bad = g[(g < 0) | (g >= n_colours)]
      if bad.size:
        raise ValueError(f"intent pairs[{i}] {side}: colour {int(bad[0])} outside "
                         f"0..{n_colours - 1}.")
      grids.append(g.astype(np.int32))
    if same_length and grids[0].size != grids[1].size:
      raise ValueError(f"intent pairs[{i}]: input has {grids[0].size} cells and output "
                       f"{grids[1].size}; this task requires equal lengths.")
    out.append((grids[0], grids[1]))
  return out


def support_from_pairs(pairs, *, max_len: int, pad: int, n_colours: int = 10,
                       shots: int | None = None) -> SupportSet:
  """One support set (B = 1) from checked pairs, padded to K = shots (default:
  the number of pairs) pairs of max_len cells."""
  checked = check_pairs(pairs, max_len=max_len, n_colours=n_colours)
  k = len(checked) if shots is None else shots
  if len(checked) > k:
    raise ValueError(f"intent pairs: got {len(checked)} pairs; this model reads at most "
                     f"{k}.")
  x = np.full((1, k, max_len), pad, np.int32)
  y = np.full((1, k, max_len), pad, np.int32)
  for i, (a, b) in enumerate(checked):
    x[0, i, :a.size], y[0, i, :b.size] = a, b
  mask = np.arange(k)[None] < len(checked)
  return SupportSet(jnp.asarray(x), jnp.asarray(y), jnp.asarray(mask))


def split_support(x, y, shots: int) -> tuple[SupportSet, jax.Array, jax.Array]:
  """(support, query x, query y) from one draw of shots + n examples per intent:
  x, y [B, shots + n, L] -> SupportSet of the first `shots`, and the rest."""
  mask = jnp.ones(x.shape[:1] + (shots,), bool)
  return SupportSet(x[:, :shots], y[:, :shots], mask), x[:, shots:], y[:, shots:]


@dataclasses.dataclass(frozen=True, eq=False)
class ExampleIntentModel:
  """A meta-learner that reads support sets: encoder(support) = u, then the
  learner (a `meta.Hypernetwork` or `meta.DirectModel` built for intent_dim =
  encoder.out_dim) as it would read label features.

  params: {"encoder": encoder params, "learner": the learner's params}.
  `learner._apply` is the learner's own, so θ, `execute` and the output head
  are unchanged; the head is calibrated on the encoder's u of the probe
  support sets at init. With label_dim > 0, params also hold "label_head", a
  Dense(label_dim) readout of u trained by `label_loss` (weight label_weight);
  with label_input the learner (built for intent_dim = label_dim) reads that
  readout, the encoder's estimate of the label features, instead of u, fed
  as label_feed says (`LABEL_FEEDS`). With gate_parameter (a task's
  `with_gated_parameter`) the readout's parameter comes from a linear map of
  the support set's mean pair statistics per family (param_groups of them,
  params["param_head"]), the one of the readout's family: a shift, a stretch
  and a recolour are linear in those statistics, so the estimate extends to
  amounts not trained on. Label feeds:
    "joint":    the readout itself; the task loss trains encoder and readout too.
    "detached": the readout through stop_gradient: the task loss trains the
                learner alone, the encoder learns only to predict the label
                features (recognise, then synthesize).
    "snapped":  detached, then `snap` (the task's `snap_features`): the label
                features of the nearest intent, so where recognition is right
                the learner reads exactly what its label-intent twin reads.
    "teacher":  in training the learner reads the true label features of the
                drawn intents (`theta_and_labels`' true_labels), so it trains
                as its label-intent twin does, and the encoder learns only from
                the label loss; everywhere else (evaluation, `apply`,
                synthesis) it reads the snapped readout. Recognise, then
                synthesize, in two parts trained side by side: the encoder is
                not trained through `execute`.
  With twin_draws (the "teacher" feed only) the learner is initialised with
  the init key itself, as its label-intent twin is, and `train.step.draw`
  draws a batch's query examples with the key its twin's batch uses and the
  support pairs with a key of their own: under clipping of the learner's
  gradient apart from the reader's, the learner then trains on its twin's
  batches from its twin's init, so the example and label programs of a seed
  differ only in how the intent is read.
  """
  learner: Any
  encoder: ExampleSetEncoder
  shots: int
  label_dim: int = 0
  label_weight: float = 0.0
  label_input: bool = False
  label_feed: str = "joint"
  snap: Optional[Callable[[jax.Array], jax.Array]] = None
  label_units: Optional[tuple[float, ...]] = None
  gate_parameter: Optional[Callable[[jax.Array, jax.Array], jax.Array]] = None
  param_groups: int = 0
  twin_draws: bool = False

  @property
  def name(self):
    return self.learner.name

  @property
  def spec(self):
    return self.learner.spec

  @property
  def config(self):
    return self.learner.config

  @property
  def is_direct(self) -> bool:
    return isinstance(self.learner, meta.DirectModel)

  def encode(self, params, support: SupportSet) -> jax.Array:
    """u float32[B, out_dim] for a batch of support sets."""
    return self.encoder.apply({"params": params["encoder"]}, support)

  @property
  def _label_head(self):
    return nn.Dense(self.label_dim)

  @property
  def calibrates_on_labels(self) -> bool:
    """Whether init calibrates the learner on the probe intents' true label
    features (`init`'s probe_labels) rather than on what it reads at init."""
    return self.label_input and self.label_feed != "joint"

  def _init(self, key, probe: SupportSet, probe_labels=None):
    k_enc, k_learner = jax.random.split(key)
    if self.twin_draws:
      k_learner = key
    enc = self.encoder.init(k_enc, probe)["params"]
    u = self.encoder.apply({"params": enc}, probe)
    params = {"encoder": enc}
    if self.label_dim:
      params["label_head"] = self._label_head.init(jax.random.fold_in(key, 1), u)["params"]
      if self.gate_parameter is not None:
        # Zero start: the parameter estimate begins at 0 for every family.
        n_stats = self._stats(probe).shape[-1]
        params["param_head"] = {"kernel": jnp.zeros((n_stats, self.param_groups)),
                                "bias": jnp.zeros((self.param_groups,))}
      if self.label_input:
        u = self._feed(self._readout(params, u, probe))
        if probe_labels is not None and self.calibrates_on_labels:
          # A detached or snapped learner reads label features once the
          # readout recognises the intent; the untrained readout snaps the
          # probes to a few intents, too few inputs to calibrate on.
          u = jnp.asarray(probe_labels, jnp.float32)
    params["learner"] = self.learner._init(k_learner, u)  # pylint: disable=protected-access
    return params

  def _input_and_labels(self, params, support: SupportSet):
    """(what the learner reads, the label readout or None), one encoding."""
    u = self.encode(params, support)
    if not self.label_dim:
      return u, None
    labels = self._readout(params, u, support)
    return (self._feed(labels) if self.label_input else u), labels

  def _stats(self, support: SupportSet) -> jax.Array:
    return mean_pair_relations(support, self.encoder.pad, self.encoder.vocab_size - 1)

  def _readout(self, params, u_BxD, support: SupportSet) -> jax.Array:
    """The label readout float32[B, F]: Dense(F) of u, its parameter entry
    from the gated per-family map of the pair statistics if there is one."""
    return self._readout_parts(params, u_BxD, support)[0]

  def _readout_parts(self, params, u_BxD, support: SupportSet):
    labels_BxF = self._label_head.apply({"params": params["label_head"]}, u_BxD)
    if self.gate_parameter is None:
      return labels_BxF, None
    head = params["param_head"]
    param_BxG = PARAM_HEAD_GAIN * (self._stats(support) @ head["kernel"] + head["bias"])
    return self.gate_parameter(labels_BxF, param_BxG), param_BxG

  def readout_estimates(self, params, support: SupportSet):
    """(readout float32[B, F], param_BxG float32[B, param_groups] or None):
    the label readout before any snapping (as `label_prediction`) and, with a
    gated parameter head, its parameter estimate for every family, the
    inputs of a task's `label_candidates` (label_dim > 0)."""
    if not self.label_dim:
      raise ValueError(f"{self.name}: no label readout (label_dim=0) to estimate from.")
    return self._readout_parts(params, self.encode(params, support), support)

  def _feed(self, labels_BxF):
    """What the learner reads of the readout float32[B, F] (label_feed)."""
    if self.label_feed == "joint":
      return labels_BxF
    labels_BxF = jax.lax.stop_gradient(labels_BxF)
    return labels_BxF if self.label_feed == "detached" else self.snap(labels_BxF)

  def label_prediction(self, params, support: SupportSet) -> jax.Array:
    """The label readout float32[B, F] of u (label_dim > 0)."""
    return self._input_and_labels(params, support)[1]

  @functools.cached_property
  def _jit_init(self):
    return jax.jit(self._init)

  def init(self, key, probe: SupportSet, probe_labels=None):
    """Params; the learner's head is calibrated on intent_input(probe), or,
    where `calibrates_on_labels`, on probe_labels float32[P, label_dim] (the
    label features of the P probe support sets' intents) when given."""
    if probe_labels is not None:
      probe_labels = jnp.asarray(probe_labels, jnp.float32)
      if probe_labels.shape != (probe.x.shape[0], self.label_dim):
        raise ValueError(f"probe_labels has shape {tuple(probe_labels.shape)}; expected "
                         f"float32[{probe.x.shape[0]}, {self.label_dim}] (one row of label "
                         "features per probe support set).")
    return self._jit_init(key, probe, probe_labels)

  def theta_and_labels(self, params, support: SupportSet, true_labels=None):
    """(θ float32[B, T], label readout float32[B, F]) with one encoding of the
    support sets (label_dim > 0; a hypernetwork learner). true_labels
    float32[B, F], the label features of the support sets' intents (training
    only): with the "teacher" feed the learner reads them instead of the
    snapped readout; other feeds ignore them."""
    u, labels = self._input_and_labels(params, support)
    if self.label_feed == "teacher" and true_labels is not None:
      u = jnp.asarray(true_labels, jnp.float32)
    return self.learner._apply(params["learner"], u), labels  # pylint: disable=protected-access

  def intent_input(self, params, support: SupportSet) -> jax.Array:
    """What the learner reads: u float32[B, out_dim], or with label_input the
    label readout float32[B, label_dim]."""
    return self._input_and_labels(params, support)[0]

  def _apply(self, params, support: SupportSet, *x):
    u = self.intent_input(params, support)
    return self.learner._apply(params["learner"], u, *x)  # pylint: disable=protected-access

  @functools.cached_property
  def _jit_apply(self):
    return jax.jit(self._apply)

  def apply(self, params, support: SupportSet, *x):
    """θ float32[B, T] (a hypernetwork learner) or outputs for x [B, n, L]
    (a direct learner) for B support sets; jitted."""
    return self._jit_apply(params, support, *x)

  def probe_support(self, batch: int = 2) -> SupportSet:
    length = self.encoder.max_len
    x = jnp.zeros((batch, self.shots, length), jnp.int32)
    return SupportSet(x, x, jnp.ones((batch, self.shots), bool))

  def num_params(self) -> int:
    shapes = jax.eval_shape(self._init, jax.random.key(0), self.probe_support())
    learner = {k: v for k, v in shapes["learner"].items() if k != "intent"}
    leaves = jax.tree_util.tree_leaves((shapes["encoder"], learner,
                                        shapes.get("label_head", {}),
                                        shapes.get("param_head", {})))
    return int(sum(np.prod(s.shape) for s in leaves))

  def encoder_params(self) -> int:
    shapes = jax.eval_shape(
        lambda k: self.encoder.init(k, self.probe_support())["params"], jax.random.key(0))
    return int(sum(np.prod(s.shape) for s in jax.tree_util.tree_leaves(shapes)))


def wrap(learner, spec: specs_lib.Spec, shots: int, options=None, *, pad: int,
         vocab_size: int, label_dim: int = 0, label_weight: float = 0.0,
         label_input: bool = False, label_feed: str = "joint",
         snap: Optional[Callable[[jax.Array], jax.Array]] = None,
         label_units=None, gate_parameter=None, param_groups: int = 0,
         twin_draws: bool = False) -> ExampleIntentModel:
  """`learner` (built for intent_dim = out_dim, or label_dim with
  label_input) with an example-set encoder.

  spec: the target (a Seq2SeqSpec: its max_len is the grids' length L).
  label_dim, label_weight: the label readout of u (F, its loss weight; both 0:
  none). label_input: the learner reads the readout instead of u (needs
  label_weight > 0). label_feed: how it reads it (`LABEL_FEEDS`; other than
  "joint" needs label_input; "snapped" needs snap, features -> the features of
  the nearest intent, float32[B, F] -> float32[B, F]). label_units: F
  multipliers of the readout loss's error (`label_error`), or None.
  gate_parameter, param_groups: the parameter head (a task's
  `with_gated_parameter` and its `param_groups`; needs a readout).
  twin_draws: the learner's init key and training queries are its
  label-intent twin's (`ExampleIntentModel`; needs label_feed="teacher").
  """
  _check_grid_target(spec, shots)
  label_dim, label_weight = _check_label_readout(label_dim, label_weight)
  if label_input and not label_weight:
    raise ValueError("label_input: the learner would read an untrained readout; it needs "
                     "a label loss weight > 0.")
  check_label_feed(label_feed, label_input, snap is not None)
  label_units = _check_label_units(label_units, label_dim)
  if gate_parameter is not None and (not label_dim or param_groups < 1):
    raise ValueError(f"a gated parameter head needs a label readout (label_dim={label_dim}) "
                     f"and param_groups >= 1 (got {param_groups}).")
  if not isinstance(twin_draws, bool):
    raise ValueError(f"twin_draws={twin_draws!r}; allowed: True or False.")
  if twin_draws and label_feed != "teacher":
    raise ValueError(f"twin_draws=True trains the learner on its label-intent twin's "
                     f"batches, which only the 'teacher' feed reads; got "
                     f"label_feed={label_feed!r}.")
  cfg = encoder_config(options)
  width = label_dim if label_input else cfg["out_dim"]
  if learner.intent_dim != width:
    raise ValueError(f"{learner.name}: built for intent_dim={learner.intent_dim}, the "
                     f"{'label readout' if label_input else 'encoder'} gives {width}.")
  enc = ExampleSetEncoder(vocab_size=vocab_size, max_len=spec.max_len, pad=pad, **cfg)
  return ExampleIntentModel(learner=learner, encoder=enc, shots=int(shots),
                            label_dim=label_dim, label_weight=label_weight,
                            label_input=bool(label_input), label_feed=label_feed,
                            snap=snap, label_units=label_units,
                            gate_parameter=gate_parameter,
                            param_groups=int(param_groups) if gate_parameter else 0,
                            twin_draws=twin_draws)
