import contextlib
import io
import os

import jraph
import numpy as np
import pytest

import neuroprog
from neuroprog import graphs

from conftest import TASKS


DEEP_SPECS = {
    "mlp_10_16_16_1": neuroprog.MLPSpec((10, 16, 16, 1)),
    "mlp_5_layers": neuroprog.MLPSpec((4, 6, 5, 6, 3, 2)),
    "transformer_2layer": neuroprog.TransformerSpec(98, 3, 16, 4, 48, n_classes=97,
                                                    n_layers=2),
    "transformer_4layer_post": neuroprog.TransformerSpec(9, 4, 8, 2, 6, n_classes=5,
                                                         n_layers=4, ln="post"),
    "seq2seq_2x2": neuroprog.Seq2SeqSpec(11, 33, 24, 4, 80, n_enc_layers=2, n_dec_layers=2),
    "cnn_1d": neuroprog.CNNSpec((16,), 2, (4, 3), (3, 5), 2, strides=(1, 2)),
    "cnn_2d": neuroprog.CNNSpec((6, 5), 3, (4,), (3,), 2, padding="VALID"),
}


@pytest.mark.parametrize("spec", [neuroprog.default_spec(t) for t in TASKS]
                         + list(DEEP_SPECS.values()), ids=list(TASKS) + list(DEEP_SPECS))
@pytest.mark.parametrize("grouping", graphs.GROUPINGS)
def test_slots_are_a_bijection_onto_theta(spec, grouping):
  ng = neuroprog.neural_graph(spec, grouping)
  slots = np.concatenate([ng.node_slot, ng.edge_theta_index().reshape(-1)])
  slots = slots[slots >= 0]
  assert len(slots) == neuroprog.num_params(spec)
  np.testing.assert_array_equal(np.sort(slots), np.arange(neuroprog.num_params(spec)))


def test_deep_graphs_count_every_neuron_and_connection():
  ng = neuroprog.neural_graph(DEEP_SPECS["mlp_10_16_16_1"])
  assert ng.num_nodes == 10 + 16 + 16 + 1 and ng.num_edges == 10 * 16 + 16 * 16 + 16
  one = neuroprog.neural_graph(neuroprog.default_spec("addmod"))
  two = neuroprog.neural_graph(DEEP_SPECS["transformer_2layer"])
  # A second block adds ln1, q, k, v (4 heads x 4), attn out, ln2, 48 MLP
  # units and the block output: 16 + 3*16 + 16 + 16 + 48 + 16 nodes.
  assert two.num_nodes - one.num_nodes == 160
  # ... and its edges: ln gains 2*16, W_q/k/v 3*16*16, q-k pairs 16, W_O 16*16,
  # two residual paths 2*16, W_1 16*48 and W_2 48*16.
  assert two.num_edges - one.num_edges == 32 + 768 + 16 + 256 + 32 + 1536


def test_mlp_graph_structure():
  spec = neuroprog.default_spec("sumfirst")
  ng = neuroprog.neural_graph(spec)
  assert ng.num_nodes == 10 + 16 + 1 and ng.num_edges == 10 * 16 + 16
  assert np.all(ng.node_slot[:10] == -1)            # inputs carry nothing
  p = neuroprog.unflatten(spec, np.arange(193, dtype=np.float32))
  # The edge input 3 -> hidden 5 carries W[3, 5]; hidden 5 carries b[5].
  e = np.flatnonzero((ng.senders == 3) & (ng.receivers == 10 + 5))[0]
  assert ng.edge_slot[e] == int(p["l0/w"][3, 5])
  assert ng.node_slot[10 + 5] == int(p["l0/b"][5])
  # Orbits: inputs are singletons, hidden units one orbit, the output alone.
  assert ng.num_node_groups == 12 and ng.num_edge_groups == 11
  assert len(set(ng.node_group[10:26])) == 1
  assert len(set(ng.edge_group[ng.senders == 3])) == 1
  assert ng.edge_group[ng.senders == 3][0] != ng.edge_group[ng.senders == 4][0]
  g = ng.graph
  assert g.nodes.shape == (27, graphs.NODE_PE_DIM) and g.edges.shape == (176, graphs.EDGE_PE_DIM)


def test_transformer_graph_roles_and_groups():
  spec = neuroprog.default_spec("addmod")
  ng = neuroprog.neural_graph(spec, "orbit")
  role = lambda name: ng.roles.index(name)
  # Each token's embedding edges form their own orbit (tokens are not
  # interchangeable); all of one token's d_model edges share it.
  tok_edges = ng.edge_role == role("embed/tok")
  assert tok_edges.sum() == 98 * 16
  assert len(set(ng.edge_group[tok_edges])) == 98
  # Residual paths are fixed edges without parameters.
  res = ng.edge_role == role("L0/attn/residual")
  assert res.sum() == 16 and np.all(ng.edge_slot[res] == -1)
  # All query channels of all heads are one orbit (heads permute, channels too).
  q = ng.node_role == role("L0/attn/q")
  assert q.sum() == 16 and len(set(ng.node_group[q])) == 1
  # Layer-norm gains are the diagonal edges into the norm's nodes.
  gains = ng.edge_role == role("L0/ln1/g")
  p = neuroprog.unflatten(spec, np.arange(neuroprog.num_params(spec), dtype=np.float32))
  np.testing.assert_array_equal(np.sort(ng.edge_slot[gains]), np.asarray(p["L0/ln1/g"], int))
  role_ng = neuroprog.neural_graph(spec, "role")
  assert role_ng.num_edge_groups < ng.num_edge_groups


