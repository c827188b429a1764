"""Meta-GNN: a structure-aware graph hypernetwork on the neural graph of S*.

For B intents at once, on the neural graph (N nodes, E edges) of the target:

1. Group-tied encoders: h0_n = enc_node^{g(n)}([u || pe_n]),
   e0 = enc_edge^{g(e)}([u || pe_e]). Positional encodings enter here only.
   pe_e is [pe_sender || pe_receiver], plus `pe_random` fixed random features
   (default 10, see `_edge_pe`). `pe_features` picks the encoding families
   (default "sincos+ramp", see `build`).
2. k rounds of message passing along both edge directions:
     e   <- LN(e + msg^{g(e)}_r([e, h_sender, h_receiver]))
     h_n <- LN(h_n + upd^{g(n)}_r([h_n, agg_{e into n} e, agg_{e out of n} e]))
   with agg = sum or mean (permutation invariant) and LN parameter-free.
   That is `norm="post"`. With `norm="pre"` (default) the rounds add to raw
   residual streams and the layers read their layer norms:
     e_res <- e_res + msg_r([LN(e_res), LN(h_sender), LN(h_receiver)])
     h_res <- h_res + upd_r([LN(h_res), agg LN(e_res), agg LN(e_res)])
   and the decoders read LN of the streams: the pre-LN arrangement of
   Transformers, whose identity path carries the gradient to the encoders
   unscaled by the rounds' norms.
3. Group-tied decoders: bias of n = dec_node^{g(n)}(h_n), weight of e =
   dec_edge^{g(e)}(e_e), written into θ through node_slot / edge_slot. An
   edge that carries a vector (a conv kernel, `edge_size` k) gets the first
   k of the K = max_edge_size outputs of its decoder; output j is kernel
   position j, the same for every edge of a group. With `decoder_film` = H > 0
   the decoders' hidden activations are multiplied by a group-tied intent gain
   1 + φ(u) W_g (φ an intent trunk of width H, W zero at init;
   `grouped.GroupedIntentGain`), so each element's value is read out from a
   learned basis of intent functions, as Meta-MLP's last layer reads every θ
   entry out of its intent trunk.

Two groupings of the neural graph serve two purposes. `grouping` (default
"orbit") ties the layers that carry an element's identity: the encoders'
first layer and the decoders' last layer. `message_grouping` (default "role",
a coarser grouping whose groups are unions of orbits) ties the message and
update MLPs and the encoders'/decoders' hidden layers. With orbit tying
everywhere, the parameter count grows with the number of orbits (ADDMOD's
210 edge orbits: 24.6M parameters at d = 64); role-tied computation keeps the model capacity-matchable while
every tie still respects the symmetry (roles are preserved by automorphisms).
Set message_grouping="orbit" for full orbit tying.

Every per-group weight is applied by `grouped.GroupedDense`: one batched
matmul per bucket of equal-size groups, never a per-element weight gather.
The same graph serves all B programs, so states are [M, B, D] and the index
arrays (senders, receivers, groups) are never tiled: this is the batched
neural graph in dense form. Edge states are kept as a tuple of segments (runs
of equal-size groups in both groupings, `grouped.common_segments`), so that
no edge activation is ever sliced into buckets or concatenated back: at
d = 64 on CPU those copies cost as much as the matmuls (BUILD_NOTES.md).

Without positional encodings the model is equivariant: an automorphism φ of
the graph maps the generated θ to ρ(φ)θ, so θ is a fixed point of every ρ(φ)
(tested).
"""

from __future__ import annotations

import flax.linen as nn
import jax.numpy as jnp
import numpy as np

from neuroprog import graphs
from neuroprog import specs as specs_lib
from neuroprog.meta import base, grouped, static_rows, token_basis

