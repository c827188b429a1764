"""Throughput of `execute` for the three default specs.

B = 64 programs x 256 inputs each, one jitted vmap over programs. Prints one
JSON line: programs x examples per second per spec, and the machine's fp32
matmul GFLOP/s measured in the same run.

  python benchmarks/bench_execute.py [--programs 64] [--examples 256]
"""

import argparse
import os
import sys

import jax
import jax.numpy as jnp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # pylint: disable=g-import-not-at-top,wrong-import-position

import neuroprog  # pylint: disable=g-import-not-at-top,wrong-import-position


def inputs(spec, key, programs, examples):
  shape = (programs, examples)
  if isinstance(spec, neuroprog.MLPSpec):
    return jax.random.normal(key, shape + (spec.d_in,))
  if isinstance(spec, neuroprog.TransformerSpec):
    return jax.random.randint(key, shape + (spec.seq_len,), 0, spec.vocab_size)
  return jax.random.randint(key, shape + (spec.max_len,), 0, spec.vocab_size)


def main():
  ap = argparse.ArgumentParser()
  ap.add_argument("--programs", type=int, default=64)
  ap.add_argument("--examples", type=int, default=256)
  args = ap.parse_args()
  record = {"bench": "execute", "programs": args.programs,
            "examples": args.examples, **common.machine()}
  for task in ("sumfirst", "addmod", "arc1d"):
    spec = neuroprog.default_spec(task)
    thetas = jax.vmap(lambda k, s=spec: neuroprog.init_theta(s, k))(
        jax.random.split(jax.random.key(0), args.programs))
    x = inputs(spec, jax.random.key(1), args.programs, args.examples)
    run = jax.jit(jax.vmap(lambda t, xx, s=spec: neuroprog.execute(s, t, xx)))
    sec = common.time_call(run, thetas, x)
    record[f"{task}_program_examples_per_s"] = round(
        args.programs * args.examples / sec, 1)
    record[f"{task}_flops_per_call"] = common.flops_of(run, thetas, x)
  record["matmul_fp32_gflops"] = round(common.matmul_gflops(), 1)
  common.emit(record)


if __name__ == "__main__":
  main()
