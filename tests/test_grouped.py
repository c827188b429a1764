import jax
import jax.numpy as jnp
import numpy as np
import pytest

from neuroprog.meta import grouped


def test_layout_makes_groups_contiguous_and_buckets_by_size():
  group = np.array([2, 0, 2, 1, 0, 2, 3, 3])    # sizes: 0->2, 1->1, 2->3, 3->2
  lay = grouped.group_layout(group)
  seq = group[lay.order]
  assert seq.tolist() == [1, 0, 0, 3, 3, 2, 2, 2]
  assert lay.buckets == ((0, 1, 1, 0), (1, 2, 2, 1), (5, 1, 3, 3))
  np.testing.assert_array_equal(lay.order[lay.rank], np.arange(8))


def test_grouped_dense_equals_per_element_gather_reference():
  rng = np.random.default_rng(0)
  group = rng.integers(0, 5, size=40)
  lay = grouped.group_layout(group)
  layer = grouped.GroupedDense(lay.buckets, lay.n_groups, 3)
  x = jax.random.normal(jax.random.key(0), (40, 2, 4))        # [M, B, D] sorted order
  params = layer.init(jax.random.key(1), x)
  params = jax.tree_util.tree_map(lambda a: a + 0.1, params)  # non-zero bias too
  y = layer.apply(params, x)
  w, b = params["params"]["kernel"], params["params"]["bias"]
  g = lay.group_sorted
  want = jnp.einsum("mbd,mde->mbe", x, w[g]) + b[g][:, None]   # the gather we avoid
  np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def test_nested_order_keeps_both_groupings_contiguous():
  coarse = np.array([0, 1, 0, 1, 0, 1, 2, 2])
  fine = np.array([0, 2, 1, 3, 0, 2, 4, 5])
  order = grouped.nested_order(fine, coarse)
  for g in (fine, coarse):
    lay = grouped.group_layout(g, order)
    seq = g[lay.order]
    assert len(set(seq.tolist())) == len(np.unique(np.r_[0, np.flatnonzero(np.diff(seq)) + 1]))
  with pytest.raises(ValueError, match="not contiguous"):
    grouped.group_layout(fine, np.arange(8))