# The recipe every task config uses (only the width d is matched per task).
# pe_random = 10 and LEARNING_RATE were chosen on the training and validation
# intents of ADDMOD and 1D-ARC (BUILD_NOTES.md, "ADDMOD run", "1D-ARC run");
# intent_input = "raw" over "balanced" by `python -m experiments.select
# --config=experiments/configs/addmod.py --models=meta_gnn ...` on ADDMOD's
# validation primes (BUILD_NOTES.md, "One Meta-GNN recipe"); aggregation "sum"
# over "mean" by `python -m experiments.select
# --config=experiments/configs/addmod_cpu.py --models=meta_gnn
# --grid="model_configs.meta_gnn.aggregation=sum,mean"` (BUILD_NOTES.md,
# "Meta-GNN's recipe on ADDMOD"); pe_learned off by the same command with
# --grid="model_configs.meta_gnn.pe_learned=False,True" ("Learned edge features");
# rounds 3 over 2 by the same command with --grid="model_configs.meta_gnn.rounds=2"
# at ADDMOD's rate and warm-up ("More random edge features at the new rate"), as
# over 1 and 2 at 3e-4 ("One Meta-GNN recipe"). norm "pre" over "post": the
# setting with the higher validation accuracy averaged over the three tasks.
# ADDMOD's validation primes chose "pre" at a rate of 8e-3 (0.692 against
# 0.687 at post-norm's 4e-3; `addmod.py` names the command), 1D-ARC's read
# 0.525 against 0.500 at 3e-4 (`python -m experiments.select
# --config=experiments/configs/arc1d.py --models=meta_gnn
# --grid="model_configs.meta_gnn.norm=pre"`), and SUMFIRST's n = 6 read 1.000
# against 1.000 with `sumfirst.py`'s Meta-GNN and 0.152 against 0.160 with this
# recipe (`python -m experiments.select --config=experiments/configs/sumfirst.py
# --models=meta_gnn --configured --grid="model_configs.meta_gnn.norm=pre"`, and
# `--models=meta_gnn@library` with the grid on `meta_gnn@library`). Every
# margin is below a seed std; pre-norm also trains ADDMOD at twice the rate
# (BUILD_NOTES.md, "What one optimizer step does", "Pre-norm rounds as the
# library default").
DEFAULTS = {"d": 64, "rounds": 3, "aggregation": "sum", "grouping": "orbit",
            "message_grouping": "role", "use_pe": True, "intent_scale": 1.0,
            "pe_random": 10, "pe_features": graphs.DEFAULT_PE_FEATURES,
            "intent_input": "raw", "intent_weight": 0.5, "intent_film": False,
            "base_program": False, "pe_learned": False, "decoder_film": 0,
            "norm": "pre", "token_basis": 0}
WIDTH_KEY = "d"
# The Adam rate a config gets unless it names one. Chosen when 1e-3 diverged
# on ADDMOD and 1D-ARC without the random edge features (BUILD_NOTES.md,
# "ADDMOD run", "1D-ARC run"); with them ADDMOD chose 1e-3 on its validation
# primes (`experiments/configs/addmod.py` sets it), while 1D-ARC's validation
# intents keep 3e-4 (1e-3 fits its training intents better and its held-out
# shifts worse; "Why Meta-GNN learns ADDMOD slowly"; with pre-norm rounds 6e-4
# did the same, `experiments/configs/arc1d.py` names the command). The warm-up is the
# training loop's (`config.warmup_steps`, per model
# `config.warmup_steps_by_model`): ADDMOD's validation primes chose 1,000
# steps for Meta-GNN (`addmod.py` sets it); 1D-ARC's validation intents at 5
# seeds did not (BUILD_NOTES.md, "A per-model warm-up"), so the recipe keeps
# the loop's rule.
LEARNING_RATE = 3e-4
AGGREGATIONS = ("sum", "mean")
NORMS = ("post", "pre")
INTENT_INPUTS = ("balanced", "raw")


