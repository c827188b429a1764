"""Search spaces: strings, encodings, validity, sampling, the NB201 index order."""
import csv
import json

import jax
import numpy as np
import pytest

from neuroprog.pnag import spaces
from tests.conftest import require_shared

NB201_EXAMPLE = ("|nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|skip_connect~0|"
                 "nor_conv_3x3~1|skip_connect~2|")


@pytest.mark.parametrize("name", spaces.NAMES)
def test_round_trips_on_random_samples(name):
  sp = spaces.get(name)
  for a in sp.sample(np.random.default_rng(1), 300):
    assert sp.from_string(sp.to_string(a)) == a
    ops, adj = sp.encode(a)
    assert ops.shape == (sp.num_nodes, sp.num_ops) and adj.shape == (sp.num_nodes,) * 2
    assert np.all(ops.sum(1) == 1)
    assert sp.decode(ops, adj) == a
    assert sp.is_valid(ops, adj)


@pytest.mark.parametrize("name", spaces.NAMES)
def test_corrupted_graphs_are_invalid(name):
  sp = spaces.get(name)
  rng = np.random.default_rng(2)
  for a in sp.sample(rng, 50):
    idx, adj = sp.encode_indices(a)
    bad_adj = adj.copy()
    i, j = rng.integers(0, sp.num_nodes, 2)
    bad_adj[i, j] = 1 - bad_adj[i, j]
    assert not sp.is_valid(idx, bad_adj)
    # node 0 is the input (NB201, DARTS) or a layer that must exist (MBV3)
    bad_ops = idx.copy()
    bad_ops[0] = 0 if name == "mbv3" else sp.num_ops - 1
    assert not sp.is_valid(bad_ops, adj)


def test_nb201_encoding_is_diffusionnag_s():
  sp = spaces.get("nb201")
  a = sp.from_string(NB201_EXAMPLE)
  assert a == ("nor_conv_3x3", "nor_conv_3x3", "avg_pool_3x3", "skip_connect",
               "nor_conv_3x3", "skip_connect")
  ops, adj = sp.encode(a)
  assert [sp.op_names[i] for i in ops.argmax(1)] == ["input", *a, "output"]
  # node 1 = edge (1<-0) feeds edges (2<-1) and (3<-1) = nodes 3 and 5
  expected = {(0, 1), (0, 2), (0, 4), (1, 3), (1, 5), (2, 6), (3, 6), (4, 7), (5, 7), (6, 7)}
  assert {tuple(x) for x in np.argwhere(adj)} == expected
  assert sp.to_string(a) == NB201_EXAMPLE


def test_nb201_enumerate_is_complete_and_indexed():
  sp = spaces.get("nb201")
  archs = sp.enumerate()
  assert len(archs) == len(set(archs)) == 15625 == sp.size
  assert sp.to_string(archs[1]) == NB201_EXAMPLE       # index 1 of the benchmark
  for i in (0, 1, 777, 15624):
    assert sp.index_of(archs[i]) == i


def test_nb201_round_trip_and_index_order_on_the_real_table():
  path = require_shared("nas-bench-201/nb201_hp12_accuracy.csv")
  sp = spaces.get("nb201")
  archs = sp.enumerate()
  with open(path) as f:
    rows = list(csv.DictReader(f))
  assert len(rows) == 15625
  for row in rows:
    a = sp.from_string(row["arch_str"])
    assert sp.to_string(a) == row["arch_str"]
    assert archs[int(row["index"])] == a
    ops, adj = sp.encode(a)
    assert sp.decode(ops, adj) == a


@pytest.mark.parametrize("s, needle", [
    ("|nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|", "3"),
    ("|conv_7x7~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|skip_connect~0|nor_conv_3x3~1|skip_connect~2|",
     "'conv_7x7' at position 1"),
    ("|none~0|+|none~0|none~2|+|none~0|none~1|none~2|", "position 17"),
    ("|none~0|+|none~0|none-1|+|none~0|none~1|none~2|", "'none-1' at position 17"),
])
def test_nb201_malformed_strings_name_token_and_position(s, needle):
  with pytest.raises(ValueError, match=needle):
    spaces.get("nb201").from_string(s)


