"""Conditional PNAG search: condition vectors, ranks, config checks; the tiny
end-to-end run is slow."""
import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from experiments.configs import pnag_cond_test, pnag_nb201_cond
from experiments.pipelines import search as search_exp
from neuroprog.pnag import search
from tests.conftest import require_shared


def test_level_features_and_condition():
  f = np.asarray(search.level_features(jnp.array([0.0, 0.5, 1.0])))
  assert f.shape == (3, search.NUM_LEVEL_FEATURES)
  np.testing.assert_allclose(f[:, 0], [0, 0.5, 1])
  np.testing.assert_allclose(f[:, 1], [0, 0.25, 1])
  np.testing.assert_allclose(f[:, 2], np.cos(np.pi * np.array([0, 0.5, 1])), atol=1e-6)
  c = search.condition(jnp.array([0.3, 0.7]), jnp.ones((2, 4)))
  assert c.shape == (2, search.NUM_LEVEL_FEATURES + 4)
  np.testing.assert_allclose(np.asarray(c[:, -4:]), 1.0)


def test_percentiles_and_top_fraction():
  acc = np.array([10.0, 30.0, 20.0, 20.0, 40.0])
  np.testing.assert_allclose(search.percentiles(acc), [0, 0.75, 0.375, 0.375, 1.0])
  assert search.top_fraction(acc, 40.0) == pytest.approx(1 / 5)
  assert search.top_fraction(acc, 20.0) == pytest.approx(3 / 5)


def test_cond_fn_draws_levels_of_the_sampled_cells():
  pct = jnp.array([[0.0, 0.5, 1.0], [1.0, 0.5, 0.0]])
  bank = jnp.arange(2 * 3 * 2, dtype=jnp.float32).reshape(2, 3, 2)
  f = jax.jit(search.make_cond_fn(pct, bank, 0.25))
  cond, drop = f(jax.random.key(0), jnp.zeros(4000, jnp.int32))
  level = np.asarray(cond[:, 0])
  ctx = np.asarray(cond[:, -2:])
  # cell 0 has level 0 in task 0 and 1 in task 1; contexts come from that task's bank.
  assert set(np.unique(level)) == {0.0, 1.0}
  from_task1 = level == 1.0
  assert np.all(ctx[from_task1, 0] >= 6) and np.all(ctx[~from_task1, 0] < 6)
  assert 0.2 < float(np.mean(drop)) < 0.3


def test_config_errors():
  c = pnag_nb201_cond.get_config()
  search_exp.validate_config(c)
  bad = pnag_nb201_cond.get_config()
  bad.unlocked = 1
  with pytest.raises(ValueError, match="Unknown config key\\(s\\) \\['unlocked'\\]"):
    search_exp.validate_config(bad)
  bad = pnag_nb201_cond.get_config()
  bad.targets = ("mnist",)
  with pytest.raises(ValueError, match="mnist"):
    search_exp.validate_config(bad)
  bad = pnag_nb201_cond.get_config()
  bad.gen = {"width": 32, "cond_dim": 3}
  with pytest.raises(ValueError, match="cond_dim"):
    search_exp.validate_config(bad)
  bad = pnag_nb201_cond.get_config()
  bad.surrogate = {"depth": 3}
  with pytest.raises(ValueError, match="config.surrogate key\\(s\\) \\['depth'\\]"):
    search_exp.validate_config(bad)
  bad = pnag_nb201_cond.get_config()
  bad.levels = (0.5, 1.5)
  with pytest.raises(ValueError, match="1.5"):
    search_exp.validate_config(bad)


def test_missing_table_is_a_clear_error(tmp_path):
  c = pnag_cond_test.get_config()
  c.table = str(tmp_path / "none.csv")
  with pytest.raises(ValueError, match="none.csv.*does not exist"):
    search_exp.run(c, str(tmp_path / "w"))


@pytest.mark.slow
def test_tiny_search_end_to_end(tmp_path):
  require_shared("nas-bench-201/nb201_hp12_accuracy.csv")
  c = pnag_cond_test.get_config()
  out = search_exp.run(c, str(tmp_path))
  r = out["targets"]["imagenet16-120"]
  assert r["trained_on"] == ["cifar10", "cifar100"]
  assert len(r["search"]["picks"]) == 2 and r["seeds"] == 2
  assert -1 <= r["surrogate"]["spearman"]["mean"] <= 1
  assert len(r["control"]["mean_test_accuracy"]) == 2
  for p in r["search"]["picks"]:
    assert p["lookups"] == 1 and p["support_evaluations"] == 8
    if p["arch"] is not None:
      assert 0 < p["top_fraction"] <= 1
  for f in ("results.json", "results.md", "config.json"):
    assert os.path.getsize(tmp_path / f) > 0
  assert "imagenet16-120 (cifar10, cifar100)" in open(tmp_path / "results.md").read()
  assert json.load(open(tmp_path / "results.json"))["targets"]
  # A rerun restores every stage from its checkpoints and gives the same picks.
  again = search_exp.run(c, str(tmp_path))
  assert again["targets"]["imagenet16-120"]["search"]["picks"] == r["search"]["picks"]
