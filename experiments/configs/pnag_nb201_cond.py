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

from experiments.pipelines import search

# Only what differs from the defaults (experiments.pipelines.search.SCHEMA,
# AEConfig, GenConfig, SurrogateConfig).


def get_config():
  return search.default_config(
      # Measured on the image-pyramid scales (1, 2, 4, 8); the search has not
      # been rerun on the sub-architecture schedule (BUILD_NOTES.md, PNAG scales).
      schedule="pyramid",
      ae={"scc_decode_weight": 0.0, "token_noise": 0.1, "scale_tokens": "block"},
      gen={"width": 32, "heads": 2},
      surrogate={"steps": 1000},
      batch_size=128,
      ae_steps=800,
      gen_steps=2000,
      gen_learning_rate=2e-3,
  )
