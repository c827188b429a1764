"""PNAG on NAS-Bench-201: train on a random half of the 15,625 cells, sample 1,000.

  python -m experiments.generate --config=experiments/configs/pnag_nb201.py \
      --workdir=workdirs/pnag_nb201

2-core CPU, 2026-12-02 (commit ae5012c), sub-architecture scales n = 3..8: stage 1 217 s,
stage 2 1,401 s (cores shared for most of it); held-out reconstruction 100% at every scale;
plain decoding (the headline) validity 97.4%, uniqueness 96.9%, novelty 48.9%; validity per
scale 100 / 100 / 99.9 / 99.2 / 72.6 / 97.4%; constrained decoding 100% / 96.9% / 48.5%;
sampler 790 architectures/s (benchmarks/bench_pnag.py, batch 4,096). No GPU run measured yet.
Details: BUILD_NOTES.md ("PNAG on sub-architecture scales").
"""

from neuroprog.pnag import train

# Only what differs from the defaults (neuroprog.pnag.train.SCHEMA, AEConfig,
# GenConfig). Scales: the sub-architectures of 3, 4, ..., 8 nodes; every
# intermediate scale is decoded against its sub-architecture (SCC decoding
# weight 1, the default).


def get_config():
  return train.default_config(
      space="nb201",
      ae={"token_noise": 0.1, "codebook_size": 32},
      gen={"width": 16, "heads": 1, "depth": 1, "mlp_ratio": 2, "attention": "scale"},
      batch_size=128,
      ae_steps=1500,
      gen_steps=2000,
      gen_learning_rate=2e-3,
  )
