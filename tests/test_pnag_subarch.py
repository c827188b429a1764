"""Sub-architecture scales: per-space definitions, validity verdicts on
hand-made sub-architecture sequences, and the quantizer on node sets."""
import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from neuroprog.pnag import autoencoder as ae_lib
from neuroprog.pnag import msq, spaces
from neuroprog.pnag.spaces import darts as darts_lib
from neuroprog.pnag.spaces import mbv3 as mbv3_lib
from neuroprog.pnag.spaces import nb201 as nb201_lib

NAMES = ("nb201", "mbv3", "darts")


def _op(space, name):
  return space.op_names.index(name)


@pytest.mark.parametrize("name", NAMES)
def test_node_sets_grow_by_one_and_end_with_every_node(name):
  sp = spaces.get(name)
  sched = sp.default_schedule()
  assert sched == tuple(range(3, sp.num_nodes + 1))
  prev = set()
  for n in sched:
    nodes = sp.sub_nodes(n)
    assert len(nodes) == n and list(nodes) == sorted(nodes)
    assert prev < set(nodes) and len(set(nodes) - prev) == (3 if n == 3 else 1)
    prev = set(nodes)
  assert sp.sub_nodes(sp.num_nodes) == tuple(range(sp.num_nodes))
  for bad in (2, sp.num_nodes + 1, 3.0, True):
    with pytest.raises(ValueError, match=f"{name} sub-architectures have 3..{sp.num_nodes} nodes"):
      sp.sub_nodes(bad)


@pytest.mark.parametrize("name", NAMES)
def test_every_scale_of_a_valid_architecture_is_valid(name):
  sp = spaces.get(name)
  archs = sp.sample(3, 40)
  ops, adj = sp.encode_batch(archs)
  for n in sp.default_schedule():
    o, a = sp.sub_graph(ops, adj, n)
    assert o.shape == (40, n) and a.shape == (40, n, n)
    assert all(sp.is_valid_sub(o[i], a[i]) for i in range(40)), n
  # The jax path gives the same graphs as the numpy path, under jit.
  for n in (3, sp.num_nodes - 1):
    oj, aj = jax.jit(lambda o, a, n=n: sp.sub_graph(o, a, n))(jnp.asarray(ops), jnp.asarray(adj))
    o, a = sp.sub_graph(ops, adj, n)
    np.testing.assert_array_equal(np.asarray(oj), o)
    np.testing.assert_array_equal(np.asarray(aj), a)
  # At n = N a sub-architecture is the architecture: same verdict as is_valid.
  rng = np.random.default_rng(0)
  for _ in range(30):
    o = ops[0].copy()
    o[rng.integers(sp.num_nodes)] = rng.integers(sp.num_ops)
    assert sp.is_valid_sub(o, adj[0]) == sp.is_valid(o, adj[0])


def test_nb201_hand_made_sequence():
  sp = spaces.get("nb201")
  arch = ("nor_conv_3x3", "skip_connect", "none", "avg_pool_3x3", "nor_conv_1x1",
          "skip_connect")
  i, o, conv3 = _op(sp, "input"), _op(sp, "output"), _op(sp, "nor_conv_3x3")
  # n = 3: input -> (1<-0) conv -> output, the edge to the output added
  # because node 1's readers (edges 3 and 5) are not present yet.
  g3_ops = np.array([i, conv3, o])
  g3_adj = np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]], np.float32)
  ops, adj = sp.encode_indices(arch)
  so, sa = sp.sub_graph(ops[None], adj[None], 3)
  np.testing.assert_array_equal(so[0], g3_ops)
  np.testing.assert_array_equal(sa[0], g3_adj)
  assert sp.is_valid_sub(g3_ops, g3_adj)
  # n = 5 (nodes 0, 1, 2, 3, 7): node 1 now feeds node 3, so its output edge goes.
  so, sa = sp.sub_graph(ops[None], adj[None], 5)
  want = np.zeros((5, 5), np.float32)
  want[0, 1] = want[0, 2] = want[1, 3] = 1      # 0 -> edges 1, 2; edge 1 -> edge 3
  want[2, 4] = want[3, 4] = 1                   # edges 2 and 3 dangle -> output
  np.testing.assert_array_equal(sa[0], want)
  assert sp.is_valid_sub(so[0], want)
  # Wrong verdicts: a missing output edge, an op where the input must be,
  # the output type in the middle, a stray edge.
  bad = g3_adj.copy()
  bad[1, 2] = 0
  with pytest.raises(ValueError, match=r"adjacency entry \(1, 2\) is 0"):
    sp.decode_sub(g3_ops, bad)
  assert not sp.is_valid_sub(np.array([conv3, conv3, o]), g3_adj)
  assert not sp.is_valid_sub(np.array([i, o, o]), g3_adj)
  stray = want.copy()
  stray[0, 4] = 1
  assert not sp.is_valid_sub(so[0], stray)
  with pytest.raises(ValueError, match="0/1 \\[3, 3\\]"):
    sp.decode_sub(g3_ops, np.zeros((4, 4)))


