"""Offsets versus interaction in generated weight matrices."""
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import neuroprog
from experiments import init_structure
from experiments.configs import test as test_config
from neuroprog.analysis import structure


def test_offset_shares_split_a_built_matrix():
  rng = np.random.default_rng(0)
  r, c = rng.standard_normal((40, 1)), rng.standard_normal((1, 30))
  r, c = r - r.mean(), c - c.mean()
  s = structure.offset_shares(3.0 + r + 0 * c)
  assert s.row == pytest.approx(1.0) and s.col == pytest.approx(0.0, abs=1e-12)
  assert s.rest == pytest.approx(0.0, abs=1e-12)
  s = structure.offset_shares(r + 2 * c)
  expected_row = (r ** 2).sum() * 30 / ((r ** 2).sum() * 30 + 4 * (c ** 2).sum() * 40)
  assert s.row == pytest.approx(expected_row) and s.row + s.col == pytest.approx(1.0)
  noise = rng.standard_normal((400, 300))
  s = structure.offset_shares(noise)
  assert s.rest > 0.99 and s.row + s.col + s.rest == pytest.approx(1.0)
  assert 180 < s.rest_rank < 300     # a Marchenko-Pastur spectrum is not flat
  with pytest.raises(ValueError, match="constant"):
    structure.offset_shares(np.ones((3, 4)))
  with pytest.raises(ValueError, match=r"expected a matrix.*\(5,\)"):
    structure.offset_shares(np.ones(5))


def test_effective_rank():
  assert structure.effective_rank(np.eye(7)) == pytest.approx(7.0)
  assert structure.effective_rank(np.outer(np.arange(1, 6), np.arange(1, 4))) == pytest.approx(1.0)
  assert structure.effective_rank(np.diag([1.0, 1.0, 0.0])) == pytest.approx(2.0)
  assert structure.effective_rank(np.zeros((3, 3))) == 0.0


def test_theta_structure_of_a_standard_init():
  spec = neuroprog.default_spec("sumfirst")
  theta = neuroprog.init_theta(spec, jax.random.key(0))
  out = structure.theta_structure(spec, theta)
  assert list(out) == ["l0/w"]          # l1/w is [16, 1]; biases are skipped
  assert out["l0/w"].rest > 0.7
  with pytest.raises(ValueError, match=r"theta has shape \(3,\); expected \(193,\)"):
    structure.theta_structure(spec, np.zeros(3))


def test_init_scale_of_standard_and_scaled_inits():
  spec = neuroprog.default_spec("sumfirst")
  theta = np.stack([neuroprog.init_theta(spec, jax.random.key(k)) for k in range(4)])
  scale = structure.init_scale(spec, theta)
  assert list(scale) == ["l0/w", "l1/w"]          # biases are skipped
  lo, hi = scale["l0/w"]                         # 160 draws per program
  assert 0.8 < lo <= hi < 1.2
  lo3, hi3 = structure.init_scale(spec, 3 * theta)["l0/w"]
  assert lo3 == pytest.approx(3 * lo) and hi3 == pytest.approx(3 * hi)
  with pytest.raises(ValueError, match=r"theta has shape \(193,\); expected \[I >= 1, 193\]"):
    structure.init_scale(spec, theta[0])


def test_intent_share_of_shared_and_independent_programs():
  spec = neuroprog.default_spec("sumfirst")
  one = neuroprog.init_theta(spec, jax.random.key(0))
  same = np.stack([one] * 4)
  assert structure.intent_share(spec, same) == {"l0/w": 0.0, "l1/w": 0.0}
  indep = np.stack([neuroprog.init_theta(spec, jax.random.key(k)) for k in range(1, 5)])
  share = structure.intent_share(spec, indep)
  # Independent draws: the within-entry variance over 4 programs (ddof 0)
  # is 3/4 of the total in expectation.
  assert share["l0/w"] == pytest.approx(0.75, abs=0.08)
  # Half shared, half independent: about half of that.
  mixed = structure.intent_share(spec, (same + indep) / np.sqrt(2))
  assert mixed["l0/w"] == pytest.approx(0.375, abs=0.08)
  with pytest.raises(ValueError, match=r"expected \[I >= 2, 193\]"):
    structure.intent_share(spec, indep[:1])


