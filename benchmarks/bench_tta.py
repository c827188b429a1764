"""Time to accuracy: steps and wall seconds until each meta-learner learns its task.

For each model of the task's config (`experiments/configs/<task>.py`), all
seeds train in one program (the main job's `Trainer`), `--eval_every` steps at
a time; after each chunk the seed-mean exact match on the training intents
(ID) and on the validation intents is measured on `--eval_examples` fresh
examples per intent (the same examples every time), and a progress line goes
to stderr. One JSON line per model:

- `steps_to_threshold`, `seconds_to_threshold`: the first evaluation at which
  the seed-mean ID exact match reaches `--threshold` (default 0.95); null if
  it never does within `--max_steps`. Seconds are training wall time
  (compilation included, evaluation excluded).
- `val_best`, `val_best_step`, `seconds_to_val_best`: where the seed-mean
  validation accuracy stops improving (no gain above 0.005 for `--patience`
  evaluations after it).
- `params`, `seeds`, `compile_s` (first chunk minus a steady chunk), the
  steps/s of a steady chunk, and the host's fp32 matmul GFLOP/s measured in the
  same run, before and after the model.

Training stops at `--max_steps`, after `--max_seconds` of training, or once
the threshold is reached and the validation accuracy has stopped improving
(`stopped_by` says which). The learning-rate schedule is the
config's (its `steps`), so the figures are those of the configured run.
OOD intents are never evaluated.

  python benchmarks/bench_tta.py --task addmod [--models meta_mlp,meta_gnn] \
      [--seeds 10] [--max_steps 20000] [--eval_every 500]
  python benchmarks/bench_tta.py --task sumfirst      # validation n = 6
  python benchmarks/bench_tta.py --task addmod --models meta_gnn \
      --set "model_configs.meta_gnn.rounds=1"   # width re-matched as in select
"""

import argparse
import importlib
import os
import sys
import time

import jax
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # pylint: disable=g-import-not-at-top,wrong-import-position

from neuroprog.train import loop  # pylint: disable=g-import-not-at-top,wrong-import-position



def _positive(text):
  if not text.isdigit() or int(text) <= 0:
    raise argparse.ArgumentTypeError(f"{text!r}; allowed: a positive integer")
  return int(text)


def time_to_accuracy(config, name, *, max_steps, eval_every, threshold, patience,
                     max_seconds=None):
  """The record of one model (module doc), without the matmul rates."""
  task = loop.build_task(config)
  tr = loop.Trainer(config, task, name)
  key_id, key_val = jax.random.split(jax.random.key(int(config.eval_seed)))
  state = tr.init()
  step, seconds, chunk_times = 0, 0.0, []
  hit, best = None, {"val": -1.0, "step": 0, "seconds": 0.0}
  since_best = 0
  curve = []
  while step < max_steps:
    n = min(eval_every, max_steps - step)
    t0 = time.perf_counter()
    state, metrics = tr.chunk(state, step, n)
    jax.block_until_ready(metrics["loss"])
    dt = time.perf_counter() - t0
    chunk_times.append((n, dt))
    step, seconds = step + n, seconds + dt
    loss = np.asarray(metrics["loss"])
    if not np.all(np.isfinite(loss)):
      raise FloatingPointError(f"{name}: non-finite loss by step {step}.")
    acc_id = float(tr.evaluate(state.params, task.train_intents, key_id).mean())
    acc_val = float(tr.evaluate(state.params, task.val_intents, key_val).mean())
    curve.append([step, round(acc_id, 4), round(acc_val, 4)])
    print(f"{name} step {step}/{max_steps} ID {acc_id:.3f} val {acc_val:.3f} | "
          f"{n / dt:.2f} steps/s | {seconds:.0f} s of training", file=sys.stderr, flush=True)
    if hit is None and acc_id >= threshold:
      hit = {"step": step, "seconds": seconds}
    if acc_val > best["val"] + 0.005:
      best, since_best = {"val": acc_val, "step": step, "seconds": seconds}, 0
    else:
      since_best += 1
    if hit is not None and since_best >= patience:
      break
    if max_seconds is not None and seconds >= max_seconds:
      break
  steady = [dt / n for n, dt in chunk_times[1:]] or [chunk_times[0][1] / chunk_times[0][0]]
  per_step = float(np.median(steady))
  return {"model": name, "params": tr.model.num_params(), "seeds": len(tr.seeds),
          "threshold": threshold,
          "steps_to_threshold": hit["step"] if hit else None,
          "seconds_to_threshold": round(hit["seconds"], 1) if hit else None,
          "val_best": round(best["val"], 4), "val_best_step": best["step"],
          "seconds_to_val_best": round(best["seconds"], 1),
          "steps_run": step, "train_seconds": round(seconds, 1),
          "stopped_by": ("max_seconds" if max_seconds is not None and seconds >= max_seconds
                         and step < max_steps and not (hit and since_best >= patience)
                         else "max_steps" if step >= max_steps else "plateau"),
          "compile_s": (round(max(0.0, chunk_times[0][1] - per_step * chunk_times[0][0]), 1)
                        if len(chunk_times) > 1 else None),   # needs a steady chunk
          "steps_per_s": round(1.0 / per_step, 2), "curve": curve}


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--task", required=True, choices=["sumfirst", "addmod", "arc1d"])
  ap.add_argument("--models", default=None, help="default: the config's models")
  ap.add_argument("--seeds", type=_positive, default=10)
  ap.add_argument("--max_steps", type=_positive, default=None,
                  help="default: the config's steps")
  ap.add_argument("--eval_every", type=_positive, default=500)
  ap.add_argument("--eval_examples", type=_positive, default=256)
  ap.add_argument("--threshold", type=float, default=0.95)
  ap.add_argument("--patience", type=_positive, default=3)
  ap.add_argument("--max_seconds", type=_positive, default=None,
                  help="stop a model after this much training time")
  ap.add_argument("--steps", type=_positive, default=None,
                  help="schedule length (default: the config's steps)")
  ap.add_argument("--set", default="", dest="overrides",
                  help="config overrides 'path=value;path2=value2', paths as in "
                       "experiments.select (e.g. model_configs.meta_gnn.rounds=1)")
  args = ap.parse_args()
  if not 0 < args.threshold <= 1:
    raise SystemExit(f"--threshold={args.threshold}; allowed: (0, 1].")
  config = importlib.import_module(f"experiments.configs.{args.task}").get_config()
  config.seeds = args.seeds
  config.eval_examples = args.eval_examples
  if args.steps:
    config.steps = args.steps
  if not config.val_intents:
    raise SystemExit(f"experiments/configs/{args.task}.py names no validation intents.")
  config, models = common.with_overrides(config, args.models, args.overrides)
  loop.validate_config(config)
  for name in models:
    before = common.matmul_gflops()
    record = time_to_accuracy(config, name, max_steps=args.max_steps or config.steps,
                              eval_every=args.eval_every, threshold=args.threshold,
                              patience=args.patience, max_seconds=args.max_seconds)
    after = common.matmul_gflops()
    common.emit({"bench": "tta", "task": args.task, "overrides": args.overrides,
                 "schedule_steps": config.steps,
                 "val_intents": list(config.val_intents), **record,
                 "matmul_gflops": [round(before, 1), round(after, 1)], **common.machine()})


if __name__ == "__main__":
  main()