def test_mbv3_string_format_and_errors():
  sp = spaces.get("mbv3")
  a = ((( 3, 4), (5, 6)), ((7, 3), (3, 3), (5, 4)), ((3, 6),) * 4, ((5, 3), (5, 3)),
       ((7, 6), (7, 6), (7, 6)))
  cfg = json.loads(sp.to_string(a))
  assert cfg["d"] == [2, 3, 4, 2, 3]
  assert cfg["ks"][:4] == [3, 5, 0, 0] and cfg["e"][4:8] == [3, 3, 4, 0]
  # OFA configs carry real values in unused slots; they are ignored.
  cfg["ks"][2], cfg["e"][3] = 7, 6
  assert sp.from_string(json.dumps(cfg)) == a
  idx, adj = sp.encode_indices(a)
  assert adj.sum() == 14 - 1 and idx[2] == 0 and idx[4] > 0
  bad = dict(cfg, ks=list(cfg["ks"]))
  bad["ks"][5] = 9
  with pytest.raises(ValueError, match="bad value 9 at 'ks' position 5"):
    sp.from_string(json.dumps(bad))
  with pytest.raises(ValueError, match="bad depth 5 at 'd' position 1"):
    sp.from_string(json.dumps(dict(cfg, d=[2, 5, 4, 2, 3])))
  with pytest.raises(ValueError, match="not JSON"):
    sp.from_string("{'ks': [3]}")


def test_mbv3_validity_rules():
  sp = spaces.get("mbv3")
  a = sp.sample(3, 1)[0]
  idx, _ = sp.encode_indices(a)
  bad = idx.copy()
  bad[1] = 0                                   # layer 2 of stage 1 missing
  from neuroprog.pnag.spaces import mbv3
  assert not sp.is_valid(bad, mbv3._chain(bad))
  bad = idx.copy()
  bad[2], bad[3] = 0, 1                        # layer 4 without layer 3
  assert not sp.is_valid(bad, mbv3._chain(bad))


def test_mbv3_sampler_is_uniform_over_depths():
  sp = spaces.get("mbv3")
  depths = np.array([[len(s) for s in a] for a in sp.sample(0, 4000)])
  # P(d) is proportional to 9^d: 1/91, 9/91, 81/91.
  np.testing.assert_allclose(np.mean(depths == 4), 81 / 91, atol=0.02)


def test_mbv3_ofa_subnets_draw_each_depth_a_third_of_the_time():
  sp = spaces.get("mbv3")
  archs = sp.sample_subnets(0, 4000)
  depths = np.array([[len(s) for s in a] for a in archs])
  for d in (2, 3, 4):   # OFA: depth uniform per stage (uniform over archs: 1.1% / 9.9% / 89%)
    np.testing.assert_allclose(np.mean(depths == d), 1 / 3, atol=0.02)
  types = np.array([l for a in archs for s in a for l in s])
  np.testing.assert_allclose(np.mean(types[:, 0] == 7), 1 / 3, atol=0.02)   # kernel uniform
  np.testing.assert_allclose(np.mean(types[:, 1] == 6), 1 / 3, atol=0.02)   # expand uniform
  ops, adj = sp.encode_batch(archs[:50])
  assert all(sp.is_valid(o, a) for o, a in zip(ops, adj))
  assert sp.sample_subnets(5, 3) == sp.sample_subnets(5, 3) != sp.sample_subnets(6, 3)


