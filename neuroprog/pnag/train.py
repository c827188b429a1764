"""`train_and_evaluate(config, workdir)`: both PNAG stages, then 1,000 samples.

1. Training set: NB201, a random `train_fraction` of the 15,625 cells (the
   rest is held out, so novelty means something); MBV3 and DARTS,
   `train_size` samples (their spaces are far too large to list) from
   `arch_distribution`: "uniform" over the space's architectures, or, MBV3
   only, "ofa_subnets", OFA's random subnets (`MBV3.sample_subnets`: stage
   depth uniform, as OFA's `sample_active_subnet` draws them). Held-out
   architectures and the simple baseline of the metrics are drawn from the
   same distribution.
2. Stage 1 (autoencoder) for `ae_steps`, then the training set is tokenized
   once with the final stage-1 parameters.
3. Stage 2 (generator) for `gen_steps` on those token maps.
4. `num_samples` architectures from the jitted sampler, decoded as `decode`
   says ("valid": the most probable valid graph; "argmax": plain), with the
   metrics of both decodings of the same token maps; files.

Each stage runs `log_every` steps per jitted `lax.scan`, batches drawn inside
the program from `fold_in(key(seed), step)`, and saves an orbax checkpoint
every `checkpoint_every` steps (keeping `keep_checkpoints`); a rerun on the
same workdir resumes from the latest readable one and gives the results of an
uninterrupted run.

`train_time_s` in results.json is the training time of the whole run: the
seconds up to each checkpoint are kept in checkpoints/<stage>_seconds.json, so
a resumed run adds its own time to those of the checkpoint it restarted from.

Writes to workdir: config.json, checkpoints/{stage1,stage2}/, metrics.jsonl,
tensorboard/, samples.txt (one canonical string per line, invalid samples as
`INVALID`), results.json.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from typing import Any

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import optax

from neuroprog.pnag import autoencoder as ae_lib
from neuroprog.pnag import generator as gen_lib
from neuroprog.pnag import metrics as metrics_lib
from neuroprog.pnag import model as model_lib
from neuroprog.pnag import msq
from neuroprog.pnag import spaces
from neuroprog.run import checkpoint, config as config_lib, loop as run_loop
from neuroprog.run import workdir as workdir_lib
from neuroprog.run.logs import logger
from neuroprog.run.metrics import MetricWriter

# schedule="pyramid": the image-pyramid scales of each space (config.scales None).
PYRAMID_SCALES = {"nb201": (1, 2, 4, 8), "mbv3": (2, 5, 10, 20),
                  "darts": (2, 6, 11, 22)}
# "subarch" (the paper's, default): scale t is the n_t-node sub-architecture
# (SearchSpace.sub_nodes), n_t = 3, 4, ..., N unless config.scales says
# otherwise. "pyramid": area-pooled / bilinear scales of the whole map.
SCHEDULES = ("subarch", "pyramid")
# Where the MBV3 / DARTS training, held-out and baseline architectures come
# from (module doc, 1.), and the spaces each one is defined for.
ARCH_DISTRIBUTIONS = {"uniform": ("nb201", "mbv3", "darts"), "ofa_subnets": ("mbv3",)}
AE_KEYS = ("hidden", "channels", "codebook_size", "rounds", "backend", "codebook",
           "ema_decay", "beta", "scc_weight", "scc_decode_weight", "scc_num_scales",
           "token_noise", "scale_tokens")
GEN_KEYS = ("width", "depth", "heads", "mlp_ratio", "cond_dim", "attention", "step_order",
            "token_inputs", "step_sum", "later_twins", "between_types")
# The keys that count training steps: `extend=True` lets them grow.
STEP_KEYS = ("ae_steps", "gen_steps")
# Every key of a PNAG config, with its default: the one place they live.
SCHEMA = config_lib.ConfigSchema("PNAG", {
    "space": config_lib.REQUIRED,
    "seed": 0,
    "train_fraction": 0.5,      # NB201: share of the 15,625 cells used for training
    "train_size": 20000,        # MBV3 / DARTS: samples used for training
    "arch_distribution": "uniform",   # ARCH_DISTRIBUTIONS: where MBV3 / DARTS samples come from
    "heldout_size": 2000,       # held-out architectures for reconstruction accuracy
    "schedule": "subarch",      # SCHEDULES
    "scales": None,             # None: the schedule's default (space.default_schedule() or PYRAMID_SCALES)
    # AEConfig / GenConfig options: every one with a value default is listed,
    # so each can be set from the command line (--config.gen.depth=1). Not
    # cond_dim: the conditional pipelines set it from their condition.
    # scale_tokens: "new" on the sub-architecture schedule; the pyramid
    # takes "block" (build() says so).
    "ae": {**{f.name: f.default for f in dataclasses.fields(ae_lib.AEConfig)
              if f.name in AE_KEYS and f.default is not None}, "scale_tokens": "new"},
    "gen": {f.name: f.default for f in dataclasses.fields(gen_lib.GenConfig)
            if f.name in GEN_KEYS and f.default is not None and f.name != "cond_dim"},
    "batch_size": 256,
    "ae_steps": 600,
    "gen_steps": 1500,
    "ae_learning_rate": 2e-3,
    "gen_learning_rate": 1e-3,
    "num_samples": 1000,
    "sample_seed": 1,
    "temperature": 1.0,
    "top_k": 0,
    "decode": "argmax",         # model.DECODES: "argmax" (plain, the headline) or "valid" (constrained)
    "log_every": 100,
    "checkpoint_every": 500,
    "keep_checkpoints": 2,
}, positive_ints=("train_size", "heldout_size", "batch_size", "ae_steps", "gen_steps",
                  "num_samples", "log_every", "checkpoint_every", "keep_checkpoints"),
   sub_keys={"ae": AE_KEYS, "gen": GEN_KEYS})


def default_config(**values) -> ml_collections.ConfigDict:
  """A PNAG ConfigDict with every key: the defaults, then `values`."""
  return SCHEMA.default_config(**values)


def validate_config(config) -> None:
  """ValueError for unknown keys, a missing space and bad values."""
  SCHEMA.validate(config)
  spaces.get(config.space)
  if _get(config, "schedule") not in SCHEDULES:
    raise ValueError(f"config.schedule={_get(config, 'schedule')!r}; allowed: "
                     f"{list(SCHEDULES)}.")
  if _get(config, "decode") not in model_lib.DECODES:
    raise ValueError(f"config.decode={_get(config, 'decode')!r}; allowed: "
                     f"{list(model_lib.DECODES)}.")
  dist = _get(config, "arch_distribution")
  if dist not in ARCH_DISTRIBUTIONS:
    raise ValueError(f"config.arch_distribution={dist!r}; allowed: "
                     f"{list(ARCH_DISTRIBUTIONS)}.")
  if config.space not in ARCH_DISTRIBUTIONS[dist]:
    raise ValueError(f"config.arch_distribution={dist!r} is defined for "
                     f"{list(ARCH_DISTRIBUTIONS[dist])}, not space {config.space!r}.")
  f = _get(config, "train_fraction")
  if not 0 < f < 1:
    raise ValueError(f"config.train_fraction must lie in (0, 1), got {f!r}.")


def _get(config, key):
  return SCHEMA.get(config, key)


def build(config):
  """(space, AEConfig, GenConfig) of a config."""
  space = spaces.get(config.space)
  schedule = _get(config, "schedule")
  if schedule not in SCHEDULES:
    raise ValueError(f"config.schedule={schedule!r}; allowed: {list(SCHEDULES)}.")
  scales = _get(config, "scales") or (space.default_schedule() if schedule == "subarch"
                                      else PYRAMID_SCALES[space.name])
  scales = tuple(int(s) for s in scales)
  node_sets = None
  if schedule == "pyramid" and _get(config, "ae").get("scale_tokens") == "new":
    raise ValueError("config.ae.scale_tokens='new' needs schedule='subarch'; the "
                     "image pyramid takes scale_tokens='block'.")
  if schedule == "subarch":
    msq.check_scales(scales, space.num_nodes)
    node_sets = tuple(space.sub_nodes(n) for n in scales)
  ae_cfg = ae_lib.AEConfig(num_nodes=space.num_nodes, num_ops=space.num_ops,
                           scales=scales, node_sets=node_sets, **dict(_get(config, "ae")))
  new = ae_cfg.new_entries
  if not new and _get(config, "gen").get("token_inputs") == "learned":
    raise ValueError("config.gen.token_inputs='learned' needs new-entry tokens "
                     "(config.ae.scale_tokens='new'); block tokens read reconstructions "
                     "from the codebook, so the table would not be used.")
  extra = {k: bool(_get(config, "gen").get(k)) for k in ("later_twins", "between_types")}
  if not new and any(extra.values()):
    raise ValueError(f"config.gen {[k for k, v in extra.items() if v]} need new-entry tokens "
                     "(config.ae.scale_tokens='new'); block tokens have no node context.")
  gen_cfg = gen_lib.GenConfig(
      scales=scales, channels=ae_cfg.channels, codebook_size=ae_cfg.codebook_size,
      tokens_per_step=(msq.new_entry_layout(ae_cfg.node_sets, ae_cfg.num_nodes).group_counts
                       if new else None),
      input_dim=model_lib.input_dim(ae_cfg.channels, True, **extra) if new else None,
      **dict(_get(config, "gen")))
  return space, ae_cfg, gen_cfg


def draw_archs(config, space, rng, n: int) -> list:
  """n architectures of `space` from `config.arch_distribution` (module doc)."""
  if _get(config, "arch_distribution") == "ofa_subnets":
    return space.sample_subnets(rng, n)
  return space.sample(rng, n)


def split(config, space):
  """(train architectures, held-out architectures), deterministic in config.seed."""
  rng = np.random.default_rng([_get(config, "seed"), 7])
  if space.name == "nb201":
    archs = space.enumerate()
    perm = rng.permutation(len(archs))
    n_train = int(round(_get(config, "train_fraction") * len(archs)))
    train = [archs[i] for i in perm[:n_train]]
    held = [archs[i] for i in perm[n_train:n_train + _get(config, "heldout_size")]]
    return train, held
  train = draw_archs(config, space, rng, _get(config, "train_size"))
  seen = {space.canonical(a) for a in train}
  held = [a for a in draw_archs(config, space, rng, 2 * _get(config, "heldout_size"))
          if space.canonical(a) not in seen][:_get(config, "heldout_size")]
  return train, held


def _optimizer(lr, steps):
  warmup = max(1, min(100, steps // 10))
  sched = optax.warmup_cosine_decay_schedule(0.0, lr, warmup, max(steps, warmup + 1),
                                             0.01 * lr)
  return optax.chain(optax.clip_by_global_norm(1.0), optax.adam(sched))


def _run_stage(name, workdir, config, state, step_fn, total, writer, stop_at_step):
  """(final state, training seconds of the whole run) of one stage, resumable
  from workdir/checkpoints/<name> (`run.loop.train_loop`)."""
  mngr = checkpoint.manager(os.path.join(workdir, "checkpoints", name),
                            _get(config, "keep_checkpoints"))
  result = run_loop.train_loop(
      name, state, run_loop.scan_chunks(step_fn), total=total,
      log_every=_get(config, "log_every"), checkpoint_every=_get(config, "checkpoint_every"),
      manager=mngr, writer=writer, stop_at_step=stop_at_step)
  return result.state, result.train_seconds


def stage1_step(config, ae_cfg, ops_T, adj_T):
  """(initial state, step function) of autoencoder training on the encoded
  training set (ops int32 [T, N], adj float32 [T, N, N]): state {"ae" (an
  `AEState` as a dict), "opt"}; step(state, step int32[]) -> (state, metrics),
  jittable, drawing its batch from the training set by the step's key."""
  ae = model_lib.autoencoder_for(ae_cfg)
  total, bsz = _get(config, "ae_steps"), _get(config, "batch_size")
  opt = _optimizer(_get(config, "ae_learning_rate"), total)
  key = jax.random.key(_get(config, "seed"))
  ae_state = ae.init(jax.random.fold_in(key, 1))
  state = {"ae": ae_state._asdict(), "opt": opt.init(ae_state.params)}
  ops_T, adj_T = jnp.asarray(ops_T), jnp.asarray(adj_T)
  space = spaces.get(config.space)

  def one(carry, step):
    st, os_ = ae_lib.AEState(**carry["ae"]), carry["opt"]
    k = jax.random.fold_in(jax.random.fold_in(key, 100), step)
    idx = jax.random.randint(k, (bsz,), 0, ops_T.shape[0])
    ops_b, adj_b = ops_T[idx], adj_T[idx]
    sub = None
    if ae_cfg.node_sets is not None:   # the targets of the intermediate scales
      sub = tuple(space.sub_graph(ops_b, adj_b, n) for n in ae_cfg.scales[:-1])
    (loss, aux), g = jax.value_and_grad(ae.loss, has_aux=True)(
        st.params, ae.codebook_of(st), ops_b, adj_b, jax.random.fold_in(k, 2), sub)
    up, os_ = opt.update(g, os_, st.params)
    st = st._replace(params=optax.apply_updates(st.params, up))
    st = ae.ema_update(st, aux, jax.random.fold_in(k, 1))
    out = {"loss": loss, **{m: aux[m] for m in ("ce", "bce", "commit", "scc", "scc_decode", "robust",
                                         "exact")}}
    return {"ae": st._asdict(), "opt": os_}, out

  return state, one


