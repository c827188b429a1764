"""The results table and figure of a meta-training run."""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from neuroprog.run import seeds as seeds_lib
from neuroprog.train import refine as refine_lib


def _ms(values) -> str:
  v = np.asarray(values, float)
  return f"{v.mean():.3f} ± {v.std():.3f}" if v.size else "–"


SPLIT_NAMES = {"id": "ID", "val": "val", "ood": "OOD"}


def per_family(results: dict[str, Any]) -> dict[str, dict[str, dict[str, dict]]]:
  """{model: {family: {split: {"per_seed": [S], "mean", "std"}}}}.

  A family is the part of an intent's name before the first comma
  ("move_right,k=3" -> "move_right"). Per seed, the family's accuracy is the
  mean over its intents of that split; mean and std are over seeds. Splits a
  family has no intent in are left out.
  """
  out = {}
  for name, m in results["models"].items():
    fams = {}
    for split in SPLIT_NAMES:
      by_family = {}
      for intent, per_seed in m.get(split, {}).items():
        by_family.setdefault(intent.split(",")[0], []).append(per_seed)
      for fam, rows in by_family.items():
        seed_means = np.mean(np.asarray(rows, float), 0)     # [S]
        fams.setdefault(fam, {})[split] = {
            "per_seed": seed_means.tolist(), "mean": float(seed_means.mean()),
            "std": float(seed_means.std())}
    out[name] = fams
  return out


def family_table(results: dict[str, Any]) -> str:
  """Markdown: one row per (family, split), one column per model, cells
  'mean ± std' over seeds (`per_family`)."""
  fam = per_family(results)
  models = list(results["models"])
  families = sorted({f for m in fam.values() for f in m})
  lines = ["| family | split | " + " | ".join(models) + " |",
           "|" + "---|" * (len(models) + 2)]
  for f in families:
    for split, label in SPLIT_NAMES.items():
      cells = [fam[m].get(f, {}).get(split) for m in models]
      if all(c is None for c in cells):
        continue
      lines.append(f"| {f} | {label} | " + " | ".join(
          "–" if c is None else f"{c['mean']:.3f} ± {c['std']:.3f}" for c in cells) + " |")
  return "\n".join(lines)


def intent_table(results: dict[str, Any], split: str = "ood") -> str:
  """Markdown: one row per model and heuristic, one column per intent of
  `split` ("id", "val" or "ood"); a model's cell is 'mean ± std' over seeds, a
  heuristic's its one figure. "" when the split has no intents."""
  if split not in SPLIT_NAMES:
    raise ValueError(f"split {split!r} unknown; allowed: {list(SPLIT_NAMES)}.")
  intents = results["intents"]["train" if split == "id" else split]
  if not intents:
    return ""
  lines = ["| model | " + " | ".join(intents) + " |", "|" + "---|" * (len(intents) + 1)]
  for name, m in results["models"].items():
    lines.append(f"| {name} | " + " | ".join(_ms(m[split][i]) if i in m.get(split, {})
                                              else "–" for i in intents) + " |")
  for name, h in (results.get("heuristics") or {}).items():
    per_intent = h.get(split) or {}
    lines.append(f"| heuristic: {name} | " + " | ".join(
        f"{per_intent[i]:.3f}" if i in per_intent else "–" for i in intents) + " |")
  return "\n".join(lines)


def summary_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
  """Per model: ID/validation/OOD mean and std over seeds, OOD max, OOD of the
  seed that validation selects (None without validation intents)."""
  rows = []
  for name, r in results["models"].items():
    ood = np.asarray(r["ood_mean"])
    row = {"model": name, "params": r["num_params"], "seeds": len(r["seeds"]),
           "id": _ms(r["id_mean"]), "val": _ms(r["val_mean"]) if r["val_mean"] else None,
           "ood": _ms(r["ood_mean"]),
           "ood_max": float(ood.max()) if ood.size else None,
           "ood_val_selected": None}
    if r["val_mean"]:
      row["ood_val_selected"] = float(ood[seeds_lib.select_index(r["val_mean"], r["id_mean"])])
    rows.append(row)
  return rows