def test_darts_string_canonical_and_errors():
  sp = spaces.get("darts")
  s = ("Genotype(normal=[('sep_conv_3x3', 0), ('sep_conv_3x3', 1), ('sep_conv_3x3', 0), "
       "('sep_conv_3x3', 1), ('sep_conv_3x3', 1), ('skip_connect', 0), ('skip_connect', 0), "
       "('dil_conv_3x3', 2)], normal_concat=[2, 3, 4, 5], reduce=[('max_pool_3x3', 0), "
       "('max_pool_3x3', 1), ('skip_connect', 2), ('max_pool_3x3', 1), ('max_pool_3x3', 0), "
       "('skip_connect', 2), ('skip_connect', 2), ('max_pool_3x3', 1)], reduce_concat=range(2, 6))")
  g = sp.from_string(s)                        # DARTS-V2, as published
  assert g.normal[5] == ("skip_connect", 0) and g.reduce[7] == ("max_pool_3x3", 1)
  assert sp.from_string(sp.to_string(g)) == g
  swapped = g._replace(normal=(g.normal[1], g.normal[0]) + g.normal[2:])
  assert swapped != g and sp.canonical(swapped) == sp.canonical(g)
  with pytest.raises(ValueError, match="'conv_9x9' at position"):
    sp.from_string(s.replace("'dil_conv_3x3'", "'conv_9x9'"))
  with pytest.raises(ValueError, match="input 5 at position"):
    sp.from_string(s.replace("('dil_conv_3x3', 2)", "('dil_conv_3x3', 5)"))
  with pytest.raises(ValueError, match="'none'"):
    sp.from_string(s.replace("'dil_conv_3x3'", "'none'"))
  with pytest.raises(ValueError, match="two distinct inputs"):
    sp.from_string(s.replace("('sep_conv_3x3', 1), ('sep_conv_3x3', 0)",
                             "('sep_conv_3x3', 1), ('sep_conv_3x3', 1)", 1).replace(
                                 "('sep_conv_3x3', 0), ('sep_conv_3x3', 1), ('sep_conv_3x3', 0)",
                                 "('sep_conv_3x3', 0), ('sep_conv_3x3', 0), ('sep_conv_3x3', 0)", 1))
  with pytest.raises(ValueError, match="normal_concat"):
    sp.from_string(s.replace("normal_concat=[2, 3, 4, 5]", "normal_concat=[2, 3]"))


def test_darts_encoding_wires_intermediate_nodes():
  sp = spaces.get("darts")
  g = sp.sample(5, 1)[0]
  idx, adj = sp.encode_indices(g)
  # an operation reading intermediate node m has both operations of m as inputs
  for k, (op, j) in enumerate(g.normal):
    preds = set(np.flatnonzero(adj[:11, 2 + k]).tolist())
    assert preds == ({j} if j < 2 else {2 + 2 * (j - 2), 3 + 2 * (j - 2)})
  assert set(np.flatnonzero(adj[:, 10]).tolist()) == set(range(2, 10))


def test_unknown_space_and_bad_ops():
  with pytest.raises(ValueError, match="Unknown search space 'nb101'"):
    spaces.get("nb101")
  sp = spaces.get("nb201")
  with pytest.raises(ValueError, match="not one-hot"):
    sp.decode(np.full((8, 7), 0.5), np.zeros((8, 8)))
  with pytest.raises(ValueError, match="shape"):
    sp.decode(np.zeros((8, 6)), np.zeros((8, 8)))


# ---- constrained decoding (`SearchSpace.project`) ---------------------------

def _joint_score(op_logits_NxV, adj_logits_NxN, ops_N, adj_NxN):
  """log p(ops) + sum of the logits of the edges (the objective `project` maximises)."""
  logp = op_logits_NxV - np.log(np.exp(op_logits_NxV).sum(-1, keepdims=True))
  return logp[np.arange(len(ops_N)), ops_N].sum() + (adj_logits_NxN * adj_NxN).sum()


def _random_logits(space, n, seed):
  r = np.random.default_rng(seed)
  return (2 * r.normal(size=(n, space.num_nodes, space.num_ops)).astype(np.float32),
          2 * r.normal(size=(n, space.num_nodes, space.num_nodes)).astype(np.float32))


