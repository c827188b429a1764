"""The clock analysis of every hypernetwork of a trained ADDMOD workdir.

Run by `python -m experiments.analyze_clock`; `analyze_workdir` from a
notebook. The analysis itself is `neuroprog.analysis.clock`.
"""

import json
import os
from typing import Optional, Sequence

import jax.numpy as jnp
import numpy as np

from neuroprog import meta, synthesis
from neuroprog.analysis import clock
from neuroprog.programs import layout
from neuroprog.run import seeds as seeds_lib
from neuroprog.train import loop

# The paper's figures for Meta-GNN on ADDMOD (p = 83 unseen), for the tables.
PAPER = {"trajectory": {"a": 23.43, "b": 5.672, "c": 3.631, "r2": 0.94},
         "note": "W_E(83) forms a clock; PC1(p) = 23.43 cos(5.672/p + 3.631), "
                 "R^2 > 0.94"}
WORKED_PRIME = 83


def read_addmod_config(workdir: str):
  """The run config of an ADDMOD workdir; ValueError naming any other task."""
  config = loop.read_run_config(workdir)
  if config.get("task") != "addmod":
    raise ValueError(f"{workdir!r} is a {config.get('task')!r} workdir; the "
                     "clock analysis needs an ADDMOD one (task 'addmod').")
  return config


def hypernetwork_run(workdir: str, model: str, step: Optional[int] = None) -> synthesis.Run:
  """The run of hypernetwork `model` in an ADDMOD workdir (`synthesis.load_run`,
  newest checkpoint or `step`); ValueError for another task's workdir or for
  the direct baseline, which emits no weights to analyse."""
  read_addmod_config(workdir)
  run = synthesis.load_run(workdir, model, step)
  if not isinstance(run.model, meta.Hypernetwork):
    raise ValueError(f"model {model!r} emits no weights to analyse; choose a hypernetwork.")
  return run


def print_and_write(result: dict, text: str, out: Optional[str], indent: int = 1) -> None:
  """Prints an analysis command's markdown `text` and, with `out`, writes its
  `result` there as JSON."""
  print(text)
  if out:
    with open(out, "w") as f:
      json.dump(result, f, indent=indent)


def generated_embeddings(workdir: str, model: str, seed: Optional[int] = None):
  """(task, seed, step, {p: θ(p) float32[T]}, {p: W_E(p) float32[V, D]}) for
  every prime p < 100, from the workdir's latest checkpoint of `model`.

  seed: a seed value of the run; None: the validation-selected one.
  """
  run = hypernetwork_run(workdir, model)
  seed = synthesis.select_seed(workdir, model) if seed is None else seed
  params = seeds_lib.take(run.params_S, seeds_lib.index_of(run.seeds, seed))
  task = run.task
  primes = list(task.intents)
  thetas = np.asarray(run.model.apply(params, jnp.asarray(task.features(primes))))
  w_e = np.asarray(layout.unflatten(task.spec, jnp.asarray(thetas))["embed/tok"])
  return task, seed, run.step, dict(zip(primes, thetas)), dict(zip(primes, w_e))


def _clock_json(fit: clock.ClockFit) -> dict:
  return {"frequency": fit.frequency, "score": fit.score, "r2": fit.r2,
          "explained_variance_top2": [float(v) for v in fit.explained_variance[:2]],
          "explained_variance_sum2": float(fit.explained_variance[:2].sum())}


def _trajectory_json(fit: clock.TrajectoryFit) -> dict:
  return {"a": fit.a, "b": fit.b, "c": fit.c, "d": fit.d,
          # b at the grid's lower bound: the cosine is in its linear regime, i.e.
          # PC1 is (close to) linear in 1/p and a, d carry no separate meaning.
          "linear_regime": bool(fit.b <= clock.B_MIN * 1.001),
          "r2_train": fit.r2_train, "r2_ood": fit.r2_ood, "r2_all": fit.r2_all,
          "explained_variance": fit.explained_variance.tolist(),
          "cos_params": fit.cos_params.tolist(), "cos_r2": fit.cos_r2.tolist(),
          "poly_coeffs": fit.poly_coeffs.tolist(), "poly_r2": fit.poly_r2.tolist(),
          "rows": fit.rows, "pc1": dict(zip(map(str, fit.primes.tolist()),
                                          fit.scores[:, 0].tolist()))}


