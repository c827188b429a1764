"""Where a compiled training chunk spends its time, by XLA op class.

Traces one compiled chunk of the SUMFIRST default config's training step
(`jax.profiler`, Perfetto trace), sums op durations by class (the op name
without its numeric suffix: `ynn_fusion`, `dot`, `multiply_add_fusion`, ...)
and prints one JSON line: wall seconds, ops per step, op time per step, the
chunk's FLOPs per step from XLA's cost analysis, and the top classes.

  python benchmarks/profile_chunk.py [--model meta_gnn] [--seeds 10] [--steps 100]

Op times are summed over threads, so they can exceed the wall time.
"""

import argparse
import collections
import glob
import gzip
import json
import os
import re
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import jax  # pylint: disable=g-import-not-at-top,wrong-import-position

from experiments.configs import sumfirst  # pylint: disable=wrong-import-position
from neuroprog.train import loop  # pylint: disable=wrong-import-position

_WRAPPERS = ("ThunkExecutor::Execute", "SlinkyThreadPool", "PjitFunction", "end: ")


def op_class(name):
  base = re.sub(r"[._]?\d+$", "", name)
  for prefix in ("dot", "ynn_fusion"):
    if base.startswith(prefix):
      return prefix
  return base


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--model", default="meta_gnn")
  ap.add_argument("--seeds", type=int, default=10)
  ap.add_argument("--steps", type=int, default=100)
  ap.add_argument("--top", type=int, default=12)
  args = ap.parse_args()
  config = sumfirst.get_config()
  config.seeds = args.seeds
  task = loop.build_task(config)
  tr = loop._Trainer(config, task, args.model)  # pylint: disable=protected-access
  state = tr.init()
  run = tr.chunk(args.steps)
  lowerable = run if hasattr(run, "lower") else jax.jit(run)
  cost = lowerable.lower(state, 0).compile().cost_analysis()
  cost = cost[0] if isinstance(cost, (list, tuple)) else cost
  jax.block_until_ready(run(state, 0))   # compile
  with tempfile.TemporaryDirectory() as tmp:
    t0 = time.perf_counter()
    with jax.profiler.trace(tmp, create_perfetto_trace=True):
      jax.block_until_ready(run(state, args.steps))
    wall = time.perf_counter() - t0
    path = glob.glob(os.path.join(tmp, "**", "*.trace.json.gz"), recursive=True)[0]
    with gzip.open(path) as f:
      trace = json.load(f)
  events = trace["traceEvents"] if isinstance(trace, dict) else trace
  time_us, count = collections.Counter(), collections.Counter()
  for e in events:
    name = e.get("name", "")
    if (e.get("ph") != "X" or "dur" not in e or name.startswith("$")
        or name.startswith(_WRAPPERS)):
      continue
    time_us[op_class(name)] += e["dur"]
    count[op_class(name)] += 1
  per_step = args.steps
  print(json.dumps({
      "bench": "profile_chunk", "model": args.model, "seeds": args.seeds,
      "steps": args.steps, "wall_s_traced": round(wall, 3),
      # The chunk is a loop: XLA's cost analysis counts its body once.
      "mflop_per_step": round(float(cost["flops"]) / 1e6, 1) if cost else None,
      "ops_per_step": round(sum(count.values()) / per_step, 1),
      "op_ms_per_step": round(sum(time_us.values()) / per_step / 1e3, 3),
      "top": [{"op": k, "ms_per_step": round(v / per_step / 1e3, 3),
               "calls_per_step": round(count[k] / per_step, 1)}
              for k, v in time_us.most_common(args.top)]}), flush=True)


if __name__ == "__main__":
  main()
