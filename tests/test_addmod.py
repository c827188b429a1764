import jax
import jax.numpy as jnp
import numpy as np

from neuroprog import tasks
from neuroprog.tasks import addmod


def test_primes_and_default_split():
  assert addmod.PRIMES[:5] == (2, 3, 5, 7, 11) and addmod.PRIMES[-1] == 97
  assert len(addmod.PRIMES) == 25
  task = tasks.get("addmod")
  assert 83 in task.ood_intents and 83 not in task.train_intents
  assert len(task.train_intents) == 20


def test_samples_match_reference_and_cover_operands():
  task = tasks.get("addmod")
  x, y = task.sample(jax.random.key(0), [2, 83, 97], 512)
  for i, p in enumerate([2, 83, 97]):
    xi = np.asarray(x[i])
    assert np.all(xi[:, 2] == addmod.EQ_TOKEN)
    assert xi[:, :2].min() == 0 and xi[:, :2].max() == p - 1
    np.testing.assert_array_equal(task.reference(p, xi), np.asarray(y[i]))


def test_exact_match_restricts_argmax_to_residues():
  task = tasks.get("addmod")
  params = task.intent_params([5])
  logits = jnp.zeros((1, 2, 97))
  logits = logits.at[0, 0, 90].set(10.0).at[0, 0, 3].set(5.0)   # 90 >= p is ignored
  logits = logits.at[0, 1, 2].set(5.0)
  y = jnp.array([[3, 4]])
  np.testing.assert_array_equal(task.exact_match(logits, y, params), [[1.0, 0.0]])
  loss = task.loss(logits, y, params)
  assert loss.shape == (1, 2) and float(loss[0, 1]) > float(loss[0, 0]) - 10


def test_reference_rejects_operands_outside_the_field():
  task = tasks.get("addmod")
  try:
    task.reference(5, np.array([[5, 1]]))
  except ValueError as e:
    assert "0..4" in str(e)
  else:
    raise AssertionError("expected ValueError")
