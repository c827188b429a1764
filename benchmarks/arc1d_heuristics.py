"""One-line heuristics on the held-out 1D-ARC intents of a config, scored on
the exact samples its run evaluates (eval_seed, the validation and OOD keys of
`train.loop.train_model`, eval_examples per intent).

  python benchmarks/arc1d_heuristics.py [--config arc1d]

One JSON line per (split, intent): exact match of "answer with the input"
(identity) and of the reference solver of the nearest training parameter of
the same family (nearest), the simplest baselines beside the meta-learners'
validation and OOD columns.
"""

import argparse
import importlib
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # pylint: disable=g-import-not-at-top,wrong-import-position

from neuroprog.tasks.arc1d import families  # pylint: disable=g-import-not-at-top,wrong-import-position
from neuroprog.train import loop  # pylint: disable=g-import-not-at-top,wrong-import-position


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--config", default="arc1d", help="module under experiments/configs")
  args = ap.parse_args()
  config = importlib.import_module(f"experiments.configs.{args.config}").get_config()
  if config.task != "arc1d":
    raise SystemExit(f"--config {args.config} trains {config.task!r}, not 'arc1d'.")
  task = loop.build_task(config)
  # The same keys as train.loop.train_model's evaluation.
  keys = dict(zip(loop.SPLITS, jax.random.split(jax.random.key(config.eval_seed), 3)))
  for split, intents in (("val", task.val_intents), ("ood", task.ood_intents)):
    ip = jnp.asarray(task.intent_params(intents))
    x, y = (np.asarray(a) for a in task.sample_params(keys[split], ip, config.eval_examples))
    for j, intent in enumerate(intents):
      fam, k = intent
      nearest = min((t for t in task.train_intents if t[0] == fam),
                    key=lambda t: (abs(t[1] - k), t[1]))
      identity = np.all((x[j] == y[j]) | (y[j] == families.PAD), -1).mean()
      right = []
      for xi, yi in zip(x[j], y[j]):
        out = np.asarray(task.reference(nearest, xi[xi != families.PAD]))
        want = yi[yi != families.PAD]
        right.append(out.shape == want.shape and bool(np.all(out == want)))
      common.emit({"bench": "arc1d_heuristics", "config": args.config, "split": split,
                   "intent": task.format_intent(intent), "examples": int(config.eval_examples),
                   "identity": round(float(identity), 4),
                   "nearest_rule": task.format_intent(nearest),
                   "nearest": round(float(np.mean(right)), 4), **common.machine()})


if __name__ == "__main__":
  main()
