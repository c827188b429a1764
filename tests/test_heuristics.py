"""The tasks' one-line baselines (`Task.heuristics`) and their place in a run."""
import jax
import numpy as np
import pytest

from experiments.configs import test as test_config
from neuroprog import tasks
from neuroprog.tasks import addmod as addmod_lib
from neuroprog.tasks import base
from neuroprog.tasks.arc1d import task as arc1d_task
from neuroprog.train import loop
from neuroprog.train import step as step_lib


def _score(task, name, intent, n=2000, seed=0):
  x, y = task.sample(jax.random.key(seed), [intent], n)
  pred = task.heuristics()[name](intent, np.asarray(x[0]))
  return float(task.heuristic_accuracy(pred, np.asarray(y[0])).mean())


def test_addmod_heuristics_score_what_counting_pairs_gives():
  task = tasks.get("addmod", val_intents=(53, 71))
  # Training primes around the held-out ones: 23 -> 19 (closer than 29),
  # 53 -> 59 (tie with 47, which is OOD, so not a candidate).
  assert task.nearest_train_intent(23) == 19
  assert task.nearest_train_intent(53) == 59
  # a + b, never wrap: right when a + b < p, (p + 1) / (2p) of uniform pairs.
  assert abs(_score(task, addmod_lib.NO_WRAP, 53) - 54 / 106) < 0.04
  # (a + b) mod 19 at p = 23: right only when a + b < 19, 190 of 529 pairs.
  assert abs(_score(task, base.NEAREST_RULE, 23) - 190 / 529) < 0.04
  # On a training prime the nearest rule is the task's own program.
  assert _score(task, base.NEAREST_RULE, 59, n=500) == 1.0


def test_nearest_rule_is_the_sampler_s_program_on_training_intents():
  # The rule reads the sampler's x (network scale for SUMFIRST, padded grids
  # for 1D-ARC): on a trained intent it must reproduce y exactly.
  sumfirst = tasks.get("sumfirst")
  assert _score(sumfirst, base.NEAREST_RULE, 5, n=500) == 1.0
  assert sumfirst.nearest_train_intent(4) == 3
  # n = 4 answered with n = 3's sum: right exactly when the 4th digit is 0.
  assert abs(_score(sumfirst, base.NEAREST_RULE, 4) - 0.1) < 0.03
  windowsum = tasks.get("windowsum")
  assert _score(windowsum, base.NEAREST_RULE, 4, n=300) == 1.0
  arc = tasks.get("arc1d")
  for intent in (("scale", 2), ("move_right", 2), ("flip", None)):
    assert _score(arc, base.NEAREST_RULE, intent, n=200) == 1.0, intent
  assert arc.nearest_train_intent(("move_right", 3)) == ("move_right", 2)
  # Moving by 2 where 3 is asked never gives the right grid (a bar moves).
  assert _score(arc, base.NEAREST_RULE, ("move_right", 3), n=200) == 0.0
  # Recolouring: the input is right only where it already has the colour.
  ident = _score(arc, arc1d_task.IDENTITY, ("recolor", 4), n=1000)
  assert 0.0 < ident < 0.1


def test_arc1d_nearest_rule_without_a_trained_family_matches_nothing():
  arc = tasks.get("arc1d", ood_intents=(("flip", None),))
  assert arc.nearest_train_intent(("flip", None)) is None
  assert _score(arc, base.NEAREST_RULE, ("flip", None), n=50) == 0.0


def test_held_out_examples_are_the_ones_the_models_are_scored_on():
  # Scoring a model by hand on held_out_examples must give the per-intent
  # accuracies the run reports (`_evaluate_splits`), so a heuristic row and
  # the model rows read the same examples.
  config = test_config.get_config()
  task = loop.build_task(config)
  tr = loop.Trainer(config, task, "meta_mlp")
  params_S = tr.init().params
  reported = loop._evaluate_splits(config, task, tr, params_S, ("id", "ood"))
  for split in ("id", "ood"):
    intents, x, y = loop.held_out_examples(config, task, split)
    assert x.shape[:2] == (len(intents), config.eval_examples)
    u = jax.numpy.asarray(task.features(intents))
    ip = jax.numpy.asarray(task.intent_params(intents))
    want = np.asarray([[reported[split][task.format_intent(i)][s] for i in intents]
                       for s in range(config.seeds)])
    # Untrained programs still get some sums right; other examples would move these.
    assert want.max() > 0
    for seed in range(config.seeds):
      params = jax.tree.map(lambda a, s=seed: a[s], params_S)
      out = step_lib.outputs_for(tr.model, params, u, jax.numpy.asarray(x))
      by_hand = np.asarray(task.exact_match(out, jax.numpy.asarray(y), ip).mean(-1))
      np.testing.assert_allclose(by_hand, want[seed], rtol=1e-6)
  assert loop.held_out_examples(config, task, "ood")[0] == task.ood_intents
  with pytest.raises(ValueError, match="'test'.*allowed"):
    loop.held_out_examples(config, task, "test")


def test_evaluate_heuristics_means_per_split():
  config = test_config.get_config()
  task = loop.build_task(config)
  out = loop.evaluate_heuristics(config, task)
  h = out[base.NEAREST_RULE]
  assert set(h["ood"]) == {"n=4", "n=8"} and set(h["val"]) == {"n=6"}
  assert h["ood_mean"] == pytest.approx(np.mean(list(h["ood"].values())))
  # n = 6 from n = 5's (or 7's) sum: right when one digit is 0, about 0.1.
  assert abs(h["val_mean"] - 0.1) < 0.08