def test_init_structure_report_on_the_test_config():
  out = init_structure.report(test_config.get_config())
  assert sorted(out) == ["meta_gnn", "meta_mlp"]
  for tensors in out.values():
    s = tensors["l0/w"]
    assert s.row + s.col + s.rest == pytest.approx(1.0)
  # Meta-MLP emits each weight from its own output unit: like a standard init.
  assert out["meta_mlp"]["l0/w"].rest > 0.7


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.slow   # CI budget: diagnostics; the report test on the test config stays in make test
def test_init_structure_command_prints_the_split():
  cmd = [sys.executable, "-m", "experiments.init_structure",
         "--config=experiments/configs/test.py"]
  proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
  assert proc.returncode == 0, proc.stderr[-3000:]
  rows, scales, shares = {}, {}, {}
  for line in proc.stdout.splitlines():
    if line.startswith("meta_"):
      model = line.split(":")[0]
    elif line.strip().startswith("l0/w") and model.endswith(" intent share"):
      shares[model.split()[0]] = float(line.split()[1])
    elif line.strip().startswith("l0/w") and model.endswith(" scale"):
      lo, _, hi = line.split()[1:4]
      scales[model.split()[0]] = (float(lo), float(hi))
    elif line.strip().startswith("l0/w"):
      row, col, rest = (float(v) for v in line.split()[1:6:2])
      rows[model] = (row, col, rest)
  assert sorted(rows) == ["meta_gnn", "meta_mlp"] == sorted(scales)
  for row, col, rest in rows.values():
    assert row + col + rest == pytest.approx(1.0, abs=0.02)   # printed to 2 decimals
  for lo, hi in scales.values():   # the test config's models use default options
    assert 0.5 < lo <= hi < 2.0, scales
  # Meta-MLP's θ at init moves with the intent; Meta-GNN's (raw intents, the
  # default) hardly does: its positional codes outweigh the intent.
  assert sorted(shares) == ["meta_gnn", "meta_mlp"]
  assert shares["meta_mlp"] > 5 * shares["meta_gnn"] and shares["meta_gnn"] < 0.05, shares
  bad = subprocess.run(cmd + ["--config.no_such_key=1"], cwd=ROOT, capture_output=True,
                       text=True, timeout=300)
  assert bad.returncode != 0 and "no_such_key" in bad.stderr


@pytest.mark.slow   # CI budget: diagnostics; the report test on the test config stays in make test
def test_gradient_report_at_init_on_the_test_config():
  out = init_structure.grad_report(test_config.get_config(), examples=16)
  assert set(out) == {"meta_mlp", "meta_gnn"}
  for rep in out.values():
    assert list(rep["theta"]) == ["l0/w", "l0/b", "l1/w", "l1/b"]
    assert all(np.isfinite(v) and v > 0 for v in rep["theta"].values())
    assert "head/gain" in rep["modules"] and all(np.isfinite(v) for v in rep["modules"].values())
  gnn = out["meta_gnn"]["modules"]
  assert any(k.startswith("net/enc_edge") for k in gnn) and any("dec" in k for k in gnn)
  # At init the output head's gain of every bias tensor is exactly 0 (biases
  # start at 0), so the node (bias) decoder and the last round's node update,
  # which only feeds it, get no gradient; every other module does.
  dead = sorted(k for k, v in gnn.items() if v == 0.0)
  assert dead == ["net/dec_node_hidden", "net/dec_node_out", "net/upd_0"], dead
  assert all(v > 1e-3 for k, v in gnn.items() if k not in dead)


def test_intent_share_over_a_subset_of_training_intents():
  """init_structure.intent_report over some training intents: the share of
  θ that varies between those programs, the head still calibrated on all
  training intents; a subset that is not training intents is refused."""
  from neuroprog import meta  # pylint: disable=g-import-not-at-top
  from neuroprog.train import loop  # pylint: disable=g-import-not-at-top
  import conftest  # pylint: disable=g-import-not-at-top
  c = conftest.tiny_addmod_config()
  large = ["p=59", "p=67", "p=73", "p=79", "p=97"]
  every = init_structure.intent_report(c)["meta_mlp"]
  few = init_structure.intent_report(c, intents=large)["meta_mlp"]
  task = loop.build_task(c)
  model = meta.create("meta_mlp", task.spec, task.feature_dim, dict(c.model_configs.meta_mlp))
  u = jnp.asarray(task.features(task.train_intents))
  theta = model.apply(model.init(jax.random.key(0), u),
                      jnp.asarray(task.features([59, 67, 73, 79, 97])))
  assert few == pytest.approx(structure.intent_share(task.spec, np.asarray(theta)))
  # The large primes' features differ by a few hundredths: their programs
  # share far less of θ's variance than all training primes' do.
  assert few["embed/tok"] < 0.25 * every["embed/tok"]
  with pytest.raises(ValueError, match=r"--share_intents \['p=83'\]: give at least two"):
    init_structure.intent_report(c, intents=["p=83", "p=97"])
