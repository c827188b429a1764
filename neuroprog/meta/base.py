"""`MetaModel`: one interface for every meta-learner, and the output head.

A meta-learner maps intent features u float32[B, F] to a weight vector θ
float32[B, T] for a fixed target spec (the direct baseline maps (u, x) to y).
Every model is a flax linen module wrapped with pure `init(key) -> params`
and `apply(params, u_BxF) -> theta_BxT`.

Output scale. A generated weight enters the target like any other weight: if
its scale at initialization is far from the usual fan-in scale, units saturate
or die and training stalls. So every hypernetwork ends in an `OutputHead`:
θ = offset + gain[t] * (raw - center[t]) with one learnable (gain, center) per
target tensor t. `init` calibrates them on a probe batch of intents: center is
the tensor's mean raw output, gain = target_std / std(raw), with target_std
the tensor's standard-init std (1/sqrt(fan_in) for projections, 1 for
embeddings, 0 for biases and layer-norm gains, which therefore start at
exactly 0 and 1). Calibration is pure jnp, so `init` can be vmapped over seeds.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Mapping, Optional

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
class MetaModel:
  """A meta-learner for one target spec.

  Attributes:
    name: "direct" | "meta_mlp" | "meta_gmlp" | "meta_gnn".
    spec: the target spec.
    intent_dim: F, the width of the intent features.
    config: the resolved (frozen) configuration.
    net: the flax module. Hypernetworks: net(u_BxF) -> raw float32[B, T].
      Direct: net(u_BxF, x) -> outputs.
    head: HeadLayout for hypernetworks, None for the direct model.
  """
  name: str
  spec: specs_lib.Spec
  intent_dim: int
  config: ml_collections.FrozenConfigDict
  net: nn.Module
  head: Optional[HeadLayout]

  @property
  def is_direct(self) -> bool:
    return self.head is None

  def _probe(self, key):
    return jax.random.uniform(key, (PROBE_BATCH, self.intent_dim), jnp.float32)

  @functools.cached_property
  def _jit_init(self):
    if self.is_direct:
      return jax.jit(self._init)
    # Two programs: XLA:CPU compiled the draws and the calibration forward
    # together in 16.7 s on ADDMOD, apart in 3.5 s + 8.3 s (BUILD_NOTES.md,
    # "Meta-learners"). Under an outer jit both are inlined into it.
    draw, calibrate = jax.jit(self._init_net), jax.jit(self._calibrate)

    def init(key, probe_u, x_example=None):
      del x_example
      net = draw(key, probe_u)
      return {"net": net, "head": calibrate(net, probe_u)}
    return init

  @functools.cached_property
  def _jit_apply(self):
    return jax.jit(self._apply)

  def init(self, key: jax.Array, probe_u=None, x_example=None):
    """Pure, jitted init: the params pytree.

    Args:
      key: PRNG key.
      probe_u: float32[P, F] intents on which the output head is calibrated
        (pass the task's training-intent features, as training does);
        default: P = 16 draws from U[0, 1]^F.
      x_example: direct model only, an input batch [1, n, ...] to size it
        (default: zeros built from the spec).
    """
    if probe_u is None:
      probe_u = self._probe(jax.random.fold_in(key, 1))
    probe_u = jnp.asarray(probe_u, jnp.float32)
    if probe_u.ndim != 2 or probe_u.shape[1] != self.intent_dim:
      raise ValueError(f"{self.name}: probe_u has shape {tuple(probe_u.shape)}; "
                       f"expected float32[P, {self.intent_dim}].")
    if x_example is None and self.is_direct:
      x_example = example_inputs(self.spec)
    return self._jit_init(key, probe_u, x_example)

  def _init(self, key, probe_u, x_example=None):
    if self.is_direct:
      return {"net": self.net.init(key, probe_u[:1], x_example)["params"]}
    net = self._init_net(key, probe_u)
    return {"net": net, "head": self._calibrate(net, probe_u)}

  def _init_net(self, key, probe_u):
    # Batched draws: the same values, a few threefry kernels to compile
    # instead of one per tensor (batched_init).
    return batched_init.batched(self.net.init, key, probe_u[:1])["params"]

  def _calibrate(self, net_params, probe_u):
    return calibrate_head(self.head, self.net.apply({"params": net_params}, probe_u))

  def apply(self, params, u_BxF: jax.Array, x: Optional[jax.Array] = None):
    """Hypernetworks: θ float32[B, T]. Direct: outputs for x [B, n, ...].

    Pure; jitted when called eagerly, inlined under an outer jit.
    """
    u_BxF = jnp.asarray(u_BxF, jnp.float32)
    if u_BxF.ndim != 2 or u_BxF.shape[1] != self.intent_dim:
      raise ValueError(f"{self.name}: u has shape {tuple(u_BxF.shape)}; "
                       f"expected float32[B, {self.intent_dim}].")
    if self.is_direct and x is None:
      raise ValueError("the direct model needs inputs: apply(params, u, x).")
    return self._jit_apply(params, u_BxF, x)

  def _apply(self, params, u_BxF, x=None):
    if self.is_direct:
      return self.net.apply({"params": params["net"]}, u_BxF, x)
    raw = self.net.apply({"params": params["net"]}, u_BxF)
    return apply_head(self.head, params["head"], raw)

  def num_params(self) -> int:
    """Trainable parameter count (from shapes only; nothing is computed)."""
    shapes = jax.eval_shape(
        self._init, jax.random.key(0), self._probe(jax.random.key(0)),
        example_inputs(self.spec) if self.is_direct else None)
    return int(sum(np.prod(s.shape) for s in jax.tree_util.tree_leaves(shapes)))


def example_inputs(spec: specs_lib.Spec, n: int = 1) -> jax.Array:
  """A zero input batch [1, n, ...] of the right shape and dtype for spec."""
  if isinstance(spec, specs_lib.MLPSpec):
    return jnp.zeros((1, n, spec.d_in), jnp.float32)
  if isinstance(spec, specs_lib.TransformerSpec):
    return jnp.zeros((1, n, spec.seq_len), jnp.int32)
  return jnp.zeros((1, n, spec.max_len), jnp.int32)


@jax.custom_vjp
def layer_norm(x):
  """Parameter-free layer norm over the feature axis (per element, so it
  commutes with any permutation of elements). float32[..., D] -> same.

  The hand-written VJP, dx = r (g - mean(g) - y mean(g y)) with r the inverse
  standard deviation, keeps only y and r: autodiff's version of the same
  function took 2.3x as long on [46592, 64] (8.3 ms vs 3.7 ms on this CPU),
  and Meta-GNN applies it to every edge state of every round.

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
