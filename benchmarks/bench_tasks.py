"""Sampling throughput of each task under jit.

Prints one JSON line: examples per second for each task, drawing n examples
for each of B training intents per call (compilation excluded). The training
step consumes (intents per step) x (examples per intent) examples; the
training issue compares its consumption to these figures.

  python benchmarks/bench_tasks.py [--intents 16] [--examples 256]
"""

import argparse
import os
import sys

import jax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # pylint: disable=g-import-not-at-top,wrong-import-position

from neuroprog import tasks  # pylint: disable=g-import-not-at-top,wrong-import-position


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--intents", type=int, default=16)
  ap.add_argument("--examples", type=int, default=256)
  args = ap.parse_args()
  record = {"bench": "tasks", "intents": args.intents,
            "examples_per_intent": args.examples, **common.machine()}
  for name in tasks.NAMES:
    task = tasks.get(name)
    intents = [task.train_intents[i % len(task.train_intents)]
               for i in range(args.intents)]
    params = task.intent_params(intents)
    fn = jax.jit(task.sample_params, static_argnums=2)
    sec = common.time_call(lambda k, p: fn(k, p, args.examples),
                           jax.random.key(0), params)
    record[f"{name}_examples_per_s"] = round(args.intents * args.examples / sec)
  common.emit(record)


if __name__ == "__main__":
  main()
