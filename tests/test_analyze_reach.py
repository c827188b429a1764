"""analyze_reach: a held-out prime's reach, the exact match split at it by
value, and the command on a tiny trained workdir."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import conftest
from experiments.pipelines import reach_report
from neuroprog import synthesis
from neuroprog.analysis import clock
from neuroprog.run import seeds as seeds_lib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_reach_is_the_largest_training_modulus_below():
  train = (2, 3, 5, 59, 67, 73, 79, 97)
  assert clock.reach(train, 83) == 79 and clock.reach(train, 89) == 79
  assert clock.reach(train, 71) == 67 and clock.reach(train, 2) == 0


def test_split_counts_a_pair_beyond_when_an_operand_or_the_answer_is():
  # p = 7, reach 4: (1, 2) -> 3 within; (5, 1) -> 6 beyond by a and y;
  # (3, 3) -> 6 beyond by y only; (6, 6) -> 5 beyond; one invalid row.
  x = np.array([[1, 2], [5, 1], [3, 3], [6, 6], [9, 9]])
  y = (x[:, 0] + x[:, 1]) % 7
  valid = np.array([True, True, True, True, False])
  pred = np.array([3, 6, 0, 5, 0])          # wrong only on (3, 3)
  s = clock.reach_split(pred, x, y, valid, 4)
  assert s.accuracy == 0.75 and s.within == 1.0 and s.beyond == pytest.approx(2 / 3)
  assert s.beyond_share == 0.75
  nothing_beyond = clock.reach_split(pred, x, y, valid, 6)
  assert np.isnan(nothing_beyond.beyond) and nothing_beyond.beyond_share == 0.0


@pytest.fixture(scope="module")
def addmod_workdir(tmp_path_factory):
  return conftest.train_tiny_addmod(str(tmp_path_factory.mktemp("addmod_reach")), seeds=2)


def test_command_on_a_tiny_workdir(addmod_workdir, tmp_path):
  r = reach_report.analyze(addmod_workdir, "meta_mlp")
  # The tiny config holds out 53 (validation), 83 and 89 (OOD).
  assert list(r["primes"]) == [53, 83, 89]
  assert [r["primes"][p]["reach"] for p in (53, 83, 89)] == [47, 79, 79]
  # At 89 with reach 79: the pairs with a, b or (a + b) mod 89 above 79.
  a, b = np.meshgrid(np.arange(89), np.arange(89), indexing="ij")
  beyond = np.maximum(np.maximum(a, b), (a + b) % 89) > 79
  assert r["primes"][89]["beyond_share"] == round(float(beyond.mean()), 4)
  run = synthesis.load_run(addmod_workdir, "meta_mlp")
  theta = np.asarray(run.model.apply(seeds_lib.take(run.params_S, 1),
                                     run.task.features([83])))[0]
  direct = clock.program_reach(run.task, theta, 83, 79)
  assert r["primes"][83]["seeds"][1]["accuracy"] == round(direct.accuracy, 4)
  assert r["primes"][83]["seeds"][1]["within"] == round(direct.within, 4)
  assert r["held_out_cap"] == round(float(np.mean(
      [1 - r["primes"][p]["beyond_share"] for p in (53, 83, 89)])), 4)
  with pytest.raises(ValueError, match=r"--primes \[97\] are not held-out primes"):
    reach_report.analyze(addmod_workdir, "meta_mlp", primes=[97])
  text = reach_report.markdown(r)
  assert "| 89 | 79 |" in text and "1 - share beyond" in text
  json.dumps(r)


@pytest.mark.slow
def test_command_prints_the_table_and_writes_the_json(addmod_workdir, tmp_path):
  out = tmp_path / "reach.json"
  proc = subprocess.run(
      [sys.executable, "-m", "experiments.analyze_reach", f"--workdir={addmod_workdir}",
       "--model=meta_mlp", "--primes=89", f"--out={out}"],
      capture_output=True, text=True, check=False, cwd=ROOT, timeout=600)
  assert proc.returncode == 0, proc.stderr[-2000:]
  written = json.loads(out.read_text())
  assert list(written["primes"]) == ["89"] and written["primes"]["89"]["reach"] == 79
  assert "| 89 | 79 |" in proc.stdout


def test_only_a_hypernetwork_of_an_addmod_run_is_analysed(addmod_workdir, monkeypatch):
  from experiments.pipelines import clock_report  # pylint: disable=g-import-not-at-top
  run = clock_report.hypernetwork_run(addmod_workdir, "meta_mlp")
  assert run.step == 4 and run.task.name == "addmod"
  # A model that emits no weights (the direct baseline) is refused by name.
  monkeypatch.setattr(synthesis, "load_run",
                      lambda *a, **k: run._replace(model=object()))
  with pytest.raises(ValueError, match=r"model 'direct' emits no weights to analyse"):
    reach_report.analyze(addmod_workdir, "direct")
