"""Multi-scale quantization (MSQ) of an N x N feature map with one shared codebook.

For scales n_1 < ... < n_T = N: bring the residual down to n x n, replace
each position by its nearest code of the codebook Z [K, C], bring the codes
back up to N x N, add them to the running reconstruction and subtract them
from the residual. Token map t is the [n_t, n_t] array of code indices;
`accumulated[t]` is the reconstruction after scale t.

Two ways down and up, chosen per scale by `nodes`:

* `nodes=None` (the image pyramid): area-average down, bilinear up; scale t
  is a blurred version of the whole map.
* `nodes` = the sorted indices of n of the N graph nodes (the
  sub-architecture schedule): down keeps the n x n block of those nodes (a
  selection matrix P [n, N]: P e P^T), up puts the codes back at those
  entries and zeros elsewhere (P^T z P). Scale t then refines exactly the
  feature-map entries of an n_t-node sub-architecture, and the block of the
  accumulated map at those nodes (`pool(accumulated[t], n_t, nodes_t)`) is
  what decodes to it.

All functions are pure and work under `jit`/`vmap`; resampling is two small
matmuls with constant matrices, so it is exact and cheap for any n (also n
that do not divide N).

Feature maps are channels-last, `e_BxNxNxC` (float32).
"""

from __future__ import annotations

import functools
from typing import NamedTuple, Optional, Sequence

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


@functools.lru_cache(maxsize=None)
def selection_matrix(nodes: tuple[int, ...], size: int) -> np.ndarray:
  """[n, size] 0/1 matrix P with P[i, nodes[i]] = 1 (keeps those rows)."""
  m = np.zeros((len(nodes), size), np.float32)
  m[np.arange(len(nodes)), np.asarray(nodes, int)] = 1.0
  return m


def _is_all(nodes, size) -> bool:
  return nodes is not None and tuple(nodes) == tuple(range(size))


def pool(x_BxNxNxC: jax.Array, n: int, nodes: Optional[Sequence[int]] = None) -> jax.Array:
  """[B, n, n, C]: area average (nodes None) or the block of `nodes` (len n)."""
  size = x_BxNxNxC.shape[1]
  if n == size and (nodes is None or _is_all(nodes, size)):
    return x_BxNxNxC
  if nodes is None:
    return resample(x_BxNxNxC, area_matrix(n, size))
  return resample(x_BxNxNxC, selection_matrix(tuple(nodes), size))


def upsample(x_BxnxnxC: jax.Array, size: int,
             nodes: Optional[Sequence[int]] = None) -> jax.Array:
  """[B, size, size, C]: bilinear (nodes None), or the n x n block placed at
  the entries of `nodes` with zeros elsewhere."""
  n = x_BxnxnxC.shape[1]
  if n == size and (nodes is None or _is_all(nodes, size)):
    return x_BxnxnxC
  if nodes is None:
    return resample(x_BxnxnxC, upsample_matrix(size, n))
  return resample(x_BxnxnxC, selection_matrix(tuple(nodes), size).T)


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


def per_scale_nodes(scales, node_sets):
  """node_sets, or (None,) * T on the image pyramid: what `pool` and
  `upsample` take at each scale."""
  if node_sets is None:
    return (None,) * len(scales)
  if len(node_sets) != len(scales):
    raise ValueError(f"{len(node_sets)} node sets for {len(scales)} scales.")
  return node_sets


def quantize(e_BxNxNxC: jax.Array, codebook_KxC: jax.Array,
             scales: Sequence[int], node_sets=None) -> MSQOutput:
  """Residual multi-scale quantization of `e`.

  node_sets: None (image pyramid) or, per scale t, the sorted node indices
  (length n_t) of its sub-architecture (module doc).

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
  for n, nodes in zip(scales, per_scale_nodes(scales, node_sets)):
    r = pool(e_BxNxNxC - f_st, n, nodes)
    idx = nearest_code(r, codebook_KxC)
    z = codebook_KxC[idx]
    f_hat = f_hat + upsample(z, size, nodes)
    f_st = f_st + upsample(r + sg(z - r), size, nodes)
    for lst, v in zip(out, (idx, r, z, f_hat, f_st)):
      lst.append(v)
  return MSQOutput(*map(tuple, out))


def reconstruct(indices: Sequence[jax.Array], codebook_KxC: jax.Array,
                size: int, node_sets=None) -> jax.Array:
  """The accumulated map [B, size, size, C] from per-scale token maps."""
  f_hat = 0.0
  for idx, nodes in zip(indices, per_scale_nodes(indices, node_sets)):
    f_hat = f_hat + upsample(codebook_KxC[idx], size, nodes)
  return f_hat


def check_node_sets(node_sets, scales: Sequence[int], size: int) -> tuple:
  """Validates per-scale node sets: node_sets[t] is n_t sorted distinct
  indices in 0..size-1, and the last is every node. Returns them as tuples."""
  if len(node_sets) != len(scales):
    raise ValueError(f"node_sets has {len(node_sets)} entries for the "
                     f"{len(scales)} scales {tuple(scales)}.")
  out = []
  for t, (nodes, n) in enumerate(zip(node_sets, scales)):
    nodes = tuple(int(i) for i in nodes)
    if (len(nodes) != n or any(a >= b for a, b in zip(nodes, nodes[1:]))
        or (nodes and (nodes[0] < 0 or nodes[-1] >= size))):
      raise ValueError(f"node_sets[{t}]={nodes} must be {n} increasing node "
                       f"indices in 0..{size - 1} (scale {t} has n={n}).")
    out.append(nodes)
  if out[-1] != tuple(range(size)):
    raise ValueError(f"the last node set must be every node 0..{size - 1}, "
                     f"got {out[-1]}.")
  return tuple(out)


def check_scales(scales: Sequence[int], size: int) -> tuple[int, ...]:
  """Validates a scale schedule: strictly increasing positive ints ending at `size`."""
  scales = tuple(scales)
  if (not scales or any(not isinstance(n, int) or n < 1 for n in scales)
      or any(a >= b for a, b in zip(scales, scales[1:])) or scales[-1] != size):
    raise ValueError(f"scales must be strictly increasing positive ints ending at "
                     f"N={size}, got {scales}.")
  return scales
