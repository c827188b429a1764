"""The results table: per-family summaries of a 1D-ARC run, by hand."""
import numpy as np

from neuroprog import tasks
from neuroprog.train import results as results_lib

# Two seeds. move_right has two training intents, a validation and an OOD one.
RESULTS = {
    "task": "arc1d",
    "models": {
        "meta_gnn": {
            "num_params": 1000, "seeds": [0, 1],
            "id": {"flip": [1.0, 0.8], "move_right,k=1": [1.0, 1.0],
                   "move_right,k=2": [0.6, 0.8]},
            "val": {"move_right,k=4": [0.5, 0.1]},
            "ood": {"move_right,k=3": [0.9, 0.3]},
            "id_mean": [0.8666667, 0.8666667], "val_mean": [0.5, 0.1],
            "ood_mean": [0.9, 0.3],
        },
    },
}


def test_per_family_means_over_intents_then_seeds():
  fam = results_lib.per_family(RESULTS)["meta_gnn"]
  assert set(fam) == {"flip", "move_right"}
  assert set(fam["flip"]) == {"id"}                       # no val/OOD intent of flip
  mr = fam["move_right"]
  np.testing.assert_allclose(mr["id"]["per_seed"], [0.8, 0.9])   # (1.0+0.6)/2, (1.0+0.8)/2
  np.testing.assert_allclose([mr["id"]["mean"], mr["id"]["std"]], [0.85, 0.05])
  np.testing.assert_allclose([mr["ood"]["mean"], mr["ood"]["std"]], [0.6, 0.3])
  np.testing.assert_allclose([mr["val"]["mean"], mr["val"]["std"]], [0.3, 0.2])


def test_markdown_has_validation_column_and_family_rows():
  md = results_lib.markdown_table(RESULTS, tasks.get("arc1d"))
  assert "| val mean ± std |" in md.splitlines()[0]
  # Seed 0 has the higher validation accuracy, so its OOD 0.900 is reported.
  assert md.splitlines()[2].endswith("| 0.300 ± 0.200 | 0.600 ± 0.300 | 0.900 | 0.900 |")
  assert "| move_right | OOD | 0.600 ± 0.300 |" in md
  assert "| move_right | val | 0.300 ± 0.200 |" in md
  assert "| flip | ID | 0.900 ± 0.100 |" in md
  assert "| flip | OOD |" not in md


def test_results_md_names_every_active_refinement(tmp_path):
  # A search with no steps counts; an old results.json entry (no search keys,
  # 0 steps) does not.
  refinement = {"meta_gnn": {"steps": 0, "learning_rate": 0.01, "target": "theta",
                             "gate": "always", "search_families": 3, "search_radius": 1},
                "meta_mlp": {"steps": 0, "learning_rate": 0.01, "target": "theta"}}
  results_lib.write_all(str(tmp_path), tasks.get("arc1d"),
                        {**RESULTS, "refinement": refinement,
                         "intents": {"train": ["flip", "move_right,k=1", "move_right,k=2"],
                                     "val": ["move_right,k=4"], "ood": ["move_right,k=3"]}})
  with open(tmp_path / "results.md") as f:
    md = f.read()
  assert ("before they were scored (`train.refine`; the in-context model is never refined): "
          "meta_gnn: the intent searched over the readout's 3 best families (parameters +-1) "
          "on the support pairs.\n") in md


def test_addmod_results_md_has_a_column_per_ood_prime():
  results = {
      "task": "addmod", "intents": {"train": ["p=5"], "val": [], "ood": ["p=23", "p=89"]},
      "models": {"meta_gnn": {
          "num_params": 10, "seeds": [0, 1], "id": {"p=5": [1.0, 1.0]}, "val": {},
          "ood": {"p=23": [0.9, 0.7], "p=89": [0.5, 0.1]},
          "id_mean": [1.0, 1.0], "val_mean": [], "ood_mean": [0.7, 0.4]}},
      "heuristics": {"a + b": {"ood": {"p=23": 0.5, "p=89": 0.25}, "ood_mean": 0.375}}}
  md = results_lib.markdown_table(results, tasks.get("addmod"))
  block = md.split("OOD per intent (mean ± std over seeds):\n\n")[1].splitlines()
  assert block[0] == "| model | p=23 | p=89 |"
  assert block[2] == "| meta_gnn | 0.800 ± 0.100 | 0.300 ± 0.200 |"
  assert block[3] == "| heuristic: a + b | 0.500 | 0.250 |"
  assert results_lib.intent_table(results, "val") == ""
