"""Is a seed's outcome set by its initial weights or by its batches?

Each lane of one program trains from the initial weights of seed
`--init_seed + i` on the batches (intents, examples, jitter) of seed
`--seed + i`, i = 0..S-1, for the config's steps with its optimizer and
schedule (the `Trainer`'s chunks; with --init_seed equal to --seed every lane
is that seed of a normal run). Then each lane's exact match on the validation
intents is read (never the OOD ones), and one JSON line per lane gives
`init_seed`, `batch_seed`, `val` (per intent) and `val_mean`.

  python benchmarks/init_or_batches.py --task addmod_cpu --model meta_mlp \
      --seed 0 --init_seed 4 --seeds 5 [--set "path=value;..."]

A seed whose failure follows its initial weights into other lanes' batches is
decided at initialization; one whose failure stays with its batches is not.
"""

import argparse
import importlib
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # pylint: disable=g-import-not-at-top,wrong-import-position

from neuroprog.train import loop  # pylint: disable=g-import-not-at-top,wrong-import-position


def initial_state(config, task, model: str, init_seed: int):
  """The initial TrainState of config.seeds lanes as seeds init_seed,
  init_seed + 1, ... of `config` would start."""
  init_config = config.copy_and_resolve_references()
  init_config.seed = init_seed
  return loop.Trainer(init_config, task, model).init()


def lanes(config, model: str, seed: int, init_seed: int, seeds: int) -> list[dict]:
  """One record per lane: {"init_seed", "batch_seed", "val": {intent: exact
  match}, "val_mean"} after config.steps steps (see the module docstring)."""
  config = config.copy_and_resolve_references()
  config.models, config.seeds, config.seed = (model,), seeds, seed
  loop.validate_config(config)
  task = loop.build_task(config)
  if not task.val_intents:
    raise ValueError("the config has no validation intents (config.val_intents); this "
                     "benchmark reads only those.")
  data = loop.Trainer(config, task, model)
  state = initial_state(config, task, model, init_seed)
  total, every = int(config.steps), int(config.log_every)
  t0 = time.perf_counter()
  for start in range(0, total, every):
    state, metrics = data.chunk(state, start, min(every, total - start))
    loss = float(np.mean(np.asarray(metrics["loss"])[-1]))
    print(f"{model} step {min(start + every, total)}/{total} loss {loss:.4f} "
          f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
  acc = data.evaluate(state.params, task.val_intents, loop.split_key(config, "val"))
  return [{"init_seed": init_seed + i, "batch_seed": seed + i,
           "val": {task.format_intent(v): round(float(acc[i, j]), 4)
                   for j, v in enumerate(task.val_intents)},
           "val_mean": round(float(acc[i].mean()), 4)} for i in range(seeds)]


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--task", required=True,
                  help="a config module of experiments/configs, e.g. addmod_cpu")
  ap.add_argument("--model", required=True)
  ap.add_argument("--seed", type=int, default=0, help="first lane's batch seed")
  ap.add_argument("--init_seed", type=int, required=True, help="first lane's init seed")
  ap.add_argument("--seeds", type=int, default=5, help="lanes")
  ap.add_argument("--set", default="", dest="overrides",
                  help="config overrides 'path=value;path2=value2' (experiments.select paths)")
  args = ap.parse_args()
  config = importlib.import_module(f"experiments.configs.{args.task}").get_config()
  config, models = common.with_overrides(config, args.model, args.overrides)
  if len(models) != 1:
    raise SystemExit(f"--model names one model; got {models}.")
  for record in lanes(config, models[0], args.seed, args.init_seed, args.seeds):
    common.emit({"bench": "init_or_batches", "task": args.task, "model": models[0],
                 "overrides": args.overrides, "steps": int(config.steps), **record,
                 **common.machine()})


if __name__ == "__main__":
  main()