def _neighbours(space, arch):
  """Every architecture one local change away (one layer / op / input / depth)."""
  out = []
  if space.name == "nb201":
    for i in range(6):
      out += [arch[:i] + (o,) + arch[i + 1:] for o in spaces.nb201.OPERATIONS]
  elif space.name == "mbv3":
    types = spaces.mbv3.LAYER_TYPES
    for st, layers in enumerate(arch):
      options = [layers[:l] + (t,) + layers[l + 1:] for l in range(len(layers)) for t in types]
      options += [layers[:d] for d in spaces.mbv3.DEPTHS if d < len(layers)]
      options += [layers + (t,) * (d - len(layers)) for d in spaces.mbv3.DEPTHS
                  if d > len(layers) for t in types]
      out += [arch[:st] + (o,) + arch[st + 1:] for o in options]
  else:
    for c in ("normal", "reduce"):
      pairs = getattr(arch, c)
      for k, (op, j) in enumerate(pairs):
        for op2 in spaces.darts.PRIMITIVES[1:]:
          for j2 in range(k // 2 + 2):
            new = pairs[:k] + ((op2, j2),) + pairs[k + 1:]
            if new[2 * (k // 2)][1] != new[2 * (k // 2) + 1][1]:
              out.append(arch._replace(**{c: new}))
  return out


@pytest.mark.parametrize("name", spaces.NAMES)
def test_project_returns_valid_graphs_and_keeps_confident_ones(name):
  space = spaces.get(name)
  project = jax.jit(space.project)
  archs = space.sample(0, 32)
  ops, adj = space.encode_batch(archs)
  # Confident logits of valid graphs come back unchanged.
  po, pa = project(8.0 * (2 * np.eye(space.num_ops, dtype=np.float32)[ops] - 1),
                   8.0 * (2 * adj - 1))
  assert [space.decode(o, a) for o, a in zip(np.asarray(po), np.asarray(pa))] == archs
  # Arbitrary logits give valid graphs only (plain argmax is almost never valid).
  ol, al = _random_logits(space, 300, 1)
  po, pa = map(np.asarray, project(ol, al))
  assert po.dtype == np.int32 and pa.dtype == np.float32
  assert all(space.is_valid(o, a) for o, a in zip(po, pa))
  plain = [space.is_valid(o.argmax(-1).astype(np.int32), (a > 0).astype(np.float32))
           for o, a in zip(ol, al)]
  assert np.mean(plain) < 0.05


def test_project_rejects_logits_of_the_wrong_shape():
  space = spaces.get("mbv3")
  with pytest.raises(ValueError, match=r"mbv3 logits must be op \[B, 20, 10\] and adjacency "
                     r"\[B, 20, 20\], got \[4, 20, 7\] and \[4, 20, 20\]"):
    space.project(np.zeros((4, 20, 7), np.float32), np.zeros((4, 20, 20), np.float32))
  with pytest.raises(ValueError, match="got \\[4, 8, 7\\] and \\[3, 8, 8\\]"):
    spaces.get("nb201").project(np.zeros((4, 8, 7)), np.zeros((3, 8, 8)))


@pytest.mark.parametrize("name", spaces.NAMES)
def test_project_is_the_best_valid_graph_locally(name):
  """No valid architecture one change away scores higher than the projection."""
  space = spaces.get(name)
  ol, al = _random_logits(space, 12, 2)
  po, pa = map(np.asarray, jax.jit(space.project)(ol, al))
  for b in range(len(ol)):
    best = _joint_score(ol[b], al[b], po[b], pa[b])
    for nb in _neighbours(space, space.decode(po[b], pa[b])):
      o, a = space.encode_indices(nb)
      assert _joint_score(ol[b], al[b], o, a) <= best + 1e-4, (b, nb)


def test_nb201_project_is_the_exact_optimum():
  space = spaces.get("nb201")
  ol, al = _random_logits(space, 4, 3)
  po, _ = map(np.asarray, jax.jit(space.project)(ol, al))
  every = space.encode_batch(space.enumerate())
  for b in range(len(ol)):
    scores = [_joint_score(ol[b], al[b], o, a) for o, a in zip(*every)]
    assert np.array_equal(every[0][int(np.argmax(scores))], po[b])
