"""One-line heuristics on the held-out ADDMOD primes of a config, scored on the
exact samples its run evaluates (eval_seed, the validation and OOD keys of
`train.loop.train_model`, eval_examples per intent), the 1D-ARC counterpart
being `arc1d_heuristics.py`. The rules are the task's own (`Task.heuristics`),
the ones a run's results.md lists beside the models; this prints them per prime.

  python benchmarks/addmod_heuristics.py [--config addmod_cpu]

One JSON line per (split, prime p) and one per split with the mean over its
primes: exact match of "answer a + b, never wrap" (no_wrap; right exactly when
a + b < p, about half of the pairs) and of the rule of the nearest training
prime q, (a + b) mod q (nearest; ties to the smaller q, as in
`arc1d_heuristics.py`).
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # pylint: disable=g-import-not-at-top,wrong-import-position

from neuroprog.tasks import addmod, base  # pylint: disable=g-import-not-at-top,wrong-import-position


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--config", default="addmod_cpu", help="module under experiments/configs")
  args = ap.parse_args()
  config, task, samples = common.held_out_samples(args.config, "addmod")
  rules = task.heuristics()
  for split, primes, x, y in samples:
    scores = {"no_wrap": [], "nearest": []}
    for j, p in enumerate(primes):
      q = task.nearest_train_intent(p)
      no_wrap, nearest = (
          float(task.heuristic_accuracy(rules[name](p, x[j]), y[j]).mean())
          for name in (addmod.NO_WRAP, base.NEAREST_RULE))
      scores["no_wrap"].append(no_wrap)
      scores["nearest"].append(nearest)
      common.emit({"bench": "addmod_heuristics", "config": args.config, "split": split,
                   "intent": task.format_intent(p), "examples": int(config.eval_examples),
                   "no_wrap": round(no_wrap, 4), "nearest_rule": task.format_intent(q),
                   "nearest": round(nearest, 4), **common.machine()})
    common.emit({"bench": "addmod_heuristics", "config": args.config, "split": split,
                 "intent": "mean", "examples": int(config.eval_examples),
                 **{k: round(float(np.mean(v)), 4) for k, v in scores.items()},
                 **common.machine()})


if __name__ == "__main__":
  main()