@pytest.mark.parametrize("task", TASKS)
def test_orbit_groups_refine_role_groups(task):
  ng = neuroprog.neural_graph(neuroprog.default_spec(task), "orbit")
  for group_ids, roles in ((ng.node_group, ng.node_role), (ng.edge_group, ng.edge_role)):
    for g in np.unique(group_ids):
      assert len(set(roles[group_ids == g])) == 1


def test_bad_grouping_and_spec():
  with pytest.raises(ValueError, match=r"'orbits'.*\['orbit', 'role'\]"):
    neuroprog.neural_graph(neuroprog.default_spec("sumfirst"), "orbits")
  with pytest.raises(ValueError, match="Unknown spec type"):
    neuroprog.neural_graph("mlp")


def test_pe_columns_select_families_of_node_and_edge_encodings():
  ng = neuroprog.neural_graph(neuroprog.default_spec("sumfirst"))
  node_cols, edge_cols = graphs.pe_columns("ramp")
  ramp = ng.node_pe[:, node_cols]
  # Input i's first ramp is i / 10; hidden unit j's is j / 16.
  np.testing.assert_allclose(ramp[:10, 0], np.arange(10) / 10, atol=1e-7)
  np.testing.assert_allclose(ramp[10:26, 0], np.arange(16) / 16, atol=1e-7)
  # An edge's selection is its sender's columns, then its receiver's.
  np.testing.assert_array_equal(
      ng.edge_pe[:, edge_cols],
      np.concatenate([ramp[ng.senders], ramp[ng.receivers]], 1))
  everything = graphs.pe_columns(graphs.DEFAULT_PE_FEATURES)
  np.testing.assert_array_equal(everything[0], np.arange(graphs.NODE_PE_DIM))
  np.testing.assert_array_equal(everything[1], np.arange(graphs.EDGE_PE_DIM))
  # Order of the names does not matter; sincos and ramp split the columns.
  np.testing.assert_array_equal(graphs.pe_columns("ramp+sincos")[0], np.arange(10))
  assert set(graphs.pe_columns("sincos")[0]).isdisjoint(node_cols)
  for bad in ("", "ramp+ramp", "ramps", "sincos+", 3):
    with pytest.raises(ValueError, match=r"pe_features=.*allowed.*'sincos', 'ramp'"):
      graphs.pe_columns(bad)


def _readme_jraph_example():
  """The README's jraph block, executed; returns its namespace."""
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  with open(os.path.join(root, "README.md")) as f:
    text = f.read()
  block = text.split("<!-- jraph-example -->", 1)[1]
  code = block.split("```python", 1)[1].split("```", 1)[0]
  namespace = {}
  with contextlib.redirect_stdout(io.StringIO()):
    exec(compile(code, "README.md", "exec"), namespace)  # pylint: disable=exec-used
  return namespace


def test_a_jraph_graph_network_on_the_neural_graph_is_invariant_under_automorphisms():
  ns = _readme_jraph_example()
  readout, theta, spec = ns["readout"], ns["theta"], ns["spec"]
  assert isinstance(ns["ng"].graph, jraph.GraphsTuple)
  ref = np.asarray(readout(theta))
  assert ref.shape == (8,) and np.abs(ref).max() > 0.1
  for seed in range(3):
    perm = neuroprog.random_automorphism(spec, seed)
    assert not np.array_equal(perm, np.arange(len(perm)))
    np.testing.assert_allclose(readout(theta[perm]), ref, rtol=1e-4, atol=1e-4)
  # A permutation of θ that is not an automorphism changes the weighted graph.
  shuffled = np.random.default_rng(0).permutation(len(theta))
  assert np.abs(np.asarray(readout(theta[shuffled])) - ref).max() > 1e-2


def test_groups_of_another_grouping_come_from_the_same_graph():
  spec = neuroprog.default_spec("addmod")
  orbit, role = neuroprog.neural_graph(spec, "orbit"), neuroprog.neural_graph(spec, "role")
  for a, b in ((orbit.groups("role"), (role.node_group, role.edge_group)),
               (role.groups("orbit"), (orbit.node_group, orbit.edge_group)),
               (orbit.groups("orbit"), (orbit.node_group, orbit.edge_group))):
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
  np.testing.assert_array_equal(orbit.node_pe, orbit.graph.nodes)   # one representation
  with pytest.raises(ValueError, match="Unknown grouping 'roles'"):
    orbit.groups("roles")
