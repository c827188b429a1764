"""End-to-end: the PNAG experiment on the tiny config; resume, determinism, load, sample."""
import json
import os
import subprocess
import sys

import jax
import numpy as np
import pytest

from experiments.configs import pnag_test
from neuroprog import pnag
from neuroprog.pnag import train
from neuroprog.run.loop import Interrupted

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _config(**overrides):
  c = pnag_test.get_config()
  c.update(overrides)
  return c


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
  workdir = str(tmp_path_factory.mktemp("pnag"))
  return workdir, train.train_and_evaluate(_config(), workdir)


# Slow (the tiny two-stage training takes about 50 s to compile and run): the
# PNAG unit tests (autoencoder, quantizer, generator and sampler paths, metrics)
# stay in the fast suite; every test that trains a PNAG workdir is in make
# test-slow.
@pytest.mark.slow
def test_writes_samples_and_results(full_run):
  workdir, out = full_run
  with open(os.path.join(workdir, "results.json")) as f:
    res = json.load(f)
  for k in ("validity", "uniqueness", "novelty", "samples_per_s", "train_time_s",
            "heldout_reconstruction"):
    assert k in res
  assert res["num_train"] == 7812 and res["num_samples"] == 64
  lines = open(os.path.join(workdir, "samples.txt")).read().splitlines()
  assert len(lines) == 64
  sp = pnag.spaces.get("nb201")
  valid = [l for l in lines if l != "INVALID"]
  assert len(valid) == res["num_valid"]
  for l in valid:
    assert sp.to_string(sp.from_string(l)) == l
  assert 0.0 <= res["novelty"] <= 1.0 and res["samples_per_s"] > 0
  # Plain decoding is the headline; the constrained decoding of the same maps
  # is kept in its own column and is always valid.
  assert res["decode"] == "argmax" and lines.count("INVALID") == 64 - res["num_valid"]
  assert res["valid"]["validity"] == 1.0 and res["valid"]["num_valid"] == 64
  assert res["validity"] == res["num_valid"] / 64
  # An exact plain reconstruction is valid, hence also the constrained one.
  assert res["heldout_reconstruction"] <= res["valid"]["heldout_reconstruction"] <= 1.0
  # One validity per scale of the sub-architecture schedule (3, 5, 8 nodes);
  # the last is the plain validity of the final architectures.
  assert res["schedule"] == "subarch" and res["scales"] == [3, 5, 8]
  assert len(res["scale_validity"]) == 3 and res["scale_validity"][-1] == res["validity"]
  # Uniform draws from the space, the baseline: all valid, scored on the same split.
  assert res["uniform"]["num_samples"] == 64 and res["uniform"]["validity"] == 1.0
  assert res["uniform"]["num_novel"] <= res["uniform"]["num_unique"] <= 64
  # Held-out reconstruction per scale; its last entry is the plain final one.
  assert len(res["heldout_scale_reconstruction"]) == 3
  assert res["heldout_scale_reconstruction"][-1] == round(res["heldout_reconstruction"], 4)
  metrics_lines = [json.loads(l) for l in open(os.path.join(workdir, "metrics.jsonl"))]
  assert [l["step"] for l in metrics_lines if l["model"] == "stage1"] == [10, 20, 30, 40]
  s1 = [l["loss"] for l in metrics_lines if l["model"] == "stage1"]
  s2 = [l["loss"] for l in metrics_lines if l["model"] == "stage2"]
  assert s1[-1] < s1[0] and s2[-1] < s2[0]
  assert sorted(os.listdir(os.path.join(workdir, "checkpoints", "stage2"))) == ["20", "40"]


