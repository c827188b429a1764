"""The conditional PNAG search experiment on NAS-Bench-201 (leave-one-dataset-out).

Run by `python -m experiments.search`; `run(config, workdir)` from a notebook.

For every target dataset in `config.targets` (nothing about the target is
trained on):

1. Stage 1 once, on every NB201 cell (the autoencoder never sees accuracies).
2. A surrogate meta-trained on the validation accuracies of the other datasets
   (`pnag.surrogate.leave_one_out`).
3. A conditional generator (stage 2) on the same other datasets: each
   training cell is conditioned on [level features; task context], where the
   level is the cell's validation-accuracy percentile within one training
   dataset and the context is the surrogate's set encoding of a random support
   set of that dataset; `uncond_prob` of the rows train the null condition
   (classifier-free guidance).
4. For each evaluation seed: a support set of `support_size` target cells
   with their *validation* accuracies (what a user has measured), the task
   context from it, `num_candidates` samples at `search_level` with guidance
   `guidance`, the surrogate's ranking of the valid unique candidates, and
   `lookups` = m look-ups of the top-ranked ones (if m > 1 the one with the
   best validation accuracy is kept). The chosen cell's *test* accuracy and
   its rank among all 15,625 are reported, beside three baselines on the same
   seeds and support sets (`pnag.search`): (a) zero-shot transfer (the best
   summed validation percentile on the source datasets, no target
   evaluation), (b) random search with as many target evaluations as PNAG
   (support + look-ups), (c) the surrogate alone ranking every enumerated
   cell with the same support set. Also: the surrogate's Spearman,
   Kendall and top-1% precision over the whole space, and the control curve
   (mean test accuracy of `control_samples` samples at each of `levels`).

Writes workdir/results.json, results.md, config.json, metrics.jsonl and orbax
checkpoints of every stage (a rerun resumes).
"""

import dataclasses
import json
import os
import time
from typing import Any

import jax
import ml_collections
import numpy as np

from neuroprog.pnag import data
from neuroprog.pnag import model as model_lib
from neuroprog.pnag import search
from neuroprog.pnag import surrogate as sur_lib
from neuroprog.pnag import train as pnag_train
from neuroprog.run import checkpoint
from neuroprog.run import workdir as workdir_lib
from neuroprog.run.logs import logger
from neuroprog.run.metrics import MetricWriter

SURROGATE_KEYS = tuple(f.name for f in dataclasses.fields(sur_lib.SurrogateConfig))
# The search's config: the PNAG keys it uses, plus its own (one place).
SCHEMA = pnag_train.SCHEMA.extend("conditional PNAG search", {
    "space": "nb201",
    "table": None,              # path of the accuracy table; None: the shared CSV
    "targets": ("cifar10", "cifar100", "imagenet16-120"),
    "surrogate": {},            # SurrogateConfig fields
    "contexts_per_task": 32,    # support sets per training dataset for stage 2
    "uncond_prob": 0.1,
    "guidance": 2.0,
    "search_level": 1.0,
    "num_candidates": 1000,
    "lookups": 1,
    "levels": (0.1, 0.3, 0.5, 0.7, 0.9),
    "control_samples": 1000,
    "eval_seeds": 5,
}, drop=("train_fraction", "train_size", "heldout_size", "num_samples", "sample_seed",
         "top_k"),
   positive_ints=("contexts_per_task", "num_candidates", "lookups", "control_samples",
                  "eval_seeds"),
   sub_keys={"surrogate": SURROGATE_KEYS})


def default_config(**values) -> ml_collections.ConfigDict:
  """A search ConfigDict with every key: the defaults, then `values`."""
  return SCHEMA.default_config(**values)


def _get(config, key):
  return SCHEMA.get(config, key)