def train_stage1(config, ae_cfg, ops_T, adj_T, workdir, writer, stop_at_step=None):
  """Trains the autoencoder; returns (AEState, seconds)."""
  state, one = stage1_step(config, ae_cfg, ops_T, adj_T)
  state, secs = _run_stage("stage1", workdir, config, state, one, _get(config, "ae_steps"),
                           writer, stop_at_step)
  return ae_lib.AEState(**state["ae"]), secs


def token_data(ae_cfg, ae_params, codebook_KxC, ops_T, adj_T) -> jax.Array:
  """tokens int32 [T, L] of a training set under the final stage-1
  parameters and codebook, tokenized 2,048 at a time. (The generator's
  teacher inputs are rebuilt per batch from these: stored for a whole MBV3
  or DARTS training set on one-node-per-scale schedules they would take
  gigabytes.)"""
  ae = model_lib.autoencoder_for(ae_cfg)
  tokenize = jax.jit(lambda p, cb, o, a: model_lib.flat_tokens(ae.tokenize(p, cb, o, a).indices))
  toks = [tokenize(ae_params, codebook_KxC, ops_T[lo:lo + 2048], adj_T[lo:lo + 2048])
          for lo in range(0, len(ops_T), 2048)]   # bounded memory for big training sets
  return jnp.concatenate(toks)


