"""Support refinement at evaluation: its steps on every support set against
only on the sets the gate may change (`train.refine.refined_theta_per_seed`),
on a trained example-intent workdir.

A gated refinement ("support_wrong", "held_out") keeps the synthesized
program of every set it does not refine; `refine.needs_refinement` marks the
sets whose program it may change, and only those are refined. This measures
what that saves and checks that it scores the same: for each model, the same
support sets and queries (drawn as `loop.Trainer.evaluate` draws them, for the
first --intents intents of the split) are scored through

  full:    `refine.refined_theta` on all B sets, vmapped over seeds, one jit
           (the evaluation path before the compaction);
  compact: `refine.refined_theta_per_seed` (forward passes on all sets, the
           steps on the marked ones, gathered per seed).

Each path is timed on its first call (compilation included, as an evaluation
pays it once per split) and on a second call. Training and validation intents
only (--split id or val).

  PYTHONPATH=. python benchmarks/bench_refine.py --workdir=DIR \\
      [--models=meta_mlp,meta_gmlp,meta_gnn] [--split=id] [--intents=8]

One JSON line per model: gate, search families, sets B, the share of sets
marked per seed, seconds of both paths (first and second call) and their
ratio, exact match of both (mean over seeds and intents) and the largest
difference between them over (seed, intent), and the machine's fp32 matmul
rate measured in the same run.
"""

import argparse
import json
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks import common  # pylint: disable=g-import-not-at-top,wrong-import-position
from neuroprog.programs import executor as execute_lib  # pylint: disable=wrong-import-position
from neuroprog.train import loop, refine  # pylint: disable=wrong-import-position
from neuroprog.train import step as step_lib  # pylint: disable=wrong-import-position

SPLITS = ("id", "val")


def timed(fn, *args):
  t0 = time.perf_counter()
  out = common.block(fn(*args))
  return out, time.perf_counter() - t0


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  parser.add_argument("--workdir", required=True)
  parser.add_argument("--models", default="meta_mlp,meta_gmlp,meta_gnn")
  parser.add_argument("--split", default="id")
  parser.add_argument("--intents", type=int, default=8)
  args = parser.parse_args(argv)
  if args.split not in SPLITS:
    raise SystemExit(f"--split={args.split!r}; allowed: {list(SPLITS)} (no OOD intent is "
                     "read here).")
  if args.intents < 1:
    raise SystemExit(f"--intents={args.intents}; allowed: an int >= 1.")
  config = loop.read_run_config(args.workdir)
  if config.get("intent") != "examples":
    raise SystemExit(f"--workdir {args.workdir}: intent {config.get('intent')!r}; needs a "
                     "workdir trained on example intents.")
  task = loop.build_task(config)
  intents = {"id": task.train_intents, "val": task.val_intents}[args.split][:args.intents]
  gflops = common.matmul_gflops()
  for name in args.models.split(","):
    trainer = loop.Trainer(config, task, name)
    refinement = loop.refinement_of(config, name)
    if not (refine.is_active(refinement) and refine.can_refine(trainer.model)):
      print(json.dumps({"model": name, "skipped": "no active refinement"}), flush=True)
      continue
    _, state = trainer.restore(args.workdir)
    params_S = state.params
    model = trainer.model
    n = int(config.get("eval_examples"))
    draws = min(loop.EVAL_SUPPORT_DRAWS, n)
    feats_r = jnp.tile(jnp.asarray(task.features(intents)), (draws, 1))
    ip_r = jnp.tile(jnp.asarray(task.intent_params(intents)), (draws, 1))
    support, x, y = step_lib.draw(model, task, jax.random.key(0), feats_r, ip_r, n // draws)

    @jax.jit
    def exact(theta_S):
      def one(theta_BxT):
        out = jax.vmap(execute_lib.execute, (None, 0, 0))(model.spec, theta_BxT, x)
        return task.exact_match(out, y, ip_r).mean(-1).reshape(draws, -1).mean(0)
      return jax.vmap(one)(theta_S)

    full = jax.jit(jax.vmap(lambda p, s: refine.refined_theta(model, task, p, s, refinement),
                            (0, None)))
    compact = lambda p, s: refine.refined_theta_per_seed(model, task, p, s, refinement)
    _, needs_S = jax.jit(jax.vmap(lambda p, s: refine.needs_refinement(
        model, task, p, s, refinement), (0, None)))(params_S, support)
    row = {"model": name, "split": args.split, "intents": len(intents),
           "sets": int(support.mask.shape[0]), "gate": refinement.gate,
           "steps": refinement.steps, "search_families": refinement.search_families,
           "marked_share": np.round(np.asarray(needs_S).mean(1), 3).tolist()}
    acc = {}
    for label, fn in (("full", full), ("compact", compact)):
      theta_S, first = timed(fn, params_S, support)
      _, second = timed(fn, params_S, support)
      acc[label] = np.asarray(exact(theta_S))
      row.update({f"{label}_first_s": round(first, 2), f"{label}_second_s": round(second, 2),
                  f"{label}_exact": round(float(acc[label].mean()), 4)})
    row["ratio_first"] = round(row["full_first_s"] / row["compact_first_s"], 2)
    row["ratio_second"] = round(row["full_second_s"] / row["compact_second_s"], 2)
    row["max_exact_diff"] = round(float(np.abs(acc["full"] - acc["compact"]).max()), 4)
    row["matmul_gflops"] = round(gflops, 1)
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
  main()