class MetaGNNNet(nn.Module):
  """u float32[B, F] -> raw float32[B, T]. All structure is static numpy."""
  n_nodes: int
  node_buckets: tuple          # identity groups (grouping), sorted order
  n_node_groups: int
  edge_buckets: tuple
  n_edge_groups: int
  node_msg_buckets: tuple      # computation groups (message_grouping)
  n_node_msg_groups: int
  edge_msg_buckets: tuple
  n_edge_msg_groups: int
  senders: np.ndarray          # int32[E], sorted node index, in sorted edge order
  receivers: np.ndarray        # int32[E]
  # Edge buckets above are per segment (grouped.split_buckets), so
  # edge_buckets[i] and edge_msg_buckets[i] cover the same elements.
  node_pe: np.ndarray | None   # float32[N, P] sorted, or None (P = 10: all families)
  edge_pe: np.ndarray | None   # float32[E, 2P + pe_random] sorted, or None
  theta_source: np.ndarray     # int32[T]: index into [nodes; edges x K] (sorted)
  edge_endpoints: tuple        # per message round input: see GroupedEdgeInput
  d: int
  rounds: int
  aggregation: str
  intent_scale: float = 1.0
  balanced: bool = False       # intent_input == "balanced" (GroupedIntentEncoder)
  intent_weight: float = 0.5
  intent_film: bool = False    # FiLM gain of the intent in the encoders' first layer
  edge_out: int = 1            # K: values decoded per edge (kernel entries)
  edge_pe_learned: int = 0     # trailing edge_pe columns that are trainable
  decoder_film: int = 0        # width of the decoders' intent trunk; 0: no gain
  norm: str = "pre"            # where the rounds' layer norms sit: NORMS
  token_basis: int = 0         # M: token tensors projected on the token basis
  spec: specs_lib.Spec = None  # the target (needed when token_basis > 0)

  @nn.compact
  def __call__(self, u_BxF):
    # A larger scale lets the intent, not the positional encodings, dominate
    # the encoders' first layer from the start (see `build`).
    u_BxF = u_BxF * self.intent_scale
    n = self.n_nodes
    nb, ng = self.node_buckets, self.n_node_groups
    eb, eg = self.edge_buckets, self.n_edge_groups
    mnb, mng = self.node_msg_buckets, self.n_node_msg_groups
    meb, meg = self.edge_msg_buckets, self.n_edge_msg_groups
    d = self.d

    each = grouped.segment_map

    def encode(buckets, groups, msg_buckets, msg_groups, pe, name, segmented,
               learned=0):
      z = grouped.GroupedIntentEncoder(buckets, groups, pe, d, segmented,
                                       balanced=self.balanced,
                                       intent_weight=self.intent_weight,
                                       film=self.intent_film, learned=learned,
                                       name=f"{name}_in")(u_BxF)
      z = grouped.GroupedDense(msg_buckets, msg_groups, d, name=f"{name}_hidden")(
          each(nn.gelu, z))
      return each(base.layer_norm, z)

    def decode(z, buckets, groups, msg_buckets, msg_groups, name, k=1):
      z = grouped.GroupedDense(msg_buckets, msg_groups, d, name=f"{name}_hidden")(z)
      z = each(nn.gelu, z)
      if self.decoder_film:
        gain = grouped.GroupedIntentGain(msg_buckets, msg_groups, d, self.decoder_film,
                                         segmented=isinstance(z, tuple),
                                         name=f"{name}_film")(u_BxF)
        z = tuple(a * g for a, g in zip(z, gain)) if isinstance(z, tuple) else z * gain
      z = grouped.GroupedDense(buckets, groups, k, name=f"{name}_out")(z)
      # [M, B, k] -> [M * k, B], element-major: row m * k + j is output j of m.
      return each(lambda a: a.transpose(0, 2, 1).reshape(-1, a.shape[1]), z)

    def segment_sum(xs, index):   # sum over the segments' edges into nodes
      out = 0
      for x_s, (start, k, size, _) in zip(xs, meb):
        out = out + static_rows.sum_rows(x_s, index[start:start + k * size], n)
      return out

    h = encode(nb, ng, mnb, mng, self.node_pe, "enc_node", False)
    x = encode(eb, eg, meb, meg, self.edge_pe, "enc_edge", True,
               self.edge_pe_learned)
    snd_groups, rcv_groups, snd_slot, rcv_slot = self.edge_endpoints
    if self.aggregation == "mean":
      deg_in = np.maximum(np.bincount(self.receivers, minlength=n), 1)
      deg_out = np.maximum(np.bincount(self.senders, minlength=n), 1)
    # x, h: the states the layers read (always layer-normed). Under
    # norm="pre" the residual streams x_res, h_res are kept apart and never
    # normalized, so a round's update adds to the stream instead of being
    # rescaled with it: the gradient reaches the encoders through an identity
    # path per round (module docstring).
    pre = self.norm == "pre"
    x_res, h_res = x, h
    for r in range(self.rounds):
      m = grouped.GroupedEdgeInput(meb, meg, d, snd_groups, rcv_groups, snd_slot,
                                   rcv_slot, name=f"msg_{r}_in")(x, h)
      m = grouped.GroupedDense(meb, meg, d, name=f"msg_{r}_out")(each(nn.gelu, m))
      if pre:
        x_res = tuple(x_s + m_s for x_s, m_s in zip(x_res, m))
        x = each(base.layer_norm, x_res)
      else:
        x = tuple(base.layer_norm(x_s + m_s) for x_s, m_s in zip(x, m))
      agg_in = segment_sum(x, self.receivers)
      agg_out = segment_sum(x, self.senders)
      if self.aggregation == "mean":
        agg_in = agg_in / deg_in[:, None, None]
        agg_out = agg_out / deg_out[:, None, None]
      dh = grouped.GroupedMLP(mnb, mng, d, d, name=f"upd_{r}")(
          jnp.concatenate([h, agg_in, agg_out], -1))
      if pre:
        h_res = h_res + dh
        h = base.layer_norm(h_res)
      else:
        h = base.layer_norm(h + dh)
    bias = decode(h, nb, ng, mnb, mng, "dec_node")
    weight = decode(x, eb, eg, meb, meg, "dec_edge", self.edge_out)
    values = jnp.concatenate([bias, *weight], 0)   # [N + E * K, B]
    theta = static_rows.take_rows(values, self.theta_source).T
    return token_basis.project(self.spec, self.token_basis, theta)


