"""Scoring a trained 1D-ARC workdir on tasks in the official layout.

Slow (make test-slow): the tiny workdir's training compiles the seq2seq
target's train and evaluation steps for two models, minutes on 2 cores."""
import json
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import neuroprog
from experiments.pipelines import eval_arc1d
from neuroprog import synthesis
from neuroprog.tasks.arc1d import io
from neuroprog.train import loop
from tests.conftest import require_shared

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def arc_workdir(tmp_path_factory):
  """A 2-step arc1d run of a tiny Meta-MLP and direct model."""
  workdir = str(tmp_path_factory.mktemp("arc") / "w")
  config = loop.default_config(
      task="arc1d", models=("meta_mlp", "direct"),
      model_configs={"meta_mlp": {"hidden": 4}, "direct": {"d_model": 8, "n_layers": 1}},
      ood_intents=("move_right,k=3", "scale,k=3"), val_intents=("move_right,k=4",),
      seeds=2, steps=2, examples_per_intent=2, eval_examples=4, log_every=1,
      checkpoint_every=2)
  loop.train_and_evaluate(config, workdir)
  return workdir


@pytest.fixture(scope="module")
def arc_data(tmp_path_factory):
  root = tmp_path_factory.mktemp("data")
  key = jax.random.key(0)
  io.save([io.generate(jax.random.fold_in(key, i), ("move_right", 1), name=f"t{i}")
           for i in range(3)], root / "1d_move_1p")
  flips = [io.generate(jax.random.fold_in(key, 10 + i), ("flip", None), name=f"f{i}")
           for i in range(2)]
  # a task whose test grid is longer than the target's max_len (33)
  long_x = np.array([0] * 30 + [3, 3, 3, 4, 0], np.int64)
  flips.append(io.ArcTask("long", train=flips[0].train, test=((long_x, long_x),)))
  io.save(flips, root / "1d_flip")
  io.save([io.generate(key, ("move_right", 1), name="p0")], root / "1d_pcopy_1c")
  return root


def test_scores_equal_running_the_synthesized_program(arc_workdir, arc_data, tmp_path):
  out = eval_arc1d.run(arc_workdir, arc_data, out_dir=str(tmp_path))
  assert out["unmapped"] == ["1d_pcopy_1c"]
  assert set(out["models"]) == {"meta_mlp", "direct"}
  mlp = out["models"]["meta_mlp"]
  move = mlp["families"]["1d_move_1p"]
  assert (move["intent"], move["split"], move["tasks"]) == ("move_right,k=1", "train", 3)
  flip = mlp["families"]["1d_flip"]
  assert flip["test"]["pairs"] == 3 and flip["test"]["does_not_fit"] == 1
  assert mlp["overall"]["test"]["does_not_fit"] == 1 and mlp["overall"]["tasks"] == 6
  # Recompute the move family's verdicts by hand: θ from the intent, execute.
  spec, theta = synthesis.synthesize(arc_workdir, "move_right,k=1", model="meta_mlp",
                                     seed=mlp["seed"])
  tasks = io.load(arc_data / "1d_move_1p")
  for split in ("train", "test"):
    pairs = [p for t in tasks for p in getattr(t, split)]
    x = jnp.asarray(io.encode([p[0] for p in pairs]))
    y = io.encode([p[1] for p in pairs])
    pred = np.asarray(jnp.argmax(neuroprog.execute(spec, theta, x), -1))
    right = np.all((pred == y) | (y == 10), -1)
    assert move[split]["correct"] == int(right.sum())
    assert move[split]["exact_match"] == pytest.approx(right.mean())
  saved = json.load(open(tmp_path / "arc1d_eval.json"))
  assert saved["models"]["meta_mlp"]["families"]["1d_flip"]["test"]["does_not_fit"] == 1
  md = open(tmp_path / "arc1d_eval.md").read()
  assert "1 pairs do not fit" in md and "1d_pcopy_1c" in md


def test_bad_inputs_are_named(arc_workdir, arc_data, tmp_path):
  with pytest.raises(ValueError, match="no such folder"):
    eval_arc1d.run(arc_workdir, tmp_path / "none")
  with pytest.raises(ValueError, match=r"--model=\['meta_gnn'\].*trained \['meta_mlp', 'direct'\]"):
    eval_arc1d.run(arc_workdir, arc_data, models=["meta_gnn"])
  bad = tmp_path / "bad" / "1d_flip"
  bad.mkdir(parents=True)
  (bad / "x.json").write_text('{"train": [{"input": [[0, 12]], "output": [[0, 1]]}], '
                              '"test": [{"input": [[0]], "output": [[0]]}]}')
  with pytest.raises(ValueError, match=r"x.json: train\[0\].input"):
    eval_arc1d.run(arc_workdir, tmp_path / "bad")
  (bad / "x.json").write_text("{not json")
  with pytest.raises(ValueError, match=r"x.json: not valid JSON"):
    eval_arc1d.run(arc_workdir, tmp_path / "bad")
  # the command exits non-zero with the message
  r = subprocess.run([sys.executable, "-m", "experiments.eval_arc1d",
                      f"--workdir={arc_workdir}", f"--data={tmp_path / 'bad'}"],
                     capture_output=True, text=True)
  assert r.returncode == 2 and "not valid JSON" in r.stderr


def test_on_the_shared_official_tasks(arc_workdir, tmp_path):
  data = require_shared("1d-arc")
  out = eval_arc1d.run(arc_workdir, data, models=["meta_mlp"], out_dir=str(tmp_path))
  fams = out["models"]["meta_mlp"]["families"]
  assert set(fams) == {"1d_fill", "1d_flip", "1d_move_1p", "1d_move_2p"}
  for r in fams.values():
    assert r["tasks"] == 50 and r["test"]["pairs"] == 50
    assert r["train"]["does_not_fit"] == 0 and r["test"]["does_not_fit"] == 0
