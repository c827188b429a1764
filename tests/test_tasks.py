"""The Task API shared by all families (neuroprog/tasks/__init__.py, base.py)."""
import jax
import numpy as np
import pytest

from neuroprog import tasks


@pytest.mark.parametrize("name", tasks.NAMES)
def test_splits_are_disjoint_and_cover_the_domain(name):
  task = tasks.get(name)
  assert set(task.train_intents).isdisjoint(task.ood_intents)
  assert set(task.train_intents) | set(task.ood_intents) == set(task.intents)
  assert task.ood_intents == task.default_ood


@pytest.mark.parametrize("name", tasks.NAMES)
def test_features_have_a_fixed_width_and_separate_intents(name):
  task = tasks.get(name)
  f = task.features(task.intents)
  assert f.shape == (len(task.intents), task.feature_dim) and f.dtype == np.float32
  assert len({row.tobytes() for row in f}) == len(task.intents)


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n == "arc1d"
                                  else n for n in tasks.NAMES])   # CI budget: arc1d ~14 s
def test_sampling_is_deterministic_in_the_key(name):
  task = tasks.get(name)
  intents = task.train_intents[:3]
  x1, y1 = task.sample(jax.random.key(0), intents, 8)
  x2, y2 = task.sample(jax.random.key(0), intents, 8)
  x3, _ = task.sample(jax.random.key(1), intents, 8)
  np.testing.assert_array_equal(x1, x2)
  np.testing.assert_array_equal(y1, y2)
  assert not np.array_equal(x1, x3)
  assert x1.shape[:2] == (3, 8) and y1.shape[:2] == (3, 8)


def test_sample_is_jittable_with_traced_intents():
  task = tasks.get("addmod")
  params = task.intent_params([5, 7])
  x, y = jax.jit(task.sample_params, static_argnums=2)(jax.random.key(0), params, 16)
  assert int(x[0, :, :2].max()) < 5 and int(x[1, :, :2].max()) < 7


def test_overrides():
  task = tasks.get("addmod", ood_intents=[83, 89], train_intents=(2, 3, 5))
  assert task.train_intents == (2, 3, 5) and task.ood_intents == (83, 89)
  with pytest.raises(ValueError, match=r"overlap in \[5\]"):
    tasks.get("addmod", ood_intents=[5], train_intents=[3, 5])
  held = tasks.get("sumfirst", ood_intents=[4, 8], val_intents=[6])
  assert held.val_intents == (6,) and 6 not in held.train_intents
  with pytest.raises(ValueError, match=r"val_intents and ood_intents overlap in \[4\]"):
    tasks.get("sumfirst", ood_intents=[4, 8], val_intents=[4])
  with pytest.raises(ValueError, match=r"Unknown override\(s\) \['ood'\].*ood_intents"):
    tasks.get("addmod", ood=[83])
  with pytest.raises(ValueError, match=r"Unknown task 'sumlast'.*'sumfirst', 'addmod', 'arc1d'"):
    tasks.get("sumlast")


@pytest.mark.parametrize("name, intent, match", [
    ("sumfirst", 0, r"n=0 is outside its domain; allowed: 1\.\.10"),
    ("sumfirst", 11, r"n=11 .*1\.\.10"),
    ("sumfirst", 2.0, "n must be an int"),
    ("addmod", 91, r"p=91 is not prime.*\[2, 3, 5"),
    ("addmod", 101, r"p=101 is outside its domain"),
    ("arc1d", ("spin", None), r"unknown family 'spin'; allowed: \['flip'"),
    ("arc1d", ("move_right", 7), r"parameter 7 of 'move_right'.*1\.\.5"),
    ("arc1d", ("flip", 2), "takes no parameter"),
    ("arc1d", "flip", r"\(family, parameter\) pair"),
])
def test_bad_intents_raise_before_any_work(name, intent, match):
  task = tasks.get(name)
  with pytest.raises(ValueError, match=match):
    task.sample(jax.random.key(0), [task.train_intents[0], intent], 4)
  with pytest.raises(ValueError, match=match):
    task.intent_features(task.check_intent(intent))


def test_bad_sample_size():
  with pytest.raises(ValueError, match="positive int, got 0"):
    tasks.get("sumfirst").sample(jax.random.key(0), [1], 0)
