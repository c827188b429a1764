import jax
import jax.numpy as jnp
import numpy as np
import pytest

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


def test_residue_loss_normalises_over_the_classes_below_p_only():
  """loss_classes="residues": cross entropy over 0..p-1 of each row's p;
  logits of values >= p change neither the loss nor get any gradient."""
  full = tasks.get("addmod")
  res = tasks.get("addmod", loss_classes="residues")
  assert (full.loss_classes, res.loss_classes) == ("all", "residues")
  logits = jax.random.normal(jax.random.key(0), (2, 3, addmod.N_VALUES))
  y = jnp.array([[0, 4, 6], [1, 2, 10]])
  p = jnp.array([[7], [11]])
  expect = np.stack([
      [-jax.nn.log_softmax(logits[i, j, :int(p[i, 0])])[int(y[i, j])] for j in range(3)]
      for i in range(2)])
  np.testing.assert_allclose(res.loss(logits, y, p), expect, rtol=1e-5)
  # The full loss is larger: it also normalises over the 86-90 larger values.
  assert np.all(np.asarray(full.loss(logits, y, p)) > expect + 1.0)
  grad = jax.grad(lambda o: res.loss(o, y, p).sum())(logits)
  assert np.all(np.asarray(grad[0, :, 7:]) == 0) and np.all(np.asarray(grad[1, :, 11:]) == 0)
  assert np.all(np.isfinite(np.asarray(grad)))
  assert np.all(np.abs(np.asarray(grad[0, :, :7])) > 0)
  # Without intents (support refinement passes None) it is the full loss.
  np.testing.assert_allclose(res.loss(logits, y, None), full.loss(logits, y, None))


def test_task_options_are_refused_by_name():
  with pytest.raises(ValueError, match="loss_classes='softmax'; allowed: 'all', 'residues'"):
    tasks.get("addmod", loss_classes="softmax")
  with pytest.raises(ValueError, match=r"Unknown override\(s\) \['loss_classes'\] for task 'sumfirst'"):
    tasks.get("sumfirst", loss_classes="residues")
  assert tasks.options("addmod") == {"loss_classes": "all", "loss_logit_scale": 1.0,
                                     "moduli": "primes", "vocabulary_operands": 0.0}
  assert tasks.options("sumfirst") == tasks.options("arc1d") == {}


def test_logit_scale_multiplies_the_logits_of_the_loss_only():
  logits = jax.random.normal(jax.random.key(1), (2, 3, addmod.N_VALUES))
  y = jnp.array([[0, 4, 6], [1, 2, 10]])
  p = jnp.array([[7], [11]])
  full = tasks.get("addmod")
  scaled = tasks.get("addmod", loss_logit_scale=8.0)
  np.testing.assert_allclose(scaled.loss(logits, y, p), full.loss(8.0 * logits, y, p),
                             rtol=1e-6)
  assert not np.allclose(scaled.loss(logits, y, p), full.loss(logits, y, p))
  np.testing.assert_array_equal(scaled.predict(logits, p), full.predict(logits, p))
  both = tasks.get("addmod", loss_logit_scale=8.0, loss_classes="residues")
  np.testing.assert_allclose(
      both.loss(logits, y, p),
      tasks.get("addmod", loss_classes="residues").loss(8.0 * logits, y, p), rtol=1e-6)
  for bad in (0.0, -1.0, float("inf"), True, "4"):
    with pytest.raises(ValueError, match=r"loss_logit_scale=.*allowed: a finite number > 0"):
      tasks.get("addmod", loss_logit_scale=bad)


def test_every_modulus_is_an_intent_only_when_asked():
  with pytest.raises(ValueError, match=r"p=84 is not prime.*moduli='all' allows every modulus"):
    tasks.get("addmod").check_intent(84)
  task = tasks.get("addmod", moduli="all", val_intents=(53, 71))
  assert task.all_intents() == tuple(range(2, 98))
  assert task.ood_intents == (23, 47, 61, 83, 89)
  assert 84 in task.train_intents and 82 in task.train_intents
  assert len(task.train_intents) == 96 - 7
  with pytest.raises(ValueError, match=r"p=98 is outside its domain; allowed: 2..97"):
    task.check_intent(98)
  with pytest.raises(ValueError, match=r"moduli='odd'; allowed: 'primes', 'all'"):
    tasks.get("addmod", moduli="odd")
  # A composite modulus samples and scores like a prime: y = (a + b) mod 84.
  x, y = task.sample(jax.random.key(0), [84], 256)
  x, y = np.asarray(x)[0], np.asarray(y)[0]
  assert x[:, :2].max() < 84 and x[:, :2].max() > 70
  np.testing.assert_array_equal(y, (x[:, 0] + x[:, 1]) % 84)
  np.testing.assert_array_equal(task.reference(84, x), y)


def test_training_operands_over_the_vocabulary_only_when_asked():
  """vocabulary_operands=1: training draws a, b in 0..96 with y = (a + b) mod
  p; evaluation draws and the default training draws are the paper's."""
  from neuroprog import meta
  from neuroprog.train import step
  key, ip = jax.random.key(3), jnp.asarray([[5], [83]], jnp.int32)
  paper, wide = tasks.get("addmod"), tasks.get("addmod", vocabulary_operands=1.0)
  for got, want in zip(paper.sample_train_params(key, ip, 64), paper.sample_params(key, ip, 64)):
    np.testing.assert_array_equal(got, want)
  for got, want in zip(wide.sample_params(key, ip, 64), paper.sample_params(key, ip, 64)):
    np.testing.assert_array_equal(got, want)
  x, y = (np.asarray(v) for v in wide.sample_train_params(key, ip, 512))
  assert x[0, :, :2].max() > 90 and x[1, :, :2].max() > 90 and x[:, :, :2].min() == 0
  np.testing.assert_array_equal(y, (x[..., 0] + x[..., 1]) % np.array([[5], [83]]))
  np.testing.assert_array_equal(x[..., 2], addmod.EQ_TOKEN)
  # The training objective reads the training draws, evaluation the others.
  model = meta.create("meta_mlp", wide.spec, wide.feature_dim, {"hidden": 4})
  u = jnp.asarray(wide.features([5, 83]))
  _, x_train, _ = step.draw(model, wide, key, u, ip, 512, train=True)
  _, x_eval, _ = step.draw(model, wide, key, u, ip, 512)
  assert np.asarray(x_train)[0, :, :2].max() > 5 and np.asarray(x_eval)[0, :, :2].max() < 5
  params = model.init(jax.random.key(0), u)
  loss = lambda task: float(step.make_objective_fn(model, task, 64)(params, key, u, ip)[0])
  assert loss(wide) != loss(paper)
  assert loss(tasks.get("addmod", vocabulary_operands=0)) == loss(paper)
  # w = 1/2: about half of the examples of p = 5 have an operand >= 5 (of the
  # vocabulary's draws, 1 - (5/97)^2 do), the rest none.
  mixed = tasks.get("addmod", vocabulary_operands=0.5)
  x, y = (np.asarray(v) for v in mixed.sample_train_params(key, ip, 4096))
  wide_share = (x[0, :, :2].max(-1) >= 5).mean()
  assert 0.45 < wide_share < 0.55
  np.testing.assert_array_equal(y, (x[..., 0] + x[..., 1]) % np.array([[5], [83]]))
  for bad in (-0.1, 1.5, True, "mixed"):
    with pytest.raises(ValueError, match=r"vocabulary_operands=.*allowed: a number in \[0, 1\]"):
      tasks.get("addmod", vocabulary_operands=bad)
