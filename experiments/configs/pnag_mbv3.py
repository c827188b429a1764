"""PNAG on OFA MobileNetV3: train on 20,000 of OFA's random subnets, sample 1,000.

  python -m experiments.generate --config=experiments/configs/pnag_mbv3.py \
      --workdir=workdirs/pnag_mbv3

Thirtieth session, 2-core CPU, 2026-12-03, commit aece7d3, fresh end to end, alone
(17:26-17:56 UTC): stage 1 443 s, stage 2 1,189 s (12,000 steps at width 24), 27.2 minutes
of training; held-out reconstruction 100% at every scale; plain decoding validity 99.4% of
1,000 (target 99%: met), per scale 100 / 100 / 100 / 99.9 / ... / 99.6 / 99.4 / 99.4;
uniqueness and novelty 100% (1,000 OFA draws, the baseline: 100 / 100 / 100); constrained
decoding 100%; validation sample (key 7, 2,000) 99.40%. Sampler of that workdir
(benchmarks/bench_pnag.py, batch 4,096, alone, 17:58-18:03 UTC): 1,521 and 1,641 per second
(target 1,000: met; the width-16 generator below 2,179 in the same run). Width 24 and OFA's
subnets (stage depth uniform in {2, 3, 4}, as OFA's `sample_active_subnet` draws them) were
chosen on the validation sample: 99.40% against 98.35% (width 16, OFA subnets), 98.0%
(width 24, uniform architectures) and 97.6% (width 16, uniform). Details: BUILD_NOTES.md
("PNAG: where MBV3's invalid samples come from, OFA's subnet distribution").

Before, on uniform architectures (`--config.arch_distribution=uniform --config.gen.width=16`):
Twenty-seventh session, 2-core CPU, 2026-12-03, commit c1c6b4a, alone (all steps' teacher
inputs at once and attention within steps batched: stage 2 at 12-16 steps per second):
stage 1 457 s, stage 2 867 s (12,000 steps), 22 minutes in all; plain decoding validity
97.4% of 1,000 (target 99%: not met); uniqueness and novelty 100%; constrained decoding
100%; on the validation sample the step count was chosen on (key 7, 2,000): 97.6% against
94.5% with 3,000 steps. Details: BUILD_NOTES.md ("PNAG: cheaper generator steps").
Sampler of that run's workdir (benchmarks/bench_pnag.py, batch 4,096, alone, twenty-eighth
session, commits 3821e47 and f9c1e9a): 1,540-1,594 per second (target 1,000: met);
BUILD_NOTES.md ("PNAG: a faster sequential sampler").

Twenty-ninth session, width 16 on OFA's random subnets (fresh end to end at commit 90d464b,
alone): stage 1 472 s, stage 2 867 s (22.3 minutes); plain decoding validity 98.3% of 1,000
(validation sample 98.35%); uniqueness and novelty 100%. Uniform over architectures a
depth-2 stage is 1.1% of stages, and most of the uniform-data generators' failures sat there.

Twenty-sixth session (stage 1 at commit d8e190b, 726 s; stage 2 with
between_types at commit 3d5b4f0, 718 s; beside one other run, 3,000 steps): plain decoding
validity 94.7% of 1,000 (target 99%: not met), per scale 99.5 / 99.2 / 99.0 / ... / 95.2 /
94.7; on the validation sample (key 7, 2,000) 94.5%, against 93.5% (validation 92.6%) for the
generator without between_types on the same stage 1. Sampler 1,168 per second (batch 4,096,
alone; 1,166 without between_types in the same session). Details: BUILD_NOTES.md ("PNAG:
counting inputs, later twins, between types").

Before (nineteenth session, another stage 1, no between_types):
Sub-architecture scales n = 3..20, new-entry tokens (400 per architecture), two generation
steps per scale, tokens drawn one at a time within a step, each token also reading its twin;
2-core CPU, 2026-12-02 (stage 1 at commit be80be6, 712 s; stage 2 at 3c5e41a, 675 s;
both beside other runs; 23 minutes in all): held-out reconstruction 99.6-100% at every scale;
plain decoding validity 95.4% (target 99%: not met), falling from 99.9% (n = 3) to 95.4%
(n = 20); uniqueness and novelty 100% (as uniform draws); constrained decoding 100% / 100% /
100%. Sampler: BUILD_NOTES.md ("PNAG: sequential steps and twins"). No GPU run measured yet.
Details: BUILD_NOTES.md ("PNAG: sequential steps and twins"; earlier generators in "PNAG with
new-entry tokens").
Earlier, on the image pyramid
(`--config.schedule=pyramid --config.ae.scale_tokens=block`, scales as PYRAMID_SCALES, no SCC decoding, block-causal
attention), 2-core CPU, 2026-11-30: stage 1 126 s, stage 2 911 s (about 18 min); held-out
reconstruction 97.1%; validity, uniqueness and novelty 100% with the constrained decoder
(`decode="valid"`), plain decoding of the same samples 53.3% valid. No GPU run measured yet.
Details: BUILD_NOTES.md ("PNAG runs").
"""

from neuroprog.pnag import train

# Only what differs from the defaults (neuroprog.pnag.train.SCHEMA, AEConfig,
# GenConfig). Scales: the sub-architectures of 3, 4, ..., 20 layer slots,
# each quantizing only the entries its new layer adds (400 tokens in all);
# SCC decoding of every scale (weight 1, the default). The generator is the
# NB201 one (one block, each scale attending within itself) at width 24, sized
# for the sampler's speed on CPU, but draws a step's tokens one at a time:
# the chain edge into a layer comes from the last present layer before it,
# one choice spread over several wiring tokens. Each wiring token also reads
# the mean type of the slots between its endpoints (between_types): the chain
# edge i -> j exists only if every slot between them is empty.


def get_config():
  return train.default_config(
      space="mbv3",
      heldout_size=1000,
      # OFA's random subnets (stage depth uniform in {2, 3, 4}) rather than
      # uniform architectures: chosen on the validation sample (key 7, 2,000
      # draws) with width 24, 99.40% valid against 98.0% on uniform draws.
      arch_distribution="ofa_subnets",
      ae={"token_noise": 0.1, "codebook_size": 32},
      gen={"width": 24, "heads": 1, "depth": 1, "mlp_ratio": 2, "attention": "scale",
           "step_order": "sequential", "between_types": True},
      batch_size=64,
      ae_steps=1500,
      # chosen on a validation sample (key 7, 2,000 draws) against 3,000
      gen_steps=12000,
      gen_learning_rate=2e-3,
      checkpoint_every=500,
  )
