"""End-to-end: the clock analysis command on a tiny ADDMOD workdir; bad workdirs."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import conftest

from experiments.configs import test as test_config
from experiments.pipelines import clock_report as report
from neuroprog.run import workdir as workdir_lib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def addmod_workdir(tmp_path_factory):
  return conftest.train_tiny_addmod(str(tmp_path_factory.mktemp("addmod")))


@pytest.mark.slow
def test_command_writes_figures_and_numbers(addmod_workdir, tmp_path):
  out = str(tmp_path / "clock")
  proc = subprocess.run(
      [sys.executable, "-m", "experiments.analyze_clock",
       f"--workdir={addmod_workdir}", f"--out={out}"],
      cwd=ROOT, capture_output=True, text=True, timeout=600)
  assert proc.returncode == 0, proc.stderr[-3000:]
  assert "| meta_mlp |" in proc.stdout and "paper (Meta-GNN)" in proc.stdout
  for f in ("clock_p83.png", "clock_grid.png", "pc1_vs_p.png", "analysis.json"):
    assert os.path.getsize(os.path.join(out, f)) > 0, f
  res = json.load(open(os.path.join(out, "analysis.json")))
  m = res["models"]["meta_mlp"]
  assert m["held_out_primes"] == [53, 83, 89]
  assert set(m["clocks"]) == {"83", "89"}
  assert 1 <= m["clocks"]["83"]["frequency"] <= 41
  assert 0.0 <= m["clocks"]["83"]["score"] <= 1.0
  assert len(m["trajectory"]["pc1"]) == 25
  acc = m["closed_form_accuracy"]
  assert len(acc) == 25 and set(acc["83"]) == {
      "synthesized", "pca_k1", "pca_k2", "pca_k4", "closed_k1", "closed_k2", "closed_k4"}
  assert all(0.0 <= v <= 1.0 for r in acc.values() for v in r.values())
  # The synthesized accuracy here is the same exact-match the main job
  # reports (on all p^2 pairs rather than a sample): a 4-step model is near
  # chance, 1/p on average.
  assert np.mean([r["synthesized"] for r in acc.values()]) < 0.5


def _addmod_config_json():
  c = test_config.get_config()
  c.update(task="addmod", models=("meta_mlp",), model_configs={"meta_mlp": {"hidden": 8}},
           learning_rates={"meta_mlp": 1e-3}, ood_intents=("p=83",), val_intents=())
  return json.loads(workdir_lib.config_json(c))


def test_bad_workdirs_are_named(tmp_path):
  with pytest.raises(ValueError, match="does not exist"):
    report.analyze_workdir(str(tmp_path / "nope"), str(tmp_path / "o"))
  empty = tmp_path / "empty"
  empty.mkdir()
  with pytest.raises(ValueError, match="no config.json"):
    report.analyze_workdir(str(empty), str(tmp_path / "o"))
  other = tmp_path / "sumfirst"
  other.mkdir()
  (other / "config.json").write_text(json.dumps({"task": "sumfirst", "models": ["meta_mlp"]}))
  with pytest.raises(ValueError, match="needs an ADDMOD"):
    report.analyze_workdir(str(other), str(tmp_path / "o"))
  nockpt = tmp_path / "nockpt"
  nockpt.mkdir()
  (nockpt / "config.json").write_text(json.dumps(_addmod_config_json()))
  with pytest.raises(ValueError, match="no model 'meta_gnn'"):
    report.analyze_workdir(str(nockpt), str(tmp_path / "o"), ["meta_gnn"])
  with pytest.raises(ValueError, match="'direct' emits no weights|no model 'direct'"):
    report.analyze_workdir(str(nockpt), str(tmp_path / "o"), ["direct"])
  with pytest.raises(ValueError, match="no checkpoint"):
    report.analyze_workdir(str(nockpt), str(tmp_path / "o"), plots=False)
