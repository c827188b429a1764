"""Conditional PNAG on NAS-Bench-201: meta-learned surrogate, guided generation,
search with m = 1 look-up, leave-one-dataset-out for every target.

  python -m experiments.search --config=experiments/configs/pnag_nb201_cond.py \
      --workdir=workdirs/pnag_nb201_cond [--config.table=PATH]

The default table is ../shared/data/nas-bench-201/nb201_hp12_accuracy.csv
(12-epoch schedule); pass an official 200-epoch file with --config.table.

2-core CPU, 2026-11-30: 49 min (rerun, sharing the cores with another
training job; 65 min in a first run beside three jobs). Expected
results (5 evaluation seeds, m = 1 look-up + 20 support evaluations):
cifar10 chosen cell 88.79 test (rank share 0.06%), cifar100 60.92 +- 0.07
(<= 0.04%), imagenet16-120 35.99 +- 0.94 (<= 0.66%); surrogate Spearman
0.915 / 0.928 / 0.897; the control curve rises with the level on all three.
No GPU run measured.
"""

import ml_collections


def get_config():
  c = ml_collections.ConfigDict()
  c.space = "nb201"
  c.table = None
  c.seed = 0
  c.targets = ("cifar10", "cifar100", "imagenet16-120")
  c.scales = (1, 2, 4, 8)
  c.ae = {"hidden": 64, "channels": 16, "codebook_size": 64, "rounds": 2,
          "codebook": "ema", "scc_weight": 1.0, "scc_decode_weight": 0.0,
          "token_noise": 0.1}
  c.gen = {"width": 32, "depth": 2, "heads": 2, "mlp_ratio": 4}
  c.surrogate = {"hidden": 128, "context_dim": 16, "support_size": 20,
                 "query_size": 256, "episodes": 8, "steps": 1000,
                 "learning_rate": 1e-3, "rank_weight": 1.0}
  c.batch_size = 128
  c.ae_steps = 800
  c.gen_steps = 2000
  c.ae_learning_rate = 2e-3
  c.gen_learning_rate = 2e-3
  c.contexts_per_task = 32
  c.uncond_prob = 0.1
  c.guidance = 2.0
  c.search_level = 1.0
  c.num_candidates = 1000
  c.lookups = 1
  c.levels = (0.1, 0.3, 0.5, 0.7, 0.9)
  c.control_samples = 1000
  c.eval_seeds = 5
  c.temperature = 1.0
  c.log_every = 100
  c.checkpoint_every = 500
  c.keep_checkpoints = 2
  return c
