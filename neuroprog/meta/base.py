"""The two kinds of meta-learner, and the hypernetworks' output head.

A `Hypernetwork` maps intent features u float32[B, F] to a weight vector θ
float32[B, T] for a fixed target spec: `apply(params, u_BxF) -> theta_BxT`.
The `DirectModel` baseline maps (u, x) to the outputs itself:
`apply(params, u_BxF, x) -> outputs`. Both wrap a flax linen module with a
pure `init(key, probe_u) -> params`.

Output scale. A generated weight enters the target like any other weight: if
its scale at initialization is far from the usual fan-in scale, units saturate
or die and training stalls. So every hypernetwork ends in an `OutputHead`:
θ = offset + gain[t] * (raw - center[t]) with one learnable (gain, center) per
target tensor t. `init` calibrates them on a probe batch of intents: center is
the tensor's mean raw output, gain = target_std / std(raw), with target_std
the tensor's standard-init std (1/sqrt(fan_in) for projections, 1 for
embeddings, 0 for biases and layer-norm gains, which therefore start at
exactly 0 and 1). Calibration is pure jnp, so `init` can be vmapped over seeds.

Intent standardization. A hypernetwork whose config has
`intent_input="balanced"` reads z-scored intents: u' = (u - mean) / std, with
mean and std (per feature) measured on the probe intents at init (the
training intents, as training calls it) and kept fixed afterwards in
params["intent"] (the gradient is stopped, so Adam leaves them in place).
Task features come in their natural units (SUMFIRST n / 10, ADDMOD p / 100
and 2 / p), whose spread over the training intents can be a few hundredths;
standardized, every feature moves the first layer as much as a unit input.

Base program. A hypernetwork whose config has `base_program=True` adds a
learned, intent-independent vector to its output: θ = θ_base + head(net(u)),
with θ_base float32[T] in params["base"], zero at init (so the initial θ, its
scale and its symmetry are those of the plain model). Every θ entry then has
one parameter of its own that Adam moves at the model's rate, as the output
bias of Meta-MLP's last layer does; the tied generators of Meta-gMLP and
Meta-GNN have no such per-entry parameter, and θ_base is what the option
tests. It costs T parameters, counted by `num_params` and so by
`match_capacity`.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Mapping, Optional, Union

import flax.linen as nn
import jax
import jax.numpy as jnp
import ml_collections
import numpy as np

from neuroprog import specs as specs_lib
from neuroprog.meta import batched_init, static_rows
from neuroprog.programs import layout as layout_lib

PROBE_BATCH = 16


def resolve_config(name: str, defaults: Mapping[str, Any],
                   config: Optional[Mapping[str, Any]]) -> ml_collections.FrozenConfigDict:
  """defaults updated by config; an unknown key raises ValueError."""
  merged = dict(defaults)
  if config is not None:
    items = config.items() if hasattr(config, "items") else None
    if items is None:
      raise ValueError(f"{name}: config must be a mapping, got {config!r}.")
    for key, value in items:
      if key not in defaults:
        raise ValueError(f"Unknown config key {key!r} for {name}; allowed: "
                         f"{sorted(defaults)}.")
      merged[key] = value
  return ml_collections.FrozenConfigDict(merged)


@dataclasses.dataclass(frozen=True, eq=False)
class HeadLayout:
  """Static per-slot arrays for the output head (numpy)."""
  tensor_of_slot: np.ndarray   # int32[T]
  offset: np.ndarray           # float32[T]: 1 for layer-norm gains, else 0
  target_std: np.ndarray       # float32[n_tensors]

  @property
  def n_tensors(self) -> int:
    return len(self.target_std)


def head_layout(spec: specs_lib.Spec) -> HeadLayout:
  entries = layout_lib.layout(spec)
  tid = np.concatenate([np.full(e.size, i, np.int32) for i, e in enumerate(entries)])
  offset = np.concatenate([np.full(e.size, 1.0 if e.kind == "gain" else 0.0,
                                   np.float32) for e in entries])
  target = np.array([e.init_std for e in entries], np.float32)
  return HeadLayout(tid, offset, target)


def apply_head(head: HeadLayout, hp, raw_BxT):
  tid = head.tensor_of_slot
  take = static_rows.take_rows    # its gradient is a scatter-free segment sum
  return head.offset + take(hp["gain"], tid) * (raw_BxT - take(hp["center"], tid))


def calibrate_head(head: HeadLayout, raw_BxT):
  """(gain, center) per tensor so that θ starts at the standard-init scale.

  The spread is measured across a tensor's elements within one program (what
  "the std of a generated tensor" means), averaged over the probe intents;
  center is the mean over elements and intents.
  """
  tid = jnp.asarray(head.tensor_of_slot)
  n = head.n_tensors
  count = jax.ops.segment_sum(jnp.ones(raw_BxT.shape[1]), tid, n)
  seg = lambda v_BxT: jax.vmap(lambda v: jax.ops.segment_sum(v, tid, n))(v_BxT)
  mean_BxN = seg(raw_BxT) / count
  var_BxN = seg((raw_BxT - mean_BxN[:, tid]) ** 2) / count
  std = jnp.sqrt(var_BxN.mean(0))
  gain = jnp.where(std > 1e-12, head.target_std / jnp.maximum(std, 1e-12), 0.0)
  return {"gain": gain, "center": mean_BxN.mean(0)}


@dataclasses.dataclass(frozen=True, eq=False)
class _Model:
  """What every meta-learner has: a name, its target spec, the intent width F,
  its resolved (frozen) config and its flax module; `init` and `num_params`."""
  name: str
  spec: specs_lib.Spec
  intent_dim: int
  config: ml_collections.FrozenConfigDict
  net: nn.Module

  def _probe(self, key):
    return jax.random.uniform(key, (PROBE_BATCH, self.intent_dim), jnp.float32)

  def _check_u(self, u, what="u"):
    u = jnp.asarray(u, jnp.float32)
    if u.ndim != 2 or u.shape[1] != self.intent_dim:
      raise ValueError(f"{self.name}: {what} has shape {tuple(u.shape)}; "
                       f"expected float32[B, {self.intent_dim}].")
    return u

  def init(self, key: jax.Array, probe_u=None):
    """Pure, jitted init: the params pytree.

    Args:
      key: PRNG key.
      probe_u: float32[P, F] training-intent features (hypernetworks
        calibrate their output head on them, as training does); default:
        P = 16 draws from U[0, 1]^F.
    """
    if probe_u is None:
      probe_u = self._probe(jax.random.fold_in(key, 1))
    return self._jit_init(key, self._check_u(probe_u, "probe_u"))

  def num_params(self) -> int:
    """Trainable parameter count (from shapes only; nothing is computed).
    The fixed intent statistics of a balanced hypernetwork are not counted."""
    shapes = jax.eval_shape(self._init, jax.random.key(0), self._probe(jax.random.key(0)))
    shapes = {k: v for k, v in shapes.items() if k != "intent"}
    return int(sum(np.prod(s.shape) for s in jax.tree_util.tree_leaves(shapes)))


@dataclasses.dataclass(frozen=True, eq=False)
class Hypernetwork(_Model):
  """A meta-learner that synthesizes programs: u float32[B, F] -> θ float32[B, T].

  Attributes (besides `_Model`'s):
    net: the flax module, net(u_BxF) -> raw float32[B, T].
    head: the per-tensor output head's static layout (`HeadLayout`).
  """
  head: HeadLayout = None

  @functools.cached_property
  def _jit_init(self):
    # Two programs: XLA:CPU compiles the draws and the calibration forward
    # faster apart than as one program (BUILD_NOTES.md, "Meta-learners").
    # Under an outer jit both are inlined into it.
    return self._init_with(jax.jit(self._init_net), jax.jit(self._calibrate))

  def _init_with(self, draw, calibrate):
    """init(key, probe_u) -> params, drawing the net with `draw` and the
    head with `calibrate` (jitted apart, or not: see `_jit_init`)."""
    def init(key, probe_u):
      stats = self._intent_stats(probe_u)
      probe_u = self._standardize(stats, probe_u)
      net = draw(key, probe_u)
      params = {"net": net, "head": calibrate(net, probe_u)}
      if stats is not None:
        params["intent"] = stats
      if self.has_base_program:
        params["base"] = jnp.zeros((len(self.head.tensor_of_slot),), jnp.float32)
      return params
    return init

  @functools.cached_property
  def _jit_apply(self):
    return jax.jit(self._apply)

  @property
  def has_base_program(self) -> bool:
    """Whether θ = θ_base + head(net(u)) (config.base_program; module docstring)."""
    return bool(self.config.get("base_program", False))

  @property
  def standardizes_intents(self) -> bool:
    return self.config.get("intent_input", "raw") == "balanced"

  def _intent_stats(self, probe_u):
    """{"mean": float32[F], "std": float32[F]} of the probe intents, or None.
    A feature constant over the probe gets std 1 (it is only centred)."""
    if not self.standardizes_intents:
      return None
    std = probe_u.std(0)
    return {"mean": probe_u.mean(0), "std": jnp.where(std > 1e-6, std, 1.0)}

  @staticmethod
  def _standardize(stats, u_BxF):
    if stats is None:
      return u_BxF
    stats = jax.lax.stop_gradient(stats)
    return (u_BxF - stats["mean"]) / stats["std"]

  def _init(self, key, probe_u):
    return self._init_with(self._init_net, self._calibrate)(key, probe_u)

  def _init_net(self, key, probe_u):
    # Batched draws: the same values, a few threefry kernels to compile
    # instead of one per tensor (batched_init).
    return batched_init.batched(self.net.init, key, probe_u[:1])["params"]

  def _calibrate(self, net_params, probe_u):
    return calibrate_head(self.head, self.net.apply({"params": net_params}, probe_u))

  def apply(self, params, u_BxF: jax.Array) -> jax.Array:
    """θ float32[B, T] for intent features u float32[B, F].

    Pure; jitted when called eagerly, inlined under an outer jit.
    """
    return self._jit_apply(params, self._check_u(u_BxF))

  def _apply(self, params, u_BxF):
    u_BxF = self._standardize(params.get("intent"), u_BxF)
    raw = self.net.apply({"params": params["net"]}, u_BxF)
    theta_BxT = apply_head(self.head, params["head"], raw)
    if self.has_base_program:
      theta_BxT = theta_BxT + params["base"]
    return theta_BxT


@dataclasses.dataclass(frozen=True, eq=False)
class DirectModel(_Model):
  """The direct baseline: (u float32[B, F], x [B, n, ...]) -> outputs, no θ.

  net(u_BxF, x) -> the outputs the target network would give (logits or
  regression values, shaped like `execute`'s per program).
  """

  @functools.cached_property
  def _jit_init(self):
    return jax.jit(self._init)

  @functools.cached_property
  def _jit_apply(self):
    return jax.jit(self._apply)

  def _init(self, key, probe_u):
    return {"net": self.net.init(key, probe_u[:1], example_inputs(self.spec))["params"]}

  def apply(self, params, u_BxF: jax.Array, x: jax.Array) -> jax.Array:
    """Outputs for inputs x [B, n, ...] of B intents u float32[B, F]."""
    return self._jit_apply(params, self._check_u(u_BxF), x)

  def _apply(self, params, u_BxF, x):
    return self.net.apply({"params": params["net"]}, u_BxF, x)


# Either kind; `isinstance(model, Hypernetwork)` tells them apart.
MetaModel = Union[Hypernetwork, DirectModel]


def example_inputs(spec: specs_lib.Spec, n: int = 1) -> jax.Array:
  """A zero input batch [1, n, ...] of the right shape and dtype for spec."""
  if isinstance(spec, specs_lib.MLPSpec):
    return jnp.zeros((1, n, spec.d_in), jnp.float32)
  if isinstance(spec, specs_lib.TransformerSpec):
    return jnp.zeros((1, n, spec.seq_len), jnp.int32)
  if isinstance(spec, specs_lib.CNNSpec):
    return jnp.zeros((1, n) + spec.input_shape + (spec.in_channels,), jnp.float32)
  return jnp.zeros((1, n, spec.max_len), jnp.int32)


@jax.custom_vjp
def layer_norm(x):
  """Parameter-free layer norm over the feature axis (per element, so it
  commutes with any permutation of elements). float32[..., D] -> same.

  The hand-written VJP, dx = r (g - mean(g) - y mean(g y)) with r the inverse
  standard deviation, keeps only y and r, where autodiff's version keeps and
  recomputes more; Meta-GNN applies it to every edge state of every round.

  The feature means are products with a constant [D, 1] column of 1/D, not
  reductions: XLA:CPU fused the reductions into the preceding layer's YNNPACK
  matmul fusions, where they ran slower than the products do (BUILD_NOTES.md,
  Decisions, "Meta-learners"). Precision HIGHEST keeps the
  means exact fp32 on accelerators whose default fp32 matmul is TF32.
  """
  return _layer_norm_fwd(x)[0]


def _feature_mean(x):
  """mean over the last axis, keepdims: [..., D] -> [..., 1], dtype of x."""
  col = np.full((x.shape[-1], 1), 1.0 / x.shape[-1], x.dtype)
  return jnp.matmul(x, col, precision=jax.lax.Precision.HIGHEST)


def _layer_norm_fwd(x):
  xc = x - _feature_mean(x)
  r = jax.lax.rsqrt(_feature_mean(xc * xc) + 1e-6)
  y = xc * r
  return y, (y, r)


def _layer_norm_bwd(res, g):
  y, r = res
  return (r * (g - _feature_mean(g) - y * _feature_mean(g * y)),)


layer_norm.defvjp(_layer_norm_fwd, _layer_norm_bwd)
