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


def test_segments_cut_both_nested_layouts_at_group_boundaries():
  coarse = np.array([0] * 6 + [1] * 4 + [2] * 4)
  fine = np.array([0, 0, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 5, 5])
  order = grouped.nested_order(fine, coarse)
  lf = grouped.group_layout(fine, order)
  lc = grouped.group_layout(coarse, order)
  bounds = grouped.common_segments(lf.buckets, lc.buckets)
  assert bounds[0] == 0 and bounds[-1] == 14
  for lay in (lf, lc):
    segs = grouped.split_buckets(lay.buckets, bounds)
    assert [s[0] for s in segs] == list(bounds[:-1])
    for (start, n, size, g0), stop in zip(segs, bounds[1:]):
      assert n * size == stop - start
      # every element of the segment belongs to group g0 + (offset // size)
      want = g0 + np.arange(stop - start) // size
      np.testing.assert_array_equal(lay.group_sorted[start:stop], want)
  # a cut inside a group gives a one-group part; a cut across groups that is
  # not at a group boundary is refused
  fine_b, coarse_b = ((0, 1, 2, 0), (2, 1, 4, 1)), ((0, 2, 3, 0),)
  assert grouped.common_segments(coarse_b, fine_b) == (0, 2, 3, 6)
  assert grouped.split_buckets(coarse_b, (0, 2, 3, 6)) == (
      (0, 1, 2, 0), (2, 1, 1, 0), (3, 1, 3, 1))
  assert grouped.split_buckets(fine_b, (0, 2, 3, 6)) == (
      (0, 1, 2, 0), (2, 1, 1, 1), (3, 1, 3, 1))
  with pytest.raises(ValueError, match="group boundaries"):
    grouped.split_buckets(((0, 3, 2, 0),), (0, 1, 6))


def test_segmented_dense_equals_the_concatenated_form():
  rng = np.random.default_rng(1)
  coarse = rng.integers(0, 3, size=30)
  fine = coarse * 10 + rng.integers(0, 2, size=30)
  order = grouped.nested_order(fine, coarse)
  lf = grouped.group_layout(fine, order)
  lc = grouped.group_layout(coarse, order)
  bounds = grouped.common_segments(lf.buckets, lc.buckets)
  x = jax.random.normal(jax.random.key(0), (30, 2, 4))
  xs = tuple(x[a:b] for a, b in zip(bounds[:-1], bounds[1:]))
  for lay in (lf, lc):
    kernel = jax.random.normal(jax.random.key(2), (lay.n_groups, 4, 3))
    bias = jax.random.normal(jax.random.key(3), (lay.n_groups, 3))
    want = grouped.bucketed_dense(x, kernel, bias, lay.buckets)
    got = grouped.bucketed_dense(xs, kernel, bias,
                                 grouped.split_buckets(lay.buckets, bounds))
    assert isinstance(got, tuple) and len(got) == len(xs)
    np.testing.assert_allclose(jnp.concatenate(got, 0), want, rtol=1e-6, atol=1e-6)
    ref = jnp.einsum("mbd,mde->mbe", x, kernel[lay.group_sorted]) + bias[lay.group_sorted][:, None]
    np.testing.assert_allclose(want, ref, rtol=1e-5, atol=1e-5)
  with pytest.raises(ValueError, match="segments"):
    grouped.bucketed_dense(xs[:1], kernel, bias,
                           grouped.split_buckets(lc.buckets, bounds))