def stage2_step(config, ae_cfg, gen_cfg, codebook_KxC, toks_TxL, cond_fn=None,
                spend_table_LxK=None):
  """(initial state, step function) of generator training on token maps
  toks int32 [T, L] (`token_data`) of the stage-1 codebook float32 [K, C]:
  state {"params", "opt"}; step(state, step int32[]) -> (state, {"loss",
  "token_acc"}), jittable, drawing its batch from toks by the step's key.
  cond_fn: see `train_stage2`. spend_table: float32 [L, K], the fixed spend
  table of a generator with `budget_inputs` (required then)."""
  if gen_cfg.budget_inputs and spend_table_LxK is None:
    raise ValueError("a generator with budget_inputs needs its spend table "
                     "(neuroprog.pnag.budget.fit_spend_table).")
  gen = model_lib.generator_for(gen_cfg)
  toks, codebook = toks_TxL, codebook_KxC

  # Learned token inputs (new-entry tokens only, `build`): the inputs are
  # built with the identity as codebook, outside the gradient, and mapped
  # through the table in the loss (`model.through_table`).
  learned = gen_cfg.token_inputs == "learned"
  eye = jnp.eye(ae_cfg.codebook_size)

  def inputs_of(toks_BxL, table_KxC):
    x = model_lib.teacher_inputs(model_lib.split_tokens(toks_BxL, ae_cfg.token_shapes),
                                 eye if learned else codebook, gen_cfg.scales,
                                 ae_cfg.num_nodes, ae_cfg.node_sets, ae_cfg.new_entries,
                                 gen_cfg.later_twins, gen_cfg.between_types)
    return model_lib.through_table(x, table_KxC) if learned else x

  total, bsz = _get(config, "gen_steps"), _get(config, "batch_size")
  opt = _optimizer(_get(config, "gen_learning_rate"), total)
  key = jax.random.key(_get(config, "seed"))
  def prev_of(toks_BxL, table_KxC):
    prev = model_lib.teacher_previous(gen_cfg, toks_BxL, eye if learned else codebook)
    return model_lib.through_table(prev, table_KxC) if learned and prev is not None else prev

  init_cond = jnp.zeros((1, gen_cfg.cond_dim)) if gen_cfg.budget_inputs else None
  params = gen.init(jax.random.fold_in(key, 2), inputs_of(toks[:1], codebook), init_cond,
                    None, prev_of(toks[:1], codebook), toks[:1])["params"]
  if gen_cfg.budget_inputs:
    params = {**params, "spend_table": jnp.asarray(spend_table_LxK, jnp.float32)}
  state = {"params": params, "opt": opt.init(params)}

  def one(carry, step):
    k = jax.random.fold_in(jax.random.fold_in(key, 200), step)
    idx = jax.random.randint(k, (bsz,), 0, toks.shape[0])
    cond, drop = (None, None) if cond_fn is None else cond_fn(jax.random.fold_in(k, 1), idx)
    def loss_of(p):
      table = model_lib.input_table(gen_cfg, p, codebook)
      return model_lib.generator_loss(gen, p, inputs_of(toks[idx], table), toks[idx], cond,
                                      drop, prev_of(toks[idx], table))
    (loss, acc), g = jax.value_and_grad(loss_of, has_aux=True)(carry["params"])
    up, os_ = opt.update(g, carry["opt"], carry["params"])
    return {"params": optax.apply_updates(carry["params"], up), "opt": os_}, {
        "loss": loss, "token_acc": acc}

  return state, one


