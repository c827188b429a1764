"""How a generated weight matrix is built: offsets versus interaction.

A standard initialisation draws every weight independently, so almost none
of a matrix's variance is a per-row or per-column constant. A hypernetwork
can match the standard std and still emit matrices that are mostly such
offsets (one constant per neuron), which a layer norm largely removes and
which carry little of a linear map. `offset_shares` splits a matrix's
variance into row offsets, column offsets and the rest (the interaction);
`effective_rank` measures how many directions the rest spans.
`init_scale` compares each generated tensor's spread, intent by intent,
with its standard initialisation. Numpy only.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from neuroprog.programs import layout as layout_lib


class MatrixStructure(NamedTuple):
  """Shares of a matrix's variance (they sum to 1) and the rest's rank."""
  row: float        # per-row constants (over the last axis)
  col: float        # per-column constants
  rest: float       # the interaction: what is left after both offsets
  rest_rank: float  # effective rank of the rest (exp of its spectral entropy)


def _as_matrix(a) -> np.ndarray:
  a = np.asarray(a, np.float64)
  if a.ndim < 2:
    raise ValueError(f"expected a matrix ([..., rows, cols]); got shape {a.shape}.")
  return a.reshape(-1, a.shape[-1])


def effective_rank(mat) -> float:
  """exp(entropy of the normalised squared singular values) of mat float[R, C]
  (leading axes folded into rows): 1 for rank one, min(R, C) for a flat
  spectrum. A zero matrix gives 0."""
  s2 = np.linalg.svd(_as_matrix(mat), compute_uv=False) ** 2
  if s2.sum() == 0:
    return 0.0
  p = s2 / s2.sum()
  p = p[p > 0]
  return float(np.exp(-(p * np.log(p)).sum()))


def offset_shares(mat) -> MatrixStructure:
  """Splits mat float[R, C] (leading axes folded into rows) after removing
  its mean: row offsets, column offsets and the rest, as shares of the
  variance (orthogonal parts, so they sum to 1). A constant matrix raises
  ValueError (its variance is zero)."""
  m = _as_matrix(mat)
  c = m - m.mean()
  row = c.mean(1, keepdims=True)
  col = c.mean(0, keepdims=True)
  rest = c - row - col
  total = float((c ** 2).sum())
  if total == 0:
    raise ValueError("offset_shares: the matrix is constant (zero variance).")
  return MatrixStructure(
      row=float((row ** 2).sum() * m.shape[1] / total),
      col=float((col ** 2).sum() * m.shape[0] / total),
      rest=float((rest ** 2).sum() / total),
      rest_rank=effective_rank(rest))


def theta_structure(spec, theta, min_dim: int = 5) -> dict[str, MatrixStructure]:
  """`offset_shares` of every weight tensor of one program θ float[T] whose
  last two axes are at least min_dim long (biases and gains are skipped);
  keyed by tensor name, in layout order."""
  theta = np.asarray(theta)
  if theta.shape != (layout_lib.num_params(spec),):
    raise ValueError(f"theta has shape {theta.shape}; expected "
                     f"({layout_lib.num_params(spec)},) for this spec.")
  out, offset = {}, 0
  for entry in layout_lib.layout(spec):
    values = theta[offset:offset + entry.size].reshape(entry.shape)
    offset += entry.size
    if len(entry.shape) >= 2 and min(entry.shape[-2:]) >= min_dim:
      out[entry.name] = offset_shares(values)
  return out


def init_scale(spec, theta_IxT) -> dict[str, tuple[float, float]]:
  """Per weight and embedding tensor: (min, max) over the I programs of
  theta_IxT float[I, T] of std(tensor) / its standard-init std (1 for a
  standard init up to sampling noise; a hypernetwork should start within
  0.5-2).
  Keyed by tensor name, in layout order; biases and gains are skipped."""
  out = {}
  for entry, values in _weight_tensors(spec, theta_IxT, min_programs=1):
    ratio = values.std(1) / entry.init_std
    out[entry.name] = (float(ratio.min()), float(ratio.max()))
  return out


def _weight_tensors(spec, theta_IxT, min_programs):
  """[(layout entry, float64[I, size])] for the weight and embedding tensors."""
  theta = np.asarray(theta_IxT, np.float64)
  t = layout_lib.num_params(spec)
  if theta.ndim != 2 or theta.shape[1] != t or theta.shape[0] < min_programs:
    raise ValueError(f"theta has shape {theta.shape}; expected [I >= {min_programs}, "
                     f"{t}] for this spec.")
  return [(e, theta[:, e.offset:e.offset + e.size]) for e in layout_lib.layout(spec)
          if e.kind in ("weight", "embed")]


def intent_share(spec, theta_IxT) -> dict[str, float]:
  """Per weight and embedding tensor: the share of its variance, over the I
  programs of theta_IxT float[I, T] and its entries, that varies between
  programs: mean over entries of Var_i(θ[i, e]) / Var_{i, e}(θ).

  0 when every intent gets the same tensor (the intent is ignored), about
  1 - 1/I when entries are independent across intents. At initialization
  it measures how much the intent already moves the generated program:
  a hypernetwork whose first layer is dominated by positional codes starts
  near 0 and has to learn to read the intent before it can fit several
  intents at once. Keyed by tensor name, in layout order."""
  out = {}
  for entry, values in _weight_tensors(spec, theta_IxT, min_programs=2):
    total = values.var()
    out[entry.name] = float(values.var(0).mean() / total) if total > 0 else 0.0
  return out