def markdown_table(results: dict[str, Any], task=None) -> str:
  rows = summary_rows(results)
  has_val = any(r["ood_val_selected"] is not None for r in rows)
  head = (["model", "params", "seeds", "ID mean ± std"]
          + (["val mean ± std"] if has_val else [])
          + ["OOD mean ± std", "OOD max over seeds"]
          + (["OOD of val-selected seed"] if has_val else []))
  lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
  for r in rows:
    cells = ([r["model"], f"{r['params']:,}", str(r["seeds"]), r["id"]]
             + ([r["val"] or "–"] if has_val else [])
             + [r["ood"], f"{r['ood_max']:.3f}" if r["ood_max"] is not None else "–"])
    if has_val:
      cells.append(f"{r['ood_val_selected']:.3f}" if r["ood_val_selected"] is not None
                   else "–")
    lines.append("| " + " | ".join(cells) + " |")
  fmt = lambda v: "–" if v is None else f"{v:.3f}"
  for name, h in (results.get("heuristics") or {}).items():
    # Deterministic rules: one figure per split, no seeds.
    cells = ([f"heuristic: {name}", "0", "–", "–"]
             + ([fmt(h.get("val_mean"))] if has_val else [])
             + [fmt(h.get("ood_mean")), "–"] + (["–"] if has_val else []))
    lines.append("| " + " | ".join(cells) + " |")
  if task is not None and task.name == "arc1d":
    lines += ["", "Per family (per seed the mean over the family's intents of that "
              "split; mean ± std over seeds):", "", family_table(results)]
  elif (results.get("intents") or {}).get("ood"):
    # Tasks with a handful of OOD intents (SUMFIRST's n, ADDMOD's primes): the
    # mean over them hides which intents fail, so each gets a column.
    lines += ["", "OOD per intent (mean ± std over seeds):", "",
              intent_table(results, "ood")]
  return "\n".join(lines)


def plot_by_intent(results: dict[str, Any], path: str) -> None:
  import matplotlib  # pylint: disable=g-import-not-at-top
  matplotlib.use("Agg")
  import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
  order = results["intents"]["train"] + results["intents"]["val"] + results["intents"]["ood"]
  ood = set(results["intents"]["ood"])
  fig, ax = plt.subplots(figsize=(max(6, 0.45 * len(order)), 4))
  xs = np.arange(len(order))
  for name, m in results["models"].items():
    acc = {**m["id"], **m["val"], **m["ood"]}
    mean = [np.mean(acc[k]) for k in order]
    std = [np.std(acc[k]) for k in order]
    ax.errorbar(xs, mean, yerr=std, marker="o", capsize=2, label=name)
  for i, k in enumerate(order):
    if k in ood:
      ax.axvspan(i - 0.4, i + 0.4, color="orange", alpha=0.15, lw=0)
  ax.set_xticks(xs)
  ax.set_xticklabels(order, rotation=60, ha="right", fontsize=8)
  ax.set_ylim(-0.02, 1.02)
  ax.set_ylabel("exact match (mean ± std over seeds)")
  ax.set_title(f"{results['task']}: accuracy per intent (shaded: OOD)")
  ax.legend(fontsize=8)
  fig.tight_layout()
  fig.savefig(path, dpi=120)
  plt.close(fig)


def write_all(workdir: str, task, results: dict[str, Any]) -> str:
  """results.json, results.md and ood_by_intent.png; returns the table."""
  if task is not None and task.name == "arc1d":
    results["per_family"] = per_family(results)
  with open(os.path.join(workdir, "results.json"), "w") as f:
    json.dump(results, f, indent=2)
  table = markdown_table(results, task)
  with open(os.path.join(workdir, "results.md"), "w") as f:
    target = (f"Target: `{json.dumps(results['spec'])}`.\n\n" if results.get("spec")
              else "")
    f.write(f"# {results['task']}\n\n{target}Exact match on fresh samples; ID = training "
            "intents, OOD = intents never trained on. 'OOD max over seeds' is the "
            "best seed chosen with test knowledge (an upper bound); "
            "'OOD of val-selected seed' picks the seed by validation intents. "
            "'heuristic:' rows are one-line rules that need no training "
            "(`Task.heuristics`), scored on the same held-out examples.\n\n")
    f.write(table + "\n")
    refined = {n: r for n, r in (results.get("refinement") or {}).items()
               if refine_lib.is_active(r)}
    if refined:
      f.write("\nPrograms chosen on or fitted to their own support pairs before they were "
              "scored (`train.refine`; the in-context model is never refined): " + "; ".join(
                  f"{n}: {refine_lib.describe(r)}" for n, r in refined.items()) + ".\n")
    if results.get("pending"):
      f.write(f"\nStill training (not in this table yet): {', '.join(results['pending'])}.\n")
  plot_by_intent(results, os.path.join(workdir, "ood_by_intent.png"))
  return table