def train_stage2(config, ae_cfg, gen_cfg, ae_state, ops_T, adj_T, workdir, writer,
                 stop_at_step=None, *, name: str = "stage2", cond_fn=None, spend_fn=None):
  """Trains the generator on the stage-1 token maps; returns (params, seconds).

  cond_fn: None (unconditional: the null condition throughout) or a jittable
  f(key, idx int32[B]) -> (cond float32[B, cond_dim], drop bool[B]) giving
  the condition of each sampled training architecture and which rows train
  the null condition (classifier-free guidance). spend_fn: with
  `budget_inputs`, f(tokens int32 [T, L]) -> spend table float32 [L, K],
  fitted on the training set's token maps (not called when a checkpoint is
  resumed: it holds the table). name: checkpoint folder.
  """
  codebook = model_lib.autoencoder_for(ae_cfg).codebook_of(ae_state)
  toks = token_data(ae_cfg, ae_state.params, codebook, ops_T, adj_T)
  spend = None
  if gen_cfg.budget_inputs:
    # A checkpoint holds the fitted table with the rest of the parameters, so
    # a resumed run needs only its shape (the fit reads every training
    # architecture's sub-architecture costs: a minute or two).
    mngr = checkpoint.manager(os.path.join(workdir, "checkpoints", name),
                              _get(config, "keep_checkpoints"))
    resuming = mngr.latest_step() is not None
    mngr.close()
    spend = (np.zeros((gen_cfg.seq_len, gen_cfg.codebook_size), np.float32) if resuming
             else spend_fn(np.asarray(toks)))
  state, one = stage2_step(config, ae_cfg, gen_cfg, codebook, toks, cond_fn, spend)
  state, secs = _run_stage(name, workdir, config, state, one, _get(config, "gen_steps"),
                           writer, stop_at_step)
  return state["params"], secs


