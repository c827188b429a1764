"""Gradient noise and clipping during meta-training: is a model's slow fit noise or conditioning?

One seed of each model of the task's config trains as in the main job (the
`Trainer`'s chunks, the config's optimizer and schedule; seed 0 trains exactly
as seed 0 of a multi-seed run). At each step of `--at`, the gradient a training
step would take (`train.step.make_grad_fn`: the config's intents and examples
per step) is drawn on `--batches` independent batches g_1..g_K, and one JSON
line per (model, step) gives:

- `mean_grad_norm`: mean over batches of |g_k| (what the global-norm clip sees);
- `clip_fraction`: the fraction of batches with |g_k| > config.grad_clip,
  where the clip rescales the step;
- `norm_of_mean`: |G|, G = mean_k g_k (the signal);
- `noise_ratio`: mean_k |g_k - G|^2 / |G|^2, the gradient noise of one step's
  batch relative to its signal (McCandlish et al.'s "simple noise scale" divided
  by the batch size). Below 1 the step's direction is mostly signal, and larger
  batches would not speed training up; a model that still trains slowly has a
  conditioning problem, not a noise one;
- `module_norms`: |G| restricted to each module of the model (its path in the
  params tree without the leaf name), largest first;
- `loss`, `accuracy`: the task loss and batch exact match, mean over batches.

The estimate of |G|^2 is biased upwards by the noise over K batches
(E|G|^2 = |true G|^2 + tr(Sigma)/K); with K = 32 and a ratio near 1 that is 3%.

  python benchmarks/grad_noise.py --task addmod --models meta_mlp,meta_gnn \
      --at 0,1500,2000,2500 [--batches 32] [--set "path=value;..."]
"""

import argparse
import importlib
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # pylint: disable=g-import-not-at-top,wrong-import-position

from neuroprog.train import loop  # pylint: disable=g-import-not-at-top,wrong-import-position
from neuroprog.train import step as step_lib  # pylint: disable=g-import-not-at-top,wrong-import-position


def _module_name(path) -> str:
  """'net/msg_0_in' for the params path ['net']['msg_0_in']['kernel']."""
  keys = [str(getattr(k, "key", getattr(k, "name", getattr(k, "idx", k)))) for k in path]
  return "/".join(keys[:-1]) or keys[0]


def gradient_statistics(grads_K, max_norm: float) -> dict:
  """The module doc's statistics of K gradients.

  grads_K: a params pytree whose leaves carry a leading batch axis K >= 2
    (float arrays [K, ...]).
  max_norm: the global-norm clip threshold (config.grad_clip).
  Returns {"mean_grad_norm", "clip_fraction", "norm_of_mean", "noise_ratio":
  float, "module_norms": {module: float}} (module norms of the mean gradient,
  largest first).
  """
  leaves = jax.tree_util.tree_flatten_with_path(grads_K)[0]
  if not leaves:
    raise ValueError("grads_K has no leaves.")
  k = leaves[0][1].shape[0]
  if k < 2:
    raise ValueError(f"grads_K holds {k} gradient(s); the noise needs at least 2.")
  # One [K, N] matrix for the global statistics; each leaf's column range
  # gives its module's share of the mean, so nothing is converted twice.
  flat = [np.asarray(g, np.float64).reshape(k, -1) for _, g in leaves]
  flat_KxN = np.concatenate(flat, axis=1)
  norms_K = np.linalg.norm(flat_KxN, axis=1)
  mean_N = flat_KxN.mean(0)
  signal = float(np.sum(mean_N ** 2))
  noise = float(np.mean(np.sum((flat_KxN - mean_N) ** 2, axis=1)))
  modules: dict[str, float] = {}
  start = 0
  for (path, _), g_KxM in zip(leaves, flat):
    end = start + g_KxM.shape[1]
    name = _module_name(path)
    modules[name] = modules.get(name, 0.0) + float(np.sum(mean_N[start:end] ** 2))
    start = end
  return {"mean_grad_norm": float(norms_K.mean()),
          "clip_fraction": float(np.mean(norms_K > max_norm)),
          "norm_of_mean": signal ** 0.5,
          "noise_ratio": noise / signal if signal > 0 else float("inf"),
          "module_norms": {m: v ** 0.5 for m, v in
                           sorted(modules.items(), key=lambda kv: -kv[1])}}


