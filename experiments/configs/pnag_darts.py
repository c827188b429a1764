"""PNAG on DARTS: train on 20,000 uniform genotypes, sample 1,000.

  python -m experiments.generate --config=experiments/configs/pnag_darts.py \
      --workdir=workdirs/pnag_darts

Sub-architecture scales n = 3..22, new-entry tokens (484 per architecture), two generation
steps per scale; 2-core CPU, 2026-12-02 (stage 1 at commit be80be6, stage 2 at 14e65aa, the
cores shared with one or two other runs): stage 1 1,359 s, stage 2 1,599 s; held-out
reconstruction 100% at every scale; plain decoding validity 0% (target 95%: not met): scales
n = 3..5 100%, n = 6 42.9%, n = 7 10.9%, then near 0 (an operation reading an intermediate node
needs edges from both of its operations, drawn independently in one step); constrained
decoding 100% / 100% / 100%. Sampler 1,159 architectures/s (benchmarks/bench_pnag.py, batch
4,096, idle). No GPU run measured yet.
Details: BUILD_NOTES.md ("PNAG with new-entry tokens").
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
  # An operation's input is one choice spread over several wiring tokens
  # (both operations of an intermediate node): drawn token by token.
  c.gen.step_order = "sequential"
  return c
