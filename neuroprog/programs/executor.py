"""`execute(spec, θ, x)`: target networks as pure functions of their weights.

Every function here is pure and jittable; θ is one float32[T] vector (use
`jax.vmap` over θ to run many programs, and over x for more inputs).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from neuroprog import specs as specs_lib
from neuroprog.programs import layout as layout_lib

_ACT = {
    "relu": jax.nn.relu,
    "gelu": jax.nn.gelu,
    "tanh": jnp.tanh,
    "sigmoid": jax.nn.sigmoid,
    "silu": jax.nn.silu,
    "identity": lambda x: x,
}
_LN_EPS = 1e-5
_MASKED = -1e9


def _layer_norm(p, prefix, x_LxD):
  mu = x_LxD.mean(-1, keepdims=True)
  var = ((x_LxD - mu) ** 2).mean(-1, keepdims=True)
  return (x_LxD - mu) * jax.lax.rsqrt(var + _LN_EPS) * p[f"{prefix}/g"] + p[f"{prefix}/b"]


def _attention(p, prefix, xq_QxD, xkv_KxD, mask_QxK):
  """Multi-head attention; mask True where a query may read a key."""
  q_QxHxC = jnp.einsum("...qd,dhc->...qhc", xq_QxD, p[f"{prefix}/wq"]) + p[f"{prefix}/bq"]
  k_KxHxC = jnp.einsum("...kd,dhc->...khc", xkv_KxD, p[f"{prefix}/wk"]) + p[f"{prefix}/bk"]
  v_KxHxC = jnp.einsum("...kd,dhc->...khc", xkv_KxD, p[f"{prefix}/wv"]) + p[f"{prefix}/bv"]
  s_HxQxK = jnp.einsum("...qhc,...khc->...hqk", q_QxHxC, k_KxHxC)
  s_HxQxK = s_HxQxK / jnp.sqrt(jnp.float32(q_QxHxC.shape[-1]))
  s_HxQxK = jnp.where(mask_QxK[..., None, :, :], s_HxQxK, _MASKED)
  a_HxQxK = jax.nn.softmax(s_HxQxK, axis=-1)
  o_QxHxC = jnp.einsum("...hqk,...khc->...qhc", a_HxQxK, v_KxHxC)
  return jnp.einsum("...qhc,hcd->...qd", o_QxHxC, p[f"{prefix}/wo"]) + p[f"{prefix}/bo"]


def _mlp_block(p, prefix, x_LxD, act):
  h = act(x_LxD @ p[f"{prefix}/w1"] + p[f"{prefix}/b1"])
  return h @ p[f"{prefix}/w2"] + p[f"{prefix}/b2"]


def _execute_mlp(spec: specs_lib.MLPSpec, p, x):
  act = _ACT[spec.activation]
  n = len(spec.widths) - 1
  h = x
  for i in range(n):
    h = h @ p[f"l{i}/w"] + p[f"l{i}/b"]
    if i < n - 1:
      h = act(h)
  return h


def _execute_transformer(spec: specs_lib.TransformerSpec, p, tokens):
  act = _ACT[spec.activation]
  seq = tokens.shape[-1]
  h = p["embed/tok"][tokens] + p["embed/pos"]
  causal_LxL = jnp.tril(jnp.ones((seq, seq), bool))
  for l in range(spec.n_layers):
    pre = f"L{l}"
    if spec.ln == "pre":
      x = _layer_norm(p, f"{pre}/ln1", h)
      h = h + _attention(p, f"{pre}/attn", x, x, causal_LxL)
      h = h + _mlp_block(p, f"{pre}/mlp", _layer_norm(p, f"{pre}/ln2", h), act)
    elif spec.ln == "post":
      h = _layer_norm(p, f"{pre}/ln1", h + _attention(p, f"{pre}/attn", h, h, causal_LxL))
      h = _layer_norm(p, f"{pre}/ln2", h + _mlp_block(p, f"{pre}/mlp", h, act))
    else:
      h = h + _attention(p, f"{pre}/attn", h, h, causal_LxL)
      h = h + _mlp_block(p, f"{pre}/mlp", h, act)
  if spec.ln == "pre":
    h = _layer_norm(p, "ln_f", h)
  return h[..., -1, :] @ p["unembed/w"] + p["unembed/b"]


def _execute_seq2seq(spec: specs_lib.Seq2SeqSpec, p, tokens):
  act = _ACT[spec.activation]
  seq = tokens.shape[-1]
  valid_L = tokens != spec.pad_id
  # Queries may read every non-padding cell (bidirectional encoder).
  key_mask_LxL = jnp.broadcast_to(valid_L[..., None, :], tokens.shape + (seq,))
  h = p["enc/embed/tok"][tokens] + p["enc/embed/pos"][:seq]
  for l in range(spec.n_enc_layers):
    pre = f"enc/L{l}"
    x = _layer_norm(p, f"{pre}/ln1", h)
    h = h + _attention(p, f"{pre}/attn", x, x, key_mask_LxL)
    h = h + _mlp_block(p, f"{pre}/mlp", _layer_norm(p, f"{pre}/ln2", h), act)
  memory = _layer_norm(p, "enc/ln_f", h)
  g = jnp.broadcast_to(p["dec/embed/pos"][:seq], memory.shape)
  for l in range(spec.n_dec_layers):
    pre = f"dec/L{l}"
    x = _layer_norm(p, f"{pre}/ln1", g)
    g = g + _attention(p, f"{pre}/attn", x, x, key_mask_LxL)
    x = _layer_norm(p, f"{pre}/lnx", g)
    g = g + _attention(p, f"{pre}/cross", x, memory, key_mask_LxL)
    g = g + _mlp_block(p, f"{pre}/mlp", _layer_norm(p, f"{pre}/ln2", g), act)
  g = _layer_norm(p, "dec/ln_f", g)
  return g @ p["unembed/w"] + p["unembed/b"]


def _execute_cnn(spec: specs_lib.CNNSpec, p, x):
  act = _ACT[spec.activation]
  k = spec.spatial_dims + 1
  lead = x.shape[:x.ndim - k]
  h = x.reshape((-1,) + x.shape[x.ndim - k:])
  spatial = "WH"[:spec.spatial_dims][::-1]          # "W" (1D) or "HW" (2D)
  dims = ("N" + spatial + "C", "IO" + spatial, "N" + spatial + "C")
  for l, s in enumerate(spec.strides):
    h = jax.lax.conv_general_dilated(
        h, p[f"conv{l}/w"], window_strides=(s,) * spec.spatial_dims,
        padding=spec.padding, dimension_numbers=dims)
    h = act(h + p[f"conv{l}/b"])
  pooled = h.mean(axis=tuple(range(1, 1 + spec.spatial_dims)))
  out = pooled @ p["head/w"] + p["head/b"]
  return out.reshape(lead + (spec.n_out,))


def check_inputs(spec: specs_lib.Spec, x) -> None:
  """Raises ValueError if x's static shape or dtype cannot feed `spec`."""
  shape = tuple(getattr(x, "shape", ()))
  dtype = getattr(x, "dtype", None)
  if isinstance(spec, specs_lib.MLPSpec):
    if not shape or shape[-1] != spec.d_in:
      raise ValueError(
          f"MLP input has shape {shape}; expected float[..., {spec.d_in}].")
    return
  if isinstance(spec, specs_lib.CNNSpec):
    want = spec.input_shape + (spec.in_channels,)
    if tuple(shape[len(shape) - len(want):]) != want or len(shape) < len(want):
      raise ValueError(
          f"CNN input has shape {shape}; expected float[..., "
          f"{', '.join(map(str, want))}] (input_shape, then in_channels).")
    return
  if dtype is None or not jnp.issubdtype(dtype, jnp.integer):
    raise ValueError(
        f"{type(spec).__name__} input must be integer tokens, got dtype "
        f"{dtype}.")
  if isinstance(spec, specs_lib.TransformerSpec):
    if not shape or shape[-1] != spec.seq_len:
      raise ValueError(
          f"Transformer input has shape {shape}; expected int[..., "
          f"{spec.seq_len}] (seq_len).")
  elif not shape or not 1 <= shape[-1] <= spec.max_len:
    raise ValueError(
        f"Seq2seq input has shape {shape}; expected int[..., L] with "
        f"1 <= L <= max_len = {spec.max_len}.")


