"""`train_and_evaluate(config, workdir)`: multi-seed meta-training and the table.

For every model in `config.models`: S seeds trained at once (vmap over a
leading seed axis, sharded over a device mesh), `log_every` steps per jitted
call (a `lax.scan`), orbax checkpoints every `checkpoint_every` steps, resume
from the latest readable checkpoint, then exact-match evaluation on fresh
samples of the training intents (ID), the validation intents and the OOD
intents. Per-step randomness is `fold_in(key(seed), step)`, so a resumed run
draws exactly the batches an uninterrupted one would.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

import logging
import sys

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import optax

from neuroprog import meta, tasks
from neuroprog.train import checkpoint, parallel, results as results_lib, step as step_lib

logger = logging.getLogger("neuroprog")
if not logger.handlers:
  _handler = logging.StreamHandler(sys.stderr)
  _handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
  logger.addHandler(_handler)
  logger.setLevel(logging.INFO)
  logger.propagate = False

# Every key a config may have, with its default (None: required).
CONFIG_DEFAULTS = {
    "task": None,
    "models": ("direct", "meta_mlp", "meta_gmlp", "meta_gnn"),
    "model_configs": {},
    "learning_rates": {},
    "learning_rate": 1e-3,
    "grad_clip": 1.0,
    "weight_decay": 0.0,       # decoupled (AdamW) on kernels (ndim >= 2) only
    "schedule": "cosine",      # "cosine" (warmup, decay to 1%) or "constant"
    "ood_intents": None,       # None: the task's default OOD intents
    "val_intents": (),         # held out of training, used to select a seed
    "train_intents": None,     # None: every intent not OOD and not validation
    "seeds": 4,
    "seed": 0,
    "steps": 1000,
    "intents_per_step": 8,
    "examples_per_intent": 64,
    "eval_examples": 512,
    "eval_seed": 12345,
    "log_every": 100,
    "checkpoint_every": 500,
    "keep_checkpoints": 3,
}


def validate_config(config) -> None:
  """Raises ValueError for unknown or missing keys and bad values."""
  keys = set(config.keys())
  unknown = sorted(keys - set(CONFIG_DEFAULTS))
  if unknown:
    raise ValueError(f"Unknown config key(s) {unknown}; allowed: "
                     f"{sorted(CONFIG_DEFAULTS)}.")
  missing = sorted(k for k, v in CONFIG_DEFAULTS.items() if v is None
                   and k not in ("ood_intents", "train_intents") and k not in keys)
  if missing:
    raise ValueError(f"Config is missing required key(s) {missing}.")
  for k in ("seeds", "steps", "intents_per_step", "examples_per_intent",
            "eval_examples", "log_every", "checkpoint_every", "keep_checkpoints"):
    v = config.get(k, CONFIG_DEFAULTS[k])
    if not isinstance(v, int) or v <= 0:
      raise ValueError(f"config.{k} must be a positive int, got {v!r}.")
  for name in config.get("models", CONFIG_DEFAULTS["models"]):
    if name not in meta.NAMES:
      raise ValueError(f"config.models has unknown model {name!r}; allowed: "
                       f"{list(meta.NAMES)}.")


def _get(config, key):
  return config.get(key, CONFIG_DEFAULTS[key]) if hasattr(config, "get") else getattr(config, key)


def build_task(config) -> tasks.Task:
  """The task with OOD, validation and training intents from the config."""
  probe = tasks.get(config.task)
  parse = lambda xs: tuple(probe.parse_intent(x) for x in xs)
  ood = _get(config, "ood_intents")
  train = _get(config, "train_intents")
  return tasks.get(config.task,
                   ood_intents=None if ood is None else parse(ood),
                   val_intents=parse(_get(config, "val_intents")),
                   train_intents=None if train is None else parse(train))


def create_model(config, task, name) -> meta.MetaModel:
  cfg = dict(_get(config, "model_configs").get(name, {}) or {})
  cfg.pop("num_params", None)
  return meta.create(name, task.spec, task.feature_dim, cfg)


def create_optimizer(config, name) -> optax.GradientTransformation:
  lr = _get(config, "learning_rates").get(name, _get(config, "learning_rate"))
  clip = _get(config, "grad_clip")
  schedule = _get(config, "schedule")
  if schedule == "cosine":
    steps = _get(config, "steps")
    lr = optax.warmup_cosine_decay_schedule(
        0.0, lr, warmup_steps=max(1, min(200, steps // 10)), decay_steps=steps,
        end_value=0.01 * lr)
  elif schedule != "constant":
    raise ValueError(f"config.schedule={schedule!r}; allowed: 'cosine', 'constant'.")
  decay = float(_get(config, "weight_decay"))
  if decay < 0:
    raise ValueError(f"config.weight_decay={decay}; allowed: >= 0.")
  if decay:
    # Kernels only (the usual AdamW convention): biases and the output head's
    # per-tensor gain/center set offsets and scales, not capacity. The step
    # is vmapped over seeds, so ndim here is per seed.
    adam = optax.adamw(lr, weight_decay=decay,
                       mask=lambda p: jax.tree_util.tree_map(lambda a: a.ndim >= 2, p))
  else:
    adam = optax.adam(lr)
  return optax.chain(optax.clip_by_global_norm(clip), adam) if clip else adam


class _Trainer:
  """Everything compiled for one (model, config): init, chunk, evaluate."""

  def __init__(self, config, task, name):
    self.config, self.task, self.name = config, task, name
    self.model = create_model(config, task, name)
    self.opt = create_optimizer(config, name)
    self.seeds = [int(_get(config, "seed")) + i for i in range(_get(config, "seeds"))]
    self.mesh = parallel.seed_mesh(len(self.seeds))
    self.seed_keys = parallel.shard_seeds(
        jax.vmap(jax.random.key)(jnp.asarray(self.seeds)), self.mesh)
    step = step_lib.make_train_step(
        self.model, task, self.opt, intents_per_step=_get(config, "intents_per_step"),
        examples_per_intent=_get(config, "examples_per_intent"))
    self._step_S = jax.vmap(step)
    self._init = jax.jit(jax.vmap(
        lambda k: step_lib.init_state(self.model, task, self.opt, k)),
        out_shardings=parallel.seed_sharding(self.mesh))
    self._chunks = {}

  def init(self):
    return self._init(self.seed_keys)

  def chunk(self, n):
    """(state_S, start) -> (state_S, metrics [n, S]) for n steps."""
    if n not in self._chunks:
      def run(state, keys, start):
        def body(st, i):
          ks = jax.vmap(lambda k: jax.random.fold_in(k, start + i))(keys)
          return self._step_S(st, ks)
        return jax.lax.scan(body, state, jnp.arange(n))
      self._chunks[n] = jax.jit(run)
    return lambda state, start: self._chunks[n](state, self.seed_keys, start)

  def evaluate(self, params_S, intents, key):
    """Exact match float[S, len(intents)] on n fresh examples per intent."""
    if not intents:
      return np.zeros((len(self.seeds), 0))
    task, model = self.task, self.model
    feats = jnp.asarray(task.features(intents))
    ip = jnp.asarray(task.intent_params(intents))
    x, y = task.sample_params(key, ip, _get(self.config, "eval_examples"))

    @jax.jit
    @jax.vmap
    def per_seed(params):
      out = step_lib.outputs_for(model, params, feats, x)
      return task.exact_match(out, y, ip).mean(-1)
    return np.asarray(per_seed(params_S))


class Interrupted(RuntimeError):
  """Raised by `stop_at_step`: simulates a kill (preemption drills, tests)."""


def train_model(config, task, name, workdir, writer, stop_at_step=None) -> dict[str, Any]:
  """Trains all seeds of one model (resuming if possible) and evaluates.

  stop_at_step: raise `Interrupted` once this step is reached (after any
  checkpoint due at it), as a kill would; a rerun resumes.
  """
  tr = _Trainer(config, task, name)
  total = _get(config, "steps")
  log_every, ckpt_every = _get(config, "log_every"), _get(config, "checkpoint_every")
  mngr = checkpoint.manager(os.path.join(workdir, "checkpoints", name),
                            _get(config, "keep_checkpoints"))
  state = tr.init()
  step, restored = checkpoint.restore_latest(mngr, checkpoint.abstract_like(state))
  if restored is not None:
    state = restored
    logger.info("%s: resumed from step %d (%s)", name, step, mngr.directory)
  step = step or 0
  n_params = tr.model.num_params()
  logger.info("%s: %d trainable parameters, %d seeds on %d device(s), %d steps",
               name, n_params, len(tr.seeds), tr.mesh.size, total)
  t_start, steps_done, train_time = time.time(), 0, 0.0
  while step < total:
    n = min(log_every, total - step, ckpt_every - step % ckpt_every)
    t0 = time.time()
    new_state, metrics = tr.chunk(n)(state, step)
    loss = np.asarray(metrics["loss"])                      # [n, S]
    if not np.all(np.isfinite(loss)):
      i, s = map(int, np.argwhere(~np.isfinite(loss))[0])
      raise FloatingPointError(
          f"{name}: non-finite loss {loss[i, s]} at seed {tr.seeds[s]}, step "
          f"{step + i + 1}; the last good checkpoint is kept in {mngr.directory}.")
    state, step = new_state, step + n
    dt = time.time() - t0
    train_time += dt
    steps_done += n
    rate = n / dt
    eta = (total - step) / rate
    acc = np.asarray(metrics["accuracy"])
    logger.info("%s step %d/%d loss %.4f acc %.3f | %.1f steps/s | ETA %s",
                 name, step, total, loss[-1].mean(), acc[-1].mean(), rate,
                 time.strftime("%H:%M:%S", time.gmtime(eta)))
    writer.write(name, step, {"loss": float(loss[-1].mean()),
                              "accuracy": float(acc[-1].mean()),
                              "steps_per_s": rate},
                 per_seed={"loss": loss[-1].tolist()})
    if step % ckpt_every == 0 or step == total:
      checkpoint.save(mngr, step, state)
    if stop_at_step is not None and step >= stop_at_step:
      raise Interrupted(f"{name}: stopped at step {step} (stop_at_step).")
  key = jax.random.key(_get(config, "eval_seed"))
  k_id, k_val, k_ood = jax.random.split(key, 3)
  acc_id = tr.evaluate(state.params, task.train_intents, k_id)
  acc_val = tr.evaluate(state.params, task.val_intents, k_val)
  acc_ood = tr.evaluate(state.params, task.ood_intents, k_ood)
  fmt = task.format_intent
  return {
      "num_params": n_params,
      "config": dict(tr.model.config),
      "seeds": tr.seeds,
      "steps": total,
      "train_time_s": round(train_time, 2),
      "devices": tr.mesh.size,
      "id": {fmt(i): acc_id[:, j].tolist() for j, i in enumerate(task.train_intents)},
      "val": {fmt(i): acc_val[:, j].tolist() for j, i in enumerate(task.val_intents)},
      "ood": {fmt(i): acc_ood[:, j].tolist() for j, i in enumerate(task.ood_intents)},
      "id_mean": acc_id.mean(1).tolist(),
      "val_mean": acc_val.mean(1).tolist() if acc_val.size else [],
      "ood_mean": acc_ood.mean(1).tolist(),
  }


def _config_json(config) -> str:
  if isinstance(config, ml_collections.ConfigDict):
    return config.to_json_best_effort(indent=2, sort_keys=True)
  return json.dumps(config, indent=2, sort_keys=True, default=str)


def train_and_evaluate(config, workdir: str, *, stop_at_step=None) -> dict[str, Any]:
  """Trains every model of the config for all seeds and writes the results.

  Writes to workdir: config.json, checkpoints/<model>/, metrics.jsonl,
  tensorboard/<model>/, results.json, results.md, ood_by_intent.png.
  Returns the results dict (also in results.json).
  """
  validate_config(config)
  task = build_task(config)
  os.makedirs(workdir, exist_ok=True)
  cfg_path = os.path.join(workdir, "config.json")
  text = _config_json(config)
  if os.path.exists(cfg_path):
    with open(cfg_path) as f:
      old = json.load(f)
    new = json.loads(text)
    changed = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k)
                     and k not in ("steps",))
    if changed:
      raise ValueError(f"{workdir} holds a run with a different config (keys "
                       f"{changed}); use a fresh workdir.")
  with open(cfg_path, "w") as f:
    f.write(text)
  writer = results_lib.MetricWriter(workdir)
  out = {"task": config.task, "models": {}}
  try:
    for name in _get(config, "models"):
      out["models"][name] = train_model(config, task, name, workdir, writer,
                                        stop_at_step=stop_at_step)
  finally:
    writer.close()
  out["intents"] = {
      "train": [task.format_intent(i) for i in task.train_intents],
      "val": [task.format_intent(i) for i in task.val_intents],
      "ood": [task.format_intent(i) for i in task.ood_intents]}
  results_lib.write_all(workdir, task, out)
  return out