@pytest.mark.slow
def test_resume_after_a_kill_matches_and_same_seed_same_samples(full_run, tmp_path):
  ref_dir, ref = full_run
  with pytest.raises(Interrupted):
    train.train_and_evaluate(_config(), str(tmp_path), stop_at_step=30)   # in stage 1
  out = train.train_and_evaluate(_config(), str(tmp_path))
  assert open(os.path.join(ref_dir, "samples.txt")).read() == open(
      os.path.join(str(tmp_path), "samples.txt")).read()
  a, b = train.load(ref_dir), train.load(str(tmp_path))
  for x, y in zip(jax.tree_util.tree_leaves((a.ae_params, a.codebook, a.gen_params)),
                  jax.tree_util.tree_leaves((b.ae_params, b.codebook, b.gen_params))):
    np.testing.assert_allclose(x, y, atol=1e-6, rtol=0)
  assert out["validity"] == ref["validity"] and out["novelty"] == ref["novelty"]
  # Training time counts the steps before the kill too: rerunning the finished
  # run (nothing left to train) reports the stored totals, which are positive.
  again = train.train_and_evaluate(_config(), str(tmp_path))
  assert again["train_time_s"] == out["train_time_s"]
  assert again["train_time_s"]["stage1"] > 0 and again["train_time_s"]["stage2"] > 0


# Slow (about 26 s, its own sampler compile); the run it reads is checked by
# test_writes_samples_and_results in the fast suite.
@pytest.mark.slow
def test_load_and_sample_api(full_run):
  workdir, _ = full_run
  model = train.load(workdir)
  s = pnag.sample(model, jax.random.key(3), 10, decode="valid")
  assert s.ops.shape == (10, 8) and s.adj.shape == (10, 8, 8) and len(s.archs) == 10
  for arch, ok, o, a in zip(s.archs, s.valid, s.ops, s.adj):
    assert ok == (arch is not None) == model.space.is_valid(o, a)
  assert s.valid.all() and s.scale_valid is None   # the constrained decoder: valid graphs
  # Plain decoding (the default) of the same token maps: where its graph is
  # valid, it is also the most probable valid graph, so the constrained
  # decoder returns it.
  plain = pnag.sample(model, jax.random.key(3), 10, per_scale=True)
  assert plain.scale_valid.shape == (10, 3)
  np.testing.assert_array_equal(plain.scale_valid[:, -1], plain.valid)
  for arch, ok, o, a, o2, a2 in zip(plain.archs, plain.valid, plain.ops, plain.adj,
                                    s.ops, s.adj):
    assert ok == (arch is not None) == model.space.is_valid(o, a)
    if ok:
      np.testing.assert_array_equal(o, o2)
      np.testing.assert_array_equal(a, a2)
  with pytest.raises(ValueError, match="decode='best'; allowed"):
    pnag.sample(model, jax.random.key(3), 10, decode="best")
  s2 = pnag.sample(model, jax.random.key(3), 10, batch_size=4, decode="valid")
  assert s2.ops.shape == (10, 8) and s2.valid.all()   # batches differ, still valid
  again = pnag.sample(model, jax.random.key(3), 10, decode="valid")
  np.testing.assert_array_equal(again.ops, s.ops)
  with pytest.raises(ValueError, match="condition must be"):
    pnag.sample(model, jax.random.key(0), 4, condition=np.zeros((4, 3)))
  with pytest.raises(ValueError, match="temperature must be > 0"):
    pnag.sample(model, jax.random.key(0), 4, temperature=0.0)
  with pytest.raises(ValueError, match="n must be a positive int"):
    pnag.sample(model, jax.random.key(0), 0)


