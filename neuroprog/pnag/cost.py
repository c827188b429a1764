"""Analytic cost of an architecture: multiply-accumulates and parameters.

`cost(space_name, arch) -> Cost(macs, params)`; `costs(space_name, archs)`
for a batch (int64 arrays). Pure Python integer arithmetic over the layers
the architecture instantiates, so it works in spaces far too large to
enumerate (MBV3 about 2e19 architectures, DARTS about 1e18).

What is counted (the convention of OFA's and DARTS's own counters):
* macs: one multiply-accumulate per weight use in every convolution and
  linear layer, h_out * w_out * k_h * k_w * (c_in / groups) * c_out for a
  convolution; batch norm, activations, pooling, residual adds and biases
  are not counted. "FLOPs" in the NAS literature (OFA's "595M", DARTS-style
  tables) are these MACs.
* params: every trainable number: convolution and linear weights, the
  biases that exist (SE convolutions, classifier, OFA's feature-mix layer has
  none), and batch norm's scale and shift (2 per channel). Running
  statistics are buffers, not parameters.

MBV3 (`mbv3_layers`): OFA's MobileNetV3 at width 1.0, 224 x 224, 1,000
classes. First conv 3 -> 16 (3 x 3, stride 2, BN), a fixed first block
(depthwise 3 x 3 on 16 channels, BN, point-linear 16 -> 16, BN), then 5
stages of widths (24, 40, 80, 112, 160), strides (2, 2, 2, 1, 2),
squeeze-excite in stages 2, 4 and 5. A layer (k, e) with c_in inputs:
mid = make_divisible(c_in * e, 8); expand 1 x 1 c_in -> mid + BN; depthwise
k x k (stride of the stage on its first layer) + BN; SE if the stage has it
(mid -> make_divisible(mid / 4, 8) -> mid, 1 x 1 with biases, on the pooled
map); point-linear mid -> c_out + BN. Then the final expand 160 -> 960 (1 x 1,
BN) at 7 x 7, global pooling, feature mix 960 -> 1280 (1 x 1, no bias, no
BN) and the classifier 1280 -> 1000 (bias).

DARTS (`darts_layers`): the CIFAR-10 evaluation network, 20 cells, 36
initial channels, 32 x 32, 10 classes, no auxiliary head. Stem 3 x 3
3 -> 108 + BN; cells 6 and 13 are reduction cells and double the channels
(36, 72, 144); a cell with C channels preprocesses its two inputs with
ReLU-conv 1 x 1-BN to C (the first input with a factorized reduce, two
1 x 1 stride-2 convolutions to C / 2 each + BN, when the previous cell
reduced), applies its 8 operations on C channels (stride 2 on the cell's
inputs in a reduction cell) and concatenates its 4 nodes (4C). Operations:
sep_conv_k = two (depthwise k x k, 1 x 1, BN) blocks, the first with the
stride; dil_conv_k = one (depthwise k x k dilated 2, 1 x 1, BN) block;
skip_connect = identity, or a factorized reduce C -> C at stride 2; pools
and none cost nothing. Classifier: global pooling, linear 4C -> 10 (bias).
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from neuroprog.pnag.spaces import darts as darts_space
from neuroprog.pnag.spaces import mbv3 as mbv3_space


class Cost(NamedTuple):
  macs: int       # multiply-accumulates of one forward pass, batch 1
  params: int     # trainable parameters


class Layer(NamedTuple):
  """One counted layer: name, MACs and parameters."""
  name: str
  macs: int
  params: int


def make_divisible(v: float, divisor: int = 8) -> int:
  """OFA's channel rounding: the nearest multiple of `divisor` (at least
  `divisor`), raised by one step if rounding lost more than 10%."""
  new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
  if new_v < 0.9 * v:
    new_v += divisor
  return new_v


def _conv(name, h_out, c_in, c_out, k=1, groups=1, bias=False, bn=True) -> Layer:
  """A k x k convolution with an h_out x h_out output map."""
  weights = k * k * (c_in // groups) * c_out
  return Layer(name, h_out * h_out * weights,
               weights + (c_out if bias else 0) + (2 * c_out if bn else 0))


# ---- MobileNetV3 (OFA) -------------------------------------------------------
MBV3_RESOLUTION = 224
MBV3_CLASSES = 1000
MBV3_STEM, MBV3_FIRST_BLOCK = 16, 16
MBV3_WIDTHS = (24, 40, 80, 112, 160)
MBV3_STRIDES = (2, 2, 2, 1, 2)
MBV3_SE = (False, True, False, True, True)
MBV3_FINAL_EXPAND, MBV3_FEATURE_MIX = 960, 1280


def mbv3_layers(arch, resolution: int = MBV3_RESOLUTION,
                num_classes: int = MBV3_CLASSES) -> list[Layer]:
  """The counted layers of an MBV3 architecture (module doc), in order."""
  mbv3_space.MBV3()._check(arch)
  if resolution % 32:
    raise ValueError(f"mbv3: resolution={resolution}; allowed: a multiple of 32 "
                     "(five stride-2 steps).")
  h = resolution // 2
  out = [_conv("first_conv", h, 3, MBV3_STEM, k=3),
         _conv("first_block/depthwise", h, MBV3_STEM, MBV3_STEM, k=3, groups=MBV3_STEM),
         _conv("first_block/point_linear", h, MBV3_STEM, MBV3_FIRST_BLOCK)]
  c_in = MBV3_FIRST_BLOCK
  for s, stage in enumerate(arch):
    for l, (k, e) in enumerate(stage):
      stride = MBV3_STRIDES[s] if l == 0 else 1
      name = f"stage{s + 1}/layer{l + 1}"
      mid = make_divisible(round(c_in * e), 8)
      out.append(_conv(f"{name}/expand", h, c_in, mid))
      h //= stride
      out.append(_conv(f"{name}/depthwise", h, mid, mid, k=k, groups=mid))
      if MBV3_SE[s]:
        squeeze = make_divisible(mid // 4, 8)
        out.append(_conv(f"{name}/se_reduce", 1, mid, squeeze, bias=True, bn=False))
        out.append(_conv(f"{name}/se_expand", 1, squeeze, mid, bias=True, bn=False))
      out.append(_conv(f"{name}/point_linear", h, mid, MBV3_WIDTHS[s]))
      c_in = MBV3_WIDTHS[s]
  out.append(_conv("final_expand", h, c_in, MBV3_FINAL_EXPAND))
  out.append(_conv("feature_mix", 1, MBV3_FINAL_EXPAND, MBV3_FEATURE_MIX, bn=False))
  out.append(_conv("classifier", 1, MBV3_FEATURE_MIX, num_classes, bias=True, bn=False))
  return out


# ---- DARTS (CIFAR-10 evaluation network) --------------------------------------
DARTS_CHANNELS = 36
DARTS_LAYERS = 20
DARTS_RESOLUTION = 32
DARTS_CLASSES = 10
DARTS_STEM_MULTIPLIER = 3


def _factorized_reduce(name, h_out, c_in, c_out) -> list[Layer]:
  half = c_out // 2
  a = _conv(f"{name}/conv_a", h_out, c_in, half, bn=False)
  b = _conv(f"{name}/conv_b", h_out, c_in, half, bn=False)
  return [a, b._replace(params=b.params + 2 * c_out)]


def _darts_op(name, op, c, h_out, stride) -> list[Layer]:
  if op in ("none", "max_pool_3x3", "avg_pool_3x3"):
    return []
  if op == "skip_connect":
    return [] if stride == 1 else _factorized_reduce(name, h_out, c, c)
  k = int(op[-1])
  if op.startswith("sep_conv"):
    return [_conv(f"{name}/dw1", h_out, c, c, k=k, groups=c, bn=False),
            _conv(f"{name}/pw1", h_out, c, c),
            _conv(f"{name}/dw2", h_out, c, c, k=k, groups=c, bn=False),
            _conv(f"{name}/pw2", h_out, c, c)]
  if op.startswith("dil_conv"):
    return [_conv(f"{name}/dw", h_out, c, c, k=k, groups=c, bn=False),
            _conv(f"{name}/pw", h_out, c, c)]
  raise ValueError(f"darts: operation {op!r}; allowed: {list(darts_space.PRIMITIVES)}.")


def darts_layers(genotype, channels: int = DARTS_CHANNELS, layers: int = DARTS_LAYERS,
                 resolution: int = DARTS_RESOLUTION,
                 num_classes: int = DARTS_CLASSES) -> list[Layer]:
  """The counted layers of a DARTS genotype's evaluation network (module doc)."""
  space = darts_space.DARTS()
  space._check(genotype)
  if layers < 3:
    raise ValueError(f"darts: layers={layers}; allowed: >= 3 (two reduction cells).")
  h = resolution
  c_curr = DARTS_STEM_MULTIPLIER * channels
  out = [_conv("stem", h, 3, c_curr, k=3)]
  c_pp, c_p, c_curr = c_curr, c_curr, channels
  reduction_prev = False
  for i in range(layers):
    reduction = i in (layers // 3, 2 * layers // 3)
    if reduction:
      c_curr *= 2
    name = f"cell{i}"
    if reduction_prev:
      out += _factorized_reduce(f"{name}/pre0", h, c_pp, c_curr)
    else:
      out.append(_conv(f"{name}/pre0", h, c_pp, c_curr))
    out.append(_conv(f"{name}/pre1", h, c_p, c_curr))
    h_out = h // 2 if reduction else h
    pairs = genotype.reduce if reduction else genotype.normal
    for j, (op, src) in enumerate(pairs):
      stride = 2 if reduction and src < 2 else 1
      out += _darts_op(f"{name}/op{j}_{op}", op, c_curr, h_out, stride)
    h = h_out
    reduction_prev = reduction
    c_pp, c_p = c_p, darts_space.NUM_INTERMEDIATE * c_curr
  out.append(_conv("classifier", 1, c_p, num_classes, bias=True, bn=False))
  return out


_LAYERS = {"mbv3": mbv3_layers, "darts": darts_layers}
SPACES = tuple(_LAYERS)


def layers_of(space_name: str, arch, **kwargs) -> list[Layer]:
  """The counted layers of `arch` in space `space_name` (module doc)."""
  if space_name not in _LAYERS:
    raise ValueError(f"cost: space {space_name!r}; allowed: {list(SPACES)} (NB201 "
                     "cells are looked up in the benchmark table instead).")
  return _LAYERS[space_name](arch, **kwargs)


def cost(space_name: str, arch, **kwargs) -> Cost:
  """Cost(macs, params) of one architecture (module doc)."""
  rows = layers_of(space_name, arch, **kwargs)
  return Cost(sum(r.macs for r in rows), sum(r.params for r in rows))


def costs(space_name: str, archs: Sequence, **kwargs) -> tuple[np.ndarray, np.ndarray]:
  """(macs int64[B], params int64[B]) of B architectures."""
  out = [cost(space_name, a, **kwargs) for a in archs]
  return (np.array([c.macs for c in out], np.int64),
          np.array([c.params for c in out], np.int64))
