"""Where a compiled training step spends its time, by XLA op class.

Traces one compiled chunk of the SUMFIRST default config's training step, or
with --meta_task the bench_meta step of a task (8 intents x 128 examples,
d = 64, k = 3), with `jax.profiler` (Perfetto trace); sums op durations by
class (the op name without its numeric suffix: `ynn_fusion`, `dot`,
`multiply_add_fusion`, ...) and by thread, and prints one JSON line: wall
seconds, ops per step, op time per step, each thread's busy time per step,
the FLOPs per step from XLA's cost analysis, and the top classes. With
--meta_task it also measures the two rates that bound that step: an fp32
matmul of one edge layer's shape ([E * B, 64] x [64, 64]) in GFLOP/s, and an
element-wise pass (x * 2 + 1) over an array of that shape in GB/s moved.

  python benchmarks/profile_chunk.py [--model meta_gnn] [--seeds 10] [--steps 100]
  python benchmarks/profile_chunk.py --meta_task addmod [--steps 3]

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

sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import jax  # pylint: disable=g-import-not-at-top,wrong-import-position

import bench_meta  # pylint: disable=wrong-import-position
import common  # pylint: disable=wrong-import-position
from experiments.configs import sumfirst  # pylint: disable=wrong-import-position
from neuroprog import graphs, tasks  # pylint: disable=wrong-import-position
from neuroprog.train import loop  # pylint: disable=wrong-import-position

_WRAPPERS = ("ThunkExecutor::Execute", "SlinkyThreadPool", "PjitFunction", "end: ")


def op_class(name):
  base = re.sub(r"[._]?\d+$", "", name)
  for prefix in ("dot", "ynn_fusion"):
    if base.startswith(prefix):
      return prefix
  return base


def _chunk(model, seeds, steps):
  """(run, warm, state, cost): run(state) traces `steps` steps of the SUMFIRST
  job's chunk, warm(state) compiles it."""
  config = sumfirst.get_config()
  config.seeds = seeds
  task = loop.build_task(config)
  tr = loop.Trainer(config, task, model)
  state = tr.init()
  run = lambda state, start: tr.chunk(state, start, steps)
  lowerable = run if hasattr(run, "lower") else jax.jit(run)
  cost = lowerable.lower(state, 0).compile().cost_analysis()
  # The chunk is a loop: XLA's cost analysis counts its body once.
  return (lambda st: run(st, steps)), (lambda st: run(st, 0)), state, cost


def _meta_step(task_name, model, steps):
  """(run, warm, state, cost) as `_chunk`, for bench_meta's step."""
  step, state, key, _ = bench_meta.build_step(task_name, model)
  cost = step.lower(state, key).compile().cost_analysis()

  def run(st):
    for _ in range(steps):
      st = step(st, key)[0]
    return st
  return run, lambda st: step(st, key), state, cost


def _bounding_rates(rows):
  """GFLOP/s of [rows, 64] x [64, 64] and GB/s of an element-wise pass."""
  x = jax.random.normal(jax.random.key(0), (rows, 64))
  w = jax.random.normal(jax.random.key(1), (64, 64))
  mm = common.time_call(jax.jit(lambda a, b: a @ b), x, w, min_time=1.0)
  ew = common.time_call(jax.jit(lambda a: a * 2 + 1), x, min_time=1.0)
  return {"edge_rows": rows, "edge_matmul_gflops": round(2 * rows * 64 * 64 / mm / 1e9, 1),
          "elementwise_gb_per_s": round(2 * x.size * 4 / ew / 1e9, 1),
          "matmul_fp32_gflops": round(common.matmul_gflops(), 1)}


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--model", default="meta_gnn")
  ap.add_argument("--seeds", type=int, default=10)
  ap.add_argument("--steps", type=int, default=None,
                  help="steps traced (default: 100 for a chunk, 3 with --meta_task)")
  ap.add_argument("--meta_task", default=None,
                  help="profile bench_meta's step on this task instead of the SUMFIRST chunk")
  ap.add_argument("--top", type=int, default=12)
  args = ap.parse_args()
  steps = args.steps or (3 if args.meta_task else 100)
  if args.meta_task:
    run, warm, state, cost = _meta_step(args.meta_task, args.model, steps)
  else:
    run, warm, state, cost = _chunk(args.model, args.seeds, steps)
  cost = cost[0] if isinstance(cost, (list, tuple)) else cost
  jax.block_until_ready(warm(state))   # compile
  with tempfile.TemporaryDirectory() as tmp:
    t0 = time.perf_counter()
    with jax.profiler.trace(tmp, create_perfetto_trace=True):
      jax.block_until_ready(run(state))
    wall = time.perf_counter() - t0
    path = glob.glob(os.path.join(tmp, "**", "*.trace.json.gz"), recursive=True)[0]
    with gzip.open(path) as f:
      trace = json.load(f)
  events = trace["traceEvents"] if isinstance(trace, dict) else trace
  time_us, count, thread_us = (collections.Counter() for _ in range(3))
  for e in events:
    name = e.get("name", "")
    if (e.get("ph") != "X" or "dur" not in e or name.startswith("$")
        or name.startswith(_WRAPPERS)):
      continue
    time_us[op_class(name)] += e["dur"]
    count[op_class(name)] += 1
    thread_us[(e.get("pid"), e.get("tid"))] += e["dur"]
  record = {
      "bench": "profile_chunk", "model": args.model,
      "source": f"bench_meta step, {args.meta_task}" if args.meta_task else "sumfirst chunk",
      "seeds": 1 if args.meta_task else args.seeds,
      "steps": steps, "wall_s_traced": round(wall, 3),
      "mflop_per_step": round(float(cost["flops"]) / 1e6, 1) if cost else None,
      "ops_per_step": round(sum(count.values()) / steps, 1),
      "op_ms_per_step": round(sum(time_us.values()) / steps / 1e3, 3),
      # threads that ran ops for at least 1% of the traced wall time
      "thread_busy_ms_per_step": sorted(
          (round(v / steps / 1e3, 1) for v in thread_us.values() if v > 1e4 * wall),
          reverse=True),
      "top": [{"op": k, "ms_per_step": round(v / steps / 1e3, 3),
               "calls_per_step": round(count[k] / steps, 1)}
              for k, v in time_us.most_common(args.top)]}
  if args.meta_task:
    record.update(_bounding_rates(_edge_rows(args.meta_task)))
  print(json.dumps({**record, **common.machine()}), flush=True)


def _edge_rows(task_name):
  """E x B of the bench_meta step (B = 8 intents): the rows of one edge layer."""
  return graphs.neural_graph(tasks.get(task_name).spec, "orbit").num_edges * 8


if __name__ == "__main__":
  main()
