import jax
import numpy as np
import pytest

from neuroprog import tasks
from neuroprog.tasks import arc1d
from neuroprog.tasks.arc1d import families


def _g(s):
  return np.array([int(c) for c in s])


@pytest.mark.parametrize("intent, grid, want", [
    (("flip", None), "0064444000", "0044446000"),
    (("move_right", 2), "0777000", "0007770"),
    (("move_left", 3), "0000055500", "0055500000"),
    (("recolor", 4), "0220030", "0440040"),
    (("fill", None), "0300003000", "0333333000"),
    (("hollow", None), "0666660", "0600060"),
    (("mirror", None), "22009000000", "00009002200"),
    (("denoise", None), "0101111001", "0001111000"),
    (("scale", 3), "0220000000", "0222222000"),
])
def test_reference_solvers_on_hand_examples(intent, grid, want):
  np.testing.assert_array_equal(arc1d.reference(intent, _g(grid)), _g(want))


def test_generators_agree_with_reference_for_every_intent():
  task = tasks.get("arc1d")
  x, y = task.sample(jax.random.key(0), task.intents, 64)
  x, y = np.asarray(x), np.asarray(y)
  assert x.shape == (len(task.intents), 64, arc1d.MAX_LEN)
  for i, intent in enumerate(task.intents):
    for xi, yi in zip(x[i], y[i]):
      n = int((xi != arc1d.PAD).sum())
      assert np.all(xi[n:] == arc1d.PAD) and np.all(yi[n:] == arc1d.PAD)
      np.testing.assert_array_equal(arc1d.reference(intent, xi[:n]), yi[:n],
                                    err_msg=f"{intent}: {xi[:n]}")
    # Inputs vary and the rule changes them (no trivial identity tasks).
    assert len({r.tobytes() for r in x[i]}) > 32
    assert np.mean([not np.array_equal(a, b) for a, b in zip(x[i], y[i])]) > 0.8


def test_features_encode_family_and_parameter():
  task = tasks.get("arc1d")
  f = task.intent_features(("move_right", 3))
  assert f[families.FAMILIES.index("move_right")] == 1.0 and f.sum() == pytest.approx(1.0 + 0.3 + 1.0)
  assert task.intent_features(("flip", None))[-2:].tolist() == [0.0, 0.0]
  assert ("move_right", 3) in task.ood_intents and ("move_right", 2) in task.train_intents
  assert {("recolor", 4), ("recolor", 7)} <= set(task.ood_intents)


@pytest.mark.slow  # CI time budget; runs in make test-slow
def test_loss_and_exact_match_ignore_padding():
  task = tasks.get("arc1d")
  x, y = task.sample(jax.random.key(1), [("hollow", None)], 8)
  params = task.intent_params([("hollow", None)])
  perfect = 20.0 * jax.nn.one_hot(y, 11)
  # Scramble the logits of padding cells: exact match must not care.
  perfect = np.where((np.asarray(y) == arc1d.PAD)[..., None], 0.0, perfect)
  assert float(task.exact_match(perfect, y, params).min()) == 1.0
  assert float(task.loss(perfect, y, params).max()) < 1e-6
  wrong = perfect.copy()
  wrong[0, 0, 0] = 0.0
  wrong[0, 0, 0, (int(y[0, 0, 0]) + 1) % 10] = 20.0
  np.testing.assert_array_equal(task.exact_match(wrong, y, params)[0, :2], [0.0, 1.0])


@pytest.mark.parametrize("grid, match", [
    ([0, 1, 12], "colour 12 is outside 0..9"),
    ([0, 1.5, 2], "must be integers, got 1.5"),
    ([[0, 1], [2, 3]], r"one row of cells, got shape \(2, 2\)"),
])
def test_bad_grids(grid, match):
  with pytest.raises(ValueError, match=match):
    arc1d.reference(("flip", None), grid)


def test_mirror_needs_one_pivot():
  with pytest.raises(ValueError, match="exactly one pivot"):
    arc1d.reference(("mirror", None), _g("0220000"))
