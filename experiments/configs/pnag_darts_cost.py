"""PNAG on DARTS conditioned on MACs (CIFAR-10 evaluation network of 20
cells, 36 channels): five requested values, 1,000 samples each.

  python -m experiments.generate_to_cost --config=experiments/configs/pnag_darts_cost.py \
      --workdir=workdirs/pnag_darts_cost

The MobileNetV3 setup (`pnag_mbv3_cost.py`) on the DARTS space, as
`pnag_darts.py` is `pnag_mbv3.py`'s. Measured: BUILD_NOTES.md ("Generation to
a requested cost").
"""

from experiments.configs import pnag_mbv3_cost


def get_config():
  c = pnag_mbv3_cost.get_config()
  c.space = "darts"
  return c