def analyze_workdir(workdir: str, out: str, models: Optional[Sequence[str]] = None,
                    *, seed: Optional[int] = None, num_components: int = 4,
                    ks: Sequence[int] = (1, 2, 4), rows: str = "all",
                    plots: bool = True) -> dict:
  """Runs the clock analysis for each model and writes `out`/analysis.json and
  the figures clock_p83.png, clock_grid.png and pc1_vs_p.png.

  Args:
    workdir: an ADDMOD workdir of `experiments.synthesize`.
    out: output directory (created).
    models: hypernetworks to analyse; None = every non-direct model trained.
    seed: which seed (a seed value of the run); None = the validation-selected one.
    num_components, ks, rows: see `clock.global_trajectory` and
      `clock.closed_form_program`.

  Returns: the analysis.json dict.
  """
  config = read_addmod_config(workdir)
  trained = list(config.get("models", ()))
  if models is None:
    models = [m for m in trained if meta.base_name(m) != "direct"]
  for m in models:
    if m not in trained:
      raise ValueError(f"{workdir!r} has no model {m!r}; it trained {trained}.")
    if meta.base_name(m) == "direct":
      raise ValueError(f"model {m!r} emits no weights; analyse a hypernetwork among "
                       f"{[t for t in trained if meta.base_name(t) != 'direct']}.")
  if not models:
    raise ValueError(f"{workdir!r} trained no hypernetwork ({trained}).")
  os.makedirs(out, exist_ok=True)
  result = {"workdir": os.path.abspath(workdir), "paper": PAPER, "models": {}}
  fits = {}
  for m in models:
    task, seed_m, step, thetas, w_e = generated_embeddings(workdir, m, seed)
    held_out = sorted(set(task.ood_intents) | set(task.val_intents))
    clock_primes = sorted(set([WORKED_PRIME]) | set(task.ood_intents))
    clocks = {p: clock.embedding_pca(w_e[p], p) for p in clock_primes}
    traj = clock.global_trajectory(w_e, ood=held_out, num_components=num_components,
                                   rows=rows)
    acc = clock.closed_form_program(traj, thetas, task, ks=ks)
    groups = {"train": list(task.train_intents), "ood": list(task.ood_intents),
              "val": list(task.val_intents)}
    summary = {g: {key: float(np.mean([acc[p][key] for p in ps]))
                   for key in acc[ps[0]]} for g, ps in groups.items() if ps}
    result["models"][m] = {
        "seed": seed_m, "step": step, "held_out_primes": held_out,
        "clocks": {str(p): _clock_json(f) for p, f in clocks.items()},
        "trajectory": _trajectory_json(traj),
        "closed_form_accuracy": {str(p): r for p, r in acc.items()},
        "closed_form_summary": summary}
    fits[m] = (clocks, traj, task)
  with open(os.path.join(out, "analysis.json"), "w") as f:
    json.dump(result, f, indent=1)
  if plots:
    _plot_all(fits, out)
  return result


def _plot_all(fits, out):
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use("Agg")
  from matplotlib import pyplot as plt  # pylint: disable=g-import-not-at-top
  names = list(fits)
  fig, axes = plt.subplots(1, len(names), figsize=(4.5 * len(names), 4.5), squeeze=False)
  for ax, m in zip(axes[0], names):
    clocks = fits[m][0]
    f = clocks[WORKED_PRIME]
    clock.plot_clock(ax, f, WORKED_PRIME, title=f"{m}: W_E(83), f={f.frequency}, "
                     f"score={f.score:.2f}, R2={f.r2:.2f}")
  fig.tight_layout()
  fig.savefig(os.path.join(out, "clock_p83.png"), dpi=150)
  plt.close(fig)

  ood = sorted(fits[names[0]][2].ood_intents)
  fig, axes = plt.subplots(len(names), len(ood), figsize=(3 * len(ood), 3 * len(names)),
                           squeeze=False)
  for r, m in enumerate(names):
    for c, p in enumerate(ood):
      f = fits[m][0][p]
      clock.plot_clock(axes[r, c], f, p, title=f"{m} p={p}: f={f.frequency}, "
                       f"s={f.score:.2f}")
  fig.tight_layout()
  fig.savefig(os.path.join(out, "clock_grid.png"), dpi=130)
  plt.close(fig)

  fig, axes = plt.subplots(1, len(names), figsize=(5 * len(names), 4), squeeze=False)
  for ax, m in zip(axes[0], names):
    clock.plot_trajectory(ax, fits[m][1], label=m)
  fig.tight_layout()
  fig.savefig(os.path.join(out, "pc1_vs_p.png"), dpi=150)
  plt.close(fig)


def markdown(result: dict) -> str:
  """A short table of the analysis (per model), paper figures beside."""
  lines = ["| model | p=83 clock score (f) | p=83 top-2 var | OOD clock score mean "
           "| PC1 fit a, b, c | R2 train / OOD / all | closed form k=1 acc (train / OOD) |",
           "|---|---|---|---|---|---|---|"]
  for m, r in result["models"].items():
    c83 = r["clocks"][str(WORKED_PRIME)]
    ood_scores = [r["clocks"][str(p)]["score"] for p in r["held_out_primes"]
                  if str(p) in r["clocks"]]
    t = r["trajectory"]
    s = r["closed_form_summary"]
    k1 = lambda g: s.get(g, {}).get("closed_k1", float("nan"))
    lines.append(
        f"| {m} | {c83['score']:.3f} ({c83['frequency']}) | "
        f"{c83['explained_variance_sum2']:.3f} | {np.mean(ood_scores):.3f} | "
        f"{t['a']:.2f}, {t['b']:.3f}, {t['c']:.3f} | {t['r2_train']:.3f} / "
        f"{t['r2_ood']:.3f} / {t['r2_all']:.3f} | {k1('train'):.3f} / {k1('ood'):.3f} |")
  lines.append("| paper (Meta-GNN) | clock | - | - | 23.43, 5.672, 3.631 | > 0.94 | - |")
  return "\n".join(lines)
