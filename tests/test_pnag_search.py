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


def _synthetic_table(m=60):
  """A table of the first m cells: cifar10/cifar100 val rise with the index
  (ties nowhere), the target imagenet16-120 has its own order."""
  from neuroprog.pnag import data, spaces
  archs = spaces.get("nb201").enumerate()[:m]
  i = np.arange(m, dtype=np.float32)
  target_val = (37.0 * i) % m          # a permutation of 0..m-1
  acc = {("cifar10", "val"): 50 + i / 10, ("cifar100", "val"): 30 + (i % 50) / 5,
         ("imagenet16-120", "val"): target_val,
         ("imagenet16-120", "test"): target_val + 0.5}
  for d in ("cifar10", "cifar100"):
    acc[(d, "test")] = acc[(d, "val")]
  return data.NB201Table(archs, acc)


class _IndexSurrogate:
  """Duck-typed surrogate: scores a cell by minus its distance to index 17."""
  class cfg:
    support_size = 5

  def __init__(self, table):
    self._code = {tuple(o.tolist()): k for k, o in enumerate(table.encodings[0])}

  def context(self, ops, adj, acc):
    return jnp.zeros((2,))

  def score(self, ops, adj, ctx):
    return -np.abs(np.array([self._code[tuple(o.tolist())] for o in ops]) - 17.0)


def test_baselines_pick_what_their_rule_says():
  table = _synthetic_table()
  target = "imagenet16-120"
  val = table.accuracy(target, "val")
  # (a) summed percentiles over cifar10 and cifar100: cell 49 (top of both
  # orders: 4.9 + 9.8 on the percentile scale beats every other cell).
  z = search.zero_shot_transfer(table, target)
  assert z["index"] == 49 and z["evaluations"] == 0 and z["evaluated"] == []
  assert z["test_accuracy"] == pytest.approx(val[49] + 0.5)
  assert z["top_fraction"] == pytest.approx(search.top_fraction(
      table.accuracy(target, "test"), val[49] + 0.5))
  with pytest.raises(ValueError, match="no source dataset besides 'cifar10'"):
    search.zero_shot_transfer(table, "cifar10", sources=["cifar10"])
  # (b) random search: support + lookups distinct cells, best val kept.
  support = np.array([3, 8, 20, 33, 41])
  r = search.random_search(table, target, support, 4, np.random.default_rng(0))
  assert r["evaluations"] == 9 and len(r["evaluated"]) == 9
  assert set(support) <= set(r["evaluated"])
  assert r["index"] == r["evaluated"][int(np.argmax(val[r["evaluated"]]))]
  # (c) the surrogate's top look-ups, then the best validation among them.
  s = search.surrogate_search(_IndexSurrogate(table), table, target, support, 1)
  assert s["index"] == 17 and s["evaluations"] == 6
  assert s["evaluated"] == sorted([*support.tolist(), 17])
  s3 = search.surrogate_search(_IndexSurrogate(table), table, target, support, 3)
  # looks up 17, 16, 18 (distance ties break to the lower index): best val wins.
  assert s3["index"] == [16, 17, 18][int(np.argmax(val[[16, 17, 18]]))]


def test_comparison_table_names_the_winner():
  acc = lambda m: {"mean": m, "std": 0.0, "min": m, "max": m, "values": [m], "failed": 0}
  methods = {"zero_shot": {"test_accuracy": acc(46.0), "evaluations": 0},
             "random": {"test_accuracy": acc(44.0), "evaluations": 21},
             "surrogate": {"test_accuracy": acc(46.0), "evaluations": 21},
             "pnag": {"test_accuracy": acc(45.5), "evaluations": 21}}
  # a tie goes to the method that used fewer evaluations
  assert search_exp.winner(methods) == "zero_shot"
  methods["pnag"]["test_accuracy"] = acc(46.5)
  assert search_exp.winner(methods) == "pnag"


@pytest.mark.slow
def test_target_labels_do_not_leak(tmp_path):
  """Every target test accuracy, and every target validation accuracy at a
  cell no method evaluated, perturbed: the surrogate's parameters and
  predictions, and every method's picks, stay the same (issue 26, item 2)."""
  import csv
  from neuroprog.pnag import surrogate as sur_lib
  src = require_shared("nas-bench-201/nb201_hp12_accuracy.csv")
  c = pnag_cond_test.get_config()
  c.table = str(src)
  first = search_exp.run(c, str(tmp_path / "a"))["targets"]["imagenet16-120"]
  seen = set()
  for m in ("zero_shot", "random", "surrogate", "pnag"):
    assert len(first["methods"][m]["picks"]) == 2
    for cells in first["methods"][m]["evaluated"]:
      seen.update(cells)
  assert len(seen) > 8
  rows = list(csv.DictReader(open(src)))
  rng = np.random.default_rng(0)
  changed_val = 0
  for i, row in enumerate(rows):
    row["imagenet16-120-test"] = f"{rng.uniform(0, 60):.4f}"
    if i not in seen:
      row["imagenet16-120-val"] = f"{rng.uniform(0, 60):.4f}"
      changed_val += 1
  assert changed_val > 15000
  perturbed = tmp_path / "perturbed.csv"
  with open(perturbed, "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=list(rows[0]))
    w.writeheader()
    w.writerows(rows)
  c.table = str(perturbed)
  second = search_exp.run(c, str(tmp_path / "b"))["targets"]["imagenet16-120"]
  for m in ("zero_shot", "random", "surrogate", "pnag"):
    assert second["methods"][m]["picks"] == first["methods"][m]["picks"], m
    assert second["methods"][m]["evaluated"] == first["methods"][m]["evaluated"], m
  # Not vacuous: the reported test accuracies did change.
  assert (second["methods"]["zero_shot"]["test_accuracy"]["values"]
          != first["methods"]["zero_shot"]["test_accuracy"]["values"])
  # The surrogates restored from both workdirs: identical parameters, and
  # identical predictions over all cells from a support set's context.
  sur_cfg = sur_lib.SurrogateConfig(**{"seed": c.seed, **dict(c.surrogate)})
  from neuroprog.pnag import data
  table_a, table_b = data.load_nb201(str(src)), data.load_nb201(str(perturbed))
  surs = [search_exp._surrogate(str(tmp_path / w), "imagenet16-120", sur_cfg, t,
                                c.keep_checkpoints, None)
          for w, t in (("a", table_a), ("b", table_b))]
  for x, y in zip(jax.tree_util.tree_leaves(surs[0].params),
                  jax.tree_util.tree_leaves(surs[1].params)):
    np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
  ops, adj = table_a.encodings
  sidx = first["search"]["picks"][0]["evaluated"][:sur_cfg.support_size]
  preds = [s.predict_accuracy(ops, adj, (ops[sidx], adj[sidx], t.accuracy("imagenet16-120",
                                                                          "val")[sidx]))
           for s, t in zip(surs, (table_a, table_b))]
  np.testing.assert_array_equal(preds[0], preds[1])