def _num_params(tree) -> int:
  return int(sum(np.size(x) for x in jax.tree_util.tree_leaves(tree)))


def train_and_evaluate(config, workdir: str, *, stop_at_step=None,
                       extend: bool = False) -> dict[str, Any]:
  """Trains both stages (resuming), samples, and writes the results (module doc).

  stop_at_step: raise `run.loop.Interrupted` once stage 1, then stage 2,
  reaches this step (tests of resumption; a rerun continues).
  extend: continue the workdir's run with larger `ae_steps` / `gen_steps`
  (any other changed key is refused, `run.workdir.prepare`).
  """
  validate_config(config)
  space, ae_cfg, gen_cfg = build(config)
  workdir_lib.prepare(workdir, config, step_keys=STEP_KEYS, extend=extend)
  train, held = split(config, space)
  ops_T, adj_T = space.encode_batch(train)
  ops_H, adj_H = space.encode_batch(held)
  logger.info("PNAG %s: %d training and %d held-out architectures, scales %s",
              space.name, len(train), len(held), ae_cfg.scales)
  with MetricWriter(workdir) as writer:
    ae_state, t1 = train_stage1(config, ae_cfg, ops_T, adj_T, workdir, writer,
                                stop_at_step)
    ae = model_lib.autoencoder_for(ae_cfg)
    codebook = ae.codebook_of(ae_state)
    recon = heldout_reconstruction(ae, space, ae_state.params, codebook, ops_H, adj_H)
    logger.info("stage1: held-out exact reconstruction %.4f (plain decoding), %.4f "
                "(constrained)", recon["argmax"], recon["valid"])
    gen_params, t2 = train_stage2(config, ae_cfg, gen_cfg, ae_state, ops_T, adj_T,
                                  workdir, writer, stop_at_step)
  model = model_lib.PNAG(space, ae_cfg, gen_cfg, ae_state.params, codebook, gen_params)
  out = evaluate_samples(model, config, train)
  decode = _get(config, "decode")
  other = "argmax" if decode == "valid" else "valid"
  out[other]["heldout_reconstruction"] = recon[other]
  out.update({
      "space": space.name, "schedule": _get(config, "schedule"),
      "scales": list(ae_cfg.scales),
      "num_train": len(train), "num_heldout": len(held),
      "heldout_reconstruction": recon[decode],
      "heldout_scale_reconstruction": heldout_scale_reconstruction(
          ae, space, ae_state.params, codebook, ops_H, adj_H),
      "train_time_s": {"stage1": round(t1, 2), "stage2": round(t2, 2)},
      "num_params": {"autoencoder": _num_params(ae_state.params),
                     "generator": _num_params(gen_params)},
  })
  write_samples(workdir, out)
  out = {k: v for k, v in out.items() if k != "samples"}
  with open(os.path.join(workdir, "results.json"), "w") as f:
    json.dump(out, f, indent=2)
  return out


