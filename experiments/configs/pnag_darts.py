"""PNAG on DARTS: train on 20,000 uniform genotypes, sample 1,000.

  python -m experiments.generate --config=experiments/configs/pnag_darts.py \
      --workdir=workdirs/pnag_darts

2-core CPU, 2026-11-30 (sharing the cores with another run): stage 1 270 s, stage 2
1,894 s (about 37 min); held-out reconstruction 90.9%; validity, uniqueness and novelty
100% with the constrained decoder (`decode="valid"`), plain decoding 0% valid. No GPU run
measured yet.
Details: BUILD_NOTES.md ("PNAG runs").
"""

import ml_collections


def get_config():
  c = ml_collections.ConfigDict()
  c.space = "darts"
  c.seed = 0
  c.train_fraction = 0.5        # unused (NB201 only)
  c.train_size = 20000
  c.heldout_size = 1000
  c.scales = (2, 6, 11, 22)
  c.ae = {"hidden": 64, "channels": 16, "codebook_size": 64, "rounds": 2,
          "codebook": "ema", "scc_weight": 1.0, "scc_decode_weight": 0.0,
          "token_noise": 0.1}
  c.gen = {"width": 32, "depth": 2, "heads": 2, "mlp_ratio": 4, "cond_dim": 16}
  c.batch_size = 64
  c.ae_steps = 800
  c.gen_steps = 800
  c.ae_learning_rate = 2e-3
  c.gen_learning_rate = 2e-3
  c.num_samples = 1000
  c.sample_seed = 1
  c.temperature = 1.0
  c.top_k = 0
  c.decode = "valid"            # constrained decoder; "argmax" for plain decoding
  c.log_every = 100
  c.checkpoint_every = 400
  c.keep_checkpoints = 2
  return c