def test_mbv3_hand_made_sequence():
  sp = spaces.get("mbv3")
  k3, k5, none = _op(sp, "k3_e3"), _op(sp, "k5_e4"), 0
  chain = lambda present: mbv3_lib._chain(np.array(present))[:len(present), :len(present)]
  # n = 3: the first three slots of stage 0, a depth-2 stage so far.
  g = np.array([k3, k5, none])
  assert sp.is_valid_sub(g, chain(g))
  # Layer 2 of a stage missing, layer 4 without layer 3, or a broken chain: invalid.
  g_bad = np.array([k3, none, k5])
  assert not sp.is_valid_sub(g_bad, chain(g_bad))
  g6 = np.array([k3, k5, none, k3, k5, k5])
  with pytest.raises(ValueError, match="layer 4 is present without layer 3"):
    sp.decode_sub(g6, chain(g6))
  g6 = np.array([k3, k5, none, none, k5, k5])
  assert sp.is_valid_sub(g6, chain(g6))
  skip = chain(g6)
  skip[1, 4] = 0
  assert not sp.is_valid_sub(g6, skip)
  # n = 5 may end inside stage 1 after its first layer: stage 1 continues later.
  g5 = np.array([k3, k5, k5, none, k3])
  assert sp.is_valid_sub(g5, chain(g5))
  assert not sp.is_valid_sub(np.array([k3, k5, k5, none, none]),
                             chain(np.array([k3, k5, k5, none, none])))


def test_darts_hand_made_sequence():
  sp = spaces.get("darts")
  c2, c1, out = 0, 1, 2
  sep3, skip, none = _op(sp, "sep_conv_3x3"), _op(sp, "skip_connect"), _op(sp, "none")
  assert sp.sub_nodes(3) == (0, 1, 10) and sp.sub_nodes(5) == (0, 1, 2, 3, 10)
  # n = 3: the empty normal cell.
  assert sp.is_valid_sub(np.array([c2, c1, out]), np.zeros((3, 3)))
  # n = 4: nodes (0, 1, 2, 10); the first op of intermediate 0 reads c_{k-1}.
  adj4 = np.zeros((4, 4), np.float32)
  adj4[1, 2] = adj4[2, 3] = 1
  assert sp.is_valid_sub(np.array([c2, c1, sep3, out]), adj4)
  assert not sp.is_valid_sub(np.array([c2, c1, none, out]), adj4)   # `none` is not allowed
  both = adj4.copy()
  both[0, 2] = 1                                                    # reads two inputs
  with pytest.raises(ValueError, match="predecessors"):
    sp.decode_sub(np.array([c2, c1, sep3, out]), both)
  no_out = adj4.copy()
  no_out[2, 3] = 0
  assert not sp.is_valid_sub(np.array([c2, c1, sep3, out]), no_out)
  # n = 5: both ops of intermediate 0; the same input twice is invalid.
  adj5 = np.zeros((5, 5), np.float32)
  adj5[1, 2] = adj5[0, 3] = adj5[2, 4] = adj5[3, 4] = 1
  ops5 = np.array([c2, c1, sep3, skip, out])
  assert sp.is_valid_sub(ops5, adj5)
  same = adj5.copy()
  same[0, 3], same[1, 3] = 0, 1
  with pytest.raises(ValueError, match="both operations read input 1"):
    sp.decode_sub(ops5, same)
  # n = 13 reaches into the reduction cell (its two inputs, no output yet).
  g = darts_lib.DARTS().sample(0, 1)[0]
  ops, adj = sp.encode_indices(g)
  o, a = sp.sub_graph(ops[None], adj[None], 13)
  assert sp.sub_nodes(13)[-2:] == (11, 12) and sp.is_valid_sub(o[0], a[0])


