"""Multi-scale quantization: resampling matrices, nearest codes, residual accumulation."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from neuroprog.pnag import msq


@pytest.mark.parametrize("n_out, n_in", [(1, 8), (3, 8), (5, 22), (8, 8)])
def test_area_pooling_averages_blocks(n_out, n_in):
  m = msq.area_matrix(n_out, n_in)
  np.testing.assert_allclose(m.sum(1), 1.0, rtol=1e-6)
  assert np.all(m.sum(0) > 0)                      # every input cell is used
  if n_in % n_out == 0:
    k = n_in // n_out
    x = np.arange(n_in, dtype=np.float32)
    np.testing.assert_allclose(m @ x, x.reshape(n_out, k).mean(1), rtol=1e-6)


def test_pool_and_upsample_keep_constants_and_identity():
  x = jnp.full((2, 8, 8, 3), 1.5)
  for n in (1, 2, 3, 5, 8):
    np.testing.assert_allclose(msq.pool(x, n), 1.5, rtol=1e-6)
    np.testing.assert_allclose(msq.upsample(msq.pool(x, n), 8), 1.5, rtol=1e-6)
  y = jax.random.normal(jax.random.key(0), (2, 8, 8, 3))
  assert msq.pool(y, 8) is y and msq.upsample(y, 8) is y
  # bilinear upsampling of a 2x2 map: the corners keep their values
  z = jnp.arange(4.0).reshape(1, 2, 2, 1)
  up = msq.upsample(z, 8)
  np.testing.assert_allclose(up[0, 0, 0, 0], 0.0)
  np.testing.assert_allclose(up[0, -1, -1, 0], 3.0)


def test_nearest_code_is_the_brute_force_argmin():
  r = jax.random.normal(jax.random.key(1), (3, 4, 4, 5))
  z = jax.random.normal(jax.random.key(2), (17, 5))
  idx = msq.nearest_code(r, z)
  brute = np.argmin(((np.asarray(r)[..., None, :] - np.asarray(z)) ** 2).sum(-1), -1)
  np.testing.assert_array_equal(idx, brute)


def test_quantize_recovers_a_map_built_from_codes():
  scales, size = (1, 2, 4), 4
  codebook = 3.0 * jax.random.normal(jax.random.key(3), (32, 6))
  # coarse codes far larger than fine ones, so greedy residual coding is exact
  tokens = [jax.random.randint(jax.random.key(10 + t), (2, n, n), 0, 32) for t, n in enumerate(scales)]
  weights = (1.0, 0.0, 0.0)
  e = sum(w * msq.upsample(codebook[i], size) for w, i in zip(weights, tokens))
  q = msq.quantize(e, codebook, scales)
  np.testing.assert_array_equal(q.indices[0], tokens[0])
  np.testing.assert_allclose(q.accumulated[0], e, atol=1e-5)
  # the accumulated maps equal the reconstruction from the token maps
  np.testing.assert_allclose(msq.reconstruct(q.indices, codebook, size), q.accumulated[-1],
                             atol=1e-5)
  # every scale quantizes the pooled residual of the scales before it
  f = jnp.zeros_like(e)
  for n, r, idx in zip(scales, q.residuals, q.indices):
    np.testing.assert_allclose(r, msq.pool(e - f, n), atol=1e-5)
    np.testing.assert_array_equal(idx, msq.nearest_code(r, codebook))
    f = f + msq.upsample(codebook[idx], size)


@pytest.mark.parametrize("scales", [(), (2, 1, 8), (1, 2, 4), (0, 8), (1.0, 8)])
def test_bad_scales_are_rejected(scales):
  with pytest.raises(ValueError, match="scales must be strictly increasing"):
    msq.check_scales(scales, 8)
