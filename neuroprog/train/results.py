"""The results table and figure of a meta-training run."""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from neuroprog.run import seeds as seeds_lib


def _ms(values) -> str:
  v = np.asarray(values, float)
  return f"{v.mean():.3f} ± {v.std():.3f}" if v.size else "–"


def summary_rows(results: dict[str, Any]) -> list[dict[str, Any]]:
  """Per model: ID/OOD mean and std over seeds, OOD max, OOD of the seed
  that validation selects (None without validation intents)."""
  rows = []
  for name, r in results["models"].items():
    ood = np.asarray(r["ood_mean"])
    row = {"model": name, "params": r["num_params"], "seeds": len(r["seeds"]),
           "id": _ms(r["id_mean"]), "ood": _ms(r["ood_mean"]),
           "ood_max": float(ood.max()) if ood.size else None,
           "ood_val_selected": None}
    if r["val_mean"]:
      row["ood_val_selected"] = float(ood[seeds_lib.select_index(r["val_mean"], r["id_mean"])])
    rows.append(row)
  return rows


def markdown_table(results: dict[str, Any], task=None) -> str:
  rows = summary_rows(results)
  has_val = any(r["ood_val_selected"] is not None for r in rows)
  head = ["model", "params", "seeds", "ID mean ± std", "OOD mean ± std",
          "OOD max over seeds"] + (["OOD of val-selected seed"] if has_val else [])
  lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
  for r in rows:
    cells = [r["model"], f"{r['params']:,}", str(r["seeds"]), r["id"], r["ood"],
             f"{r['ood_max']:.3f}" if r["ood_max"] is not None else "–"]
    if has_val:
      cells.append(f"{r['ood_val_selected']:.3f}")
    lines.append("| " + " | ".join(cells) + " |")
  if task is not None and task.name == "arc1d":
    lines += ["", "Per family (mean over seeds; ID / OOD):", ""]
    fams = sorted({k.split(",")[0] for m in results["models"].values()
                   for k in list(m["id"]) + list(m["ood"])})
    lines.append("| model | " + " | ".join(fams) + " |")
    lines.append("|" + "---|" * (len(fams) + 1))
    for name, m in results["models"].items():
      cells = []
      for f in fams:
        parts = []
        for split in ("id", "ood"):
          vals = [np.mean(v) for k, v in m[split].items() if k.split(",")[0] == f]
          parts.append(f"{np.mean(vals):.2f}" if vals else "–")
        cells.append(" / ".join(parts))
      lines.append(f"| {name} | " + " | ".join(cells) + " |")
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
  with open(os.path.join(workdir, "results.json"), "w") as f:
    json.dump(results, f, indent=2)
  table = markdown_table(results, task)
  with open(os.path.join(workdir, "results.md"), "w") as f:
    target = (f"Target: `{json.dumps(results['spec'])}`.\n\n" if results.get("spec")
              else "")
    f.write(f"# {results['task']}\n\n{target}Exact match on fresh samples; ID = training "
            "intents, OOD = intents never trained on. 'OOD max over seeds' is the "
            "best seed chosen with test knowledge (an upper bound); "
            "'OOD of val-selected seed' picks the seed by validation intents.\n\n")
    f.write(table + "\n")
  plot_by_intent(results, os.path.join(workdir, "ood_by_intent.png"))
  return table