def validate_config(config) -> None:
  """ValueError for unknown keys and bad values, before any work."""
  SCHEMA.validate(config)
  if _get(config, "space") != "nb201":
    raise ValueError(f"config.space={config.space!r}; conditional search runs on "
                     "'nb201' (the space with an accuracy table).")
  if "cond_dim" in dict(_get(config, "gen")):
    raise ValueError("config.gen.cond_dim is set by the search (level features + "
                     "surrogate.context_dim); remove it.")
  targets = tuple(_get(config, "targets"))
  bad = [t for t in targets if t not in data.DATASETS]
  if bad or not targets:
    raise ValueError(f"config.targets={targets}: each must be one of {list(data.DATASETS)}.")
  for k in ("uncond_prob",):
    if not 0 <= _get(config, k) < 1:
      raise ValueError(f"config.{k} must lie in [0, 1), got {_get(config, k)!r}.")
  for lv in tuple(_get(config, "levels")) + (_get(config, "search_level"),):
    if not 0 <= lv <= 1:
      raise ValueError(f"levels and search_level are percentiles in [0, 1]; got {lv!r}.")
  sur_lib.SurrogateConfig(**dict(_get(config, "surrogate")))


def _surrogate(workdir, target, sur_cfg, table, keep, writer):
  """The leave-one-out surrogate of `target`, trained or restored from
  workdir/checkpoints/surrogate_<target>."""
  mngr = checkpoint.manager(os.path.join(workdir, "checkpoints", f"surrogate_{target}"), keep)
  return sur_lib.leave_one_out(table, target, sur_cfg, manager=mngr, writer=writer)


def _mean_std(xs):
  """Summary over seeds; None entries (failed searches) are left out and counted."""
  ok = np.asarray([x for x in xs if x is not None], np.float64)
  if not ok.size:
    return {"mean": None, "std": None, "min": None, "max": None, "values": list(xs),
            "failed": len(xs)}
  return {"mean": float(ok.mean()), "std": float(ok.std()), "min": float(ok.min()),
          "max": float(ok.max()), "values": list(xs), "failed": len(xs) - int(ok.size)}


def run(config, workdir: str, *, extend: bool = False) -> dict[str, Any]:
  """The whole conditional pipeline (module doc). Returns results.json's dict.

  A rerun on the same workdir resumes every stage; a workdir of another
  config is refused (`extend=True` accepts larger ae_steps / gen_steps).
  """
  validate_config(config)
  path = _get(config, "table") or data.default_csv()
  if path is None:
    raise ValueError("config.table is None and the shared NAS-Bench-201 CSV "
                     "(../shared/data/nas-bench-201/nb201_hp12_accuracy.csv) is absent; "
                     "set --config.table=PATH to a CSV or an official benchmark file.")
  table = data.load_nb201(path)
  sur_cfg = sur_lib.SurrogateConfig(**{"seed": _get(config, "seed"),
                                       **dict(_get(config, "surrogate"))})
  base = ml_collections.ConfigDict({k: v for k, v in config.items()
                                    if k in pnag_train.SCHEMA.keys})
  space, ae_cfg, gen_cfg = pnag_train.build(base)
  gen_cfg = dataclasses.replace(
      gen_cfg, cond_dim=search.NUM_LEVEL_FEATURES + sur_cfg.context_dim)
  workdir_lib.prepare(workdir, config, step_keys=pnag_train.STEP_KEYS, extend=extend)
  ops, adj = table.encodings
  t_start = time.time()
  results = {"table": table.source, "space": space.name, "targets": {}}
  with MetricWriter(workdir) as writer:
    ae_state, _ = pnag_train.train_stage1(config, ae_cfg, ops, adj, workdir, writer)
    ae = model_lib.autoencoder_for(ae_cfg)
    codebook = ae.codebook_of(ae_state)
    for target in _get(config, "targets"):
      others = [d for d in table.datasets if d != target]
      sur = _surrogate(workdir, target, sur_cfg, table, _get(config, "keep_checkpoints"),
                       writer)
      acc_tr = np.stack([table.accuracy(d, "val") for d in others])
      pct = np.stack([search.percentiles(a) for a in acc_tr])
      bank = search.context_bank(sur, ops, adj, acc_tr, _get(config, "contexts_per_task"),
                                 _get(config, "seed"))
      gen_params, _ = pnag_train.train_stage2(
          config, ae_cfg, gen_cfg, ae_state, ops, adj, workdir, writer,
          name=f"stage2_{target}",
          cond_fn=search.make_cond_fn(pct, bank, _get(config, "uncond_prob")))
      model = model_lib.PNAG(space, ae_cfg, gen_cfg, ae_state.params, codebook, gen_params)
      results["targets"][target] = evaluate_target(config, model, sur, table, target, others)
      logger.info("%s: %s", target, json.dumps(_summary_line(results["targets"][target])))
  results["wall_time_s"] = round(time.time() - t_start, 1)
  with open(os.path.join(workdir, "results.json"), "w") as f:
    json.dump(results, f, indent=1)
  with open(os.path.join(workdir, "results.md"), "w") as f:
    f.write(markdown(results) + "\n")
  return results


