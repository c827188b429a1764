"""PNAG on DARTS conditioned on MACs (CIFAR-10 evaluation network of 20
cells, 36 channels): five requested values, 1,000 samples each.

  python -m experiments.generate_to_cost --config=experiments/configs/pnag_darts_cost.py \
      --workdir=workdirs/pnag_darts_cost

The MobileNetV3 setup (`pnag_mbv3_cost.py`) on the DARTS space, as
`pnag_darts.py` is `pnag_mbv3.py`'s.

2-core CPU, 2026-12-01, cores shared: 67 min (stage 2 40 min). Plain
decoding gives no valid genotype; with the constrained decoder 15.1 / 18.5 /
19.7 / 19.2 / 23.8% of samples are within 5% of 341.0 / 413.8 / 458.2 / 503.6
/ 584.0M MACs (uniform rejection: 5.3 / 20.0 / 24.4 / 21.2 / 7.9%),
uniqueness 100%. Details: BUILD_NOTES.md ("Generation to a requested cost").
"""

from experiments.configs import pnag_darts
from experiments.configs import pnag_mbv3_cost
from experiments.pipelines import generate_to_cost


def get_config(variant=None):
  """variant None: the unconditional config's data, stages, scales and
  generator (`pnag_darts.py`), the generator conditioned on MACs. variant
  "pyramid": the first measured run's setup, `pnag_mbv3_cost.py:pyramid` on
  DARTS (docstring, 2026-12-01)."""
  if variant == "pyramid":
    c = pnag_mbv3_cost.get_config("pyramid")
    c.space = "darts"
    return c
  if variant is not None:
    raise ValueError(f"pnag_darts_cost variant={variant!r}; allowed: None, 'pyramid'.")
  unconditional = pnag_darts.get_config()
  return generate_to_cost.default_config(**{
      k: v for k, v in unconditional.items() if k in generate_to_cost.SCHEMA.keys})
