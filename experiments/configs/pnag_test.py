"""Tiny PNAG config for the end-to-end test (well under a minute on 2 CPU cores).

  python -m experiments.generate --config=experiments/configs/pnag_test.py --workdir=/tmp/pnag_test
"""

import ml_collections


def get_config():
  c = ml_collections.ConfigDict()
  c.space = "nb201"
  c.seed = 0
  c.train_fraction = 0.5
  c.train_size = 20000
  c.heldout_size = 200
  c.scales = (2, 4, 8)
  c.ae = {"hidden": 16, "channels": 4, "codebook_size": 16, "rounds": 1,
          "codebook": "ema", "scc_weight": 1.0, "scc_decode_weight": 0.3}
  c.gen = {"width": 16, "depth": 1, "heads": 2, "mlp_ratio": 2, "cond_dim": 4}
  c.batch_size = 32
  c.ae_steps = 40
  c.gen_steps = 40
  c.ae_learning_rate = 3e-3
  c.gen_learning_rate = 3e-3
  c.num_samples = 64
  c.sample_seed = 1
  c.temperature = 1.0
  c.top_k = 0
  c.log_every = 10
  c.checkpoint_every = 20
  c.keep_checkpoints = 2
  return c
