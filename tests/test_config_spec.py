"""The target S* from the config: parsing, validation, task fit, and the main job."""
import json
import os
import subprocess
import sys

import ml_collections
import pytest

import neuroprog
from experiments.configs import test as test_config
from neuroprog import specs, synthesis, tasks
from neuroprog.train import loop

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEEP = {"type": "MLPSpec", "widths": [10, 8, 8, 1]}


def test_from_config_reads_every_form_and_none_means_default():
  want = specs.MLPSpec((10, 8, 8, 1))
  assert specs.from_config(DEEP) == want
  assert specs.from_config(json.dumps(DEEP)) == want
  assert specs.from_config(ml_collections.ConfigDict(DEEP)) == want
  assert specs.from_config(want) is want
  assert specs.from_config(None) is None and specs.from_config("  ") is None
  t = specs.from_config({"type": "TransformerSpec", "vocab_size": 98, "seq_len": 3,
                         "d_model": 16, "n_heads": 4, "d_mlp": 48, "n_classes": 97,
                         "n_layers": 2})
  assert t.n_layers == 2 and t.d_head == 4
  assert specs.from_json(specs.to_json(t)) == t


@pytest.mark.parametrize("value, message", [
    ({"type": "MLPSpec", "widths": [10, 8, 1], "widht": 3},
     r"config.spec: unknown field\(s\) \['widht'\] for MLPSpec; allowed: \['widths', 'activation'\]"),
    ({"type": "CNN", "widths": [10, 1]}, r"config.spec.type='CNN' is not a spec type; allowed"),
    ({"widths": [10, 1]}, r"config.spec.type=None is not a spec type"),
    ({"type": "TransformerSpec", "vocab_size": 98}, r"TransformerSpec needs field\(s\) \['seq_len'"),
    ({"type": "MLPSpec", "widths": [10, 0, 1]}, r"MLPSpec.widths\[1\] must be a positive int, got 0"),
    ({"type": "MLPSpec", "widths": [10, 8, 1], "activation": "elu"},
     r"activation='elu' is not supported; allowed"),
    ({"type": "TransformerSpec", "vocab_size": 98, "seq_len": 3, "d_model": 16, "n_heads": 5,
      "d_mlp": 48, "n_classes": 97}, r"d_model=16 is not divisible by n_heads=5"),
    ("{widths: [10, 1]}", r"config.spec='\{widths: \[10, 1\]\}' is not JSON"),
    (7, r"config.spec must be a mapping with a 'type' key, got 7"),
])
def test_from_config_names_the_bad_value(value, message):
  with pytest.raises(ValueError, match=message):
    specs.from_config(value)


@pytest.mark.parametrize("task, spec, message", [
    ("sumfirst", specs.MLPSpec((9, 16, 1)),
     r"sumfirst: target MLPSpec has d_in=9; the task needs d_in=10"),
    ("sumfirst", specs.MLPSpec((10, 16, 2)), r"has d_out=2; the task needs d_out=1"),
    ("sumfirst", tasks.default_spec("addmod"), r"sumfirst: the target must be a MLPSpec, got "
     r"TransformerSpec"),
    ("addmod", specs.TransformerSpec(98, 3, 16, 4, 48, n_classes=50),
     r"addmod: target TransformerSpec has n_classes=50; the task needs n_classes=97"),
    ("addmod", specs.TransformerSpec(97, 4, 16, 4, 48, n_classes=97),
     r"has vocab_size=97, seq_len=4; the task needs vocab_size=98, seq_len=3"),
    ("arc1d", specs.Seq2SeqSpec(11, 20, 24, 4, 80), r"max_len=20, below the generated grids' 33"),
    ("arc1d", specs.Seq2SeqSpec(12, 33, 24, 4, 80), r"has vocab_size=12; the task needs vocab_size=11"),
])
def test_tasks_refuse_a_target_that_does_not_fit(task, spec, message):
  with pytest.raises(ValueError, match=message):
    tasks.get(task, spec=spec)


def test_tasks_take_deeper_targets():
  deep = specs.MLPSpec((10, 16, 16, 1))
  assert tasks.get("sumfirst", spec=deep).spec == deep
  two = specs.TransformerSpec(98, 3, 16, 4, 48, n_classes=97, n_layers=2)
  assert tasks.get("addmod", spec=two).spec.n_layers == 2
  s2s = specs.Seq2SeqSpec(11, 33, 24, 4, 80, n_enc_layers=2, n_dec_layers=2)
  assert tasks.get("arc1d", spec=s2s).spec == s2s


def test_config_spec_is_validated_before_any_work(tmp_path):
  bad = test_config.get_config()
  bad.spec = {"type": "MLPSpec", "widths": [10, 8, 1], "depth": 2}
  with pytest.raises(ValueError, match=r"unknown field\(s\) \['depth'\]"):
    loop.train_and_evaluate(bad, str(tmp_path / "a"))
  misfit = test_config.get_config()
  misfit.spec = json.dumps({"type": "MLPSpec", "widths": [3, 1]})
  with pytest.raises(ValueError, match=r"has d_in=3; the task needs d_in=10"):
    loop.train_and_evaluate(misfit, str(tmp_path / "b"))
  assert not os.listdir(tmp_path)   # refused before the workdir was made


def test_train_and_evaluate_trains_the_configured_target(tmp_path):
  config = test_config.get_config()
  config.models = ("meta_mlp",)
  config.steps = 10
  config.spec = json.dumps(DEEP)    # as --config.spec='...' gives it
  out = loop.train_and_evaluate(config, str(tmp_path))
  assert json.load(open(tmp_path / "results.json"))["spec"] == {
      "type": "MLPSpec", "widths": [10, 8, 8, 1], "activation": "relu"}
  assert specs.from_json(out["spec"]) == specs.MLPSpec((10, 8, 8, 1))
  spec, theta = synthesis.synthesize(str(tmp_path), "n=3", model="meta_mlp")
  assert spec == specs.MLPSpec((10, 8, 8, 1))
  assert theta.shape == (neuroprog.num_params(spec),) == (169,)


@pytest.mark.slow   # CI budget (25 s); the in-process test above covers the same path
def test_main_job_trains_the_configured_target_and_records_it(tmp_path):
  cmd = [sys.executable, "-m", "experiments.synthesize", "--config=experiments/configs/test.py",
         "--config.models=('meta_mlp',)", "--config.steps=20", f"--workdir={tmp_path}",
         "--config.spec=" + json.dumps(DEEP)]
  r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
  assert r.returncode == 0, r.stderr[-2000:]
  res = json.load(open(tmp_path / "results.json"))
  assert res["spec"] == {"type": "MLPSpec", "widths": [10, 8, 8, 1], "activation": "relu"}
  assert '"widths": [10, 8, 8, 1]' in open(tmp_path / "results.md").read()
  spec, theta = synthesis.synthesize(str(tmp_path), "n=3", model="meta_mlp")
  assert spec == specs.MLPSpec((10, 8, 8, 1))
  assert theta.shape == (neuroprog.num_params(spec),) == (169,)
  bad = subprocess.run(cmd[:-1] + ["--config.spec={\"type\": \"MLPSpec\", \"widths\": [10, -1]}"],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
  assert bad.returncode != 0 and "MLPSpec.widths[1] must be a positive int, got -1" in bad.stderr
