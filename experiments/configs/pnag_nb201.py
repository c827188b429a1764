"""PNAG on NAS-Bench-201: train on a random half of the 15,625 cells, sample 1,000.

  python -m experiments.generate --config=experiments/configs/pnag_nb201.py \
      --workdir=workdirs/pnag_nb201

2-core CPU, 2026-11-30: stage 1 77 s, stage 2 230 s (about 5.5 min with compilation);
held-out reconstruction 100%; with the constrained decoder (`decode="valid"`) validity
100%, uniqueness 86.5%, novelty 47.2% (plain decoding of the same samples: 99.3%, 86.5%, 47.3%).
No GPU run measured yet.
Details: BUILD_NOTES.md ("PNAG runs").
"""

import ml_collections


def get_config():
  c = ml_collections.ConfigDict()
  c.space = "nb201"
  c.seed = 0
  c.train_fraction = 0.5
  c.train_size = 20000          # unused for NB201 (the space is enumerated)
  c.heldout_size = 2000
  c.scales = (1, 2, 4, 8)
  c.ae = {"hidden": 64, "channels": 16, "codebook_size": 64, "rounds": 2,
          "codebook": "ema", "scc_weight": 1.0, "scc_decode_weight": 0.0,
          "token_noise": 0.1}
  c.gen = {"width": 32, "depth": 2, "heads": 2, "mlp_ratio": 4, "cond_dim": 16}
  c.batch_size = 128
  c.ae_steps = 800
  c.gen_steps = 2000
  c.ae_learning_rate = 2e-3
  c.gen_learning_rate = 2e-3
  c.num_samples = 1000
  c.sample_seed = 1
  c.temperature = 1.0
  c.top_k = 0
  c.decode = "valid"            # constrained decoder; "argmax" for plain decoding
  c.log_every = 100
  c.checkpoint_every = 500
  c.keep_checkpoints = 2
  return c
