"""How high can a 1D-ARC OOD mean go while the unseen recolour targets stay unsolved?

  python benchmarks/arc1d_ood_ceiling.py WORKDIR [WORKDIR ...] [--paper 0.713]

The OOD mean weighs every OOD intent equally. An OOD intent "recolor,k=c"
whose colour c is the target of no training recolour intent asks for an
output rule no training intent shows; the paper reports such a target as
unlearnable for every model. This reads each workdir's results.json (no
training, no evaluation) and prints one JSON line per model:
  - ood_mean, ood_std: the OOD mean over all intents (as results.md has it);
  - unseen_recolour: those intents, with each one's best seed's accuracy;
  - ceiling: the OOD mean a model reaches with every other OOD intent at 1.0
    and the unseen recolours at their best seed's accuracy in this run;
  - ood_without_unseen_recolour_mean / _std: the mean over the other OOD
    intents, per seed, then mean ± std over seeds;
  - needed_on_others: what the other intents would have to average for the
    OOD mean to reach --paper, with the recolours as measured (above 1.0:
    unreachable without solving an unseen recolour).
The split is read from results.json's intent lists, not from the accuracies,
so which intents count as unseen recolours does not depend on any result.
"""

import argparse
import json
import os

import numpy as np


def unseen_recolours(intents: dict) -> list[str]:
  """OOD intents 'recolor,k=c' whose c no training recolour intent has."""
  trained = {name for name in intents["train"] if name.startswith("recolor,")}
  return [name for name in intents["ood"]
          if name.startswith("recolor,") and name not in trained]


def ceiling_rows(results: dict, paper: float) -> list[dict]:
  """One record per model of results.json (see the module docstring)."""
  if results.get("task") != "arc1d":
    raise ValueError(f"task {results.get('task')!r}: this reads 1D-ARC results only "
                     "(task 'arc1d').")
  ood = results["intents"]["ood"]
  unseen = unseen_recolours(results["intents"])
  others = [name for name in ood if name not in unseen]
  rows = []
  for model, r in results["models"].items():
    acc_SxI = np.asarray([r["ood"][name] for name in ood], np.float64).T
    best = {name: float(np.max(r["ood"][name])) for name in unseen}
    recolour_sum = sum(best.values())
    row = {"model": model, "seeds": int(acc_SxI.shape[0]), "ood_intents": len(ood),
           "ood_mean": round(float(acc_SxI.mean(1).mean()), 4),
           "ood_std": round(float(acc_SxI.mean(1).std()), 4),
           "unseen_recolour": {k: round(v, 4) for k, v in best.items()},
           "ceiling": round((len(others) + recolour_sum) / len(ood), 4)}
    if others:
      idx = [ood.index(name) for name in others]
      per_seed = acc_SxI[:, idx].mean(1)
      row["ood_without_unseen_recolour_mean"] = round(float(per_seed.mean()), 4)
      row["ood_without_unseen_recolour_std"] = round(float(per_seed.std()), 4)
      row["needed_on_others"] = round((paper * len(ood) - recolour_sum) / len(others), 4)
    rows.append(row)
  return rows


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  ap.add_argument("workdirs", nargs="+")
  ap.add_argument("--paper", type=float, default=0.713,
                  help="the OOD mean to compare with (the paper's Meta-GNN: 0.713)")
  args = ap.parse_args()
  for workdir in args.workdirs:
    path = os.path.join(workdir, "results.json")
    if not os.path.exists(path):
      raise SystemExit(f"{path}: no results.json; pass a finished 1D-ARC workdir.")
    with open(path) as f:
      results = json.load(f)
    for row in ceiling_rows(results, args.paper):
      print(json.dumps({"bench": "arc1d_ood_ceiling", "workdir": workdir,
                        "paper": args.paper, **row}))


if __name__ == "__main__":
  main()
