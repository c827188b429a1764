"""Meta-gMLP: group-tied slot encoders, a global mixer, group-tied decoders.

Every θ slot i (a parameter-carrying node or edge of the neural graph) gets an
embedding z_i = enc^{g(i)}([u || pe_i]) from its group's encoder; a global MLP
mixes the concatenation of all slot embeddings; each slot's decoder reads
[z_i || mix_i] and writes its weight.

The mixer's first layer reads all T x d_slot slot features (24,196 on
ADDMOD). Under the standard parametrization (`mixer_input="standard"`, the
default: kernel N(0, 1/n)) Adam moves each kernel entry by about the rate
per step, whatever the gradient's scale, so the layer's output moves by
about lr * sum_j |x_j|, which grows with the fan-in n: on ADDMOD one step
at 1e-4 moves the generated θ by 61% (`experiments.init_structure
--updates`). `mixer_input="scaled"` keeps the kernel at unit scale and
divides the product by sqrt(n): the same function at init, and a step that
moves the output by about lr * sqrt(n) * mean|x| instead. On ADDMOD's
validation primes it helps at 1e-3 and 2e-3 and loses at the higher rates
that task chose (8e-3; BUILD_NOTES.md, "What one optimizer step does"), so
the default stays "standard".
"""

from __future__ import annotations

import flax.linen as nn
import jax.numpy as jnp
import numpy as np

from neuroprog import graphs
from neuroprog.meta import base, grouped

DEFAULTS = {"d_slot": 4, "hidden": 32, "grouping": "orbit", "use_pe": True,
            "pe_features": graphs.DEFAULT_PE_FEATURES, "base_program": False,
            "mixer_input": "standard"}
MIXER_INPUTS = ("standard", "scaled")
WIDTH_KEY = "hidden"
LEARNING_RATE = 1e-3   # the Adam rate a config gets unless it names one


class ScaledDense(nn.Module):
  """x float32[..., n] -> x W / sqrt(n) + b float32[..., features], W ~ N(0, 1)
  and b = 0 at init: a standard dense layer's function at init, with the
  fan-in factor taken out of the parameter (module docstring)."""
  features: int

  @nn.compact
  def __call__(self, x):
    n = x.shape[-1]
    kernel = self.param("kernel", nn.initializers.normal(1.0), (n, self.features))
    bias = self.param("bias", nn.initializers.zeros, (self.features,))
    return jnp.matmul(x, kernel) * (1.0 / np.sqrt(n)) + bias


class MetaGMLPNet(nn.Module):
  """u float32[B, F] -> raw float32[B, T]."""
  buckets: tuple
  n_groups: int
  pe: np.ndarray | None        # float32[T, P] in sorted order, or None
  slot_of_sorted: np.ndarray   # int[T]: θ slot of each sorted element
  d_slot: int
  hidden: int
  scaled_mixer_input: bool = False   # mixer_input == "scaled"

  @nn.compact
  def __call__(self, u_BxF):
    t = len(self.slot_of_sorted)
    b = u_BxF.shape[0]
    x = grouped.broadcast_intent(u_BxF, self.pe, t)
    z = base.layer_norm(grouped.GroupedMLP(
        self.buckets, self.n_groups, self.d_slot, self.d_slot)(x))
    flat = z.transpose(1, 0, 2).reshape(b, t * self.d_slot)
    mix_in = (ScaledDense(self.hidden, name="mixer_in") if self.scaled_mixer_input
              else nn.Dense(self.hidden))
    m = nn.gelu(mix_in(flat))
    m = nn.Dense(t * self.d_slot)(m).reshape(b, t, self.d_slot).transpose(1, 0, 2)
    out = grouped.GroupedMLP(self.buckets, self.n_groups, self.d_slot, 1)(
        jnp.concatenate([z, base.layer_norm(m)], -1))
    # Gather (not scatter) into slot order: its gradient is a cheap scatter-add.
    return out[..., 0][np.argsort(self.slot_of_sorted)].T


def build(spec, intent_dim, config):
  """config.pe_features selects the positional-encoding families
  (`graphs.pe_columns`), as for Meta-GNN. config.base_program (default
  False) adds a learned intent-independent θ_base, zero at init
  (`base.Hypernetwork`). config.mixer_input (default "standard") sets the
  parametrization of the mixer's first layer: "scaled" is `ScaledDense`
  (module docstring)."""
  if config.mixer_input not in MIXER_INPUTS:
    raise ValueError(f"meta_gmlp: mixer_input={config.mixer_input!r}; allowed: "
                     f"{list(MIXER_INPUTS)}.")
  if not isinstance(config.base_program, (bool, np.bool_)):
    raise ValueError(f"meta_gmlp: base_program={config.base_program!r}; allowed: "
                     "True or False.")
  node_cols, edge_cols = graphs.pe_columns(config.pe_features)
  ng = graphs.neural_graph(spec, config.grouping)
  node_pe, edge_pe = ng.node_pe[:, node_cols], ng.edge_pe[:, edge_cols]
  # One element per θ entry: a node's bias, or entry j of an edge's vector
  # (j = 0 for a scalar weight; kernel position j of a conv kernel).
  index = ng.edge_theta_index()
  has_n = ng.node_slot >= 0
  edge_of, entry = np.nonzero(index >= 0)
  slots = np.concatenate([ng.node_slot[has_n], index[edge_of, entry]])
  group = np.concatenate([ng.node_group[has_n], ng.num_node_groups + ng.edge_group[edge_of]])
  pe_n = np.concatenate([node_pe[has_n], np.zeros_like(node_pe[has_n]),
                         np.zeros((has_n.sum(), 1), np.float32)], 1)
  pe_e = np.concatenate([edge_pe[edge_of], np.ones((len(edge_of), 1), np.float32)], 1)
  if ng.max_edge_size > 1:
    # Kernel targets only (other targets keep their inputs): where in the
    # kernel the entry sits, as a fraction of the kernel size.
    pos = (entry / ng.edge_size[edge_of]).astype(np.float32)[:, None]
    pe_n = np.concatenate([pe_n, np.zeros((has_n.sum(), 1), np.float32)], 1)
    pe_e = np.concatenate([pe_e, pos], 1)
  pe = np.concatenate([pe_n, pe_e])
  lay = grouped.group_layout(group)
  net = MetaGMLPNet(buckets=lay.buckets, n_groups=lay.n_groups,
                    pe=pe[lay.order] if config.use_pe else None,
                    slot_of_sorted=slots[lay.order], d_slot=int(config.d_slot),
                    hidden=int(config.hidden),
                    scaled_mixer_input=config.mixer_input == "scaled")
  return net, base.head_layout(spec)