def test_quantizer_on_node_sets():
  size, c = 6, 3
  nodes_sets = ((0, 1, 5), (0, 1, 2, 5), (0, 1, 2, 3, 4, 5))
  scales = tuple(len(s) for s in nodes_sets)
  key = jax.random.key(0)
  e = jax.random.normal(key, (2, size, size, c))
  codebook = jax.random.normal(jax.random.fold_in(key, 1), (8, c))
  q = msq.quantize(e, codebook, scales, nodes_sets)
  mask = np.zeros((size, size), bool)
  for t, nodes in enumerate(nodes_sets):
    mask[np.ix_(nodes, nodes)] = True
    f_t = np.asarray(q.accumulated[t])
    assert np.all(f_t[:, ~mask] == 0)              # nothing outside the sub-architecture
    np.testing.assert_allclose(msq.pool(q.accumulated[t], scales[t], nodes),
                               f_t[:, nodes][:, :, nodes], atol=1e-6)
  # Entry (0, 1) is refined at every scale: its reconstruction sums three codes.
  want = sum(np.asarray(codebook)[np.asarray(q.indices[t])[:, 0, 1]] for t in range(3))
  np.testing.assert_allclose(np.asarray(q.accumulated[-1])[:, 0, 1], want, atol=1e-5)
  np.testing.assert_allclose(msq.reconstruct(q.indices, codebook, size, nodes_sets),
                             q.accumulated[-1], atol=1e-5)
  z = jax.random.normal(key, (2, 4, 4, c))
  np.testing.assert_allclose(msq.pool(msq.upsample(z, size, nodes_sets[1]), 4, nodes_sets[1]),
                             z, atol=1e-6)
  with pytest.raises(ValueError, match="the last node set must be every node"):
    msq.check_node_sets(((0, 1, 5), (0, 1, 2, 5)), (3, 4), size)
  with pytest.raises(ValueError, match=r"node_sets\[0\]=\(1, 0, 5\) must be 3 increasing"):
    msq.check_node_sets(((1, 0, 5), tuple(range(6))), (3, 6), size)


# Slow (about 25 s): stage 1 on sub-architecture scales end to end; the SCC term
# on chosen scales and the quantizer on node sets stay in the fast suite.
@pytest.mark.slow
def test_autoencoder_on_sub_architecture_scales():
  sp = spaces.get("nb201")
  scales = (3, 5, 8)
  cfg = ae_lib.AEConfig(num_nodes=8, num_ops=sp.num_ops, scales=scales, hidden=16,
                        channels=4, codebook_size=16, rounds=1,
                        node_sets=tuple(sp.sub_nodes(n) for n in scales))
  with pytest.raises(ValueError, match="node_sets has 2 entries for the 3 scales"):
    dataclasses.replace(cfg, node_sets=cfg.node_sets[1:])
  ae = ae_lib.Autoencoder(cfg)
  st = ae.init(jax.random.key(0))
  ops, adj = sp.encode_batch(sp.sample(0, 16))
  with pytest.raises(ValueError, match="need sub_targets for the first 2 scales"):
    ae.loss(st.params, st.codebook, ops, adj)
  sub = tuple(sp.sub_graph(ops, adj, n) for n in scales[:-1])
  loss, aux = ae.loss(st.params, st.codebook, ops, adj, None, sub)
  assert np.isfinite(float(loss)) and float(aux["scc_decode"]) > 0
  # The intermediate scale decodes to n_t nodes.
  q = ae.tokenize(st.params, st.codebook, ops, adj)
  op_logits, adj_logits = ae.decode_map(st.params, ae.scale_view(q.accumulated[0], 0))
  assert op_logits.shape == (16, 3, sp.num_ops) and adj_logits.shape == (16, 3, 3)
  assert [i.shape[1:] for i in q.indices] == [(3, 3), (5, 5), (8, 8)]


