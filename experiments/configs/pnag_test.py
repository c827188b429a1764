"""Tiny PNAG config for the end-to-end test (well under a minute on 2 CPU cores).

  python -m experiments.generate --config=experiments/configs/pnag_test.py --workdir=/tmp/pnag_test
"""

from neuroprog.pnag import train


def get_config():
  return train.default_config(
      space="nb201",
      heldout_size=200,
      scales=(3, 5, 8),          # sub-architectures of 3, 5 and 8 nodes
      ae={"hidden": 16, "channels": 4, "codebook_size": 16, "rounds": 1,
          "scc_decode_weight": 0.3},
      gen={"width": 16, "depth": 1, "heads": 2, "mlp_ratio": 2, "cond_dim": 4},
      batch_size=32,
      ae_steps=40,
      gen_steps=40,
      ae_learning_rate=3e-3,
      gen_learning_rate=3e-3,
      num_samples=64,
      log_every=10,
      checkpoint_every=20,
  )
