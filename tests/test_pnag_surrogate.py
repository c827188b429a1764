"""The meta-learned accuracy surrogate on synthetic task families."""
import numpy as np
import pytest

from neuroprog.pnag import spaces
from neuroprog.pnag import surrogate as sur_lib

SPACE = spaces.get("nb201")


def test_rank_metrics_by_hand():
  true = np.arange(200.0)
  m = sur_lib.rank_metrics(true, true)
  assert m.spearman == pytest.approx(1.0) and m.kendall == pytest.approx(1.0)
  assert m.precision_top1 == 1.0
  r = sur_lib.rank_metrics(-true, true)
  assert r.spearman == pytest.approx(-1.0) and r.precision_top1 == 0.0
  # top 1% of 200 = 2 cells; the prediction gets one of them.
  pred = true.copy()
  pred[198] = -1
  assert sur_lib.rank_metrics(pred, true).precision_top1 == 0.5


def test_config_validation():
  with pytest.raises(ValueError, match="hidden"):
    sur_lib.SurrogateConfig(hidden=0)
  with pytest.raises(ValueError, match="support_size=1"):
    sur_lib.SurrogateConfig(support_size=1)


def _family(m=600, seed=0):
  """Cells with a planted quality: each op has a value; a task's accuracy is
  offset + scale * sum(values) (+ noise), so tasks share the order of cells
  but not their accuracy units (as NB201's datasets roughly do)."""
  rng = np.random.default_rng(seed)
  archs = [SPACE.from_code(int(c)) for c in rng.choice(SPACE.size, m, replace=False)]
  ops, adj = SPACE.encode_batch(archs)
  value = np.array([0, 0, 1.0, 0.3, 2.0, 1.5, 0.5])   # per op id
  quality = value[ops].sum(1)
  def task(offset, scale, noise):
    return (offset + scale * quality + noise * rng.normal(size=m)).astype(np.float32)
  return ops, adj, task


def test_meta_trained_surrogate_ranks_a_new_task():
  ops, adj, task = _family()
  tasks = sur_lib.Tasks(ops, adj, np.stack([task(80, 2.0, 0.3), task(50, 5.0, 0.3)]))
  cfg = sur_lib.SurrogateConfig(hidden=32, context_dim=4, support_size=10, query_size=64,
                                episodes=4, steps=150, learning_rate=3e-3)
  sur = sur_lib.meta_train(tasks, cfg, num_ops=SPACE.num_ops, log_every=150)
  new = task(20, 1.0, 0.1)   # unseen units: accuracies near 20-30%
  sidx = sur_lib.support_indices(np.random.default_rng(3), len(new), 10)
  m = sur_lib.evaluate(sur, ops, adj, new, new, sidx)
  assert m.spearman > 0.8 and m.kendall > 0.6
  pred = sur.predict_accuracy(ops, adj, (ops[sidx], adj[sidx], new[sidx]))
  # predictions come back in the new task's units
  assert abs(np.mean(pred) - np.mean(new)) < 0.5 * np.std(new) + 1.0
  assert np.corrcoef(pred, new)[0, 1] > 0.8


def test_meta_train_rejects_bad_tasks():
  ops, adj, task = _family(m=50)
  cfg = sur_lib.SurrogateConfig(support_size=10, query_size=64)
  with pytest.raises(ValueError, match="exceeds the 50"):
    sur_lib.meta_train(sur_lib.Tasks(ops, adj, task(0, 1, 0)[None]), cfg, num_ops=7)
  with pytest.raises(ValueError, match="must be \\[D, 50\\]"):
    sur_lib.meta_train(sur_lib.Tasks(ops, adj, task(0, 1, 0)), cfg, num_ops=7)
