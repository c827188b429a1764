"""The static layout of θ: which named tensor occupies which slice.

θ is one float32 vector of length T = num_params(spec). The layout is an
ordered tuple of `Entry`s; tensors are stored contiguously, in that order, in
C (row-major) order. Everything here is plain Python/numpy on static shapes,
so `unflatten` and `flatten` are free to call inside `jit` and `vmap`.
"""

from __future__ import annotations

import functools
import math
from typing import Mapping, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from neuroprog import specs as specs_lib


class Entry(NamedTuple):
  """One named tensor of θ.

  name: "/"-separated path, e.g. "L0/attn/wq".
  shape: static shape.
  offset: start index in θ.
  kind: "weight" (a projection), "bias", "gain" (layer-norm scale) or
    "embed" (a lookup table read by token or position).
  fan_in: number of inputs summed through this tensor (1 for bias, gain and
    embed); the standard init std of a "weight" is 1/sqrt(fan_in).
  """
  name: str
  shape: tuple[int, ...]
  offset: int
  kind: str
  fan_in: int

  @property
  def size(self) -> int:
    return math.prod(self.shape)

  @property
  def init_std(self) -> float:
    """Standard-initialization std: 1/sqrt(fan_in) for weights, 1 for
    embeddings (unit-variance rows feed a layer norm or the residual stream),
    0 for biases (and layer-norm gains, which start at exactly 1)."""
    if self.kind == "weight":
      return 1.0 / math.sqrt(self.fan_in)
    if self.kind == "embed":
      return 1.0
    return 0.0


class _Collector:

  def __init__(self):
    self.entries: list[Entry] = []
    self.offset = 0

  def add(self, name, shape, kind, fan_in=1):
    shape = tuple(int(s) for s in shape)
    self.entries.append(Entry(name, shape, self.offset, kind, int(fan_in)))
    self.offset += math.prod(shape)

  def ln(self, prefix, d):
    self.add(f"{prefix}/g", (d,), "gain")
    self.add(f"{prefix}/b", (d,), "bias")

  def attn(self, prefix, d, h, dh):
    for qkv in "qkv":
      self.add(f"{prefix}/w{qkv}", (d, h, dh), "weight", d)
      self.add(f"{prefix}/b{qkv}", (h, dh), "bias")
    self.add(f"{prefix}/wo", (h, dh, d), "weight", h * dh)
    self.add(f"{prefix}/bo", (d,), "bias")

  def mlp(self, prefix, d, m):
    self.add(f"{prefix}/w1", (d, m), "weight", d)
    self.add(f"{prefix}/b1", (m,), "bias")
    self.add(f"{prefix}/w2", (m, d), "weight", m)
    self.add(f"{prefix}/b2", (d,), "bias")


@functools.lru_cache(maxsize=None)
def layout(spec: specs_lib.Spec) -> tuple[Entry, ...]:
  """The ordered tensors of θ for `spec` (cached; spec must be hashable)."""
  c = _Collector()
  if isinstance(spec, specs_lib.MLPSpec):
    for i, (a, b) in enumerate(zip(spec.widths[:-1], spec.widths[1:])):
      c.add(f"l{i}/w", (a, b), "weight", a)
      c.add(f"l{i}/b", (b,), "bias")
  elif isinstance(spec, specs_lib.TransformerSpec):
    d, h, dh = spec.d_model, spec.n_heads, spec.d_head
    c.add("embed/tok", (spec.vocab_size, d), "embed")
    c.add("embed/pos", (spec.seq_len, d), "embed")
    for l in range(spec.n_layers):
      p = f"L{l}"
      if spec.ln != "none":
        c.ln(f"{p}/ln1", d)
      c.attn(f"{p}/attn", d, h, dh)
      if spec.ln != "none":
        c.ln(f"{p}/ln2", d)
      c.mlp(f"{p}/mlp", d, spec.d_mlp)
    if spec.ln == "pre":
      c.ln("ln_f", d)
    c.add("unembed/w", (d, spec.n_classes), "weight", d)
    c.add("unembed/b", (spec.n_classes,), "bias")
  elif isinstance(spec, specs_lib.Seq2SeqSpec):
    d, h, dh = spec.d_model, spec.n_heads, spec.d_head
    c.add("enc/embed/tok", (spec.vocab_size, d), "embed")
    c.add("enc/embed/pos", (spec.max_len, d), "embed")
    for l in range(spec.n_enc_layers):
      p = f"enc/L{l}"
      c.ln(f"{p}/ln1", d)
      c.attn(f"{p}/attn", d, h, dh)
      c.ln(f"{p}/ln2", d)
      c.mlp(f"{p}/mlp", d, spec.d_mlp)
    c.ln("enc/ln_f", d)
    c.add("dec/embed/pos", (spec.max_len, d), "embed")
    for l in range(spec.n_dec_layers):
      p = f"dec/L{l}"
      c.ln(f"{p}/ln1", d)
      c.attn(f"{p}/attn", d, h, dh)
      c.ln(f"{p}/lnx", d)
      c.attn(f"{p}/cross", d, h, dh)
      c.ln(f"{p}/ln2", d)
      c.mlp(f"{p}/mlp", d, spec.d_mlp)
    c.ln("dec/ln_f", d)
    c.add("unembed/w", (d, spec.vocab_size), "weight", d)
    c.add("unembed/b", (spec.vocab_size,), "bias")
  elif isinstance(spec, specs_lib.CNNSpec):
    # Kernels as [C_in, C_out, *kernel]: each (input, output) channel pair's
    # spatial entries are contiguous, the vector its neural-graph edge carries.
    c_in = spec.in_channels
    for l, (c_out, k) in enumerate(zip(spec.channels, spec.kernel_sizes)):
      kernel = (k,) * spec.spatial_dims
      c.add(f"conv{l}/w", (c_in, c_out) + kernel, "weight", c_in * k ** spec.spatial_dims)
      c.add(f"conv{l}/b", (c_out,), "bias")
      c_in = c_out
    c.add("head/w", (c_in, spec.n_out), "weight", c_in)
    c.add("head/b", (spec.n_out,), "bias")
  else:
    raise ValueError(
        f"Unknown spec type {type(spec).__name__}; allowed: MLPSpec, "
        "TransformerSpec, Seq2SeqSpec, CNNSpec.")
  return tuple(c.entries)


