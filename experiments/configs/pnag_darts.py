"""PNAG on DARTS: train on 20,000 uniform genotypes, sample 1,000.

  python -m experiments.generate --config=experiments/configs/pnag_darts.py \
      --workdir=workdirs/pnag_darts

Sub-architecture scales n = 3..22, new-entry tokens (484 per architecture), two generation
steps per scale, tokens drawn one at a time within a step, each token also reading its twin;
2-core CPU, 2026-12-02 (stage 1 at commit be80be6, 1,359 s; stage 2 at 39dc00c, 1,224 s; both
beside other runs): held-out reconstruction 100% at every scale; plain decoding validity 69.2%
(target 95%: not met; 0% with parallel steps, 45.8% sequential without twins): scales n = 3..6
100%, then falling at each second operation of an intermediate node (n = 7 96.6%, n = 9 91.0%,
n = 11 81.7%), whose input must differ from the first operation's; uniqueness and novelty
100%; constrained decoding 100% / 100% / 100%. A fresh end-to-end rerun of this config
(twentieth session, new stage 1, 1,379 s + 1,753 s beside other runs) gave 51.5% plain
validity: the figure moves by about 18 points with the stage-1 run (BUILD_NOTES.md, "PNAG:
sequential NB201 and learned token inputs"). Sampler: BUILD_NOTES.md ("PNAG: sequential steps
and twins"). No GPU run measured yet.
Details: BUILD_NOTES.md ("PNAG: sequential steps and twins").
Earlier, on the image pyramid
(`--config.schedule=pyramid --config.ae.scale_tokens=block`, scales as PYRAMID_SCALES, no SCC decoding, block-causal
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
  # Sequential steps (as MBV3): an operation's input is one choice spread
  # over several wiring tokens (both operations of an intermediate node).
  c.gen.step_order = "sequential"
  return c
