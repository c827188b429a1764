import jax
import jax.numpy as jnp
import numpy as np

import neuroprog
from neuroprog import tasks
from neuroprog.tasks import sumfirst


def test_reference_matches_samples():
  task = tasks.get("sumfirst")
  x, y = task.sample(jax.random.key(0), list(range(1, 11)), 64)
  digits = sumfirst.decode_inputs(x)
  assert digits.min() == 0 and digits.max() == 9
  for i, n in enumerate(range(1, 11)):
    np.testing.assert_array_equal(task.reference(n, digits[i]), np.asarray(y[i]))


def _program_for(n):
  """A hand-written SUMFIRST-n MLP: out = relu(sum_{i<n} x'_i + n) - 5."""
  spec = neuroprog.default_spec("sumfirst")
  w0 = np.zeros((10, 16), np.float32)
  w0[:n, 0] = 1.0
  b0 = np.zeros(16, np.float32)
  b0[0] = n
  w1 = np.zeros((16, 1), np.float32)
  w1[0, 0] = 1.0
  return spec, neuroprog.flatten(spec, {"l0/w": w0, "l0/b": b0, "l1/w": w1,
                                        "l1/b": np.array([-5.0], np.float32)})


def test_exact_program_scores_one_and_zero_loss():
  task = tasks.get("sumfirst")
  x, y = task.sample(jax.random.key(1), [4], 256)
  spec, theta = _program_for(4)
  out = neuroprog.execute(spec, theta, x[0])[None]
  params = task.intent_params([4])
  assert float(task.exact_match(out, y, params).mean()) == 1.0
  assert float(task.loss(out, y, params).max()) < 1e-10
  # The program for n=3 fails on SUMFIRST-4 whenever x_3 != 0.
  _, wrong = _program_for(3)
  out3 = neuroprog.execute(spec, wrong, x[0])[None]
  digits = sumfirst.decode_inputs(x)[0]
  np.testing.assert_array_equal(task.exact_match(out3, y, params)[0], (digits[:, 3] == 0))




def test_targets_are_centred_and_scaled():
  task = tasks.get("sumfirst")
  params = task.intent_params([2])
  # out = 0 predicts 22.5 (rounds to 22); the loss of out = 0 against y = 13.5
  # is ((13.5 - 22.5) / 4.5)^2 = 4, whatever the intent.
  out = jnp.zeros((1, 1, 1))
  assert float(task.predict(out, params)[0, 0]) == 22.0
  np.testing.assert_allclose(task.loss(out, jnp.array([[13.5]]), params), [[4.0]])
  np.testing.assert_allclose(sumfirst.encode_targets(jnp.array([0.0, 90.0])), [-5.0, 15.0])


def test_digits_are_uniform_and_independent():
  task = tasks.get("sumfirst")
  x, _ = task.sample(jax.random.key(3), list(range(1, 11)), 2000)
  d = sumfirst.decode_inputs(x).reshape(-1, 10)
  freq = np.bincount(d.ravel(), minlength=10) / d.size
  np.testing.assert_allclose(freq, 0.1, atol=0.005)
  # Neighbouring positions (drawn from one random word) are uncorrelated.
  assert abs(np.corrcoef(d[:, 3], d[:, 4])[0, 1]) < 0.02
  assert abs(np.corrcoef(d[:, 4], d[:, 5])[0, 1]) < 0.02