def _edge_pe(ng, n_random, edge_cols):
  """float32[E, len(edge_cols) + n_random]: the columns `edge_cols` of
  [pe(sender), pe(receiver)], then n_random fixed N(0, 1) features per edge
  (numpy, seed 0: the same for every meta-learner seed, like the sin/cos
  codes, and the same whichever families are selected).

  Why random features: the encoders' first layer is linear in the edge PE and
  message passing adds sender and receiver states, so with the sin/cos codes
  alone an edge's state is mostly f(sender) + g(receiver), and so is the
  weight decoded from it: each generated matrix starts as mostly row and
  column offsets, per-neuron constants that a pre-LN layer norm largely
  removes, with a low-rank rest. Per-edge random features give every weight
  its own initial value, as a standard initialisation does
  (`experiments.init_structure` measures the split; BUILD_NOTES.md,
  "Meta-learners").
  """
  codes = ng.edge_pe[:, edge_cols]
  if not n_random:
    return codes
  # Drawn in θ-slot order, so that each weight keeps its features however
  # the graph enumerates its edges (they travel with the element, like the
  # codes).
  noise = np.empty((len(ng.senders), n_random))
  noise[np.argsort(ng.edge_slot, kind="stable")] = np.random.default_rng(0).standard_normal(
      (len(ng.senders), n_random))
  return np.concatenate([codes, noise], 1).astype(np.float32)


