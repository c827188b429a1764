"""Compile time of the hypernetworks' init, with and without batched draws.

For each task and hypernetwork (library defaults: d = 64, k = 3 for
Meta-GNN): the seconds to compile `jax.jit(net.init)` drawing each tensor on
its own, and drawing them batched (`neuroprog.meta.batched_init`), the number
of random-bits draws traced in each, whether both give bit-identical parameters,
and the wall seconds of the first eager `model.init` (compile included), as
a notebook user waits for it. One JSON line per (task, model).

  python benchmarks/bench_init.py [--tasks sumfirst,addmod] [--models meta_gmlp,meta_gnn]
"""

import argparse
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # pylint: disable=g-import-not-at-top,wrong-import-position

from neuroprog import meta, tasks  # pylint: disable=g-import-not-at-top,wrong-import-position
from neuroprog.meta import batched_init  # pylint: disable=wrong-import-position


def _compile(fn, key):
  t0 = time.perf_counter()
  compiled = jax.jit(fn).lower(key).compile()
  return compiled, time.perf_counter() - t0


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--tasks", default="sumfirst,addmod")
  ap.add_argument("--models", default="meta_gmlp,meta_gnn")
  args = ap.parse_args()
  key = jax.random.key(0)
  for task_name in args.tasks.split(","):
    task = tasks.get(task_name)
    u = jnp.asarray(task.features(task.train_intents))
    for name in args.models.split(","):
      model = meta.create(name, task.spec, task.feature_dim)
      plain = lambda k: model.net.init(k, u[:1])["params"]  # pylint: disable=cell-var-from-loop
      batched = lambda k: batched_init.batched(model.net.init, k, u[:1])["params"]  # pylint: disable=cell-var-from-loop
      c_plain, s_plain = _compile(plain, key)
      c_batched, s_batched = _compile(batched, key)
      same = all(np.array_equal(a, b) for a, b in zip(
          jax.tree_util.tree_leaves(c_plain(key)), jax.tree_util.tree_leaves(c_batched(key))))
      t0 = time.perf_counter()
      common.block(model.init(jax.random.key(1), u))
      eager = time.perf_counter() - t0
      common.emit({
          "bench": "init", "task": task_name, "model": name,
          "tensors": len(jax.tree_util.tree_leaves(c_plain(key))),
          "random_bits_calls_plain": batched_init.random_bits_calls(plain, key),
          "random_bits_calls_batched": batched_init.random_bits_calls(batched, key),
          "compile_s_plain": round(s_plain, 2), "compile_s_batched": round(s_batched, 2),
          "bit_identical": bool(same), "eager_init_s": round(eager, 2),
          **common.machine()})


if __name__ == "__main__":
  main()