def evaluate_target(config, model, sur, table, target, others) -> dict[str, Any]:
  """Surrogate ranking, search and control curve over `eval_seeds` seeds."""
  ops, adj = table.encodings
  val, test = table.accuracy(target, "val"), table.accuracy(target, "test")
  rank, picks, curves = [], [], []
  baselines = {"zero_shot": [], "random": [], "surrogate": []}
  for seed in range(_get(config, "eval_seeds")):
    rng = np.random.default_rng([_get(config, "seed"), seed, 23])
    sidx = sur_lib.support_indices(rng, len(table), sur.cfg.support_size)
    rank.append(sur_lib.evaluate(sur, ops, adj, val, test, sidx))
    baselines["zero_shot"].append(search.zero_shot_transfer(table, target, others))
    baselines["random"].append(search.random_search(
        table, target, sidx, _get(config, "lookups"),
        np.random.default_rng([_get(config, "seed"), seed, 29])))
    baselines["surrogate"].append(search.surrogate_search(sur, table, target, sidx,
                                                          _get(config, "lookups")))
    key = jax.random.fold_in(jax.random.key(_get(config, "seed") + 1000), seed)
    picks.append(search.search(model, sur, table, target, sidx, key,
                        level=_get(config, "search_level"),
                        num_candidates=_get(config, "num_candidates"),
                        lookups=_get(config, "lookups"), guidance=_get(config, "guidance"),
                        temperature=_get(config, "temperature")))
    curves.append(search.control_curve(model, sur, table, target, sidx,
                                jax.random.fold_in(key, 1), levels=_get(config, "levels"),
                                n=_get(config, "control_samples"),
                                guidance=_get(config, "guidance"),
                                temperature=_get(config, "temperature")))
  levels = list(_get(config, "levels"))
  curve_mean = [float(np.mean([c[i]["mean_test_accuracy"] for c in curves]))
                for i in range(len(levels))]
  return {
      "trained_on": others,
      "surrogate": {"spearman": _mean_std([r.spearman for r in rank]),
                    "kendall": _mean_std([r.kendall for r in rank]),
                    "precision_top1": _mean_std([r.precision_top1 for r in rank])},
      "search": {"test_accuracy": _mean_std([p["test_accuracy"] for p in picks]),
                 "top_fraction": _mean_std([p["top_fraction"] for p in picks]),
                 "within_top1": int(sum(p["top_fraction"] is not None
                                        and p["top_fraction"] <= 0.01 for p in picks)),
                 "within_top5": int(sum(p["top_fraction"] is not None
                                        and p["top_fraction"] <= 0.05 for p in picks)),
                 "picks": picks},
      "methods": {name: _method_summary(p) for name, p in
                  (("zero_shot", baselines["zero_shot"]), ("random", baselines["random"]),
                   ("surrogate", baselines["surrogate"]), ("pnag", picks))},
      "best_test_accuracy": float(test.max()),
      "control": {"levels": levels, "mean_test_accuracy": curve_mean,
                  "per_seed": curves,
                  "monotonic": bool(np.all(np.diff(curve_mean) > 0)),  # nan: False
                  "monotonic_per_seed": int(sum(
                      np.all(np.diff([c["mean_test_accuracy"] for c in cv]) > 0)
                      for cv in curves))},
      "seeds": int(_get(config, "eval_seeds")),
  }