@functools.lru_cache(maxsize=None)
def entries_by_name(spec: specs_lib.Spec) -> Mapping[str, Entry]:
  return {e.name: e for e in layout(spec)}


def num_params(spec: specs_lib.Spec) -> int:
  """T, the length of θ for `spec`."""
  last = layout(spec)[-1]
  return last.offset + last.size


def check_theta(spec: specs_lib.Spec, theta) -> None:
  """Raises ValueError unless theta's last axis has length num_params(spec)."""
  t = num_params(spec)
  shape = tuple(getattr(theta, "shape", ()))
  if not shape or shape[-1] != t:
    raise ValueError(
        f"theta has shape {shape}; {type(spec).__name__} needs a last axis of "
        f"length num_params(spec) = {t}.")


def unflatten(spec: specs_lib.Spec, theta: jax.Array) -> dict[str, jax.Array]:
  """Splits θ float32[..., T] into named tensors float32[..., *shape].

  Works under jit and vmap (slices are static). Raises ValueError on a wrong T.
  """
  check_theta(spec, theta)
  lead = theta.shape[:-1]
  return {e.name: theta[..., e.offset:e.offset + e.size].reshape(lead + e.shape)
          for e in layout(spec)}


def flatten(spec: specs_lib.Spec, tensors: Mapping[str, jax.Array]) -> jax.Array:
  """Inverse of `unflatten`: named tensors [..., *shape] -> θ [..., T].

  Raises ValueError on missing or unknown names or wrong shapes.
  """
  entries = layout(spec)
  expected = {e.name for e in entries}
  missing = sorted(expected - set(tensors))
  unknown = sorted(set(tensors) - expected)
  if missing or unknown:
    raise ValueError(
        f"flatten({type(spec).__name__}): missing tensors {missing}, unknown "
        f"tensors {unknown}; expected exactly {[e.name for e in entries]}.")
  parts, lead = [], None
  for e in entries:
    x = jnp.asarray(tensors[e.name])
    n = len(e.shape)
    if tuple(x.shape[x.ndim - n:]) != e.shape or x.ndim < n:
      raise ValueError(
          f"tensor {e.name!r} has shape {tuple(x.shape)}; expected trailing "
          f"shape {e.shape}.")
    this_lead = x.shape[:x.ndim - n]
    if lead is None:
      lead = this_lead
    elif this_lead != lead:
      raise ValueError(
          f"tensor {e.name!r} has leading shape {this_lead}, others {lead}.")
    parts.append(x.reshape(lead + (e.size,)))
  return jnp.concatenate(parts, axis=-1)


def init_theta(spec: specs_lib.Spec, key: jax.Array) -> jax.Array:
  """A standard initialization of θ: float32[T].

  Weights ~ N(0, 1/fan_in), embeddings ~ N(0, 1), biases 0, layer-norm gains 1.
  This is the reference scale that generated weights are compared to.
  """
  entries = layout(spec)
  keys = jax.random.split(key, len(entries))
  parts = []
  for k, e in zip(keys, entries):
    if e.kind == "gain":
      parts.append(jnp.ones((e.size,), jnp.float32))
    else:
      parts.append(e.init_std * jax.random.normal(k, (e.size,), jnp.float32))
  return jnp.concatenate(parts)


def init_std_vector(spec: specs_lib.Spec) -> np.ndarray:
  """float32[T]: the standard-init std of each θ entry (0 for biases/gains)."""
  return np.concatenate([np.full(e.size, e.init_std, np.float32)
                         for e in layout(spec)])