def probe(config, task, name, at_steps, *, batches: int, probe_seed: int):
  """One record per step of at_steps (ascending) for one seed of model `name`."""
  config = config.copy_and_resolve_references()
  config.seeds = 1
  tr = loop.Trainer(config, task, name)
  grad_fn = step_lib.make_grad_fn(tr.model, task,
                                  intents_per_step=loop.batch_size(config, "intents_per_step",
                                                                   name),
                                  examples_per_intent=loop.batch_size(
                                      config, "examples_per_intent", name),
                                  intent_jitter=loop.intent_jitter(config, name),
                                  intent_sampling=loop.intent_sampling(config, name))
  keys = jax.vmap(lambda b: jax.random.fold_in(jax.random.key(probe_seed), b))(
      jnp.arange(batches))
  # lax.map, not vmap: K batches at once would hold K copies of the
  # activations, and the gradients alone are what is needed together.
  grads_of = jax.jit(lambda params: jax.lax.map(lambda key: grad_fn(params, key), keys))
  state, step, records = tr.init(), 0, []
  for target in at_steps:
    t0 = time.perf_counter()
    if target > step:
      state, _ = tr.chunk(state, step, target - step)
      step = target
    params = jax.tree_util.tree_map(lambda a: a[0], state.params)
    grads_K, metrics_K = grads_of(params)
    stats = gradient_statistics(grads_K, float(config.grad_clip))
    loss = float(np.mean(np.asarray(metrics_K["loss"])))
    if not np.isfinite(loss):
      raise FloatingPointError(f"{name}: non-finite loss at step {step}.")
    record = {"model": name, "step": step, "batches": batches,
              "loss": round(loss, 4),
              "accuracy": round(float(np.mean(np.asarray(metrics_K["accuracy"]))), 4),
              **{key: (round(v, 4) if isinstance(v, float) else
                       {m: round(x, 4) for m, x in v.items()})
                 for key, v in stats.items()}}
    print(f"{name} step {step}: |g| {stats['mean_grad_norm']:.3f} |G| "
          f"{stats['norm_of_mean']:.3f} noise/signal {stats['noise_ratio']:.2f} "
          f"clip {stats['clip_fraction']:.2f} loss {loss:.3f} "
          f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
    records.append(record)
  return records


def _steps(text):
  try:
    steps = [int(s) for s in text.split(",")]
  except ValueError:
    steps = None
  if not steps or any(s < 0 for s in steps) or steps != sorted(set(steps)):
    raise argparse.ArgumentTypeError(
        f"{text!r}; allowed: ascending distinct non-negative steps, e.g. 0,1500,2500")
  return steps


def _at_least_two(text):
  if not text.isdigit() or int(text) < 2:
    raise argparse.ArgumentTypeError(f"{text!r}; allowed: an integer >= 2")
  return int(text)


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--task", required=True, choices=["sumfirst", "addmod", "arc1d"])
  ap.add_argument("--models", default=None, help="default: the config's models")
  ap.add_argument("--at", type=_steps, required=True, help="steps to probe, ascending")
  ap.add_argument("--batches", type=_at_least_two, default=32)
  ap.add_argument("--probe_seed", type=int, default=12345)
  ap.add_argument("--set", default="", dest="overrides",
                  help="config overrides 'path=value;path2=value2' (experiments.select paths)")
  args = ap.parse_args()
  config = importlib.import_module(f"experiments.configs.{args.task}").get_config()
  config, models = common.with_overrides(config, args.models, args.overrides)
  if args.at[-1] > config.steps:
    raise SystemExit(f"--at {args.at[-1]} is past the config's {config.steps} steps.")
  loop.validate_config(config)
  task = loop.build_task(config)
  for name in models:
    for record in probe(config, task, name, args.at, batches=args.batches,
                        probe_seed=args.probe_seed):
      common.emit({"bench": "grad_noise", "task": args.task, "overrides": args.overrides,
                   "optimizer": loop.optimizer_name(config, name),
                   "learning_rate": loop.learning_rate(config, name),
                   "grad_clip": float(config.grad_clip), **record, **common.machine()})


if __name__ == "__main__":
  main()