def test_split_tokens_inverts_flat_tokens():
  from neuroprog.pnag import model as model_lib
  scales = (3, 4, 8)
  idx = [jax.random.randint(jax.random.key(n), (2, n, n), 0, 16) for n in scales]
  flat = model_lib.flat_tokens(idx)
  assert flat.shape == (2, 9 + 16 + 64)
  for a, b in zip(model_lib.split_tokens(flat, scales), idx):
    np.testing.assert_array_equal(a, b)


# ---- new-entry tokens (AEConfig.scale_tokens="new") -----------------------

NEW_SETS = ((0, 1, 5), (0, 1, 2, 5), (0, 1, 2, 3, 4, 5))


def test_new_entry_layout_positions_by_hand():
  lay = msq.new_entry_layout(NEW_SETS, 6)
  # Scale 0: the 3 x 3 block; scale 1: node 2's row and column within
  # {0, 1, 2, 5} (7 entries); scale 2: rows and columns of nodes 3 and 4.
  assert lay.counts == (9, 7, 20) and lay.offsets == (0, 9, 16)
  assert sum(lay.counts) == 36
  got = sorted(zip(lay.rows[1].tolist(), lay.cols[1].tolist()))
  assert got == [(0, 2), (1, 2), (2, 0), (2, 1), (2, 2), (2, 5), (5, 2)]
  # Every entry of the map belongs to exactly one scale.
  every = np.concatenate(lay.positions)
  assert sorted(every.tolist()) == list(range(36))
  with pytest.raises(ValueError, match=r"node set \(0, 2, 5\) drops nodes of an earlier scale"):
    msq.new_entry_layout(((0, 1, 5), (0, 2, 5), tuple(range(6))), 6)


def test_new_entry_quantization_writes_each_entry_once():
  size, c = 6, 3
  key = jax.random.key(0)
  e = jax.random.normal(key, (2, size, size, c))
  codebook = jax.random.normal(jax.random.fold_in(key, 1), (8, c))
  q = msq.quantize(e, codebook, (3, 4, 6), NEW_SETS, new_entries=True)
  assert [i.shape for i in q.indices] == [(2, 9), (2, 7), (2, 20)]
  # With every entry quantized once, the final map is the one-scale quantization of e.
  once = msq.quantize(e, codebook, (size,))
  np.testing.assert_allclose(q.accumulated[-1], once.accumulated[-1], atol=1e-5)
  mask = np.zeros((size, size), bool)
  for t, nodes in enumerate(NEW_SETS):
    mask[np.ix_(nodes, nodes)] = True
    f_t = np.asarray(q.accumulated[t])
    assert np.all(f_t[:, ~mask] == 0)
    np.testing.assert_allclose(f_t[:, mask], np.asarray(once.accumulated[-1])[:, mask],
                               atol=1e-5)
    # Later scales leave the entries of earlier ones alone.
    np.testing.assert_allclose(np.asarray(q.accumulated[-1])[:, mask], f_t[:, mask])
  np.testing.assert_allclose(
      msq.reconstruct(q.indices, codebook, size, NEW_SETS, new_entries=True),
      q.accumulated[-1], atol=1e-6)
  with pytest.raises(ValueError, match="needs sub-architecture node sets"):
    msq.quantize(e, codebook, (3, 6), None, new_entries=True)


def test_new_entry_config_and_token_shapes():
  sp = spaces.get("nb201")
  scales = sp.default_schedule()
  sets = tuple(sp.sub_nodes(n) for n in scales)
  cfg = ae_lib.AEConfig(num_nodes=8, num_ops=sp.num_ops, scales=scales, node_sets=sets,
                        scale_tokens="new")
  assert cfg.token_shapes == ((9,), (7,), (9,), (11,), (13,), (15,))
  with pytest.raises(ValueError, match="scale_tokens='new' needs sub-architecture scales"):
    ae_lib.AEConfig(num_nodes=8, num_ops=sp.num_ops, scales=(1, 2, 4, 8), scale_tokens="new")
  from neuroprog.pnag import train  # pylint: disable=g-import-not-at-top
  with pytest.raises(ValueError, match="token_inputs='learned' needs new-entry tokens"):
    train.build(train.default_config(space="nb201", schedule="pyramid",
                                     ae={"scale_tokens": "block"},
                                     gen={"token_inputs": "learned"}))
  with pytest.raises(ValueError, match=r"scale_tokens='edges'; allowed: \['block', 'new'\]"):
    ae_lib.AEConfig(num_nodes=8, num_ops=sp.num_ops, scales=scales, node_sets=sets,
                    scale_tokens="edges")


