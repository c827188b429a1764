import jax
import jax.numpy as jnp
import numpy as np
import pytest

import neuroprog
from neuroprog import graphs, specs
from neuroprog.graphs import symmetry

from conftest import TASKS, inputs_for, random_theta

SMALL_SPECS = {
    "deep_mlp": specs.MLPSpec((3, 5, 4, 2), "tanh"),
    "mlp_4_hidden": specs.MLPSpec((4, 3, 5, 3, 4, 2)),
    "pre_ln_2layer": specs.TransformerSpec(vocab_size=7, seq_len=4, d_model=6, n_heads=2,
                                           d_mlp=5, n_classes=4, n_layers=2),
    "post_ln_2layer": specs.TransformerSpec(vocab_size=7, seq_len=4, d_model=6, n_heads=3,
                                            d_mlp=5, n_classes=4, n_layers=2, ln="post"),
    "no_ln": specs.TransformerSpec(vocab_size=7, seq_len=4, d_model=6, n_heads=2,
                                   d_mlp=5, n_classes=4, ln="none"),
    "seq2seq_2x2": specs.Seq2SeqSpec(vocab_size=5, max_len=6, d_model=8, n_heads=2,
                                     d_mlp=6, n_enc_layers=2, n_dec_layers=2),
}
ALL = [neuroprog.default_spec(t) for t in TASKS] + list(SMALL_SPECS.values())
IDS = list(TASKS) + list(SMALL_SPECS)


# CI budget: the 1D-ARC default (7 s) runs in make test-slow; seq2seq_2x2 keeps
# the seq2seq graph in make test.
@pytest.mark.parametrize("spec", [pytest.param(s, marks=pytest.mark.slow) if i == "arc1d" else s
                                  for s, i in zip(ALL, IDS)], ids=IDS)
def test_automorphisms_preserve_the_function(spec):
  theta = random_theta(spec, jax.random.key(0))
  x = inputs_for(spec, jax.random.key(1))
  y = neuroprog.execute(spec, theta, x)
  for seed in range(3):
    perm = neuroprog.random_automorphism(spec, seed)
    assert sorted(perm.tolist()) == list(range(len(theta)))
    assert float(jnp.abs(theta[perm] - theta).max()) > 0.1      # θ really moved
    np.testing.assert_allclose(neuroprog.execute(spec, theta[perm], x), y,
                               rtol=2e-5, atol=2e-5)


def test_a_non_automorphism_changes_the_function():
  """Guards the test above: permuting across a fixed axis is detected."""
  spec = neuroprog.default_spec("addmod")
  theta = random_theta(spec, jax.random.key(0))
  x = jnp.array([[3, 5, 97], [4, 5, 97]])
  e = neuroprog.layout(spec)[0]                  # embed/tok: swap two tokens' rows
  perm = np.arange(len(theta))
  rows = perm[e.offset:e.offset + e.size].reshape(e.shape)
  rows[[3, 4]] = rows[[4, 3]]
  assert float(jnp.abs(neuroprog.execute(spec, theta[perm], x)
                       - neuroprog.execute(spec, theta, x)).max()) > 1e-3


def test_key_may_be_a_jax_key():
  spec = neuroprog.default_spec("sumfirst")
  a = neuroprog.random_automorphism(spec, jax.random.key(3))
  b = neuroprog.random_automorphism(spec, jax.random.key(3))
  c = neuroprog.random_automorphism(spec, jax.random.PRNGKey(4))
  np.testing.assert_array_equal(a, b)
  assert not np.array_equal(a, c)


@pytest.mark.parametrize("spec", ALL, ids=IDS)
def test_orbit_groups_are_exactly_the_orbits(spec):
  ng = neuroprog.neural_graph(spec, "orbit")
  rng = np.random.default_rng(0)
  node_images = []
  edge_images = []
  for _ in range(12):
    pi = symmetry.random_node_permutation(ng, rng)
    epi = symmetry.edge_permutation(pi, ng.senders, ng.receivers)
    # Every automorphism maps each group onto itself ...
    np.testing.assert_array_equal(ng.node_group[pi], ng.node_group)
    np.testing.assert_array_equal(ng.edge_group[epi], ng.edge_group)
    node_images.append(pi)
    edge_images.append(epi)
  # ... and random automorphisms connect every group into one piece: the
  # components of x ~ π(x) (an independent estimate of the orbits) are the groups.
  for group, images in ((ng.node_group, node_images), (ng.edge_group, edge_images)):
    comp = symmetry._components(np.arange(len(group)), images)
    _, comp_ids = np.unique(comp, return_inverse=True)
    assert len(np.unique(comp_ids)) == len(np.unique(group))
    pairs = set(zip(comp_ids.tolist(), group.tolist()))
    assert len(pairs) == len(np.unique(group))


@pytest.mark.parametrize("spec", [ALL[1], SMALL_SPECS["post_ln_2layer"],
                                  SMALL_SPECS["pre_ln_2layer"]],
                         ids=["addmod", "post_ln_2layer", "pre_ln_2layer"])
def test_role_groups_are_preserved_too(spec):
  ng = neuroprog.neural_graph(spec, "role")
  pi = symmetry.random_node_permutation(ng, np.random.default_rng(1))
  np.testing.assert_array_equal(ng.node_group[pi], ng.node_group)