def heldout_reconstruction(ae, space, params, codebook, ops_BxN, adj_BxNxN) -> dict[str, float]:
  """Share of architectures that encode -> MSQ -> decode gives back exactly,
  {"argmax": plain decoding, "valid": the space's constrained decoder}."""
  def both(params, codebook, ops, adj):
    q = ae.tokenize(params, codebook, ops, adj)
    op_logits, adj_logits = ae.decode_map(params, q.accumulated[-1])
    return (ae_lib.plain_decode(op_logits, adj_logits),
            space.project(op_logits, adj_logits))
  out = {}
  for name, (o, a) in zip(("argmax", "valid"),
                          jax.jit(both)(params, codebook, ops_BxN, adj_BxNxN)):
    out[name] = float(np.mean(np.all(np.asarray(o) == ops_BxN, 1)
                              & np.all(np.asarray(a) == adj_BxNxN, (1, 2))))
  return out


def heldout_scale_reconstruction(ae, space, params, codebook, ops_BxN, adj_BxNxN
                                 ) -> list[float]:
  """Per scale t, the share of architectures whose accumulated map after t,
  plainly decoded at its nodes, is exactly their n_t-node sub-architecture
  (`SearchSpace.sub_graph`; on the pyramid, the whole architecture)."""
  cfg = ae.cfg

  def per_scale(params, codebook, ops, adj):
    q = ae.tokenize(params, codebook, ops, adj)
    return [ae_lib.plain_decode(*ae.decode_map(params, ae.scale_view(f, t)))
            for t, f in enumerate(q.accumulated)]

  out = []
  for (o, a), n in zip(jax.jit(per_scale)(params, codebook, ops_BxN, adj_BxNxN), cfg.scales):
    want_o, want_a = ((ops_BxN, adj_BxNxN) if cfg.node_sets is None
                      else space.sub_graph(ops_BxN, adj_BxNxN, n))
    out.append(round(float(np.mean(np.all(np.asarray(o) == want_o, 1)
                                   & np.all(np.asarray(a) == want_a, (1, 2)))), 4))
  return out


