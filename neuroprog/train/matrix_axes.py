"""Which axes of each parameter tensor are a matrix's (in, out) axes, for
optimizers that act on matrices as wholes (Muon orthogonalizes each
matrix's update, so every singular direction of it moves by the same amount).

`matrix_axes(params)` -> a pytree of `optax.contrib.MuonDimensionNumbers` or
None, one per leaf of `params` (a flax params dict), by the layouts the
library's models use:

  kernel [in, out] (Dense)                          reduction 0, output 1
  kernel [G, in, out] (group-tied layers: Meta-GNN,  reduction 1, output 2;
    Meta-gMLP's `grouped.GroupedDense`)               G independent matrices
  attention query/key/value kernel [in, H, Dh]      reduction 0, output (1, 2)
  attention out kernel [H, Dh, out]                 reduction (0, 1), output 2
  conv kernel [k..., in, out]                        reduction (k..., in), output out

A kernel is any leaf whose name starts with "kernel" (Meta-GNN's encoders
split theirs into kernel_intent / kernel_pe, its messages into kernel_edge /
kernel_sender / kernel_receiver: each is one input block of a [G, in, out]
map). Every other leaf (biases, embeddings, layer-norm scales, the output
head's gain and center) is None: a vector has no matrix shape to
orthogonalize, and the optimizer gives it Adam's step. The rule reads only
names and ranks, so it is jit-safe and sees per-seed shapes inside the
trainer's vmap over seeds.
"""

from __future__ import annotations

from typing import Any, Optional

import jax
from optax import contrib

Axes = contrib.MuonDimensionNumbers


def _names(path) -> list[str]:
  return [str(getattr(k, "key", getattr(k, "name", k))) for k in path]


def leaf_axes(names: list[str], ndim: int) -> Optional[Axes]:
  """The matrix axes of one leaf (module path `names`, leaf name last) of
  rank `ndim`, or None for a leaf the optimizer treats as a vector."""
  leaf, modules = names[-1], names[:-1]
  if not leaf.startswith("kernel") or ndim < 2:
    return None
  if ndim == 2:
    return Axes(reduction_axis=0, output_axis=1)
  if any("Attention" in m for m in modules):
    if modules[-1] == "out":
      return Axes(reduction_axis=tuple(range(ndim - 1)), output_axis=ndim - 1)
    return Axes(reduction_axis=0, output_axis=tuple(range(1, ndim)))
  if any(m.startswith("Conv") for m in modules):
    return Axes(reduction_axis=tuple(range(ndim - 1)), output_axis=ndim - 1)
  if ndim == 3:
    return Axes(reduction_axis=1, output_axis=2)
  return None


def matrix_axes(params: Any) -> Any:
  """A pytree like `params` whose leaves are `leaf_axes` of each leaf."""
  return jax.tree_util.tree_map_with_path(
      lambda path, x: leaf_axes(_names(path), x.ndim), params)
