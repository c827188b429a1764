"""PNAG on DARTS: train on 20,000 uniform genotypes, sample 1,000.

  python -m experiments.generate --config=experiments/configs/pnag_darts.py \
      --workdir=workdirs/pnag_darts

Twenty-ninth session, 2-core CPU, 2026-12-03, alone, fresh end to end at commit 0cb4f33
(this config: width 24, 1,000 autoencoder steps): stage 1 383 s, stage 2 1,381 s (12,000
steps), **29.4 minutes** in all (target 30: met, stage 2 at 6.1-11.3 steps per
second); held-out reconstruction 100% at every scale; plain decoding validity **97.3%**
of 1,000 (target 95%: met), per scale 100 / 100 / 100 / 99.8 / 99.6 / ... / 98.1 / 97.7 /
97.3; uniqueness and novelty 100%; constrained decoding 100%. The autoencoder steps were
chosen on the validation sample (key 7, 2,000): 96.8% against 95.3% with 1,500. Sampler
(benchmarks/bench_pnag.py, batch 4,096, alone): **1,207 and 1,097 per second** (target
1,000: met; the sampler before the twenty-ninth session's chunked buffers drew 1,132 in
the same quarter hour). Details: BUILD_NOTES.md ("PNAG: where MBV3's invalid samples come
from").

Twenty-eighth session, 2-core CPU, 2026-12-03, alone: a width-24 generator,
stage 2 only at commit d187b47 on the twenty-seventh session's stage 1 of this config
(deterministic in the seed): stage 1 512 s, stage 2 1,308 s (12,000 steps), 30.3 minutes in
all (target 30: missed by 20 s); plain decoding validity **95.6%** of 1,000 (target 95%:
met), per scale 100 / 100 / 100 / 100 / 99.7 / ... / 96.7 / 96.4 / 95.6; uniqueness and
novelty 100%; constrained decoding 100%. Chosen on the validation sample (key 7, 2,000):
95.3% against 89.5% for width 16 at the same steps. Sampler (benchmarks/bench_pnag.py, batch
4,096): 929 and 694 per second in two runs (target 1,000: not met; width 16 drew
1,419-1,421). Details: BUILD_NOTES.md ("PNAG: a faster sequential sampler").

Twenty-seventh session (width 16), 2-core CPU, 2026-12-03, commit c1c6b4a, alone (all steps' teacher
inputs at once and attention within steps batched: stage 2 at 10-12 steps per second, its
compile about 10 s instead of minutes): stage 1 512 s, stage 2 1,087 s (12,000 steps), 26.7
minutes in all; plain decoding validity 87.2% of 1,000 (target 95%: not met); uniqueness and novelty
100%; constrained decoding 100%; on the validation sample the step count was chosen on (key
7, 2,000): 89.5% against 85.0% with 6,000 steps. Details: BUILD_NOTES.md ("PNAG: cheaper
generator steps").
Sampler of that run's workdir (benchmarks/bench_pnag.py, batch 4,096, alone, twenty-eighth
session, commits 3821e47 and f9c1e9a): 1,419-1,421 per second (target 1,000: met);
BUILD_NOTES.md ("PNAG: a faster sequential sampler").

Twenty-sixth session (stage 1 at commit d8e190b, 627 s; stage 2 at 1af11e2 with 6,000 steps,
1,586 s; both beside one or two other runs): plain decoding validity 84.0% of 1,000, per
scale 100 / 100 / 100 / 100 / 96.8 / 96.2 / 94.6 / 93.2 / 90.3 / ... / 87.6 / 86.9 / 84.0;
on the validation sample (key 7, 2,000): 85.0%. Same stage 1, the
generators before: as committed before (no step_sum / later_twins, 3,000 steps) 51.5%
(validation 53.2%), + step_sum 67.3% (71.2%), + later_twins 72.2% (74.4%), then 6,000 steps
84.0% (85.0%). Sampler (bench_pnag, batch 4,096, alone): 526-836 per second, against 885 for
the generator before in the same session. Details:
BUILD_NOTES.md ("PNAG: counting inputs, later twins, between types").

Before (nineteenth and twentieth sessions, no step_sum / later_twins, 3,000 steps):
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
  # Uniform over the space (MBV3's OFA subnets are defined for MBV3 only).
  c.arch_distribution = "uniform"
  # Sequential steps (as MBV3): an operation's input is one choice spread
  # over several wiring tokens (both operations of an intermediate node).
  c.gen.step_order = "sequential"
  # Each token also reads how many inputs its step has drawn (step_sum) and
  # whether the node's first operation took an input listed after this one
  # (later_twins): without them an operation drew no input, two inputs, or
  # its partner's input. MBV3's between_types is not used here (DARTS wiring
  # is by input choice, not by a chain). 12,000 generator steps: chosen on a
  # validation sample (key 7, 2,000 draws) against 6,000 and 3,000.
  c.gen.step_sum = True
  c.gen.later_twins = True
  c.gen.between_types = False
  c.gen_steps = 12000
  # Width 24 (as MBV3 now sets): chosen on the validation sample, 95.3% valid against
  # 89.5% at width 16; it costs the sampler about a third of its speed.
  c.gen.width = 24
  # 1,000 autoencoder steps (MBV3: 1,500): chosen on the validation sample,
  # 96.8% valid against 95.3% with 1,500 steps, and a third cheaper.
  c.ae_steps = 1000
  return c