def evaluate_samples(model: model_lib.PNAG, config, train) -> dict[str, Any]:
  """Samples `num_samples`, writes nothing; returns metrics and the strings.

  The samples are decoded as `config.decode` says; the same token maps are
  also decoded the other way, and those metrics go under "argmax" / "valid"
  (with constrained decoding, validity is 1 by construction, so the argmax
  figures are what measures the generator itself). "uniform": the same
  metrics for as many architectures drawn from the training distribution
  (`arch_distribution`: uniformly from the space by default), the simple
  baseline a generator has to beat. "scale_validity": per
  scale, the share of samples whose accumulated map, plainly decoded at that
  scale, is a valid sub-architecture (`SearchSpace.is_valid_sub`; the last
  entry is the plain validity of the final architectures).
  """
  n = _get(config, "num_samples")
  key = jax.random.key(_get(config, "sample_seed"))
  decode = _get(config, "decode")
  kw = dict(temperature=_get(config, "temperature"), top_k=_get(config, "top_k"))
  model_lib.sample(model, key, n, decode=decode, **kw)   # compile once, outside the timing
  t0 = time.time()
  s = model_lib.sample(model, key, n, decode=decode, **kw)
  secs = time.time() - t0
  space = model.space
  seen = {space.canonical(a) for a in train}
  m = metrics_lib.evaluate(space, s.archs, seen)
  out = dict(m._asdict())
  out["decode"] = decode
  other = "argmax" if decode == "valid" else "valid"
  s2 = model_lib.sample(model, key, n, decode=other, **kw)
  out[other] = dict(metrics_lib.evaluate(space, s2.archs, seen)._asdict())
  # The simple baseline beside these metrics: n architectures drawn from the
  # training distribution (valid by construction), scored against the same
  # training set.
  uniform = draw_archs(config, space, np.random.default_rng([_get(config, "sample_seed"), 11]), n)
  out["uniform"] = dict(metrics_lib.evaluate(space, uniform, seen)._asdict())
  plain = model_lib.sample(model, key, n, decode="argmax", per_scale=True, **kw)
  out["scale_validity"] = [round(float(v), 4) for v in plain.scale_valid.mean(0)]
  out["samples_per_s"] = round(n / secs, 1)
  out["expected_uniqueness_uniform"] = (
      metrics_lib.expected_unique_uniform(space.size, n) / n)
  out["samples"] = [space.canonical(a) if a is not None else "INVALID" for a in s.archs]
  return out


def write_samples(workdir: str, out: dict) -> None:
  with open(os.path.join(workdir, "samples.txt"), "w") as f:
    f.write("\n".join(out["samples"]) + "\n")


def load_config(workdir: str) -> ml_collections.ConfigDict:
  """The config a PNAG workdir was written with (its config.json, lists that
  were tuples made tuples again). ValueError when there is none."""
  cfg_path = os.path.join(workdir, "config.json")
  if not os.path.exists(cfg_path):
    raise ValueError(f"{workdir} is not a PNAG workdir (no config.json).")
  config = ml_collections.ConfigDict(json.load(open(cfg_path)))
  if "space" not in config:
    raise ValueError(f"{workdir} holds no PNAG run (its config has no 'space').")
  for k in ("scales",):
    if config.get(k) is not None:
      config[k] = tuple(config[k])
  return config


def load(workdir: str) -> model_lib.PNAG:
  """The trained PNAG of a workdir written by `train_and_evaluate`.

  Raises ValueError when the workdir has no config.json or lacks a finished
  stage.
  """
  config = load_config(workdir)
  space, ae_cfg, gen_cfg = build(config)
  ae = model_lib.autoencoder_for(ae_cfg)
  gen = model_lib.generator_for(gen_cfg)
  key = jax.random.key(0)
  st = ae.init(key)
  abstract1 = {"ae": st._asdict(), "opt": _optimizer(1.0, 10).init(st.params)}
  params = gen_lib.init_params(gen_cfg, key)
  abstract2 = {"params": params, "opt": _optimizer(1.0, 10).init(params)}
  restored = []
  for name, tree, steps in (("stage1", abstract1, _get(config, "ae_steps")),
                            ("stage2", abstract2, _get(config, "gen_steps"))):
    mngr = checkpoint.manager(os.path.join(workdir, "checkpoints", name),
                              _get(config, "keep_checkpoints"))
    step, state = checkpoint.restore_latest(mngr, checkpoint.abstract_like(tree))
    if step is None or step < steps:
      raise ValueError(f"{workdir}: {name} is not finished (checkpoint step {step}, "
                       f"config asks for {steps}); rerun train_and_evaluate.")
    restored.append(state)
  ae_state = ae_lib.AEState(**restored[0]["ae"])
  return model_lib.PNAG(space, ae_cfg, gen_cfg, ae_state.params, ae.codebook_of(ae_state),
                        restored[1]["params"])
