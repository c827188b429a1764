"""Meta-MLP: a flat hypernetwork, an MLP from the intent u to all T weights."""

from __future__ import annotations

import flax.linen as nn
import jax.numpy as jnp
import numpy as np

from neuroprog import specs as specs_lib
from neuroprog.meta import base, token_basis

DEFAULTS = {"hidden": 64, "depth": 2, "intent_input": "raw",
            "intent_scale": 1.0, "intent_fourier": 0, "token_basis": 0}
INTENT_INPUTS = ("raw", "balanced")
WIDTH_KEY = "hidden"
LEARNING_RATE = 1e-3   # the Adam rate a config gets unless it names one


class MetaMLPNet(nn.Module):
  """u float32[B, F] -> raw float32[B, T]: `depth` GELU layers, a
  parameter-free layer norm (so raw outputs have unit scale across slots at
  init), then one dense layer to all T slots. The intent enters multiplied by
  `intent_scale` (Meta-GNN's option of that name), which sets how fast the
  first layer's pre-activations move with the intent.

  With `intent_fourier` = M > 0 the first layer reads, besides the F scaled
  features v, their Fourier features sin(pi m v) and cos(pi m v) for m = 1..M
  (`fourier_features`; F (1 + 2M) inputs): a fixed basis of smooth functions
  of the intent whose combinations the GELU layers would otherwise have to
  build from ridges, at F 2M x hidden extra parameters.

  With `token_basis` = M > 0 (and the target `spec`) the last layer emits
  T' < T values: the token-indexed tensors as 2M + 1 coefficients per feature
  on a fixed basis of the token index, expanded to all T slots
  (`token_basis.expand`)."""
  hidden: int
  depth: int
  n_out: int
  intent_scale: float = 1.0
  intent_fourier: int = 0
  token_basis: int = 0
  spec: specs_lib.Spec = None

  @nn.compact
  def __call__(self, u_BxF):
    h = fourier_features(u_BxF * self.intent_scale, self.intent_fourier)
    for _ in range(self.depth):
      h = nn.gelu(nn.Dense(self.hidden)(h))
    h = base.layer_norm(h)
    init = nn.initializers.normal(1.0 / np.sqrt(self.hidden))
    emitted = nn.Dense(self.n_out, kernel_init=init)(h)
    return token_basis.expand(self.spec, self.token_basis, emitted)


def fourier_features(v_BxF, n_frequencies: int):
  """float32[B, F (1 + 2M)]: [v, sin(pi m v), cos(pi m v)] for m = 1..M
  (M = n_frequencies; the sines of every feature and frequency, feature-major,
  then the cosines); v itself when M = 0."""
  if not n_frequencies:
    return v_BxF
  angle_BxFxM = jnp.pi * v_BxF[..., None] * jnp.arange(1, n_frequencies + 1, dtype=v_BxF.dtype)
  flat = lambda a: a.reshape(a.shape[:-2] + (-1,))
  return jnp.concatenate([v_BxF, flat(jnp.sin(angle_BxFxM)), flat(jnp.cos(angle_BxFxM))], -1)


def build(spec, intent_dim, config):
  """config.intent_input (default "raw"): "balanced" z-scores the intent
  features on the training intents before the first layer
  (`base.Hypernetwork`), so a feature whose spread over the training intents
  is a few hundredths moves the first layer as much as a unit input.
  config.intent_scale (default 1) multiplies the (standardized) features
  before the first layer; config.intent_fourier (default 0) adds that many
  Fourier frequencies of them (`MetaMLPNet`). config.token_basis (default
  0) emits the token embedding's rows and the unembedding's columns as
  coefficients on that many frequencies of the token index
  (`neuroprog.meta.token_basis`; Transformer and seq2seq targets)."""
  if config.intent_input not in INTENT_INPUTS:
    raise ValueError(f"meta_mlp: intent_input={config.intent_input!r}; allowed: "
                     f"{list(INTENT_INPUTS)}.")
  if not float(config.intent_scale) > 0:
    raise ValueError(f"meta_mlp: intent_scale={config.intent_scale!r}; allowed: > 0.")
  fourier = config.intent_fourier
  if isinstance(fourier, (bool, np.bool_)) or not isinstance(fourier, (int, np.integer)) \
      or fourier < 0:
    raise ValueError(f"meta_mlp: intent_fourier={fourier!r}; allowed: an integer >= 0 "
                     "(the number of Fourier frequencies of the intent features).")
  if int(config.depth) < 1:
    raise ValueError(f"meta_mlp: depth={config.depth!r}; allowed: an integer >= 1.")
  token_basis.check(spec, config.token_basis)
  n_freq = int(config.token_basis)
  net = MetaMLPNet(hidden=int(config.hidden), depth=int(config.depth),
                   n_out=token_basis.reduced_size(spec, n_freq),
                   intent_scale=float(config.intent_scale),
                   intent_fourier=int(fourier), token_basis=n_freq,
                   spec=spec if n_freq else None)
  return net, base.head_layout(spec)
