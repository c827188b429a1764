"""Size-weighted intent draws (`train.step.make_grad_fn`'s intent_sampling,
config keys `intent_sampling` and `intent_sampling_by_model`): the draw
probabilities by value, the drawn frequencies, that 0 leaves a step unchanged,
and the errors for bad values and for tasks without an intent size."""
import jax
import numpy as np
import optax
import pytest

import conftest
from experiments.configs import test as test_config
from experiments.pipelines import select
from neuroprog import tasks
from neuroprog.train import loop
from neuroprog.train import step as step_lib


_addmod_config = conftest.tiny_addmod_config


def test_draw_probabilities_follow_the_intent_size():
  task = tasks.get("addmod")
  primes = (2, 5, 97)
  assert step_lib.intent_draw_probs(task, primes, 0.0) is None
  # Power 0.5 on ADDMOD: proportional to p (p^2 pairs).
  np.testing.assert_allclose(step_lib.intent_draw_probs(task, primes, 0.5),
                             np.array([2, 5, 97]) / 104, rtol=1e-6)
  np.testing.assert_allclose(step_lib.intent_draw_probs(task, primes, 1.0),
                             np.array([4, 25, 9409]) / 9438, rtol=1e-6)
  assert task.intent_size(97) == 9409


def test_drawn_intents_have_those_frequencies():
  probs = np.array([0.1, 0.2, 0.7], np.float32)
  idx = np.asarray(jax.jit(lambda k: step_lib.draw_intents(k, 3, 20000, probs))(
      jax.random.key(0)))
  np.testing.assert_allclose(np.bincount(idx, minlength=3) / 20000, probs, atol=0.015)
  uniform = np.asarray(step_lib.draw_intents(jax.random.key(0), 3, 20000))
  np.testing.assert_allclose(np.bincount(uniform, minlength=3) / 20000, 1 / 3, atol=0.015)
  # Uniform draws are randint's, as before the option existed.
  np.testing.assert_array_equal(
      uniform, np.asarray(jax.random.randint(jax.random.key(0), (20000,), 0, 3)))


def _grads(**kwargs):
  config = _addmod_config()
  task = loop.build_task(config)
  model = loop.create_model(config, task, "meta_mlp")
  state = step_lib.init_state(model, task, optax.sgd(1.0), jax.random.key(0))
  grads, _ = step_lib.make_grad_fn(model, task, intents_per_step=4, examples_per_intent=8,
                                   **kwargs)(state.params, jax.random.key(3))
  return jax.tree_util.tree_leaves(grads)


def test_zero_power_is_the_step_without_the_option():
  # (That a power > 0 changes training: the Trainer test below.)
  for a, b in zip(_grads(), _grads(intent_sampling=0.0)):
    np.testing.assert_array_equal(a, b)


def test_config_per_model_power_and_bad_values():
  config = _addmod_config(intent_sampling=0.5, intent_sampling_by_model={"meta_mlp": 1.0})
  loop.validate_config(config)
  assert loop.intent_sampling(config, "meta_mlp") == 1.0
  assert loop.intent_sampling(config, "direct") == 0.5 and loop.intent_sampling(config) == 0.5
  for value in (1.5, -0.1, "0.5"):
    config = _addmod_config(intent_sampling=value)
    with pytest.raises(ValueError, match=r"config.intent_sampling=.*allowed: a number in 0..1"):
      loop.validate_config(config)
  config = _addmod_config(intent_sampling_by_model={"meta_mpl": 0.5})
  with pytest.raises(ValueError, match=r"config.intent_sampling_by_model: .*meta_mpl"):
    loop.validate_config(config)
  # SUMFIRST has no finite example set per intent: refused before any work.
  config = test_config.get_config()
  config.intent_sampling = 0.5
  with pytest.raises(ValueError, match=r"config.intent_sampling=0.5: task 'sumfirst' defines "
                     r"no intent size.*must be 0"):
    loop.validate_config(config)


def test_trainer_passes_the_power_to_its_step_and_select_sees_the_shadow(tmp_path):
  states = []
  for power in (0.0, 1.0):
    config = _addmod_config(intent_sampling=power)
    tr = loop.Trainer(config, loop.build_task(config), "meta_mlp")
    state, _ = tr.chunk(tr.init(), 0, 2)
    states.append(jax.tree_util.tree_leaves(state.params))
  assert max(float(np.abs(a - b).max()) for a, b in zip(*states)) > 1e-5
  config = _addmod_config(intent_sampling_by_model={"meta_mlp": 0.5})
  with pytest.raises(ValueError, match=r"grid path 'intent_sampling' does not reach meta_mlp: "
                     r"config.intent_sampling_by_model.meta_mlp=0.5 overrides it"):
    select.run(config, "intent_sampling=1.0", str(tmp_path / "sel"), models=["meta_mlp"])
