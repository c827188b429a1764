"""Stage 1 of PNAG: graph encoder -> multi-scale quantizer -> decoder.

Encoder (jraph): the architecture graph (ops one-hot [N, V], adjacency
[N, N]) becomes a *complete* directed graph on its N nodes (N^2 edges, self
loops included) whose edge features say whether i -> j and j -> i are edges.
Each round updates every edge state from its two endpoints, and every node
from the messages of its real in-edges and out-edges (both directions) and the
mean of all its edge states. The final edge state of (i, j) is e[i, j]: the
feature map e in R^{N x N x C} (channels last).

Quantizer: `msq.quantize` over `scales` with one codebook Z [K, C], on the
image pyramid (`node_sets=None`) or on sub-architectures (`node_sets[t]`:
the nodes of scale t's n_t-node sub-architecture, `SearchSpace.sub_nodes`),
each scale refining its whole block (`scale_tokens="block"`) or quantizing
only the entries its new node adds (`scale_tokens="new"`); the codebook is
either trained by the loss (codebook term, `codebook="loss"`) or
an exponential moving average of the residuals assigned to each code, with
dead codes restarted from residuals of the batch (`codebook="ema"`).

Decoder: op logits of node i from (e_hat[i, i], mean_j e_hat[i, j],
mean_j e_hat[j, i]); adjacency logit of (i, j) from (e_hat[i, j],
e_hat[j, i]). The accumulated map reaches the decoder through a
straight-through estimator, so reconstruction gradients reach the encoder.

Loss = CE(ops) + BCE(adj) + beta * commitment + ||e - e_hat||^2
       + scc_weight * sum over SCC scales t of ||e - e_hat_t||^2
       + scc_decode_weight * mean over SCC scales t < T of [CE + BCE](decode(e_hat_t))
(+ the codebook term when codebook="loss"). e_hat_t is the reconstruction
after scale t; the two SCC terms are the step-wise consistency constraint:
every scale's reconstruction is close to e in feature space *and* decodes to
the architecture ("each scale a complete sub-architecture"). On
sub-architecture scales, e_hat_t is read at its n_t nodes (the block
`msq.pool(e_hat_t, n_t, node_sets[t])`, which the size-agnostic decoder turns
into n_t node types and an n_t x n_t adjacency) and compared with the
architecture's n_t-node sub-architecture (`sub_targets`); on the pyramid, the
whole N x N map is compared with the whole architecture. The decoding
term reaches e through per-scale straight-through estimators
(`msq.quantize`), so it moves information into the coarse scales; without it
the encoder hides the architecture in small fine-scale detail, which the
generator cannot sample consistently (BUILD_NOTES.md, PNAG). `scc_num_scales`
limits both terms to the first (coarsest) k scales, for the ablation.
With `token_noise` p > 0 a robust-decoding term is added: the decoder must
reconstruct the architecture from the token maps with a share p of tokens
replaced by random codes (the map held fixed, so only the decoder learns).
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple, Optional, Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp
import jraph
import numpy as np

from neuroprog.pnag import msq


SCALE_TOKENS = ("block", "new")


@dataclasses.dataclass(frozen=True)
class AEConfig:
  """Stage-1 hyperparameters (see module docstring)."""
  num_nodes: int
  num_ops: int
  scales: tuple[int, ...]
  hidden: int = 64            # encoder/decoder width D
  channels: int = 16          # feature-map channels C
  codebook_size: int = 64     # K
  rounds: int = 2             # message-passing rounds
  backend: str = "dense"      # "dense" | "jraph" (same numbers; see Encoder)
  codebook: str = "ema"       # "ema" | "loss"
  ema_decay: float = 0.95
  beta: float = 0.25          # commitment weight
  scc_weight: float = 1.0     # lambda, feature-space SCC
  scc_decode_weight: float = 1.0   # decoding loss of every intermediate scale
  scc_num_scales: Optional[int] = None   # None: every scale
  token_noise: float = 0.0    # share of tokens replaced at random for the robust-decoding term
  # None: image-pyramid scales; else per scale the sorted node indices of its
  # sub-architecture (SearchSpace.sub_nodes(n_t)).
  node_sets: Optional[tuple[tuple[int, ...], ...]] = None
  # SCALE_TOKENS: "block": scale t quantizes (refines) its whole n_t x n_t
  # block; "new": only the entries its new nodes add (sub-architecture scales
  # only; msq module doc), N^2 tokens in all.
  scale_tokens: str = "block"

  def __post_init__(self):
    msq.check_scales(self.scales, self.num_nodes)
    if self.node_sets is not None:
      object.__setattr__(self, "node_sets", msq.check_node_sets(
          self.node_sets, self.scales, self.num_nodes))
    if self.scale_tokens not in SCALE_TOKENS:
      raise ValueError(f"scale_tokens={self.scale_tokens!r}; allowed: "
                       f"{list(SCALE_TOKENS)}.")
    if self.scale_tokens == "new":
      if self.node_sets is None:
        raise ValueError("scale_tokens='new' needs sub-architecture scales (node_sets); "
                         "the image pyramid has no new entries per scale.")
      msq.new_entry_layout(self.node_sets, self.num_nodes)   # nested, or ValueError
    if self.codebook not in ("ema", "loss"):
      raise ValueError(f"codebook={self.codebook!r}; allowed: 'ema', 'loss'.")
    if not 0.0 <= self.token_noise < 1.0:
      raise ValueError(f"token_noise={self.token_noise} must lie in [0, 1).")
    if self.scc_num_scales is not None and not 0 <= self.scc_num_scales <= len(self.scales):
      raise ValueError(f"scc_num_scales={self.scc_num_scales} must lie in "
                       f"0..{len(self.scales)} (the number of scales).")
    for k in ("hidden", "channels", "codebook_size", "rounds"):
      if not isinstance(getattr(self, k), int) or getattr(self, k) < 1:
        raise ValueError(f"{k} must be a positive int, got {getattr(self, k)!r}.")

  @property
  def new_entries(self) -> bool:
    return self.scale_tokens == "new"

  @property
  def token_shapes(self) -> tuple[tuple[int, ...], ...]:
    """Per scale, the shape of its token map: (n_t, n_t), or (P_t,) for new-entry tokens."""
    if self.new_entries:
      return tuple((p,) for p in msq.new_entry_layout(self.node_sets, self.num_nodes).counts)
    return tuple((n, n) for n in self.scales)


def plain_decode(op_logits_BxNxV: jax.Array, adj_logits_BxNxN: jax.Array):
  """(ops int32 [B, N], adj float32 [B, N, N]): the most probable type of each
  node and every edge with logit > 0, each taken on its own (the graph may be
  invalid; `SearchSpace.project` is the constrained alternative). Jittable."""
  return (op_logits_BxNxV.argmax(-1).astype(jnp.int32),
          (adj_logits_BxNxN > 0).astype(jnp.float32))


def complete_graph(ops_BxN: jax.Array, adj_BxNxN: jax.Array, num_ops: int
                   ) -> jraph.GraphsTuple:
  """B architectures as one jraph graph: B*N nodes, B*N^2 edges (i, j) in row-major order.

  Node features: one-hot op [B*N, V] and node position [B*N] (int32); edge
  features [B*N^2, 3]: (adj[i, j], adj[j, i], i == j). Works under jit (B, N static).
  """
  b, n = ops_BxN.shape
  src, dst = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
  offsets = (np.arange(b) * n)[:, None]
  senders = (offsets + src.reshape(1, -1)).reshape(-1)
  receivers = (offsets + dst.reshape(1, -1)).reshape(-1)
  eye = jnp.broadcast_to(jnp.eye(n, dtype=jnp.float32), (b, n, n))
  edge_feat = jnp.stack([adj_BxNxN, jnp.swapaxes(adj_BxNxN, 1, 2), eye], -1)
  return jraph.GraphsTuple(
      nodes={"op": jax.nn.one_hot(ops_BxN.reshape(-1), num_ops),
             "pos": jnp.tile(jnp.arange(n, dtype=jnp.int32), b)},
      edges={"feat": edge_feat.reshape(b * n * n, 3)},
      senders=jnp.asarray(senders, jnp.int32), receivers=jnp.asarray(receivers, jnp.int32),
      n_node=jnp.full((b,), n, jnp.int32), n_edge=jnp.full((b,), n * n, jnp.int32),
      globals=None)


class MLP(nn.Module):
  features: Sequence[int]
  activation: Any = nn.gelu

  @nn.compact
  def __call__(self, x):
    for i, f in enumerate(self.features):
      x = nn.Dense(f)(x)
      if i < len(self.features) - 1:
        x = self.activation(x)
    return x


class Encoder(nn.Module):
  """(ops int32 [B, N], adj float32 [B, N, N]) -> e float32 [B, N, N, C].

  `backend="dense"` runs the rounds on [B, N, N, D] edge arrays (broadcast
  and axis sums); `backend="jraph"` runs the same update functions through
  `jraph.GraphNetwork` on `complete_graph` (gathers and segment sums). The two
  give the same numbers (tested); dense is several times faster on CPU, where
  scatter-adds are slow, so it is the default.
  """
  num_nodes: int
  num_ops: int
  hidden: int
  channels: int
  rounds: int
  backend: str = "dense"

  @nn.compact
  def __call__(self, ops_BxN, adj_BxNxN):
    b, n, d = ops_BxN.shape[0], self.num_nodes, self.hidden
    g = complete_graph(ops_BxN, adj_BxNxN, self.num_ops)
    h = (nn.Dense(d, name="op_embed")(g.nodes["op"])
         + nn.Embed(n, d, name="pos_embed")(g.nodes["pos"]))
    e = nn.Dense(d, name="edge_embed")(g.edges["feat"])
    nodes, edges = {"h": h}, {"h": e, "feat": g.edges["feat"]}
    if self.backend == "dense":
      nodes = jax.tree_util.tree_map(lambda x: x.reshape(b, n, -1), nodes)
      edges = jax.tree_util.tree_map(lambda x: x.reshape(b, n, n, -1), edges)
    elif self.backend != "jraph":
      raise ValueError(f"backend={self.backend!r}; allowed: 'dense', 'jraph'.")
    for r in range(self.rounds):
      in_e, in_s, in_r = (nn.Dense(d, name=f"edge_{r}_{k}") for k in ("self", "snd", "rcv"))
      out_e = nn.Dense(d, name=f"edge_{r}_out")
      msg_fwd, msg_bwd = nn.Dense(d, name=f"fwd_{r}"), nn.Dense(d, name=f"bwd_{r}")
      node_mlp = MLP((d, d), name=f"node_{r}")
      ln_e, ln_n, ln_h = (nn.LayerNorm(name=f"ln_{k}_{r}") for k in ("edge", "end", "node"))

      def update_edge(edges, sent, received, _, in_e=in_e, in_s=in_s, in_r=in_r,
                      out_e=out_e, ln_e=ln_e, ln_n=ln_n, msg_fwd=msg_fwd, msg_bwd=msg_bwd):
        # The first layer is split by input (edge, sender, receiver) so the
        # endpoint terms are computed once per node in the dense path.
        pre = in_e(ln_e(edges["h"])) + in_s(ln_n(sent["h"])) + in_r(ln_n(received["h"]))
        h_new = edges["h"] + out_e(nn.gelu(pre))
        is_edge = edges["feat"][..., :1]
        # Real edges carry messages; the receiver aggregates the forward one,
        # the sender the backward one (both directions of the DAG).
        return {"h": h_new, "feat": edges["feat"],
                "fwd": is_edge * msg_fwd(sent["h"]), "bwd": is_edge * msg_bwd(received["h"])}

      def update_node(nodes, sent, received, _, node_mlp=node_mlp, ln_h=ln_h):
        x = jnp.concatenate([nodes["h"], received["fwd"], sent["bwd"],
                             received["h"] / n], -1)
        return {"h": nodes["h"] + node_mlp(ln_h(x))}

      if self.backend == "jraph":
        g = jraph.GraphNetwork(update_edge, update_node)(
            g._replace(nodes=nodes, edges=edges))
        nodes, edges = g.nodes, g.edges
      else:
        # Edge (i, j) at [:, i, j]: sender i, receiver j.
        edges = update_edge(edges, {"h": nodes["h"][:, :, None]},
                            {"h": nodes["h"][:, None, :]}, None)
        nodes = update_node(nodes, jax.tree_util.tree_map(lambda x: x.sum(2), edges),
                            jax.tree_util.tree_map(lambda x: x.sum(1), edges), None)
      edges = {"h": edges["h"], "feat": edges["feat"]}
    out = nn.Dense(self.channels, name="to_map")(nn.LayerNorm(name="ln_out")(edges["h"]))
    return out.reshape(b, n, n, self.channels)


class Decoder(nn.Module):
  """e_hat [B, n, n, C] -> (op logits [B, n, V], adjacency logits [B, n, n]).

  Size-agnostic (any n): node i reads (e_hat[i, i], mean_j e_hat[i, j],
  mean_j e_hat[j, i]); pair (i, j) reads (e_hat[i, j], e_hat[j, i]) plus a
  projection of both endpoints' node inputs. The endpoint context is what
  lets one entry decode differently at different scales: whether an edge
  node -> output exists in an n-node sub-architecture can depend on which
  other nodes are present (NB201 wires a node to the output while none of
  its readers is there), and the row/column means change as nodes arrive.
  """
  num_ops: int
  hidden: int

  @nn.compact
  def __call__(self, f_BxNxNxC):
    diag = jnp.diagonal(f_BxNxNxC, axis1=1, axis2=2).transpose(0, 2, 1)
    node_in = jnp.concatenate([diag, f_BxNxNxC.mean(2), f_BxNxNxC.mean(1)], -1)
    # ReLU, not GELU: the decoder runs on every sampled architecture, and on
    # CPU the tanh of N^2 x hidden GELUs is a large share of the sampler's time.
    op_logits = MLP((self.hidden, self.hidden, self.num_ops), nn.relu, name="ops")(node_in)
    pair = jnp.concatenate([f_BxNxNxC, jnp.swapaxes(f_BxNxNxC, 1, 2)], -1)
    src = nn.Dense(self.hidden, name="adj_src")(node_in)
    dst = nn.Dense(self.hidden, name="adj_dst")(node_in)
    h = nn.Dense(self.hidden, name="adj_pair")(pair) + src[:, :, None] + dst[:, None, :]
    adj_logits = nn.Dense(1, name="adj_out")(nn.relu(h))[..., 0]
    return op_logits, adj_logits


class AEModules(nn.Module):
  cfg: AEConfig

  def setup(self):
    c = self.cfg
    self.encoder = Encoder(c.num_nodes, c.num_ops, c.hidden, c.channels, c.rounds,
                           c.backend)
    self.decoder = Decoder(c.num_ops, c.hidden)
    if c.codebook == "loss":
      self.codebook = self.param("codebook", nn.initializers.normal(0.5),
                                 (c.codebook_size, c.channels))

  def __call__(self, ops, adj):
    return self.decoder(self.encoder(ops, adj))

  def encode(self, ops, adj):
    return self.encoder(ops, adj)

  def decode(self, f):
    return self.decoder(f)


class AEState(NamedTuple):
  """Trainable parameters plus the EMA codebook statistics."""
  params: Any                # flax params (codebook inside when codebook="loss")
  codebook: jax.Array        # [K, C] the codebook in use
  ema_count: jax.Array       # [K] EMA of assignments per code
  ema_sum: jax.Array         # [K, C] EMA of the residuals assigned


class Autoencoder:
  """Pure functions of stage 1 for one `AEConfig`.

  `init(key) -> AEState`; `loss(params, codebook, ops, adj) -> (loss, aux)`;
  `ema_update(state, aux, key) -> AEState`; `tokenize`, `decode_map`. All are
  jittable; batch shapes are ops int32 [B, N], adj float32 [B, N, N].
  """

  def __init__(self, cfg: AEConfig):
    self.cfg = cfg
    self.net = AEModules(cfg)

  def init(self, key: jax.Array) -> AEState:
    k_net, k_code = jax.random.split(key)
    n = self.cfg.num_nodes
    params = self.net.init(k_net, jnp.zeros((1, n), jnp.int32),
                           jnp.zeros((1, n, n), jnp.float32))["params"]
    codebook = (params["codebook"] if self.cfg.codebook == "loss" else
                0.5 * jax.random.normal(k_code, (self.cfg.codebook_size, self.cfg.channels)))
    return AEState(params, codebook, jnp.ones((self.cfg.codebook_size,)), codebook)

  def codebook_of(self, state: AEState) -> jax.Array:
    return state.params["codebook"] if self.cfg.codebook == "loss" else state.codebook

  def encode(self, params, ops_BxN, adj_BxNxN) -> jax.Array:
    return self.net.apply({"params": params}, ops_BxN, adj_BxNxN, method=AEModules.encode)

  def decode_map(self, params, f_BxNxNxC):
    """(op logits [B, N, V], adjacency logits [B, N, N]) of a feature map."""
    return self.net.apply({"params": params}, f_BxNxNxC, method=AEModules.decode)

  def tokenize(self, params, codebook, ops_BxN, adj_BxNxN) -> msq.MSQOutput:
    return msq.quantize(self.encode(params, ops_BxN, adj_BxNxN), codebook, self.cfg.scales,
                        self.cfg.node_sets, self.cfg.new_entries)

  def scale_view(self, f_BxNxNxC: jax.Array, t: int) -> jax.Array:
    """What decodes to scale t's graph: the n_t-node block [B, n_t, n_t, C] of
    an accumulated map on sub-architecture scales, the whole map on the pyramid."""
    c = self.cfg
    if c.node_sets is None:
      return f_BxNxNxC
    return msq.pool(f_BxNxNxC, c.scales[t], c.node_sets[t])

  def loss(self, params, codebook, ops_BxN, adj_BxNxN, key=None, sub_targets=None):
    """Scalar loss and aux dict (per-term losses, exact-match rate, quantizer output).

    key: PRNG key for the robust-decoding term (needed when token_noise > 0).
    sub_targets: with sub-architecture scales and scc_decode_weight > 0, per
      scale t < T the architectures' n_t-node sub-architectures (ops int32
      [B, n_t], adj float32 [B, n_t, n_t]; `SearchSpace.sub_graph`).
    """
    c = self.cfg
    if c.codebook == "loss":
      codebook = params["codebook"]
    else:
      codebook = jax.lax.stop_gradient(codebook)
    e = self.encode(params, ops_BxN, adj_BxNxN)
    q = msq.quantize(e, codebook, c.scales, c.node_sets, c.new_entries)
    sg = jax.lax.stop_gradient
    f_final = q.accumulated[-1]
    op_logits, adj_logits = self.decode_map(params, q.accumulated_st[-1])
    ce, bce = self._recon(op_logits, adj_logits, ops_BxN, adj_BxNxN)
    commit = sum(jnp.mean((r - sg(z)) ** 2) for r, z in zip(q.residuals, q.codes))
    code_term = (sum(jnp.mean((sg(r) - z) ** 2) for r, z in zip(q.residuals, q.codes))
                 if c.codebook == "loss" else 0.0)
    recon_map = jnp.mean((e - f_final) ** 2)
    k = len(c.scales) if c.scc_num_scales is None else c.scc_num_scales
    scc = sum((jnp.mean((e - f_t) ** 2) for f_t in q.accumulated[:k]), jnp.float32(0.0))
    # Each intermediate scale is itself decoded: the coarse reconstructions
    # must already describe the architecture, which moves the information to
    # coarse scales (what makes next-scale generation work).
    scc_dec = jnp.float32(0.0)
    coarse = q.accumulated_st[:min(k, len(c.scales) - 1)] if c.scc_decode_weight else ()
    if coarse and c.node_sets is not None and (
        sub_targets is None or len(sub_targets) < len(coarse)):
      raise ValueError(f"sub-architecture scales with scc_decode_weight > 0 need "
                       f"sub_targets for the first {len(coarse)} scales.")
    for t, f_t in enumerate(coarse):
      o_t, a_t = (ops_BxN, adj_BxNxN) if c.node_sets is None else sub_targets[t]
      scc_dec = scc_dec + sum(self._recon(*self.decode_map(params, self.scale_view(f_t, t)),
                                          o_t, a_t)) / len(coarse)
    total = (ce + bce + c.beta * commit + code_term + recon_map + c.scc_weight * scc
             + c.scc_decode_weight * scc_dec)
    robust = jnp.float32(0.0)
    if c.token_noise > 0:
      # Robust decoding: the decoder alone (the map is held fixed) must still
      # reconstruct the architecture when a share of the tokens is replaced by
      # random codes, as happens when the generator samples a scale's tokens
      # independently. This is what keeps generated graphs valid.
      if key is None:
        raise ValueError("token_noise > 0 needs a PRNG key for Autoencoder.loss.")
      noisy = []
      for t, idx in enumerate(q.indices):
        k1, k2 = jax.random.split(jax.random.fold_in(key, t))
        flip = jax.random.bernoulli(k1, c.token_noise, idx.shape)
        rand = jax.random.randint(k2, idx.shape, 0, c.codebook_size)
        noisy.append(jnp.where(flip, rand, idx))
      f_noisy = msq.reconstruct(noisy, codebook, c.num_nodes, c.node_sets, c.new_entries)
      robust = sum(self._recon(*self.decode_map(params, sg(f_noisy)), ops_BxN, adj_BxNxN))
      total = total + robust
    exact = self._exact(op_logits, adj_logits, ops_BxN, adj_BxNxN)
    aux = {"ce": ce, "bce": bce, "commit": commit, "map": recon_map, "scc": scc,
           "scc_decode": scc_dec, "robust": robust,
           "exact": exact.mean(), "residuals": q.residuals, "indices": q.indices}
    return total, aux

  def _recon(self, op_logits, adj_logits, ops_BxN, adj_BxNxN):
    """(op cross-entropy, adjacency binary cross-entropy), means over nodes / pairs."""
    ce = -jnp.mean(jnp.sum(jax.nn.log_softmax(op_logits) *
                           jax.nn.one_hot(ops_BxN, self.cfg.num_ops), -1))
    bce = jnp.mean(jnp.maximum(adj_logits, 0) - adj_logits * adj_BxNxN
                   + jnp.log1p(jnp.exp(-jnp.abs(adj_logits))))
    return ce, bce

  @staticmethod
  def _exact(op_logits, adj_logits, ops_BxN, adj_BxNxN) -> jax.Array:
    ops_ok = jnp.all(op_logits.argmax(-1) == ops_BxN, -1)
    adj_ok = jnp.all((adj_logits > 0) == (adj_BxNxN > 0.5), (-2, -1))
    return ops_ok & adj_ok

  def ema_update(self, state: AEState, aux, key: jax.Array) -> AEState:
    """EMA codebook step from this batch's assignments; restarts dead codes.

    A code whose EMA count falls below 1e-3 of the mean is moved onto a
    random residual of the batch, so the codebook stays in use.
    """
    c = self.cfg
    if c.codebook == "loss":
      return state
    flat_r = jnp.concatenate([r.reshape(-1, c.channels) for r in aux["residuals"]])
    flat_i = jnp.concatenate([i.reshape(-1) for i in aux["indices"]])
    onehot = jax.nn.one_hot(flat_i, c.codebook_size)
    count = c.ema_decay * state.ema_count + (1 - c.ema_decay) * onehot.sum(0)
    total = c.ema_decay * state.ema_sum + (1 - c.ema_decay) * onehot.T @ flat_r
    n = count.sum()
    smoothed = (count + 1e-5) / (n + c.codebook_size * 1e-5) * n
    codebook = total / smoothed[:, None]
    dead = count < 1e-3 * count.mean()
    pick = jax.random.randint(key, (c.codebook_size,), 0, flat_r.shape[0])
    codebook = jnp.where(dead[:, None], flat_r[pick], codebook)
    total = jnp.where(dead[:, None], flat_r[pick], total)
    count = jnp.where(dead, 1.0, count)
    return AEState(state.params, codebook, count, total)
