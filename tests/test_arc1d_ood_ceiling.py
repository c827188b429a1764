"""benchmarks/arc1d_ood_ceiling.py: the OOD mean a model can reach while the
unseen recolour targets stay unsolved, from a results.json alone."""
import json
import os
import subprocess
import sys

import pytest

from benchmarks import arc1d_ood_ceiling

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _results():
  """Two seeds; OOD: two shifts, one recolour whose colour a training recolour
  intent has (k=3, a hand-made split), one it has not (k=4)."""
  return {"task": "arc1d",
          "intents": {"train": ["flip", "recolor,k=1", "recolor,k=3"],
                      "val": ["move_right,k=4"],
                      "ood": ["move_right,k=3", "recolor,k=4", "scale,k=3", "recolor,k=3"]},
          "models": {"meta_gnn": {"ood": {"move_right,k=3": [0.5, 0.7],
                                          "recolor,k=4": [0.0, 0.02],
                                          "scale,k=3": [0.3, 0.1],
                                          "recolor,k=3": [0.9, 0.9]}}}}


def test_ceiling_counts_only_recolours_no_training_intent_targets():
  (row,) = arc1d_ood_ceiling.ceiling_rows(_results(), paper=0.713)
  assert arc1d_ood_ceiling.unseen_recolours(_results()["intents"]) == ["recolor,k=4"]
  assert row["unseen_recolour"] == {"recolor,k=4": 0.02}
  # Seed means over the 4 intents: (0.5 + 0 + 0.3 + 0.9) / 4 = 0.425 and
  # (0.7 + 0.02 + 0.1 + 0.9) / 4 = 0.43.
  assert row["ood_mean"] == pytest.approx(0.4275)
  assert row["ood_std"] == pytest.approx(0.0025)
  assert row["ceiling"] == pytest.approx((3 + 0.02) / 4)
  # Without recolor,k=4: (0.5 + 0.3 + 0.9) / 3 and (0.7 + 0.1 + 0.9) / 3.
  assert row["ood_without_unseen_recolour_mean"] == pytest.approx(1.7 / 3, abs=1e-4)
  assert row["ood_without_unseen_recolour_std"] == pytest.approx(0.0, abs=1e-4)
  assert row["needed_on_others"] == pytest.approx((0.713 * 4 - 0.02) / 3, abs=1e-4)


def test_other_tasks_and_missing_results_are_refused(tmp_path):
  with pytest.raises(ValueError, match="task 'addmod': this reads 1D-ARC results only"):
    arc1d_ood_ceiling.ceiling_rows({**_results(), "task": "addmod"}, paper=0.713)
  p = subprocess.run([sys.executable, "benchmarks/arc1d_ood_ceiling.py", str(tmp_path)],
                     cwd=ROOT, capture_output=True, text=True, timeout=120)
  assert p.returncode != 0 and "no results.json" in p.stderr
  with open(tmp_path / "results.json", "w") as f:
    json.dump(_results(), f)
  p = subprocess.run([sys.executable, "benchmarks/arc1d_ood_ceiling.py", str(tmp_path),
                      "--paper", "0.5"], cwd=ROOT, capture_output=True, text=True,
                     timeout=120)
  assert p.returncode == 0, p.stderr
  line = json.loads(p.stdout)
  assert line["model"] == "meta_gnn" and line["paper"] == 0.5
  assert line["needed_on_others"] == pytest.approx((0.5 * 4 - 0.02) / 3, abs=1e-4)
