"""Analytic MACs and parameters of MBV3 and DARTS architectures, against
hand-computed layers and DARTS's published count."""
import numpy as np
import pytest

from neuroprog.pnag import cost
from neuroprog.pnag.spaces import darts

G = darts.Genotype
DARTS_V2 = G(
    normal=(("sep_conv_3x3", 0), ("sep_conv_3x3", 1), ("sep_conv_3x3", 0),
            ("sep_conv_3x3", 1), ("sep_conv_3x3", 1), ("skip_connect", 0),
            ("skip_connect", 0), ("dil_conv_3x3", 2)),
    reduce=(("max_pool_3x3", 0), ("max_pool_3x3", 1), ("skip_connect", 2),
            ("max_pool_3x3", 1), ("max_pool_3x3", 0), ("skip_connect", 2),
            ("skip_connect", 2), ("max_pool_3x3", 1)))
SMALLEST_MBV3 = tuple(((3, 3),) * 2 for _ in range(5))
LARGEST_MBV3 = tuple(((7, 6),) * 4 for _ in range(5))


def test_darts_v2_has_the_published_parameter_count():
  """DARTS (second order) on CIFAR-10: 3.3M parameters in the paper;
  3,349,342 is the count its training script prints (auxiliary head
  excluded). Our MACs for it: 528.4M."""
  c = cost.cost("darts", DARTS_V2)
  assert c.params == 3_349_342
  assert c.macs == 528_359_040


def test_darts_tiny_network_by_hand():
  """3 cells (both reductions), 4 channels, 8 x 8 input; every number below
  is worked out in the comments."""
  normal = (("sep_conv_3x3", 0), ("dil_conv_5x5", 1)) * 4
  reduce = (("skip_connect", 0), ("avg_pool_3x3", 1)) * 4
  rows = cost.darts_layers(G(normal, reduce), channels=4, layers=3, resolution=8)
  by = lambda prefix: (sum(r.macs for r in rows if r.name.startswith(prefix)),
                       sum(r.params for r in rows if r.name.startswith(prefix)))
  # stem: 3x3 conv 3 -> 12 at 8x8 (64 * 27 * 12), weights 324 + BN 24
  assert by("stem") == (20736, 348)
  # cell 0 (C=4, 8x8): two 1x1 pre-convs 12 -> 4 (3072 MACs, 48 + 8 params each);
  # sep_conv_3x3 = 2 x (dw 64*9*4 + pw 64*16) = 6656 MACs, 2 x (36 + 16 + 8) = 120;
  # dil_conv_5x5 = dw 64*25*4 + pw 64*16 = 7424, 100 + 24 = 124; four nodes.
  assert by("cell0/") == (2 * 3072 + 4 * (6656 + 7424), 2 * 56 + 4 * (120 + 124))
  # cell 1 reduces (C=8, 8x8 -> 4x4): pre0 12 -> 8 (6144, 112), pre1 16 -> 8
  # (8192, 144); skip at stride 2 = factorized reduce 8 -> 8 at 4x4: two 1x1
  # convs 8 -> 4 (2 * 16*32 MACs, 2 * 32 weights) + BN 16; pools are free.
  assert by("cell1/") == (6144 + 8192 + 4 * 1024, 112 + 144 + 4 * 80)
  # cell 2 reduces again (C=16, 4x4 -> 2x2): pre0 is a factorized reduce of
  # cell 0's 16 channels at 8x8 -> 4x4 (2 * 16*16*8, 2*128 + 32), pre1 32 -> 16
  # at 4x4 (16*512, 512 + 32); skip: factorized reduce 16 -> 16 at 2x2.
  assert by("cell2/") == (4096 + 8192 + 4 * 1024, 288 + 544 + 4 * 288)
  # classifier: 64 -> 10 with bias
  assert by("classifier") == (640, 650)
  assert cost.cost("darts", G(normal, reduce), channels=4, layers=3, resolution=8) == (
      20736 + 62464 + 18432 + 16384 + 640, 348 + 1088 + 576 + 1984 + 650)


def test_mbv3_layers_by_hand():
  rows = {r.name: r for r in cost.mbv3_layers(SMALLEST_MBV3)}
  # first conv 3 -> 16, 3x3 stride 2 -> 112x112
  assert rows["first_conv"][1:] == (112 * 112 * 27 * 16, 432 + 32)
  # stage 1, layer 1: 16 -> mid 48 (e 3) at 112x112, depthwise 3x3 stride 2
  # -> 56x56, point-linear 48 -> 24; no SE in stage 1.
  assert rows["stage1/layer1/expand"][1:] == (112 * 112 * 16 * 48, 768 + 96)
  assert rows["stage1/layer1/depthwise"][1:] == (56 * 56 * 9 * 48, 432 + 96)
  assert rows["stage1/layer1/point_linear"][1:] == (56 * 56 * 48 * 24, 1152 + 48)
  assert "stage1/layer1/se_reduce" not in rows
  # stage 2 has SE: mid 72 -> make_divisible(18) = 24 (16 would lose > 10%)
  assert cost.make_divisible(18) == 24 and cost.make_divisible(72) == 72
  assert rows["stage2/layer1/se_reduce"][1:] == (72 * 24, 72 * 24 + 24)
  assert rows["stage2/layer1/se_expand"][1:] == (24 * 72, 24 * 72 + 72)
  assert rows["stage2/layer1/depthwise"][1:] == (28 * 28 * 9 * 72, 648 + 144)
  # stage 4 keeps 14x14 (stride 1); stage 5 ends at 7x7
  assert rows["stage4/layer1/depthwise"].macs == 14 * 14 * 9 * make_mid(80, 3)
  assert rows["final_expand"][1:] == (49 * 160 * 960, 153600 + 1920)
  assert rows["feature_mix"][1:] == (960 * 1280, 960 * 1280)
  assert rows["classifier"][1:] == (1280 * 1000, 1280 * 1000 + 1000)


def make_mid(c_in, e):
  return cost.make_divisible(c_in * e)


def test_mbv3_cost_grows_with_every_choice():
  base = cost.cost("mbv3", SMALLEST_MBV3)
  for changed in (
      (((5, 3), (3, 3)),) + SMALLEST_MBV3[1:],             # bigger kernel
      (((3, 4), (3, 3)),) + SMALLEST_MBV3[1:],             # bigger expansion
      (((3, 3),) * 3,) + SMALLEST_MBV3[1:]):               # deeper stage
    c = cost.cost("mbv3", changed)
    assert c.macs > base.macs and c.params >= base.params
  top = cost.cost("mbv3", LARGEST_MBV3)
  assert (base.macs, top.macs) == (121_278_672, 566_170_656)
  # the largest subnet: k 7, e 6, depth 4 in every stage
  assert top.params == 7_664_760
  macs, params = cost.costs("mbv3", [SMALLEST_MBV3, LARGEST_MBV3])
  np.testing.assert_array_equal(macs, [base.macs, top.macs])
  assert params.dtype == np.int64


def test_bad_input_is_named():
  with pytest.raises(ValueError, match=r"space 'nb201'; allowed: \['mbv3', 'darts'\]"):
    cost.cost("nb201", None)
  with pytest.raises(ValueError, match="MBV3 architecture must be"):
    cost.cost("mbv3", ((3, 3),))
  with pytest.raises(ValueError, match="resolution=100; allowed: a multiple of 32"):
    cost.cost("mbv3", SMALLEST_MBV3, resolution=100)
  with pytest.raises(ValueError, match="layers=2; allowed: >= 3"):
    cost.cost("darts", DARTS_V2, layers=2)
