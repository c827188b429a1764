"""Convolutional targets: CNNSpec, execute, layout, neural graph with kernel
edges, automorphisms, meta-learners on them, and the WINDOWSUM task."""
import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import neuroprog
from neuroprog import meta, specs, tasks
from neuroprog.graphs import symmetry
from neuroprog.meta import direct
from neuroprog.tasks import windowsum

from conftest import random_theta

CNN_1D = specs.CNNSpec((16,), 2, (4, 3), (3, 5), 2, strides=(1, 2))
CNN_2D = specs.CNNSpec((6, 5), 3, (4, 2), (3, 2), 2, padding="VALID")


def _inputs(spec, key, n=5):
  return jax.random.normal(key, (n,) + spec.input_shape + (spec.in_channels,))


def _np_conv(x, w, b, stride, padding):
  """Direct loops over output positions: an independent reference.
  x [*spatial, C_in], w [C_in, C_out, *kernel] -> [*out, C_out]."""
  d = x.ndim - 1
  k = w.shape[2]
  if padding == "SAME":
    out = [-(-n // stride) for n in x.shape[:d]]
    pads = [max((o - 1) * stride + k - n, 0) for o, n in zip(out, x.shape[:d])]
    x = np.pad(x, [(p // 2, p - p // 2) for p in pads] + [(0, 0)])
  else:
    out = [(n - k) // stride + 1 for n in x.shape[:d]]
  y = np.zeros(out + [w.shape[1]])
  for pos in np.ndindex(*out):
    window = x[tuple(slice(p * stride, p * stride + k) for p in pos)]   # [*k, C_in]
    axes = list(range(d))
    y[pos] = np.tensordot(window, w, axes=([d] + axes, [0] + [2 + a for a in axes])) + b
  return y


@pytest.mark.parametrize("spec", [CNN_1D, CNN_2D,
                                  specs.CNNSpec((9,), 1, (2,), (4,), 3, strides=(3,))],
                         ids=["1d_same_stride", "2d_valid", "1d_even_kernel"])
def test_execute_matches_a_loop_reference(spec):
  theta = random_theta(spec, jax.random.key(0))
  x = np.asarray(_inputs(spec, jax.random.key(1)), np.float64)
  p = {k: np.asarray(v, np.float64) for k, v in neuroprog.unflatten(spec, theta).items()}
  want = []
  for xi in x:
    h = xi
    for l, s in enumerate(spec.strides):
      h = np.maximum(_np_conv(h, p[f"conv{l}/w"], p[f"conv{l}/b"], s, spec.padding), 0)
    want.append(h.reshape(-1, h.shape[-1]).mean(0) @ p["head/w"] + p["head/b"])
  got = neuroprog.execute(spec, theta, jnp.asarray(x, jnp.float32))
  np.testing.assert_allclose(got, np.stack(want), rtol=1e-4, atol=1e-4)
  assert spec.feature_shapes[-1] == h.shape[:-1]


def test_layout_kernels_are_contiguous_per_channel_pair():
  entries = {e.name: e for e in neuroprog.layout(CNN_2D)}
  w = entries["conv0/w"]
  assert w.shape == (3, 4, 3, 3) and w.fan_in == 3 * 9 and w.kind == "weight"
  assert entries["head/w"].shape == (2, 2) and entries["head/w"].fan_in == 2
  assert neuroprog.num_params(CNN_1D) == 2 * 4 * 3 + 4 + 4 * 3 * 5 + 3 + 3 * 2 + 2


def test_neural_graph_has_channel_nodes_and_kernel_edges():
  ng = neuroprog.neural_graph(CNN_2D)
  assert ng.num_nodes == 3 + 4 + 2 + 2 and ng.num_edges == 12 + 8 + 4
  assert ng.max_edge_size == 9
  assert sorted(set(ng.edge_size.tolist())) == [1, 4, 9]
  index = ng.edge_theta_index()
  w0 = {e.name: e for e in neuroprog.layout(CNN_2D)}["conv0/w"]
  # Edge (input 1 -> channel 2) carries conv0/w[1, 2] (its 3x3 kernel, row-major).
  e = np.flatnonzero((ng.senders == 1) & (ng.receivers == 3 + 2))[0]
  np.testing.assert_array_equal(index[e], w0.offset + (1 * 4 + 2) * 9 + np.arange(9))


@pytest.mark.parametrize("spec", [CNN_1D, CNN_2D], ids=["1d", "2d"])
def test_automorphisms_permute_channels_and_keep_the_function(spec):
  theta = random_theta(spec, jax.random.key(0))
  x = _inputs(spec, jax.random.key(1))
  y = neuroprog.execute(spec, theta, x)
  # With 4! x 2! channel permutations a seed can draw the identity; test the
  # first three that move θ.
  moved = [p for p in (neuroprog.random_automorphism(spec, s) for s in range(8))
           if float(jnp.abs(theta[p] - theta).max()) > 0.1][:3]
  assert len(moved) == 3
  for perm in moved:
    assert sorted(perm.tolist()) == list(range(len(theta)))
    np.testing.assert_allclose(neuroprog.execute(spec, theta[perm], x), y, rtol=2e-5, atol=2e-5)
  # Moving kernel entries inside a kernel is not an automorphism.
  w = {e.name: e for e in neuroprog.layout(spec)}["conv0/w"]
  bad = np.arange(len(theta))
  bad[w.offset:w.offset + 2] = bad[[w.offset + 1, w.offset]]
  assert float(jnp.abs(neuroprog.execute(spec, theta[bad], x) - y).max()) > 1e-3


def test_orbit_groups_of_a_cnn():
  ng = neuroprog.neural_graph(CNN_1D, "orbit")
  rng = np.random.default_rng(0)
  for _ in range(5):
    pi = symmetry.random_node_permutation(ng, rng)
    epi = symmetry.edge_permutation(pi, ng.senders, ng.receivers)
    np.testing.assert_array_equal(ng.node_group[pi], ng.node_group)
    np.testing.assert_array_equal(ng.edge_group[epi], ng.edge_group)
  # Input channels (2) and outputs (2) are fixed, each its own group; each
  # hidden layer's channels form one group.
  assert ng.num_node_groups == 2 + 1 + 1 + 2
  # Edges: one group per input channel into layer 0, one for layer 0 -> 1,
  # one per output.
  assert ng.num_edge_groups == 2 + 1 + 2


@pytest.mark.parametrize("value, message", [
    (dict(input_shape=(4, 4, 4)), r"give \(L,\) for 1D or \(H, W\) for 2D"),
    (dict(channels=()), r"channels is empty"),
    (dict(kernel_sizes=(3,)), r"kernel_sizes=\(3,\) has 1 entries; channels=\(4, 3\) has 2"),
    (dict(strides=(1, 0)), r"CNNSpec.strides\[1\] must be a positive int, got 0"),
    (dict(padding="FULL"), r"padding='FULL' is not supported; allowed: \['SAME', 'VALID'\]"),
    (dict(input_shape=(4,), padding="VALID", kernel_sizes=(5, 3)),
     r"layer 0 has kernel 5 but its input is \(4,\) with padding='VALID'"),
    (dict(channels=4), r"CNNSpec.channels must be a tuple of ints, got 4"),
])
def test_bad_cnn_specs_are_refused_with_the_value(value, message):
  base = dict(input_shape=(16,), in_channels=2, channels=(4, 3), kernel_sizes=(3, 5), n_out=2)
  with pytest.raises(ValueError, match=message):
    specs.CNNSpec(**{**base, **value})


def test_cnn_spec_from_config_and_input_check():
  spec = specs.from_config({"type": "CNNSpec", "input_shape": [16], "in_channels": 2,
                            "channels": [4, 3], "kernel_sizes": [3, 5], "n_out": 2,
                            "strides": [1, 2]})
  assert spec == CNN_1D and specs.from_json(specs.to_json(spec)) == spec
  with pytest.raises(ValueError, match=r"CNN input has shape \(5, 16, 3\); expected float\[..., 16, 2\]"):
    neuroprog.execute(spec, neuroprog.init_theta(spec, jax.random.key(0)), jnp.zeros((5, 16, 3)))


@pytest.mark.parametrize("name", ["meta_mlp", "meta_gmlp", "meta_gnn"])
def test_hypernetworks_emit_kernels_that_vary_with_the_intent(name):
  task = tasks.get("windowsum")
  model = meta.create(name, task.spec, task.feature_dim,
                      {"rounds": 1, "d": 8} if name == "meta_gnn" else None)
  u = task.features(task.train_intents)
  theta = model.apply(model.init(jax.random.key(0), u), u)
  assert theta.shape == (len(u), neuroprog.num_params(task.spec))
  kernels = np.asarray(neuroprog.unflatten(task.spec, theta)["conv0/w"])   # [B, 1, 8, 3]
  assert np.abs(kernels[0] - kernels[1]).max() > 1e-4
  # Entries of one kernel differ (the decoder's outputs are per kernel position).
  assert np.abs(kernels[:, :, :, 0] - kernels[:, :, :, 1]).max() > 1e-3


def test_direct_cnn_patches_are_a_same_convolution():
  for shape, k in (((4, 16, 3), 3), ((2, 5, 6, 2), 3), ((3, 9, 2), 4)):
    h = jax.random.normal(jax.random.key(0), shape)
    conv = nn.Conv(5, (k,) * (len(shape) - 2), padding="SAME", use_bias=False)
    w = conv.init(jax.random.key(1), h)
    want = conv.apply(w, h)
    got = direct._patches(h, k) @ w["params"]["kernel"].reshape(-1, 5)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_windowsum_hand_written_programs_solve_every_intent():
  task = tasks.get("windowsum")
  x, y = task.sample(jax.random.key(0), task.intents, 400)
  for i, a in enumerate(task.intents):
    theta = neuroprog.flatten(task.spec, windowsum.solution(a))
    out = neuroprog.execute(task.spec, theta, x[i])
    assert float(task.exact_match(out[None], y[i][None], None).mean()) == 1.0, a
    np.testing.assert_array_equal(task.reference(a, x[i]), y[i])
  # The counts are not trivial: central sums occur several times per signal.
  assert float(y[task.intents.index(4)].mean()) > 2.0 and float(y[0].mean()) < 0.5


def test_windowsum_window_sums_and_errors():
  cells = np.array([[0, 1, 2, 3, 3, 3, 0, 0, 1, 1, 1, 2, 2, 2, 3, 0]])
  np.testing.assert_array_equal(windowsum.window_sums(cells)[0],
                                [3, 6, 8, 9, 6, 3, 1, 2, 3, 4, 5, 6, 7, 5])
  task = tasks.get("windowsum")
  assert task.parse_intent("a=9") == 9 and task.ood_intents == (3, 7)
  with pytest.raises(ValueError, match="a=10 is outside its domain"):
    task.parse_intent("a=10")
  with pytest.raises(ValueError, match=r"windowsum: target CNNSpec has in_channels=2; the task "
                     r"needs in_channels=1"):
    tasks.get("windowsum", spec=specs.CNNSpec((16,), 2, (8,), (3,), 1))