# The comparison table's rows, in order: the three baselines, then PNAG.
METHODS = {
    "zero_shot": "(a) zero-shot transfer: best summed val percentile on the sources",
    "random": "(b) random search, same target evaluations",
    "surrogate": "(c) surrogate ranks every cell, same support",
    "pnag": "(d) PNAG: conditioned generator, surrogate ranks its samples",
}


def _method_summary(picks):
  """Per method: test accuracy and rank share of the pick over seeds, the
  evaluations used, and the picks."""
  return {"test_accuracy": _mean_std([p["test_accuracy"] for p in picks]),
          "top_fraction": _mean_std([p["top_fraction"] for p in picks]),
          "evaluations": int(max(p["evaluations"] for p in picks)),
          "picks": [p["index"] for p in picks],
          # per seed: the cells whose target validation accuracy it read
          "evaluated": [p["evaluated"] for p in picks]}


def winner(methods) -> str:
  """The method with the best mean test accuracy of its pick (ties: the
  one with fewer evaluations, then the earlier row)."""
  ok = {k: m for k, m in methods.items() if m["test_accuracy"]["mean"] is not None}
  return min(ok, key=lambda k: (-round(ok[k]["test_accuracy"]["mean"], 6),
                                ok[k]["evaluations"], list(METHODS).index(k)))


def _summary_line(r):
  return {"rho": r["surrogate"]["spearman"]["mean"],
          "top_fraction": r["search"]["top_fraction"]["values"],
          "test_acc": r["search"]["test_accuracy"]["values"],
          "baselines_test_acc": {k: m["test_accuracy"]["mean"] for k, m in r["methods"].items()},
          "control": r["control"]["mean_test_accuracy"]}


def markdown(results) -> str:
  """results.md: one row per target."""
  lines = ["| target (trained on) | surrogate rho / tau / P@1% | chosen test acc (best in table) "
           "| rank share mean (worst) | seeds in top 1% / top 5% | lookups | control: mean test "
           "acc per level | monotonic |",
           "|---|---|---|---|---|---|---|---|"]
  for t, r in results["targets"].items():
    s, q, c = r["surrogate"], r["search"], r["control"]
    pick = q["picks"][0]
    acc, frac = q["test_accuracy"], q["top_fraction"]
    chosen = ("no valid candidate" if acc["mean"] is None else
              f"{acc['mean']:.2f} +- {acc['std']:.2f}")
    share = ("-" if frac["mean"] is None else
             f"{100 * frac['mean']:.2f}% ({100 * frac['max']:.2f}%)")
    failed = f", {acc['failed']} failed" if acc["failed"] else ""
    lines.append(
        f"| {t} ({', '.join(r['trained_on'])}) | {s['spearman']['mean']:.3f} / "
        f"{s['kendall']['mean']:.3f} / {s['precision_top1']['mean']:.3f} | "
        f"{chosen} ({r['best_test_accuracy']:.2f}) | {share} | "
        f"{q['within_top1']} / {q['within_top5']} of {r['seeds']}{failed} | "
        f"{pick['lookups']} (+{pick['support_evaluations']} support) | "
        + ", ".join(f"{lv:g}: {v:.2f}" for lv, v in zip(c["levels"], c["mean_test_accuracy"]))
        + f" | {c['monotonic']} |")
  lines += ["", "Against the baselines (same seeds and support sets; test accuracy of the "
            "pick, its rank share among all cells, target evaluations used):", ""]
  for t, r in results["targets"].items():
    lines += [f"**{t}** (best in table {r['best_test_accuracy']:.2f}; winner: "
              f"{winner(r['methods'])})", "",
              "| method | test acc of pick (mean +- std) | rank share mean (worst) | "
              "evaluations |", "|---|---|---|---|"]
    for k, label in METHODS.items():
      m = r["methods"][k]
      acc, frac = m["test_accuracy"], m["top_fraction"]
      if acc["mean"] is None:
        lines.append(f"| {label} | no pick | - | {m['evaluations']} |")
        continue
      lines.append(f"| {label} | {acc['mean']:.2f} +- {acc['std']:.2f} | "
                   f"{100 * frac['mean']:.3f}% ({100 * frac['max']:.3f}%) | "
                   f"{m['evaluations']} |")
    lines.append("")
  return "\n".join(lines)

