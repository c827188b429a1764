"""Which clock frequencies each seed's ADDMOD programs use, and whether its
programs still compute (a + b) mod m between the training primes.

  python -m experiments.analyze_spectrum --workdir=WORKDIR --model=meta_mlp \\
      [--step=N] [--primes=43,53,59,67,71,73,79,97] [--out=spectrum.json]

For every seed of `model` (a hypernetwork of a trained ADDMOD workdir, at its
newest checkpoint or at --step):
* per prime (training and validation primes only; default those >= 41), the
  two frequencies k of the token axis that carry most of W_E(p)'s power
  (`analysis.clock.frequency_power`): a program family whose k is fixed, or
  (p - 1) / 2, varies smoothly with p; one whose k grows with p must jump
  between neighbouring primes; and the exact match of its program on all p^2
  pairs (how well the seed fits that prime: a mean over all training primes
  can hide a large one that is not fitted), with where it fails (`clock.
  program_errors`: on pairs whose sum wraps or not, and the commonest offsets
  of a wrong answer, ±1 for a frequency-1 clock, ±2 at k = (p - 1) / 2);
* the exact match, on all m^2 pairs, of the programs it synthesizes for the
  odd composite moduli m that lie between two training or validation primes
  with no OOD prime between them (`interpolation_moduli`): moduli no run trains
  or scores, read to see whether a seed interpolates between its training
  intents. No OOD prime, and no modulus beside one, is synthesized.
Prints a markdown table; --out writes the numbers as JSON.
"""

from typing import Sequence

from absl import app
from absl import flags
import jax.numpy as jnp
import numpy as np

from experiments.pipelines import clock_report
from neuroprog.analysis import clock
from neuroprog.programs import layout
from neuroprog.run import logs
from neuroprog.run import seeds as seeds_lib

_WORKDIR = flags.DEFINE_string("workdir", None, "A trained ADDMOD workdir.")
_MODEL = flags.DEFINE_string("model", "meta_mlp", "The hypernetwork to analyse.")
_STEP = flags.DEFINE_integer("step", None, "A checkpoint step (default: the newest).")
_PRIMES = flags.DEFINE_list("primes", None, "Training or validation primes to show "
                            "(default: those >= 41).")
_OUT = flags.DEFINE_string("out", None, "Optional JSON output path.")
flags.mark_flags_as_required(["workdir"])


def interpolation_moduli(known: Sequence[int], ood: Sequence[int]) -> list[int]:
  """Odd composite m (m >= 9) strictly between two consecutive primes of `known`
  (training and validation) with no `ood` prime between those two."""
  known, ood = sorted(int(p) for p in known), [int(p) for p in ood]
  out = []
  for lo, hi in zip(known, known[1:]):
    if any(lo < q < hi for q in ood):
      continue
    out += [m for m in range(lo + 1, hi) if m % 2 and m >= 9
            and any(m % d == 0 for d in range(3, int(m ** 0.5) + 1, 2))]
  return out


def analyze(workdir: str, model: str, step=None, primes=None) -> dict:
  """{"step", "primes", "moduli", "seeds": {seed: {"top": {p: [[k, share],
  [k, share]]}, "fit": {p: exact match}, "errors": {p: {"wrap", "no_wrap",
  "offsets"}} (`clock.program_errors`), "moduli": {m: exact match},
  "moduli_mean"}}} for every seed
  of `model` in `workdir` (see the module docstring)."""
  run = clock_report.hypernetwork_run(workdir, model, step)
  task = run.task
  known = sorted(set(task.train_intents) | set(task.val_intents))
  if primes is None:
    primes = [p for p in known if p >= 41]
  bad = [p for p in primes if p not in known]
  if bad:
    raise ValueError(f"--primes {bad} are not training or validation primes of this run; "
                     f"allowed: {known}.")
  moduli = interpolation_moduli(known, task.ood_intents)
  feats_p = jnp.asarray(task.features(primes))
  # Composite moduli are no intents of the task: their features come from the
  # same formula, without the intent check.
  feats_m = jnp.asarray(np.stack([task.intent_features(m) for m in moduli]))
  out = {"step": int(run.step), "primes": list(map(int, primes)), "moduli": moduli, "seeds": {}}
  for s, seed in enumerate(run.seeds):
    params = seeds_lib.take(run.params_S, s)
    theta_p = np.asarray(run.model.apply(params, feats_p))
    w_e = np.asarray(layout.unflatten(task.spec, theta_p)["embed/tok"])
    top = {}
    for j, p in enumerate(primes):
      share = clock.frequency_power(w_e[j], int(p))
      top[int(p)] = [[int(k) + 1, round(float(share[k]), 3)] for k in np.argsort(-share)[:2]]
    thetas = np.asarray(run.model.apply(params, feats_m))
    acc = {m: round(clock.program_accuracy(task, thetas[i], m), 4)
           for i, m in enumerate(moduli)}
    errors = {int(p): clock.program_errors(task, theta_p[j], int(p))
              for j, p in enumerate(primes)}
    out["seeds"][int(seed)] = {
        "top": top, "fit": {p: round(e.accuracy, 4) for p, e in errors.items()},
        "errors": {p: {"wrap": round(e.wrap_error, 4), "no_wrap": round(e.no_wrap_error, 4),
                       "offsets": e.offsets} for p, e in errors.items()},
        "moduli": acc,
                               "moduli_mean": round(float(np.mean(list(acc.values()))), 4)}
  return out


def markdown(result: dict) -> str:
  primes, moduli = result["primes"], result["moduli"]
  lines = [f"Step {result['step']}. Frequency k (share of W_E(p)'s power) of the two "
           "strongest, per training or validation prime; exact match of the programs for "
           f"the odd composite moduli {moduli} between them.", "",
           "| seed | " + " | ".join(f"p={p}" for p in primes) + " | moduli mean | "
           + " | ".join(f"m={m}" for m in moduli) + " |",
           "|---" * (2 + len(primes) + len(moduli)) + "|"]
  for seed, r in result["seeds"].items():
    cells = [", ".join(f"{k} ({v:.2f})" for k, v in r["top"][p]) for p in primes]
    lines.append(f"| {seed} | " + " | ".join(cells) + f" | {r['moduli_mean']:.3f} | "
                 + " | ".join(f"{r['moduli'][m]:.2f}" for m in moduli) + " |")
  lines += ["", "Exact match of each seed's program on all p^2 pairs of each shown prime "
            "(share wrong where a + b wraps / where it does not; the commonest offsets d "
            "of a wrong answer, prediction = y + d mod p):", "",
            "| seed | " + " | ".join(f"p={p}" for p in primes) + " |",
            "|---" * (1 + len(primes)) + "|"]
  for seed, r in result["seeds"].items():
    cells = []
    for p in primes:
      e = r["errors"][p]
      off = ", ".join(f"{d:+d}" for d in list(e["offsets"])[:2])
      cells.append(f"{r['fit'][p]:.3f} ({e['wrap']:.2f} / {e['no_wrap']:.2f}"
                   + (f"; {off}" if off else "") + ")")
    lines.append(f"| {seed} | " + " | ".join(cells) + " |")
  return "\n".join(lines)


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Too many command-line arguments: {argv[1:]}")
  logs.setup_from_flags()
  primes = None if _PRIMES.value is None else [int(p) for p in _PRIMES.value]
  result = analyze(_WORKDIR.value, _MODEL.value, _STEP.value, primes)
  clock_report.print_and_write(result, markdown(result), _OUT.value)


if __name__ == "__main__":
  app.run(main)
