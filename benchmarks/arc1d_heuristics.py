"""One-line heuristics on the held-out 1D-ARC intents of a config, scored on
the exact samples its run evaluates (eval_seed, the validation and OOD keys of
`train.loop.train_model`, eval_examples per intent).

  python benchmarks/arc1d_heuristics.py [--config arc1d]

One JSON line per (split, intent): exact match of "answer with the input"
(identity) and of the reference solver of the nearest training parameter of
the same family (nearest), the simplest baselines beside the meta-learners'
validation and OOD columns: the task's own rules (`Task.heuristics`), which a
run's results.md lists beside the models; this prints them per intent.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # pylint: disable=g-import-not-at-top,wrong-import-position

from neuroprog.tasks import base  # pylint: disable=g-import-not-at-top,wrong-import-position
from neuroprog.tasks.arc1d import task as arc1d_task  # pylint: disable=g-import-not-at-top,wrong-import-position


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--config", default="arc1d", help="module under experiments/configs")
  args = ap.parse_args()
  config, task, samples = common.held_out_samples(args.config, "arc1d")
  rules = task.heuristics()
  for split, intents, x, y in samples:
    for j, intent in enumerate(intents):
      identity, nearest = (
          float(task.heuristic_accuracy(rules[name](intent, x[j]), y[j]).mean())
          for name in (arc1d_task.IDENTITY, base.NEAREST_RULE))
      rule = task.nearest_train_intent(intent)
      common.emit({"bench": "arc1d_heuristics", "config": args.config, "split": split,
                   "intent": task.format_intent(intent), "examples": int(config.eval_examples),
                   "identity": round(identity, 4),
                   "nearest_rule": None if rule is None else task.format_intent(rule),
                   "nearest": round(nearest, 4), **common.machine()})


if __name__ == "__main__":
  main()
