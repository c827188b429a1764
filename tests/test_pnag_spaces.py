"""Search spaces: strings, encodings, validity, sampling, the NB201 index order."""
import csv
import json

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