def test_new_entry_generator_inputs_are_the_node_context_of_the_map():
  """What token (i, j) of generation step g reads, computed from the tokens
  drawn before it placed in the map: row mean and column mean over the nodes
  of the sub-architecture being drawn, diagonal, at i, at j, and their mean
  over those nodes. Steps alternate: a scale's new node types, then its wiring."""
  from neuroprog.pnag import model as model_lib
  size, c = 6, 2
  lay = msq.new_entry_layout(NEW_SETS, size)
  assert lay.group_counts == (3, 6, 1, 6, 2, 18)
  assert [g[3] for g in lay.groups] == [0, 3, 3, 4, 4, 6]
  codebook = jax.random.normal(jax.random.key(3), (5, c))
  idx = [jax.random.randint(jax.random.key(t), (2, p), 0, 5) for t, p in enumerate(lay.counts)]
  inputs = np.asarray(model_lib.teacher_inputs(idx, codebook, (3, 4, 6), size, NEW_SETS,
                                               new_entries=True))
  assert inputs.shape == (2, 36, 10 * c)
  np.testing.assert_array_equal(inputs[:, :3], 0.0)
  codes = np.concatenate([np.asarray(codebook)[np.asarray(i)] for i in idx], 1)   # [2, 36, c]
  bounds = np.cumsum((0,) + lay.group_counts)
  flat_pos = np.concatenate(lay.positions)
  for g in range(1, len(lay.groups)):
    f = np.zeros((2, size * size, c))
    f[:, flat_pos[:bounds[g]]] = codes[:, :bounds[g]]      # every token drawn before step g
    f = f.reshape(2, size, size, c)
    t, rows, cols, present = lay.groups[g]
    node = np.concatenate([f.sum(2) / present, f.sum(1) / present,
                           np.einsum("biic->bic", f)], -1)   # [2, N, 3c]
    whole = node.sum(1) / present
    # Twins exist only between scales adding as many nodes: none here (scale 0
    # adds three nodes, scale 1 one, scale 2 two); see the test below.
    new_t = sorted(set(NEW_SETS[t]) - set(NEW_SETS[t - 1])) if t else []
    new_p = sorted(set(NEW_SETS[t - 1]) - set(NEW_SETS[t - 2] if t > 1 else ())) if t else []
    swap = dict(zip(new_t, new_p)) if len(new_t) == len(new_p) else None
    for p, (i, j) in enumerate(zip(rows, cols)):
      twin = np.zeros((2, c))
      if swap is not None:
        twin = f[:, swap.get(int(i), int(i)), swap.get(int(j), int(j))]
      want = np.concatenate([node[:, i], node[:, j], whole, twin], -1)
      np.testing.assert_allclose(inputs[:, bounds[g] + p], want, atol=1e-5)
  # The wiring step of scale 1 reads node 2's type, drawn in the step before.
  _, rows, cols, _ = lay.groups[3]
  p = list(zip(rows.tolist(), cols.tolist())).index((0, 2))
  np.testing.assert_allclose(inputs[:, bounds[3] + p, 3 * c + 2 * c:3 * c + 3 * c],
                             codes[:, bounds[2]], atol=1e-6)


