"""Generation to a requested cost: the cost scale, hit counting, config
checks; the tiny end-to-end run is slow."""
import json
import os

import numpy as np
import pytest

from experiments.configs import pnag_cost_test, pnag_darts_cost, pnag_mbv3_cost
from experiments.pipelines import generate_to_cost as g2c
from neuroprog.pnag import cost, search, spaces


def test_cost_scale_maps_the_training_range_to_unit_interval():
  scale = g2c.CostScale(np.array([100e6, 400e6, 200e6]))
  np.testing.assert_allclose(scale.position([100e6, 200e6, 400e6]), [0.0, 0.5, 1.0],
                             atol=1e-6)
  cond = np.asarray(scale.condition(np.array([50e6, 200e6, 800e6])))
  # requests outside the range are clipped to its ends
  np.testing.assert_allclose(cond, np.asarray(search.level_features(
      np.array([0.0, 0.5, 1.0], np.float32))), atol=1e-6)
  with pytest.raises(ValueError, match="same cost"):
    g2c.CostScale(np.array([5.0, 5.0]))
  # budget inputs: the request itself (in units of the most expensive
  # training architecture, unclipped) follows the level features
  budget = g2c.CostScale(np.array([100e6, 400e6, 200e6]), request_column=True)
  assert budget.dim == search.NUM_LEVEL_FEATURES + 1 and scale.dim == search.NUM_LEVEL_FEATURES
  cond_b = np.asarray(budget.condition(np.array([50e6, 200e6, 800e6])))
  np.testing.assert_allclose(cond_b[:, :-1], cond, atol=1e-6)
  np.testing.assert_allclose(cond_b[:, -1], [0.125, 0.5, 2.0], atol=1e-6)


def test_hits_and_rejection_rates():
  macs = np.array([100.0, 104.0, 106.0, np.nan, 95.0, 94.0])
  np.testing.assert_array_equal(g2c._hits(macs, 100.0, 0.05),
                                [True, True, False, False, True, False])
  r = g2c._rejection(macs, 100.0, 0.05, draws_per_s=600.0)
  assert r["acceptance"] == pytest.approx(0.5)
  assert r["draws_per_accepted"] == pytest.approx(2.0)
  assert r["accepted_per_s"] == pytest.approx(300.0)
  assert g2c._rejection(macs, 1000.0, 0.05, 1.0)["draws_per_accepted"] is None


def test_request_row_counts_valid_hits_and_uniqueness():
  space = spaces.get("mbv3")
  archs = space.sample(np.random.default_rng(0), 6)
  macs = [cost.cost("mbv3", a).macs for a in archs]
  row = g2c._request_row(space, [archs[0], archs[0], None, archs[1]], macs[0], 1e-9, 2.0)
  assert row["validity"] == pytest.approx(0.75)
  assert row["uniqueness"] == pytest.approx(2 / 3)
  assert row["within_tolerance"] == pytest.approx(0.5)      # the two copies of archs[0]
  assert row["unique_within_tolerance"] == 1
  assert row["samples_per_s"] == pytest.approx(2.0)


def test_config_errors():
  for c in (pnag_mbv3_cost.get_config(), pnag_darts_cost.get_config(),
            pnag_mbv3_cost.get_config("pyramid"), pnag_darts_cost.get_config("pyramid"),
            pnag_cost_test.get_config()):
    g2c.validate_config(c)
  with pytest.raises(ValueError, match=r"variant='pyramd'; allowed: None, 'pyramid'"):
    pnag_mbv3_cost.get_config("pyramd")
  bad = pnag_cost_test.get_config()
  bad.space = "nb201"
  with pytest.raises(ValueError, match=r"space='nb201'.*\['mbv3', 'darts'\]"):
    g2c.validate_config(bad)
  bad = pnag_cost_test.get_config()
  bad.request_quantiles = (0.5, 1.5)
  with pytest.raises(ValueError, match=r"request_quantiles=\(0.5, 1.5\)"):
    g2c.validate_config(bad)
  bad = pnag_cost_test.get_config()
  bad.validation_quantiles = (-0.1,)
  with pytest.raises(ValueError, match=r"validation_quantiles=\(-0.1,\)"):
    g2c.validate_config(bad)
  bad = pnag_cost_test.get_config()
  bad.gen = {"cond_dim": 4}
  with pytest.raises(ValueError, match="cond_dim"):
    g2c.validate_config(bad)
  budget = pnag_mbv3_cost.get_config()
  budget.budget_inputs = True
  g2c.validate_config(budget)
  bad = pnag_cost_test.get_config()      # the image pyramid: parallel block tokens
  bad.budget_inputs = True
  with pytest.raises(ValueError, match=r"budget_inputs=True .* got \('pyramid', 'block', "
                                       r"'parallel'\)"):
    g2c.validate_config(bad)
  bad = pnag_cost_test.get_config()
  bad.tolerance = 1.5
  with pytest.raises(ValueError, match=r"tolerance=1.5; allowed: \[0, 1\)"):
    g2c.validate_config(bad)