@functools.partial(jax.jit, static_argnums=0)
def _execute(spec, theta, x):
  p = layout_lib.unflatten(spec, theta)
  if isinstance(spec, specs_lib.MLPSpec):
    return _execute_mlp(spec, p, x)
  if isinstance(spec, specs_lib.TransformerSpec):
    return _execute_transformer(spec, p, x)
  if isinstance(spec, specs_lib.CNNSpec):
    return _execute_cnn(spec, p, x)
  return _execute_seq2seq(spec, p, x)


def execute(spec: specs_lib.Spec, theta: jax.Array, x: jax.Array) -> jax.Array:
  """Runs the target network `spec` with weights θ on inputs x.

  Args:
    spec: an MLPSpec, TransformerSpec, Seq2SeqSpec or CNNSpec (static).
    theta: float32[T], T = num_params(spec). One program; vmap for many.
    x: MLPSpec: float[..., d_in]. TransformerSpec: int[..., seq_len] token ids
      in 0..vocab_size-1. Seq2SeqSpec: int[..., L], L <= max_len, token ids in
      0..vocab_size-1 (pad_id for padding). CNNSpec: float[..., *input_shape,
      in_channels].

  Returns:
    MLPSpec: float32[..., d_out]. TransformerSpec: float32[..., n_classes],
    the logits at the last (answer) position. Seq2SeqSpec: float32[..., L,
    vocab_size], one distribution per output cell. CNNSpec: float32[..., n_out].

  Pure and jittable; shapes are checked statically (ValueError), token values
  are not (out-of-range ids are clamped by the gather, as in jnp indexing).
  """
  if theta.ndim != 1:
    raise ValueError(
        f"execute takes one program, theta float32[T]; got shape "
        f"{tuple(theta.shape)}. Use jax.vmap(execute, (None, 0, 0)) for a batch.")
  layout_lib.check_theta(spec, theta)
  check_inputs(spec, x)
  return _execute(spec, theta, x)
