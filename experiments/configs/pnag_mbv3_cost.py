"""PNAG on OFA MobileNetV3 conditioned on MACs: five requested values, 1,000 samples each.

  python -m experiments.generate_to_cost --config=experiments/configs/pnag_mbv3_cost.py \
      --workdir=workdirs/pnag_mbv3_cost

The training set, stages and budgets of `pnag_mbv3.py` (taken from it), with
the generator conditioned on the training architectures' MACs (`pnag.cost`).
Measured: BUILD_NOTES.md ("Generation to a requested cost").
"""

from experiments.configs import pnag_mbv3
from experiments.pipelines import generate_to_cost


def get_config():
  unconditional = pnag_mbv3.get_config()
  return generate_to_cost.default_config(**{
      k: v for k, v in unconditional.items() if k in generate_to_cost.SCHEMA.keys})