def build(spec, intent_dim, config, graph=None):
  """graph: a NeuralGraph to use instead of neural_graph(spec, grouping).

  config.intent_input: "balanced" standardizes the intent features
  on the training intents (`base.Hypernetwork`) and initialises the encoders'
  first layer so that intent and positional codes each give half of its
  output variance (`grouped.GroupedIntentEncoder`; config.intent_weight sets
  the intent's share, default 0.5); "raw" (default) feeds the features
  as the task gives them, under a standard init of [u || pe]. Under "raw"
  the ADDMOD Meta-GNN's initial θ varies 1-6% between training intents
  against Meta-MLP's 34-40% (`experiments.init_structure` prints the intent
  share); "balanced" raises that to 13-62%, and on ADDMOD's validation
  primes it generalised worse: it fitted the training primes apart instead
  of through shared structure (BUILD_NOTES.md, "One Meta-GNN recipe").
  config.intent_film (default False) multiplies the encoders' first layer
  by a group-tied gain (1 + u W_g), zero at init (`grouped.GroupedIntentEncoder`);
  with Adam at the recipe's rate it did not beat the additive layer on ADDMOD's
  validation primes, with Muon it did, so `addmod.py` sets it and the recipe,
  not yet checked on the other tasks, does not (BUILD_NOTES.md, "One Meta-GNN
  recipe", "The intent's FiLM gain for ADDMOD's Meta-GNN").
  config.base_program (default False) adds a learned intent-independent
  θ_base, zero at init, to the generated θ (`base.Hypernetwork`).
  config.token_basis (default 0) = M > 0 replaces the emitted token
  embedding rows and unembedding columns by their least-squares fit on M
  frequencies of the token index (`neuroprog.meta.token_basis.project`), so
  they are smooth in the token's value for every intent; a prior for
  vocabularies of numbers (ADDMOD), off in the recipe.
  config.decoder_film (default 0) = H > 0 multiplies the decoders' hidden
  activations by 1 + φ(u) W_g, φ an intent trunk of width H (two GELU layers
  and a layer norm) and W group-tied (message grouping), zero at init
  (`grouped.GroupedIntentGain`): the initial θ is unchanged, and every θ
  entry can follow the intent through a learned basis of H intent functions,
  the read-out Meta-MLP's last layer has, where otherwise the intent reaches
  θ only through the encoders' first layer and the message passing.
  config.intent_scale multiplies the (standardized) intent features before
  the encoders.
  config.pe_random appends that many fixed random features to each edge's
  positional encoding (`_edge_pe`). config.pe_learned (default False) makes
  them trainable: a parameter float32[E, pe_random] initialised to the
  draws, so the initial θ is unchanged and every weight gets pe_random
  inputs of its own that training moves (E x pe_random more parameters;
  BUILD_NOTES.md, "Learned edge features").
  config.pe_features selects the encoding families (`graphs.pe_columns`):
  "sincos+ramp" (default) or "ramp" alone.
  Why "ramp": when a program gates input i by a comparison with the intent
  (SUMFIRST: i < n), the sin/cos codes give every input index features of
  its own, and the model can fit the gates of the training intents index by
  index; with only the ramp (i / 10 for input i) the intent and the index
  reach the first layer as two numbers, and comparing them is the simple
  fit, which holds at unseen intents.
  The encoders' first layer is initialised for unit-scale inputs, so with a
  small feature (SUMFIRST's n / 10) and all PE families, the codes dominate
  it and the initial θ hardly depends on the intent; intent_scale > 1 lets
  the intent in. The output head is calibrated on the scaled intents; above 1, or
  with the ramp alone, the initial θ can leave the 2x standard-init band for
  some intents (`experiments.init_structure` prints the range); the
  defaults keep it inside (tested).
  """
  if not float(config.intent_scale) > 0:
    raise ValueError(f"meta_gnn: intent_scale={config.intent_scale!r}; allowed: > 0.")
  n_random = config.pe_random
  if isinstance(n_random, bool) or not isinstance(n_random, (int, np.integer)) or n_random < 0:
    raise ValueError(f"meta_gnn: pe_random={n_random!r}; allowed: an int >= 0.")
  node_cols, edge_cols = graphs.pe_columns(config.pe_features)
  if config.intent_input not in INTENT_INPUTS:
    raise ValueError(f"meta_gnn: intent_input={config.intent_input!r}; allowed: "
                     f"{list(INTENT_INPUTS)}.")
  if not 0.0 < float(config.intent_weight) < 1.0:
    raise ValueError(f"meta_gnn: intent_weight={config.intent_weight!r}; allowed: "
                     "a float in (0, 1).")
  for key in ("intent_film", "base_program", "pe_learned"):
    if not isinstance(config[key], (bool, np.bool_)):
      raise ValueError(f"meta_gnn: {key}={config[key]!r}; allowed: True or False.")
  film_width = config.decoder_film
  if isinstance(film_width, bool) or not isinstance(film_width, (int, np.integer)) \
      or film_width < 0:
    raise ValueError(f"meta_gnn: decoder_film={film_width!r}; allowed: an int >= 0 "
                     "(the width of the decoders' intent trunk; 0: no intent gain).")
  if config.pe_learned and not (n_random and config.use_pe):
    raise ValueError(f"meta_gnn: pe_learned=True with pe_random={n_random}, "
                     f"use_pe={config.use_pe}; allowed: pe_learned=True only with "
                     "pe_random > 0 and use_pe=True (it trains those features).")
  token_basis.check(spec, config.token_basis)
  if config.norm not in NORMS:
    raise ValueError(f"meta_gnn: norm={config.norm!r}; allowed: {list(NORMS)} "
                     "(where each round's layer norm sits: on the residual sum, "
                     "or on the layers' inputs with the residual stream kept raw).")
  if config.aggregation not in AGGREGATIONS:
    raise ValueError(f"meta_gnn: aggregation {config.aggregation!r} is not "
                     f"supported; allowed: {list(AGGREGATIONS)}.")
  for key in ("grouping", "message_grouping"):
    if config[key] not in graphs.GROUPINGS:
      raise ValueError(f"meta_gnn: {key}={config[key]!r} is not supported; "
                       f"allowed: {list(graphs.GROUPINGS)}.")
  # Every static array below comes from this one neural graph: its senders
  # and receivers, slots, positional encodings and both groupings' arrays.
  ng = graph if graph is not None else graphs.neural_graph(spec, config.grouping)
  coarse_node_group, coarse_edge_group = ng.groups(config.message_grouping)
  node_order = grouped.nested_order(ng.node_group, coarse_node_group)
  edge_order = grouped.nested_order(ng.edge_group, coarse_edge_group)
  nl = grouped.group_layout(ng.node_group, node_order)
  el = grouped.group_layout(ng.edge_group, edge_order)
  nml = grouped.group_layout(coarse_node_group, node_order)
  eml = grouped.group_layout(coarse_edge_group, edge_order)
  edge_bounds = grouped.common_segments(el.buckets, eml.buckets)
  senders = nl.rank[ng.senders[el.order]].astype(np.int32)
  receivers = nl.rank[ng.receivers[el.order]].astype(np.int32)
  snd_groups, snd_slot = grouped.endpoint_projection_index(eml.group_sorted, senders)
  rcv_groups, rcv_slot = grouped.endpoint_projection_index(eml.group_sorted, receivers)
  n = ng.num_nodes
  # θ slot -> row of [sorted nodes; sorted edges x K outputs each].
  source = np.full(ng.num_params, -1, np.int64)
  k_out = ng.max_edge_size
  node_slot, edge_index = ng.node_slot[nl.order], ng.edge_theta_index()[el.order]
  source[node_slot[node_slot >= 0]] = np.flatnonzero(node_slot >= 0)
  has = edge_index >= 0
  source[edge_index[has]] = n + np.flatnonzero(has.reshape(-1))
  assert (source >= 0).all()
  net = MetaGNNNet(
      n_nodes=n, node_buckets=nl.buckets, n_node_groups=nl.n_groups,
      edge_buckets=grouped.split_buckets(el.buckets, edge_bounds),
      n_edge_groups=el.n_groups,
      node_msg_buckets=nml.buckets, n_node_msg_groups=nml.n_groups,
      edge_msg_buckets=grouped.split_buckets(eml.buckets, edge_bounds),
      n_edge_msg_groups=eml.n_groups,
      senders=senders, receivers=receivers,
      node_pe=ng.node_pe[:, node_cols][nl.order] if config.use_pe else None,
      edge_pe=_edge_pe(ng, n_random, edge_cols)[el.order] if config.use_pe else None,
      theta_source=source.astype(np.int32),
      edge_endpoints=(snd_groups, rcv_groups, snd_slot, rcv_slot),
      d=int(config.d),
      rounds=int(config.rounds), aggregation=config.aggregation,
      intent_scale=float(config.intent_scale),
      balanced=config.intent_input == "balanced",
      intent_weight=float(config.intent_weight),
      intent_film=bool(config.intent_film), edge_out=k_out,
      edge_pe_learned=n_random if config.pe_learned else 0,
      decoder_film=int(film_width), norm=config.norm,
      token_basis=int(config.token_basis), spec=spec if config.token_basis else None)
  return net, base.head_layout(spec)
