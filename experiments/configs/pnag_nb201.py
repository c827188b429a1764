"""PNAG on NAS-Bench-201: train on a random half of the 15,625 cells, sample 1,000.

  python -m experiments.generate --config=experiments/configs/pnag_nb201.py \
      --workdir=workdirs/pnag_nb201

Sub-architecture scales n = 3..8, new-entry tokens (64 per architecture), two generation
steps per scale, each token also reading its twin; 2-core CPU, 2026-12-02 (stage 1 at commit
3964b81, 266 s beside another run; stage 2 at 89aae39, 174 s beside three): held-out
reconstruction 100% at every scale; plain decoding (the headline) validity 99.6% (target
99.9%: not met), uniqueness 96.1% (bound 96.9%), novelty 50.9% (bound 50.0%); validity per
scale 100 / 100 / 99.9 / 99.8 / 99.8 / 99.6%; constrained decoding 100% / 96.1% / 50.9%;
uniform draws on the same split 100% / 96.3% / 51.2%. Sampler: 17,490 architectures/s
(benchmarks/bench_pnag.py, batch 4,096, alone on the machine; 99.8% of those 4,096 valid). No
GPU run measured yet.
Details: BUILD_NOTES.md ("PNAG: sequential steps and twins").
"""

from neuroprog.pnag import train

# Only what differs from the defaults (neuroprog.pnag.train.SCHEMA, AEConfig,
# GenConfig). Scales: the sub-architectures of 3, 4, ..., 8 nodes, each
# quantizing the entries its new node adds; every intermediate scale is
# decoded against its sub-architecture (SCC decoding weight 1, the default).
# The generator (one block of width 16, per-scale attention) is sized for the
# sampler's 10,000 per second on CPU (BUILD_NOTES.md).


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
