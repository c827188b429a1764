"""Cost of training many seeds in one program: wall time of S seeds over 1.

For each model of the SUMFIRST default config, times a compiled 100-step
chunk with 1 seed and with 10 seeds (vmap over the seed axis, sharded when
several devices exist), compilation excluded, and prints one JSON line per
model with the ratio (target: at most 4x on the 2-core CPU).

  python benchmarks/bench_seeds.py [--seeds 10] [--steps 100] [--models meta_gnn]
"""

import argparse
import os
import sys
import time

import jax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # pylint: disable=g-import-not-at-top,wrong-import-position

from experiments.configs import sumfirst  # pylint: disable=g-import-not-at-top,wrong-import-position
from neuroprog.train import loop  # pylint: disable=g-import-not-at-top,wrong-import-position


def chunk_seconds(config, task, name, steps):
  tr = loop._Trainer(config, task, name)  # pylint: disable=protected-access
  state = tr.init()
  run = tr.chunk(steps)
  jax.block_until_ready(run(state, 0))          # compile
  t0 = time.perf_counter()
  jax.block_until_ready(run(state, steps))
  return time.perf_counter() - t0


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--seeds", type=int, default=10)
  ap.add_argument("--steps", type=int, default=100)
  ap.add_argument("--models", default="meta_gnn,meta_mlp,meta_gmlp,direct")
  args = ap.parse_args()
  for name in args.models.split(","):
    times = {}
    for s in (1, args.seeds):
      config = sumfirst.get_config()
      config.seeds = s
      task = loop.build_task(config)
      times[s] = chunk_seconds(config, task, name, args.steps)
    common.emit({"bench": "seeds", "task": "sumfirst", "model": name,
                 "steps": args.steps, "seconds_1_seed": round(times[1], 3),
                 f"seconds_{args.seeds}_seeds": round(times[args.seeds], 3),
                 "ratio": round(times[args.seeds] / times[1], 2),
                 "examples_per_s_per_seed": round(
                     args.steps * config.intents_per_step *
                     config.examples_per_intent / times[1]),
                 **common.machine()})


if __name__ == "__main__":
  main()
