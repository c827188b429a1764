"""Meta-MLP: a flat hypernetwork, an MLP from the intent u to all T weights."""

from __future__ import annotations

import flax.linen as nn
import numpy as np

from neuroprog.meta import base

DEFAULTS = {"hidden": 64, "depth": 2, "intent_input": "raw",
            "intent_scale": 1.0}
INTENT_INPUTS = ("raw", "balanced")
WIDTH_KEY = "hidden"
LEARNING_RATE = 1e-3   # the Adam rate a config gets unless it names one


class MetaMLPNet(nn.Module):
  """u float32[B, F] -> raw float32[B, T]: `depth` GELU layers, a
  parameter-free layer norm (so raw outputs have unit scale across slots at
  init), then one dense layer to all T slots. The intent enters multiplied by
  `intent_scale` (Meta-GNN's option of that name), which sets how fast the
  first layer's pre-activations move with the intent."""
  hidden: int
  depth: int
  n_out: int
  intent_scale: float = 1.0

  @nn.compact
  def __call__(self, u_BxF):
    h = u_BxF * self.intent_scale
    for _ in range(self.depth):
      h = nn.gelu(nn.Dense(self.hidden)(h))
    h = base.layer_norm(h)
    init = nn.initializers.normal(1.0 / np.sqrt(self.hidden))
    return nn.Dense(self.n_out, kernel_init=init)(h)


def build(spec, intent_dim, config):
  """config.intent_input (default "raw"): "balanced" z-scores the intent
  features on the training intents before the first layer
  (`base.Hypernetwork`), so a feature whose spread over the training intents
  is a few hundredths moves the first layer as much as a unit input.
  config.intent_scale (default 1) multiplies the (standardized) features
  before the first layer (`MetaMLPNet`)."""
  if config.intent_input not in INTENT_INPUTS:
    raise ValueError(f"meta_mlp: intent_input={config.intent_input!r}; allowed: "
                     f"{list(INTENT_INPUTS)}.")
  if not float(config.intent_scale) > 0:
    raise ValueError(f"meta_mlp: intent_scale={config.intent_scale!r}; allowed: > 0.")
  if int(config.depth) < 1:
    raise ValueError(f"meta_mlp: depth={config.depth!r}; allowed: an integer >= 1.")
  from neuroprog.programs import layout as layout_lib  # pylint: disable=g-import-not-at-top
  net = MetaMLPNet(hidden=int(config.hidden), depth=int(config.depth),
                   n_out=layout_lib.num_params(spec),
                   intent_scale=float(config.intent_scale))
  return net, base.head_layout(spec)