def test_twins_are_the_previous_new_nodes_entries():
  """One node per scale: token (i, j) of scale t reads the code of the entry
  with t's new node replaced by t-1's, from the tokens of scale t-1."""
  from neuroprog.pnag import model as model_lib
  sets = ((0, 1, 5), (0, 1, 2, 5), (0, 1, 2, 3, 5), (0, 1, 2, 3, 4, 5))
  size, c = 6, 2
  lay = msq.new_entry_layout(sets, size)
  # Scale 2 adds node 3 after scale 1 added node 2: (3, 3) -> (2, 2), (0, 3) -> (0, 2),
  # (3, 5) -> (2, 5), (2, 3) -> (2, 2)... every twin lies in scale 1's tokens.
  prev_pos = [int(q) for q in lay.positions[1]]
  for g in (4, 5):
    t, rows, cols, _ = lay.groups[g]
    assert t == 2
    for (i, j), k in zip(zip(rows.tolist(), cols.tolist()), lay.twins[g].tolist()):
      ti, tj = (2 if i == 3 else i), (2 if j == 3 else j)
      assert prev_pos[k] == ti * size + tj, (i, j)
  # Scale 1 follows a scale adding three nodes: no twin (the zero slot).
  assert set(lay.twins[2].tolist()) == {lay.counts[0]}
  codebook = jax.random.normal(jax.random.key(3), (5, c))
  idx = [jax.random.randint(jax.random.key(t), (2, p), 0, 5) for t, p in enumerate(lay.counts)]
  inputs = np.asarray(model_lib.teacher_inputs(idx, codebook, (3, 4, 5, 6), size, sets,
                                               new_entries=True))
  codes = np.concatenate([np.asarray(codebook)[np.asarray(i)] for i in idx], 1)
  bounds = np.cumsum((0,) + lay.group_counts)
  t, rows, cols, _ = lay.groups[6]          # scale 3's types step: node 4's diagonal
  assert (rows.tolist(), cols.tolist()) == ([4], [4])
  k_33 = lay.offsets[2] + [int(q) for q in lay.positions[2]].index(3 * size + 3)
  np.testing.assert_allclose(inputs[:, bounds[6], 9 * c:], codes[:, k_33], atol=1e-6)
  np.testing.assert_array_equal(inputs[:, bounds[2]:bounds[3], 9 * c:], 0.0)