def test_bad_configs_and_workdirs(tmp_path):
  with pytest.raises(ValueError, match="Unknown config key"):
    train.validate_config(_config(learning_rat=1.0))
  c = _config()
  c.ae = dict(c.ae, width=3)
  with pytest.raises(ValueError, match=r"Unknown config.ae key\(s\) \['width'\]"):
    train.validate_config(c)
  with pytest.raises(ValueError, match="Unknown search space 'nb101'"):
    train.validate_config(_config(space="nb101"))
  c = _config()
  c.decode = "best"
  with pytest.raises(ValueError, match=r"config.decode='best'; allowed: \['valid', 'argmax'\]"):
    train.validate_config(c)
  c = _config()
  c.schedule = "octave"
  with pytest.raises(ValueError, match=r"config.schedule='octave'; allowed: \['subarch', 'pyramid'\]"):
    train.validate_config(c)
  with pytest.raises(ValueError, match=r"arch_distribution='ofa'; allowed: \['uniform', "
                                       r"'ofa_subnets'\]"):
    train.validate_config(_config(arch_distribution="ofa"))
  with pytest.raises(ValueError, match=r"'ofa_subnets' is defined for \['mbv3'\], not space "
                                       r"'darts'"):
    train.validate_config(_config(space="darts", arch_distribution="ofa_subnets"))
  with pytest.raises(ValueError, match="nb201 sub-architectures have 3..8 nodes, got n=2"):
    train.build(_config(scales=(2, 4, 8)))
  with pytest.raises(ValueError, match="not a PNAG workdir"):
    train.load(str(tmp_path))


@pytest.mark.slow
def test_command_line_entry_point(tmp_path):
  out = subprocess.run(
      [sys.executable, "-m", "experiments.generate",
       "--config=experiments/configs/pnag_test.py", f"--workdir={tmp_path}",
       "--config.ae_steps=10", "--config.gen_steps=10", "--config.num_samples=8"],
      cwd=ROOT, capture_output=True, text=True, timeout=600)
  assert out.returncode == 0, out.stderr[-2000:]
  res = json.loads(out.stdout.strip().splitlines()[-1])
  assert 0.0 <= res["validity"] <= 1.0
  bad = subprocess.run(
      [sys.executable, "-m", "experiments.generate",
       "--config=experiments/configs/pnag_test.py", f"--workdir={tmp_path}/b",
       "--config.nonsense=1"], cwd=ROOT, capture_output=True, text=True, timeout=600)
  assert bad.returncode != 0 and "nonsense" in bad.stderr


def test_every_stage_option_is_in_the_config_so_the_command_line_can_set_it():
  c = train.default_config(space="nb201", gen={"width": 16})
  assert c.gen.width == 16 and c.gen.depth == 2 and c.gen.attention == "causal"
  assert c.ae.token_noise == 0.0 and "scc_num_scales" not in c.ae   # None defaults stay out
  # Through the real entry point: the overrides parse, and the run stops at
  # validation (ae_steps=0) before any work.
  out = subprocess.run(
      [sys.executable, "-m", "experiments.generate",
       "--config=experiments/configs/pnag_nb201.py", "--workdir=/tmp/never_made",
       "--config.gen.depth=1", "--config.gen.attention=scale", "--config.ae_steps=0"],
      cwd=ROOT, capture_output=True, text=True, timeout=300)
  assert out.returncode != 0
  assert "config.ae_steps must be a positive int, got 0" in out.stderr, out.stderr[-1500:]


def test_arch_distribution_draws_training_and_heldout_sets():
  """MBV3 with arch_distribution="ofa_subnets": training and held-out
  architectures are OFA's random subnets (a third of stages of depth 2);
  by default they are uniform over architectures (1.1%)."""
  from neuroprog.pnag import spaces
  space = spaces.get("mbv3")
  for dist, share in (("uniform", 1 / 91), ("ofa_subnets", 1 / 3)):
    c = _config(space="mbv3", arch_distribution=dist, train_size=3000, heldout_size=500)
    train.validate_config(c)
    tr, held = train.split(c, space)
    assert len(tr) == 3000 and len(held) == 500
    seen = {space.canonical(a) for a in tr}
    assert not any(space.canonical(a) in seen for a in held)
    for archs in (tr, held):
      depth2 = np.mean([len(s) == 2 for a in archs for s in a])
      np.testing.assert_allclose(depth2, share, atol=0.03)
