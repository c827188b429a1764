import jax
import jax.numpy as jnp
import numpy as np
import pytest

from neuroprog.meta import static_rows

_RNG = np.random.default_rng(0)
# Every pattern _pattern recognises, plus index arrays it must not (None).
CASES = {
    "random": (_RNG.integers(0, 9, 30), None),
    "permutation": (_RNG.permutation(9), None),
    "range": (np.arange(2, 8), ("range", 2, 6)),
    "repeat": (np.repeat(np.arange(1, 5), 3), ("repeat", 1, 4, 3)),
    "tile": (np.tile(np.arange(3, 7), 3), ("tile", 3, 4, 3)),
    "constant": (np.full(5, 2), ("repeat", 2, 1, 5)),
    "repeat_with_gap": (np.repeat(np.array([0, 1, 3]), 2), None),
    "uneven_runs": (np.array([0, 0, 1, 1, 1, 2, 2]), None),
    # Two groups of a segment, each its own dense layer (as in ADDMOD).
    "blocks": (np.r_[np.repeat(np.arange(0, 2), 4), np.tile(np.arange(5, 9), 2)],
               (("repeat", 0, 2, 4), ("tile", 5, 4, 2))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_equal_gather_and_segment_sum(name):
  idx, pattern = CASES[name]
  blocks = static_rows._structure(idx)   # pylint: disable=protected-access
  assert blocks == (pattern if pattern is None or isinstance(pattern[0], tuple)
                    else (pattern,))
  k, m = len(idx), 9
  x = jnp.asarray(_RNG.normal(size=(k, 2, 3)), jnp.float32)
  h = jnp.asarray(_RNG.normal(size=(m, 2, 3)), jnp.float32)
  w = jnp.asarray(_RNG.normal(size=(m, 2, 3)), jnp.float32)
  v = jnp.asarray(_RNG.normal(size=(k, 2, 3)), jnp.float32)
  np.testing.assert_allclose(static_rows.sum_rows(x, idx, m),
                             jax.ops.segment_sum(x, idx, m), atol=1e-6)
  np.testing.assert_array_equal(static_rows.take_rows(h, idx), h[idx])
  grad_sum = lambda f: jax.grad(lambda x: (f(x) * w).sum())(x)
  np.testing.assert_allclose(grad_sum(lambda x: static_rows.sum_rows(x, idx, m)),
                             grad_sum(lambda x: jax.ops.segment_sum(x, idx, m)), atol=1e-6)
  grad_take = lambda f: jax.grad(lambda h: (f(h) * v).sum())(h)
  np.testing.assert_allclose(grad_take(lambda h: static_rows.take_rows(h, idx)),
                             grad_take(lambda h: h[idx]), atol=1e-6)


def test_vmapped_gradients_compile_without_scatter():
  # The point of the module: the seed-vmapped training step of the main job
  # must not contain scatter-adds (XLA:CPU runs them element by element).
  idx_random, _ = CASES["random"]
  idx_tile, _ = CASES["tile"]

  def loss(h):
    a = static_rows.take_rows(h, idx_random)
    b = static_rows.sum_rows(static_rows.take_rows(h, idx_tile), idx_tile, 9)
    return (a ** 2).sum() + (b ** 3).sum()

  f = jax.jit(jax.vmap(jax.grad(loss)))
  hs = jnp.asarray(_RNG.normal(size=(4, 9, 2, 3)), jnp.float32)
  hlo = f.lower(hs).compile().as_text()
  assert " scatter(" not in hlo and " gather(" in hlo   # the random index gathers
  ref = jax.vmap(jax.grad(lambda h: (h[idx_random] ** 2).sum() + (
      jax.ops.segment_sum(h[idx_tile], idx_tile, 9) ** 3).sum()))(hs)
  np.testing.assert_allclose(f(hs), ref, rtol=1e-5, atol=1e-5)


def test_rows_without_inputs_are_zero_and_bad_indices_are_refused():
  out = static_rows.sum_rows(jnp.ones((3, 2)), np.array([0, 0, 4]), 6)
  np.testing.assert_array_equal(out[:, 0], [2, 0, 0, 0, 1, 0])
  with pytest.raises(ValueError, match=r"0\.\.5, got 0\.\.6"):
    static_rows.sum_rows(jnp.ones((2, 2)), np.array([0, 6]), 6)
  with pytest.raises(ValueError, match="3 rows but idx has 2"):
    static_rows.sum_rows(jnp.ones((3, 2)), np.array([0, 1]), 6)
  with pytest.raises(ValueError, match="1-D integer"):
    static_rows.take_rows(jnp.ones((3, 2)), np.array([0.0, 1.0]))
  with pytest.raises(ValueError, match=r"0\.\.2, got -1\.\.1"):
    static_rows.take_rows(jnp.ones((3, 2)), np.array([-1, 1]))
