"""PNAG on NAS-Bench-201: train on a random half of the 15,625 cells, sample 1,000.

  python -m experiments.generate --config=experiments/configs/pnag_nb201.py \
      --workdir=workdirs/pnag_nb201

2-core CPU, 2026-11-30: stage 1 77 s, stage 2 230 s (about 5.5 min with compilation);
held-out reconstruction 100%; with the constrained decoder (`decode="valid"`) validity
100%, uniqueness 86.5%, novelty 47.2% (plain decoding of the same samples: 99.3%, 86.5%, 47.3%).
No GPU run measured yet.
Details: BUILD_NOTES.md ("PNAG runs").
"""

from neuroprog.pnag import train

# Only what differs from the defaults (neuroprog.pnag.train.SCHEMA, AEConfig,
# GenConfig). Scales: the sub-architectures of 3, 4, ..., 8 nodes; every
# intermediate scale is decoded against its sub-architecture (SCC decoding
# weight 1, the default).


def get_config():
  return train.default_config(
      space="nb201",
      ae={"token_noise": 0.1},
      gen={"width": 32, "heads": 2},
      batch_size=128,
      ae_steps=800,
      gen_steps=2000,
      gen_learning_rate=2e-3,
  )
