"""PNAG on OFA MobileNetV3 conditioned on MACs: five requested values, 1,000 samples each.

  python -m experiments.generate_to_cost --config=experiments/configs/pnag_mbv3_cost.py \
      --workdir=workdirs/pnag_mbv3_cost

Same training set, stages and budgets as `pnag_mbv3.py`, with the generator
conditioned on the training architectures' MACs (`pnag.cost`).
Measured: BUILD_NOTES.md ("Generation to a requested cost").
"""

from experiments.pipelines import generate_to_cost


def get_config():
  return generate_to_cost.default_config(
      space="mbv3",
      heldout_size=1000,
      ae={"scc_decode_weight": 0.0, "token_noise": 0.1},
      gen={"width": 32, "heads": 2},
      batch_size=64,
      ae_steps=800,
      gen_steps=800,
      gen_learning_rate=2e-3,
      checkpoint_every=400,
  )
