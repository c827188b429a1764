"""Where a trained ADDMOD run's programs fail on held-out primes, split at
each prime's reach (the largest training modulus below it). Run by `python -m
experiments.analyze_reach`; `analyze` and `markdown` from a notebook. The
arithmetic is `neuroprog.analysis.clock` (`reach`, `program_reach`).
"""

import jax.numpy as jnp
import numpy as np

from experiments.pipelines import clock_report
from neuroprog.analysis import clock
from neuroprog.run import seeds as seeds_lib


def analyze(workdir: str, model: str, step=None, primes=None) -> dict:
  """{"step", "primes": {p: {"reach", "beyond_share", "seeds": {seed:
  {"accuracy", "within", "beyond"}}, "mean": {...}, "std": {...}}},
  "held_out_cap"} for `model` in `workdir` (see the module docstring);
  held_out_cap: the mean over the shown primes of 1 - beyond_share."""
  run = clock_report.hypernetwork_run(workdir, model, step)
  task = run.task
  held_out = list(task.val_intents) + list(task.ood_intents)
  primes = held_out if primes is None else [int(p) for p in primes]
  bad = [p for p in primes if p not in held_out]
  if bad:
    raise ValueError(f"--primes {bad} are not held-out primes of this run; allowed: "
                     f"{held_out} (its validation and OOD primes).")
  feats = jnp.asarray(task.features(primes))
  thetas_S = [np.asarray(run.model.apply(seeds_lib.take(run.params_S, s), feats))
              for s in range(len(run.seeds))]
  fields = ("accuracy", "within", "beyond")
  out = {"step": int(run.step), "model": model, "primes": {}}
  for j, p in enumerate(primes):
    r = clock.reach(task.train_intents, p)
    splits = {int(seed): clock.program_reach(task, thetas_S[s][j], p, r)
              for s, seed in enumerate(run.seeds)}
    values = {f: np.array([getattr(x, f) for x in splits.values()]) for f in fields}
    out["primes"][int(p)] = {
        "reach": r, "beyond_share": round(next(iter(splits.values())).beyond_share, 4),
        "seeds": {seed: {f: round(getattr(x, f), 4) for f in fields}
                  for seed, x in splits.items()},
        "mean": {f: round(float(values[f].mean()), 4) for f in fields},
        "std": {f: round(float(values[f].std()), 4) for f in fields}}
  out["held_out_cap"] = round(float(np.mean(
      [1.0 - v["beyond_share"] for v in out["primes"].values()])), 4)
  return out


def markdown(result: dict) -> str:
  lines = [f"{result['model']}, step {result['step']}: exact match (mean ± std over seeds) "
           "on all p^2 pairs, on the pairs whose a, b and y are all <= the reach r (the "
           "largest training modulus below p), and on the pairs beyond it.", "",
           "| p | reach r | pairs beyond r | all | within r | beyond r | 1 - share beyond |",
           "|---|---|---|---|---|---|---|"]
  for p, v in result["primes"].items():
    m, s = v["mean"], v["std"]
    cells = [f"{m[f]:.3f} ± {s[f]:.3f}" for f in ("accuracy", "within", "beyond")]
    lines.append(f"| {p} | {v['reach']} | {v['beyond_share']:.3f} | " + " | ".join(cells)
                 + f" | {1 - v['beyond_share']:.3f} |")
  lines += ["", f"Mean over the shown primes of 1 - share beyond: {result['held_out_cap']:.3f} "
            "(every pair beyond reach wrong, every other right)."]
  return "\n".join(lines)
