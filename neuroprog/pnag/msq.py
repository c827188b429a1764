"""Multi-scale quantization (MSQ) of an N x N feature map with one shared codebook.

For scales n_1 < ... < n_T = N: area-average the residual to n x n, replace
each position by its nearest code of the codebook Z [K, C], upsample the codes
to N x N (bilinear), add them to the running reconstruction and subtract them
from the residual. Token map t is the [n_t, n_t] array of code indices;
`accumulated[t]` is the reconstruction after scale t, itself a complete (if
coarse) feature map. All functions are pure and work under `jit`/`vmap`;
resampling is two small matmuls with constant matrices, so it is exact and
cheap for any n (also n that do not divide N).

Feature maps are channels-last, `e_BxNxNxC` (float32).
"""

from __future__ import annotations

import functools
from typing import NamedTuple, Sequence

import jax
import jax.numpy as jnp
import numpy as np


@functools.lru_cache(maxsize=None)
def area_matrix(n_out: int, n_in: int) -> np.ndarray:
  """[n_out, n_in] adaptive average pooling (PyTorch's 'area' interpolation)."""
  m = np.zeros((n_out, n_in), np.float32)
  for i in range(n_out):
    lo, hi = (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)
    m[i, lo:hi] = 1.0 / (hi - lo)
  return m


@functools.lru_cache(maxsize=None)
def upsample_matrix(n_out: int, n_in: int) -> np.ndarray:
  """[n_out, n_in] bilinear interpolation, half-pixel centres, edges clamped."""
  m = np.zeros((n_out, n_in), np.float32)
  for i in range(n_out):
    x = (i + 0.5) * n_in / n_out - 0.5
    x = min(max(x, 0.0), n_in - 1.0)
    lo = int(np.floor(x))
    hi = min(lo + 1, n_in - 1)
    w = x - lo
    m[i, lo] += 1.0 - w
    m[i, hi] += w
  return m


def resample(x_BxHxHxC: jax.Array, m_OxH: np.ndarray) -> jax.Array:
  """Applies a resampling matrix to both spatial axes: [B, O, O, C]."""
  m = jnp.asarray(m_OxH)
  return jnp.einsum("ih,bhwc,jw->bijc", m, x_BxHxHxC, m)


def pool(x_BxNxNxC: jax.Array, n: int) -> jax.Array:
  """Area-average to [B, n, n, C]."""
  size = x_BxNxNxC.shape[1]
  return x_BxNxNxC if n == size else resample(x_BxNxNxC, area_matrix(n, size))


def upsample(x_BxnxnxC: jax.Array, size: int) -> jax.Array:
  """Bilinear upsampling to [B, size, size, C]."""
  n = x_BxnxnxC.shape[1]
  return x_BxnxnxC if n == size else resample(x_BxnxnxC, upsample_matrix(size, n))


def nearest_code(r_BxnxnxC: jax.Array, codebook_KxC: jax.Array) -> jax.Array:
  """Index int32 [B, n, n] of the code nearest (L2) to each position."""
  d = (jnp.sum(r_BxnxnxC ** 2, -1, keepdims=True)
       - 2.0 * jnp.einsum("bijc,kc->bijk", r_BxnxnxC, codebook_KxC)
       + jnp.sum(codebook_KxC ** 2, -1))
  return jnp.argmin(d, -1).astype(jnp.int32)


class MSQOutput(NamedTuple):
  indices: tuple        # per scale t: int32 [B, n_t, n_t]
  residuals: tuple      # per scale t: float32 [B, n_t, n_t, C], pooled residual quantized
  codes: tuple          # per scale t: float32 [B, n_t, n_t, C], Z[indices]
  accumulated: tuple    # per scale t: float32 [B, N, N, C], reconstruction after t
  accumulated_st: tuple  # the same values with straight-through gradients


def quantize(e_BxNxNxC: jax.Array, codebook_KxC: jax.Array,
             scales: Sequence[int]) -> MSQOutput:
  """Residual multi-scale quantization of `e`.

  `accumulated[t]` is built from the codes themselves (gradients reach the
  codebook); `accumulated_st[t]` has the same values but passes gradients to
  `e` through each scale's pooling and upsampling (a straight-through
  estimator per scale: r + stop_gradient(z - r)), so a loss on the coarse
  reconstruction asks the *coarse* content of e to change. At the last scale
  (n = N) `accumulated_st[-1]` has gradient identity with respect to e.
  """
  size = e_BxNxNxC.shape[1]
  sg = jax.lax.stop_gradient
  f_hat = jnp.zeros_like(e_BxNxNxC)
  f_st = jnp.zeros_like(e_BxNxNxC)
  out = ([], [], [], [], [])
  for n in scales:
    r = pool(e_BxNxNxC - f_st, n)
    idx = nearest_code(r, codebook_KxC)
    z = codebook_KxC[idx]
    f_hat = f_hat + upsample(z, size)
    f_st = f_st + upsample(r + sg(z - r), size)
    for lst, v in zip(out, (idx, r, z, f_hat, f_st)):
      lst.append(v)
  return MSQOutput(*map(tuple, out))


def reconstruct(indices: Sequence[jax.Array], codebook_KxC: jax.Array,
                size: int) -> jax.Array:
  """The accumulated map [B, size, size, C] from per-scale token maps."""
  f_hat = 0.0
  for idx in indices:
    f_hat = f_hat + upsample(codebook_KxC[idx], size)
  return f_hat


def next_scale_input(f_hat_BxNxNxC: jax.Array, n_next: int) -> jax.Array:
  """What the generator reads for the next scale: the reconstruction so far at n_next."""
  return pool(f_hat_BxNxNxC, n_next)


def check_scales(scales: Sequence[int], size: int) -> tuple[int, ...]:
  """Validates a scale schedule: strictly increasing positive ints ending at `size`."""
  scales = tuple(scales)
  if (not scales or any(not isinstance(n, int) or n < 1 for n in scales)
      or any(a >= b for a, b in zip(scales, scales[1:])) or scales[-1] != size):
    raise ValueError(f"scales must be strictly increasing positive ints ending at "
                     f"N={size}, got {scales}.")
  return scales
