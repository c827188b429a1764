"""The direct baseline: a model of (U, X) -> Y that emits no weights.

MLP targets: an MLP on [u, x]. Token targets: a pre-LN Transformer that reads
an intent token (a linear embedding of u) in front of the input tokens; it
answers at the last position (ADDMOD) or at every input cell (1D-ARC, padding
masked out of attention).
"""

from __future__ import annotations

import flax.linen as nn
import jax.numpy as jnp

from neuroprog import specs as specs_lib

DEFAULTS_MLP = {"hidden": 64, "depth": 2}
DEFAULTS_TOKENS = {"d_model": 32, "n_heads": 4, "n_layers": 2, "mlp_ratio": 2}
LEARNING_RATE = 1e-3   # the Adam rate a config gets unless it names one


def defaults_for(spec):
  return DEFAULTS_MLP if isinstance(spec, specs_lib.MLPSpec) else DEFAULTS_TOKENS


def width_key_for(spec):
  return "hidden" if isinstance(spec, specs_lib.MLPSpec) else "d_model"


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
