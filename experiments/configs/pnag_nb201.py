"""PNAG on NAS-Bench-201: train on a random half of the 15,625 cells, sample 1,000.

  python -m experiments.generate --config=experiments/configs/pnag_nb201.py \
      --workdir=workdirs/pnag_nb201

Sub-architecture scales n = 3..8, new-entry tokens (64 per architecture), two generation
steps per scale, tokens drawn one at a time within a step, each token also reading its twin;
2-core CPU, 2026-12-02 (commit 17c9902 + this config; stage 1 290 s, stage 2 216 s, both beside
one other run): held-out reconstruction 100% at every scale; plain decoding (the headline)
validity 100.0% of 1,000 (target 99.9%; the 4,096 drawn by bench_pnag.py with another key:
99.83%), uniqueness 96.9% (bound 96.9%), novelty 50.5% (bound 50.0%); validity per scale
100% at every n; constrained decoding 100% / 96.9% / 50.5%; uniform draws on the same split
100% / 96.3% / 51.2%. Sequential steps were adopted on these same metrics (parallel steps:
99.6% valid, nineteenth session, another stage 1); BUILD_NOTES.md ("PNAG: sequential NB201
and learned token inputs"). Rerun end to end 2026-12-03 (2-core AMD EPYC, alone: stage 1
121 s, stage 2 60 s): the same 100.0% / 96.9% / 50.5%; its sampler (benchmarks/bench_pnag.py
--workdir nb201=..., batch 4,096, six runs) 12,076 architectures/s median (9,108-15,708;
target 10,000), where the twentieth session's host read 6,968. No GPU run measured yet.
Details: BUILD_NOTES.md ("PNAG: sequential steps and twins").
"""

from neuroprog.pnag import train

# Only what differs from the defaults (neuroprog.pnag.train.SCHEMA, AEConfig,
# GenConfig). Scales: the sub-architectures of 3, 4, ..., 8 nodes, each
# quantizing the entries its new node adds; every intermediate scale is
# decoded against its sub-architecture (SCC decoding weight 1, the default).
# The generator (one block of width 16, per-scale attention) is sized for the
# sampler's 10,000 per second on CPU (BUILD_NOTES.md); it draws a step's
# tokens one at a time, as MBV3 and DARTS do: an operation's edge to its
# reader is a choice that the step's other wiring tokens depend on.


def get_config():
  return train.default_config(
      space="nb201",
      ae={"token_noise": 0.1, "codebook_size": 32},
      gen={"width": 16, "heads": 1, "depth": 1, "mlp_ratio": 2, "attention": "scale",
           "step_order": "sequential"},
      batch_size=128,
      ae_steps=1500,
      gen_steps=2000,
      gen_learning_rate=2e-3,
  )
