"""Batched normal draws: the values of per-tensor draws, in a few kernels."""
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from neuroprog import meta, tasks
from neuroprog.meta import batched_init


class _Three(nn.Module):
  """Three normal-initialised tensors of different sizes and stds."""

  @nn.compact
  def __call__(self, x):
    a = self.param("a", batched_init.normal(0.5), (3, 7))
    b = self.param("b", batched_init.normal(1 / np.sqrt(64)), (2, 64, 64))
    c = self.param("c", batched_init.normal(2.0), (5,))
    return x @ a + b.sum() + c.sum()


def _leaves(tree):
  return [np.asarray(a) for a in jax.tree_util.tree_leaves(tree)]


def _assert_bit_identical(a, b):
  la, lb = _leaves(a), _leaves(b)
  assert len(la) == len(lb)
  for x, y in zip(la, lb):
    assert x.shape == y.shape and np.array_equal(x, y)


def test_normal_outside_batched_is_the_plain_draw():
  key = jax.random.key(3)
  got = batched_init.normal(0.25)(key, (4, 5))
  np.testing.assert_array_equal(got, 0.25 * jax.random.normal(key, (4, 5), jnp.float32))


def test_batched_draws_equal_the_per_tensor_draws_under_jit_and_vmap():
  module, x = _Three(), jnp.ones((1, 3))
  plain = jax.jit(module.init)(jax.random.key(1), x)
  batched = jax.jit(lambda k: batched_init.batched(module.init, k, x))(jax.random.key(1))
  _assert_bit_identical(batched, plain)
  keys = jax.vmap(jax.random.key)(jnp.arange(3))
  plain_v = jax.jit(jax.vmap(lambda k: module.init(k, x)))(keys)
  batched_v = jax.jit(jax.vmap(lambda k: batched_init.batched(module.init, k, x)))(keys)
  _assert_bit_identical(batched_v, plain_v)
  # the three seeds differ from each other
  assert not np.array_equal(batched_v["params"]["a"][0], batched_v["params"]["a"][1])


def test_meta_gnn_draws_batched_into_one_kernel_with_the_same_values():
  task = tasks.get("sumfirst")
  u = jnp.asarray(task.features(task.train_intents))
  net = meta.create("meta_gnn", task.spec, task.feature_dim, {"d": 8, "rounds": 1}).net
  plain = lambda k: net.init(k, u[:1])
  batched = lambda k: batched_init.batched(net.init, k, u[:1])
  key = jax.random.key(0)
  assert batched_init.random_bits_calls(plain, key) == 16   # one per kernel tensor
  assert batched_init.random_bits_calls(batched, key) == 1
  _assert_bit_identical(jax.jit(batched)(key), jax.jit(plain)(key))


def test_groups_cover_every_draw_once_within_the_padding_allowance():
  sizes = [5, 36864, 12, 8192, 8192, 704, 268800, 1 << 23, 3]
  groups = batched_init._groups(sizes)  # pylint: disable=protected-access
  assert sorted(i for g in groups for i in g) == list(range(len(sizes)))
  for g in groups:
    width = sizes[g[0]]
    assert width == max(sizes[i] for i in g)
    assert len(g) * width - sum(sizes[i] for i in g) <= batched_init._SLACK  # pylint: disable=protected-access
  # padding others to the 2^23-element draw would exceed the allowance; the
  # rest fit in one kernel of width 268,800
  assert groups == [[7], [6, 1, 3, 4, 5, 2, 0, 8]]


def test_raw_uint32_keys_fall_back_to_per_tensor_draws():
  module, x = _Three(), jnp.ones((1, 3))
  key = jax.random.PRNGKey(1)
  _assert_bit_identical(batched_init.batched(module.init, key, x), module.init(key, x))


def test_a_transformed_placeholder_is_an_error_not_a_wrong_tree():
  class Doubled(nn.Module):
    @nn.compact
    def __call__(self, x):
      w = self.param("w", lambda k, s: 2.0 * batched_init.normal(1.0)(k, s), (3, 2))
      return x @ w

  with pytest.raises(RuntimeError, match="1 deferred draws, 0 found"):
    batched_init.batched(Doubled().init, jax.random.key(0), jnp.ones((1, 3)))
