"""PNAG on DARTS: train on 20,000 uniform genotypes, sample 1,000.

  python -m experiments.generate --config=experiments/configs/pnag_darts.py \
      --workdir=workdirs/pnag_darts

Sub-architecture scales (n = 3..N, per-scale attention): not yet measured; on the
2-core CPU a generator step over the whole sequence is too slow to finish in a session
(BUILD_NOTES.md, "PNAG on sub-architecture scales"). Earlier, on the image pyramid
(`--config.schedule=pyramid`, scales as PYRAMID_SCALES, no SCC decoding, block-causal
attention), 2-core CPU, 2026-11-30 (sharing the cores with another run): stage 1 270 s, stage 2
1,894 s (about 37 min); held-out reconstruction 90.9%; validity, uniqueness and novelty
100% with the constrained decoder (`decode="valid"`), plain decoding 0% valid. No GPU run
measured yet.
Details: BUILD_NOTES.md ("PNAG runs").
"""

from experiments.configs import pnag_mbv3

# The MobileNetV3 setup, on the DARTS space. Scales: the space's default,
# (2, 6, 11, 22).


def get_config():
  c = pnag_mbv3.get_config()
  c.space = "darts"
  return c
