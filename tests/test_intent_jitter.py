"""Intent jitter (`train.step.make_grad_fn`'s intent_jitter, config key
`intent_jitter`): the neighbours, the moved features by value, that 0 leaves a
step unchanged, and the errors for bad values."""
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from experiments.configs import test as test_config
from neuroprog.train import loop
from neuroprog.train import step as step_lib


def test_neighbours_are_the_nearest_other_intents_in_standardized_features():
  # One feature 0, 1, 3, 7 (the standardization keeps the order of distances).
  feats = np.array([[0.0], [1.0], [3.0], [7.0]], np.float32)
  np.testing.assert_array_equal(step_lib.intent_neighbours(feats),
                                [[1, 2], [0, 2], [1, 0], [2, 1]])
  np.testing.assert_array_equal(step_lib.intent_neighbours(feats[:2]), [[1], [0]])
  # Distances are taken after standardizing each column: unscaled, (0, 0) is
  # nearest (1, 0); standardized (column stds 0.433 and 4.146), (0, 5) is.
  four = np.array([[0, 0], [1, 0], [0, 5], [0, 10]], np.float32)
  assert step_lib.intent_neighbours(four, k=1)[0, 0] == 2
  with pytest.raises(ValueError, match=r"at least 2 intents; got shape \(1, 1\)"):
    step_lib.intent_neighbours(feats[:1])


def test_jittered_features_lie_on_the_segment_to_a_neighbour():
  feats = jnp.array([[0.0, 10.0], [1.0, 20.0], [3.0, 40.0]])
  neighbours = jnp.asarray(step_lib.intent_neighbours(feats))
  idx = jnp.array([0, 1, 2, 2, 0, 1] * 50)
  u = np.asarray(step_lib.jittered_features(jax.random.key(0), feats, neighbours, idx, 0.25))
  start = np.asarray(feats)[np.asarray(idx)]
  lam_seen, targets_seen = [], set()
  for row, i in zip(u - start, np.asarray(idx)):
    # row = lam * (feats[j] - feats[i]) for one neighbour j, lam in [0, 0.25].
    fits = []
    for j in np.asarray(neighbours)[i]:
      d = np.asarray(feats)[j] - np.asarray(feats)[i]
      lam = row[0] / d[0]
      if np.allclose(row, lam * d, atol=1e-5) and -1e-6 <= lam <= 0.25 + 1e-6:
        fits.append((lam, int(j)))
    assert fits, (row, i)
    lam_seen.append(fits[0][0])
    targets_seen.add((int(i), fits[0][1]))
  # Both neighbours of every intent are drawn, and lam spreads over (0, 0.25).
  assert len(targets_seen) == 6
  assert 0.0 < min(lam_seen) < 0.02 and 0.23 < max(lam_seen) <= 0.25 + 1e-6


def _grads(jitter, key=3):
  config = test_config.get_config()
  task = loop.build_task(config)
  model = loop.create_model(config, task, "meta_mlp")
  state = step_lib.init_state(model, task, optax.sgd(1.0), jax.random.key(0))
  kwargs = {"intents_per_step": 4, "examples_per_intent": 8}
  if jitter is not None:
    kwargs["intent_jitter"] = jitter
  grads, _ = step_lib.make_grad_fn(model, task, **kwargs)(state.params, jax.random.key(key))
  return jax.tree_util.tree_leaves(grads)


def test_zero_jitter_is_the_step_without_the_option_and_jitter_moves_the_gradient():
  before, zero, moved = _grads(None), _grads(0.0), _grads(0.5)
  for a, b in zip(before, zero):
    np.testing.assert_array_equal(a, b)
  assert max(float(jnp.abs(a - c).max()) for a, c in zip(before, moved)) > 1e-4


def test_trainer_passes_the_config_jitter_to_its_step():
  config = test_config.get_config()
  config.seeds = 1
  task = loop.build_task(config)
  states = []
  for jitter in (0.0, 0.5):
    config.intent_jitter = jitter
    tr = loop.Trainer(config, task, "meta_mlp")
    state, _ = tr.chunk(tr.init(), 0, 2)
    states.append(jax.tree_util.tree_leaves(state.params))
  assert max(float(jnp.abs(a - b).max()) for a, b in zip(*states)) > 1e-5


@pytest.mark.parametrize("value", [0.7, -0.1, True, "0.2"])
def test_bad_jitter_is_refused_naming_the_value(value):
  config = test_config.get_config()
  config.intent_jitter = value
  with pytest.raises(ValueError, match=r"config.intent_jitter=.*allowed: a number in 0..0.5"):
    loop.validate_config(config)


class _ReadsExamples:
  shots = 4


def test_jitter_with_example_intents_is_refused():
  task = loop.build_task(test_config.get_config())
  with pytest.raises(ValueError, match=r"this model reads example intents instead"):
    step_lib.make_grad_fn(_ReadsExamples(), task, intents_per_step=2, examples_per_intent=4,
                          intent_jitter=0.1)


def test_a_model_entry_takes_its_own_jitter():
  config = test_config.get_config()
  config.intent_jitter = 0.1
  config.intent_jitter_by_model = {"meta_mlp": 0.25}
  assert loop.intent_jitter(config, "meta_mlp") == 0.25
  assert loop.intent_jitter(config, "direct") == 0.1 and loop.intent_jitter(config) == 0.1
  config.intent_jitter_by_model = {"meta_mlp": 0.9}
  with pytest.raises(ValueError, match=r"config.intent_jitter_by_model\['meta_mlp'\]=0.9"):
    loop.validate_config(config)
  config.intent_jitter_by_model = {"meta_mpl": 0.1}
  with pytest.raises(ValueError, match=r"config.intent_jitter_by_model: .*meta_mpl"):
    loop.validate_config(config)