def test_later_twins_and_between_types_inputs_by_hand():
  """later_twins: token (i, j) adds the twins of the same column's later
  rows; between_types: the mean diagonal code of the scale's nodes strictly
  between i and j. Checked on the six-node layout of the twins test."""
  from neuroprog.pnag import model as model_lib
  sets = ((0, 1, 5), (0, 1, 2, 5), (0, 1, 2, 3, 5), (0, 1, 2, 3, 4, 5))
  size, c = 6, 2
  lay = msq.new_entry_layout(sets, size)
  g = 5                                      # scale 2's wiring step: node 3's entries
  t, rows, cols, _ = lay.groups[g]
  pairs = list(zip(rows.tolist(), cols.tolist()))
  assert pairs == [(0, 3), (1, 3), (2, 3), (3, 0), (3, 1), (3, 2), (3, 5), (5, 3)]
  later = lay.later_twin_matrices[g]
  assert later.shape == (8, 8)
  # (0, 3) adds the twins of (1, 3), (2, 3), (5, 3); (5, 3) adds nothing
  assert np.flatnonzero(later[0]).tolist() == [1, 2, 7]
  assert np.flatnonzero(later[2]).tolist() == [7]
  assert later[7].sum() == 0 and later[3].sum() == 0     # column 0: nothing after row 3
  between = lay.between_matrices[g]
  assert between.shape == (8, size)
  assert np.flatnonzero(between[0]).tolist() == [1, 2]   # (0, 3): nodes 1, 2
  np.testing.assert_allclose(between[0, [1, 2]], 0.5)
  assert np.flatnonzero(between[6]).tolist() == []       # (3, 5): node 4 is not in scale 2
  assert np.flatnonzero(between[7]).tolist() == []       # (5, 3): as (3, 5)
  # the inputs: 12 C wide; after the twin, the later twins' sum and the mean between type
  codebook = jax.random.normal(jax.random.key(3), (5, c))
  idx = [jax.random.randint(jax.random.key(t), (2, p), 0, 5) for t, p in enumerate(lay.counts)]
  inputs = np.asarray(model_lib.teacher_inputs(idx, codebook, (3, 4, 5, 6), size, sets,
                                               True, True, True))
  assert inputs.shape[-1] == model_lib.input_dim(c, True, True, True) == 12 * c
  base = np.asarray(model_lib.teacher_inputs(idx, codebook, (3, 4, 5, 6), size, sets, True))
  np.testing.assert_array_equal(inputs[..., :10 * c], base)
  bounds = np.cumsum((0,) + lay.group_counts)
  twin = inputs[:, bounds[g]:bounds[g + 1], 9 * c:10 * c]
  np.testing.assert_allclose(inputs[:, bounds[g], 10 * c:11 * c], twin[:, [1, 2, 7]].sum(1),
                             atol=1e-6)
  codes = np.concatenate([np.asarray(codebook)[np.asarray(i)] for i in idx], 1)
  diag = {int(p): lay.offsets[s] + k for s in range(3)
          for k, p in enumerate(lay.positions[s]) if p // size == p % size}
  np.testing.assert_allclose(inputs[:, bounds[g], 11 * c:],
                             (codes[:, diag[1 * size + 1]] + codes[:, diag[2 * size + 2]]) / 2,
                             atol=1e-6)
  np.testing.assert_array_equal(inputs[:, bounds[g] + 6, 11 * c:], 0.0)


@pytest.mark.parametrize("name", NAMES)
def test_teacher_inputs_at_once_equal_the_samplers_step_by_step_context(name):
  """`model.new_entry_teacher_inputs` (all steps at once, for training) gives
  every token what the sampler builds for it one generation step after
  another with `context_add` and `context_inputs`, with both options on, on
  each space's own scale schedule; and `projected_context_inputs` (the
  sampler's project-then-gather form) equals that context times a
  projection kernel, for every combination of the options."""
  from neuroprog.pnag import model as model_lib
  sp = spaces.get(name)
  sets = tuple(sp.sub_nodes(n) for n in sp.default_schedule())
  lay = msq.new_entry_layout(sets, sp.num_nodes)
  b, c = 3, 4
  codes = np.asarray(jax.random.normal(jax.random.key(5), (b, sum(lay.counts), c)))
  at_once = np.asarray(jax.jit(lambda x: model_lib.new_entry_teacher_inputs(x, lay, True, True))(
      jnp.asarray(codes)))
  bounds = np.cumsum((0,) + lay.group_counts)
  np.testing.assert_array_equal(at_once[:, :bounds[1]], 0.0)
  # the projected form on a few steps of each kind, every option combination
  checked = (1, 2, 3, len(lay.groups) // 2, len(lay.groups) - 1)
  options = ((True, True), (False, False), (True, False), (False, True))
  kernels = {(g, o): jax.random.normal(jax.random.key(g), (model_lib.input_dim(c, True, *o), 5))
             for g in checked for o in options}

  @jax.jit   # one program for the whole loop: op by op it compiles hundreds
  def step_by_step(codes):
    ctx, steps, projected = model_lib.context_start(b, sp.num_nodes, c), [], {}
    for g in range(1, len(lay.groups)):
      ctx = model_lib.context_add(ctx, codes[:, bounds[g - 1]:bounds[g]], lay, g - 1)
      t = lay.groups[g][0]
      prev = None if t == 0 else codes[:, lay.offsets[t - 1]:lay.offsets[t]]
      steps.append(model_lib.context_inputs(ctx, lay, g, prev, True, True))
      for o in options if g in checked else ():
        projected[g, o] = (
            model_lib.projected_context_inputs(ctx, lay, g, prev, kernels[g, o], *o),
            model_lib.context_inputs(ctx, lay, g, prev, *o) @ kernels[g, o])
    return steps, projected, ctx

  steps, projected, ctx = step_by_step(jnp.asarray(codes))
  for g in range(1, len(lay.groups)):
    np.testing.assert_allclose(at_once[:, bounds[g]:bounds[g + 1]], steps[g - 1], rtol=1e-5,
                               atol=1e-5, err_msg=f"{name} step {g}")
  for (g, o), (got, want) in projected.items():
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4,
                               err_msg=f"{name} step {g} options {o}")
  assert len(projected) == len(checked) * len(options)
  with pytest.raises(ValueError, match="kernel has 44 input rows; the context of these "
                                       "options is 48 wide"):
    model_lib.projected_context_inputs(ctx, lay, 1, None, jnp.zeros((44, 5)), True, True)
