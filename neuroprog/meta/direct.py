"""The direct baseline: a model of (U, X) -> Y that emits no weights.

MLP targets: an MLP on [u, x]. Token targets: a pre-LN Transformer that reads
an intent token (a linear embedding of u) in front of the input tokens; it
answers at the last position (ADDMOD) or at every input cell (1D-ARC, padding
masked out of attention). Convolutional targets: a CNN that reads u as extra
input channels at every position, global average pooling and an MLP head.
"""

from __future__ import annotations

import flax.linen as nn
import jax.numpy as jnp
import numpy as np

from neuroprog import specs as specs_lib

DEFAULTS_MLP = {"hidden": 64, "depth": 2}
DEFAULTS_TOKENS = {"d_model": 32, "n_heads": 4, "n_layers": 2, "mlp_ratio": 2}
DEFAULTS_CNN = {"hidden": 32, "depth": 2, "kernel": 3}
LEARNING_RATE = 1e-3   # the Adam rate a config gets unless it names one


def defaults_for(spec):
  if isinstance(spec, specs_lib.MLPSpec):
    return DEFAULTS_MLP
  return DEFAULTS_CNN if isinstance(spec, specs_lib.CNNSpec) else DEFAULTS_TOKENS


def width_key_for(spec):
  return "hidden" if isinstance(spec, (specs_lib.MLPSpec, specs_lib.CNNSpec)) else "d_model"


class DirectMLP(nn.Module):
  """u float32[B, F], x float32[B, n, d_in] -> y float32[B, n, d_out]."""
  hidden: int
  depth: int
  d_out: int

  @nn.compact
  def __call__(self, u_BxF, x_BxNxD):
    u = jnp.broadcast_to(u_BxF[:, None], x_BxNxD.shape[:2] + u_BxF.shape[-1:])
    h = jnp.concatenate([u, x_BxNxD], -1)
    for _ in range(self.depth):
      h = nn.gelu(nn.Dense(self.hidden)(h))
    return nn.Dense(self.d_out)(h)


class DirectCNN(nn.Module):
  """u float32[B, F], x float32[B, n, *spatial, C] -> y float32[B, n, d_out].

  `depth` conv layers of `hidden` channels (kernel `kernel`, SAME padding,
  GELU) over [x || u broadcast to every position], global average pooling,
  then a hidden dense layer and the output layer.
  """
  hidden: int
  depth: int
  kernel: int
  d_out: int

  @nn.compact
  def __call__(self, u_BxF, x):
    b, n = x.shape[:2]
    spatial = x.shape[2:-1]
    u = jnp.broadcast_to(u_BxF[:, None].reshape((b, 1) + (1,) * len(spatial) + (-1,)),
                         x.shape[:-1] + u_BxF.shape[-1:])
    h = jnp.concatenate([x, u], -1).reshape((b * n,) + spatial + (-1,))
    for _ in range(self.depth):
      h = nn.gelu(nn.Dense(self.hidden)(_patches(h, self.kernel)))
    h = h.mean(axis=tuple(range(1, 1 + len(spatial))))
    h = nn.gelu(nn.Dense(self.hidden)(h))
    return nn.Dense(self.d_out)(h).reshape(b, n, self.d_out)


def _patches(h, k):
  """[M, *spatial, C] -> [M, *spatial, k^d * C]: the SAME-padded k-neighbourhood
  of every position, so a convolution is one dense layer (a plain matmul,
  several times faster than XLA's CPU convolution at these sizes)."""
  d = h.ndim - 2
  lo = (k - 1) // 2
  h = jnp.pad(h, [(0, 0)] + [(lo, k - 1 - lo)] * d + [(0, 0)])
  size = [h.shape[1 + i] - k + 1 for i in range(d)]
  views = []
  for offset in np.ndindex(*(k,) * d):
    index = tuple(slice(o, o + s) for o, s in zip(offset, size))
    views.append(h[(slice(None),) + index])
  return jnp.concatenate(views, -1)


class DirectTransformer(nn.Module):
  """u float32[B, F], tokens int[B, n, L] -> logits.

  per_cell=False: float32[B, n, n_out] at the last position.
  per_cell=True: float32[B, n, L, n_out], padding (pad_id) masked out.
  """
  vocab_size: int
  max_len: int
  d_model: int
  n_heads: int
  n_layers: int
  mlp_ratio: int
  n_out: int
  per_cell: bool
  pad_id: int = -1

  @nn.compact
  def __call__(self, u_BxF, tokens):
    b, n, seq = tokens.shape
    tok = nn.Embed(self.vocab_size, self.d_model)(tokens)
    pos = self.param("pos", nn.initializers.normal(1.0), (self.max_len + 1, self.d_model))
    intent = nn.Dense(self.d_model)(u_BxF)[:, None, None, :]
    h = jnp.concatenate([jnp.broadcast_to(intent, (b, n, 1, self.d_model)), tok], 2)
    h = h + pos[:seq + 1]
    keep = jnp.concatenate([jnp.ones((b, n, 1), bool), tokens != self.pad_id], 2)
    mask = keep[..., None, None, :]          # [B, n, 1 head, 1 query, L+1 keys]
    for _ in range(self.n_layers):
      x = nn.LayerNorm()(h)
      h = h + nn.MultiHeadDotProductAttention(num_heads=self.n_heads)(x, x, mask=mask)
      x = nn.LayerNorm()(h)
      h = h + nn.Dense(self.d_model)(nn.gelu(nn.Dense(self.mlp_ratio * self.d_model)(x)))
    h = nn.LayerNorm()(h)
    out = nn.Dense(self.n_out)
    return out(h[:, :, 1:]) if self.per_cell else out(h[:, :, -1])


def build(spec, intent_dim, config) -> nn.Module:
  """The direct model's flax module for `spec` (intent_dim is read at init)."""
  del intent_dim
  if isinstance(spec, specs_lib.MLPSpec):
    return DirectMLP(hidden=int(config.hidden), depth=int(config.depth),
                     d_out=spec.d_out)
  if isinstance(spec, specs_lib.CNNSpec):
    for k in ("hidden", "depth", "kernel"):
      if isinstance(config[k], bool) or not isinstance(config[k], int) or config[k] < 1:
        raise ValueError(f"direct: {k}={config[k]!r}; allowed: a positive int.")
    return DirectCNN(hidden=int(config.hidden), depth=int(config.depth),
                     kernel=int(config.kernel), d_out=spec.n_out)
  if config.d_model % config.n_heads:
    raise ValueError(f"direct: d_model={config.d_model} is not divisible by "
                     f"n_heads={config.n_heads}.")
  if isinstance(spec, specs_lib.TransformerSpec):
    return DirectTransformer(
        vocab_size=spec.vocab_size, max_len=spec.seq_len, d_model=int(config.d_model),
        n_heads=int(config.n_heads), n_layers=int(config.n_layers),
        mlp_ratio=int(config.mlp_ratio), n_out=spec.n_classes, per_cell=False)
  return DirectTransformer(
      vocab_size=spec.vocab_size, max_len=spec.max_len, d_model=int(config.d_model),
      n_heads=int(config.n_heads), n_layers=int(config.n_layers),
      mlp_ratio=int(config.mlp_ratio), n_out=spec.vocab_size, per_cell=True,
      pad_id=spec.pad_id)