@pytest.mark.slow
def test_tiny_run_end_to_end(tmp_path, monkeypatch):
  c = pnag_cost_test.get_config()
  out = g2c.run(c, str(tmp_path))
  assert [r["quantile"] for r in out["requests"]] == [0.1, 0.9]
  # the requests are the training set's MAC quantiles, recomputed here
  from neuroprog.pnag import train as pnag_train
  train, _ = pnag_train.split(c, spaces.get("mbv3"))
  train_macs = np.array([cost.cost("mbv3", a).macs for a in train], float)
  assert out["train_macs"]["min"] == train_macs.min()
  for r in out["requests"]:
    assert r["request_macs"] == pytest.approx(np.quantile(train_macs, r["quantile"]))
    cv = r["conditional_constrained"]
    assert cv["validity"] == 1.0      # the constrained decoder's guarantee
    # the baseline pool's acceptance, recomputed from scratch: OFA subnets,
    # the training distribution of this config
    uni = spaces.get("mbv3").sample_subnets(np.random.default_rng([c.seed, 31]), c.pool_size)
    macs = np.array([cost.cost("mbv3", a).macs for a in uni], float)
    assert r["rejection_baseline"]["acceptance"] == pytest.approx(
        np.mean(np.abs(macs - r["request_macs"]) <= 0.05 * r["request_macs"]))
    # ... and the uniform sampler's, reported beside it for OFA-subnet training
    uni = spaces.get("mbv3").sample(np.random.default_rng([c.seed, 31]), c.pool_size)
    macs = np.array([cost.cost("mbv3", a).macs for a in uni], float)
    assert r["rejection_uniform"]["acceptance"] == pytest.approx(
        np.mean(np.abs(macs - r["request_macs"]) <= 0.05 * r["request_macs"]))
  for f in ("results.json", "results.md", "config.json"):
    assert os.path.getsize(tmp_path / f) > 0
  saved = json.load(open(tmp_path / "results.json"))
  assert (saved["space"], saved["baseline_distribution"]) == ("mbv3", "ofa_subnets")
  md = open(tmp_path / "results.md").read()
  assert "rejection, ofa_subnets draws" in md and "rejection, uniform" in md
  again = g2c.run(c, str(tmp_path))     # resumes both stages from their checkpoints
  assert _untimed(again["requests"]) == _untimed(out["requests"])

  # Guidance chosen on validation requests: the reported requests' conditions
  # are never sampled, and `evaluate` (the reported table) is never called.
  asked = []
  real_sample = g2c.model_lib.sample

  def recording_sample(model, key, n, condition=None, **kw):
    asked.append(np.asarray(condition)[0])
    return real_sample(model, key, n, condition=condition, **kw)

  def no_evaluate(*a, **k):
    raise AssertionError("select_guidance evaluated the reported requests")

  scale = g2c.CostScale(train_macs)
  monkeypatch.setattr(g2c.model_lib, "sample", recording_sample)
  monkeypatch.setattr(g2c, "evaluate", no_evaluate)
  sel = g2c.select_guidance(c, str(tmp_path), [1.0, 3.0])
  val_conds = [np.asarray(scale.condition(np.array([np.quantile(train_macs, q)])))[0]
               for q in c.validation_quantiles]
  assert len(asked) == 2 * len(val_conds)
  for got, want in zip(asked, val_conds * 2):
    np.testing.assert_allclose(got, want, atol=1e-6)
  means = {r["guidance"]: r["mean"] for r in sel["rows"]}
  assert sel["chosen"] == max(means, key=means.get)
  assert sel["temperature"] == c.temperature
  assert all(len(r["uniqueness"]) == len(val_conds) for r in sel["rows"])
  assert os.path.getsize(tmp_path / "guidance_selection.md") > 0
  # evaluation-only keys may change on a trained workdir; training keys may not
  c2 = pnag_cost_test.get_config()
  c2.guidance = 3.0
  g2c.validate_config(c2)
  g2c.workdir_lib.prepare(str(tmp_path), c2, eval_keys=g2c.EVAL_KEYS)
  c2.gen_steps = 40
  with pytest.raises(ValueError, match="gen_steps: 20 -> 40"):
    g2c.workdir_lib.prepare(str(tmp_path), c2, eval_keys=g2c.EVAL_KEYS)


def test_select_guidance_refuses_bad_scales_before_any_work(tmp_path):
  with pytest.raises(ValueError, match=r"guidances=\[0.0\]; allowed: a non-empty list"):
    g2c.select_guidance(pnag_cost_test.get_config(), str(tmp_path / "w"), [0.0])
  assert not os.path.exists(tmp_path / "w")


def _untimed(x):
  """The results without the timing fields, which differ between runs."""
  if isinstance(x, dict):
    return {k: _untimed(v) for k, v in x.items()
            if k not in ("samples_per_s", "accepted_per_s")}
  if isinstance(x, list):
    return [_untimed(v) for v in x]
  return x


@pytest.mark.slow
def test_tiny_budget_run_fits_the_spend_table_once(tmp_path):
  """The budget-input pipeline on a tiny MBV3 config (the committed cost
  config's scales and generator, few architectures and steps): the spend
  table is fitted on the training set's sub-architecture costs (one R^2 per
  generation step: two per scale), a rerun resumes from the checkpoints
  without refitting it and draws the same samples. A few minutes, mostly the
  sequential sampler's compile."""
  c = pnag_mbv3_cost.get_config()
  assert c.budget_inputs
  c.train_size, c.heldout_size, c.ae_steps, c.gen_steps = 256, 8, 10, 10
  c.request_quantiles, c.samples_per_request, c.pool_size = (0.5,), 16, 32
  c.log_every, c.checkpoint_every = 10, 10
  out = g2c.run(c, str(tmp_path))
  fit = json.load(open(tmp_path / "spend_fit.json"))
  scales = len(spaces.get("mbv3").default_schedule())
  assert len(fit["r2_per_step"]) == 2 * scales
  # the tokens of a barely trained autoencoder still carry most of the cost
  assert fit["r2_per_step"][-1] > 0.5
  fitted_at = os.path.getmtime(tmp_path / "spend_fit.json")
  again = g2c.run(c, str(tmp_path))
  assert os.path.getmtime(tmp_path / "spend_fit.json") == fitted_at
  assert _untimed(again["requests"]) == _untimed(out["requests"])
