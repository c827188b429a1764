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
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # pylint: disable=g-import-not-at-top,wrong-import-position

from neuroprog.tasks.arc1d import families  # pylint: disable=g-import-not-at-top,wrong-import-position


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("--config", default="arc1d", help="module under experiments/configs")
  args = ap.parse_args()
  config, task, samples = common.held_out_samples(args.config, "arc1d")
  for split, intents, x, y in samples:
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
