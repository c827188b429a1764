import jax
import jax.numpy as jnp
import numpy as np
import pytest

import neuroprog
from neuroprog.programs import layout as layout_lib

from conftest import TASKS, random_theta


@pytest.mark.parametrize("task", TASKS)
def test_round_trip_is_exact(task):
  spec = neuroprog.default_spec(task)
  theta = random_theta(spec, jax.random.key(0))
  tensors = neuroprog.unflatten(spec, theta)
  np.testing.assert_array_equal(neuroprog.flatten(spec, tensors), theta)
  # And the other way: tensors -> θ -> tensors.
  again = neuroprog.unflatten(spec, neuroprog.flatten(spec, tensors))
  for name, x in tensors.items():
    np.testing.assert_array_equal(again[name], x)


def test_layout_is_contiguous_and_named():
  spec = neuroprog.default_spec("addmod")
  offset = 0
  for e in neuroprog.layout(spec):
    assert e.offset == offset
    offset += e.size
  assert offset == neuroprog.num_params(spec)
  tensors = neuroprog.unflatten(spec, jnp.arange(offset, dtype=jnp.float32))
  assert tensors["embed/tok"].shape == (98, 16)
  assert tensors["L0/attn/wq"].shape == (16, 4, 4)
  assert float(tensors["embed/tok"][0, 0]) == 0.0
  assert float(tensors["embed/tok"][1, 0]) == 16.0   # row-major


def test_round_trip_with_batch_axis_and_under_jit():
  spec = neuroprog.default_spec("sumfirst")
  thetas = jax.random.normal(jax.random.key(1), (5, 193))
  f = jax.jit(lambda t: neuroprog.flatten(spec, neuroprog.unflatten(spec, t)))
  np.testing.assert_array_equal(f(thetas), thetas)
  assert neuroprog.unflatten(spec, thetas)["l0/w"].shape == (5, 10, 16)


def test_init_theta_scales():
  spec = neuroprog.default_spec("addmod")
  tensors = neuroprog.unflatten(spec, neuroprog.init_theta(spec, jax.random.key(0)))
  assert np.all(tensors["L0/ln1/g"] == 1.0) and np.all(tensors["L0/attn/bq"] == 0.0)
  assert abs(float(tensors["L0/mlp/w1"].std()) - 0.25) < 0.03   # 1/sqrt(16)


def test_wrong_theta_length_raises():
  spec = neuroprog.default_spec("sumfirst")
  with pytest.raises(ValueError, match=r"\(192,\).*193"):
    neuroprog.unflatten(spec, jnp.zeros(192))


def test_flatten_rejects_missing_unknown_and_misshaped():
  spec = neuroprog.default_spec("sumfirst")
  tensors = neuroprog.unflatten(spec, jnp.zeros(193))
  with pytest.raises(ValueError, match=r"missing tensors \['l1/b'\]"):
    neuroprog.flatten(spec, {k: v for k, v in tensors.items() if k != "l1/b"})
  with pytest.raises(ValueError, match=r"unknown tensors \['extra'\]"):
    neuroprog.flatten(spec, {**tensors, "extra": jnp.zeros(1)})
  with pytest.raises(ValueError, match=r"'l0/w' has shape \(16, 10\)"):
    neuroprog.flatten(spec, {**tensors, "l0/w": jnp.zeros((16, 10))})
