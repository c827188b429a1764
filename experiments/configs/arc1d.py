"""Parameterized 1D-ARC on a 2-core CPU: 4 meta-learners x 5 seeds, the
paper's target and splits at a budget that fits 2.5 hours (the paper's scale,
for a GPU, is `arc1d_paper.py`).

  python -m experiments.synthesize --config=experiments/configs/arc1d.py \
      --workdir=workdirs/arc1d

What changes against the paper's protocol, and why it stays fair
(BUILD_NOTES.md, "1D-ARC protocol on the CPU"):
- Capacity: every model matched to 400,000 parameters (paper 1,000,000), the
  same budget for all four. Below about 240,000 Meta-gMLP cannot be matched
  (hidden width 1 already gives 238,652).
- Per step: 4 intents x 32 examples (paper 8 x 64). Meta-GNN's and
  Meta-gMLP's cost is per generated program (intents per step); the direct
  model's is per grid. All four see the same 128 grids per step.
- Seeds: 5 (paper 10); steps: 3,500 for every model (paper 20,000), chosen on
  cost alone before any accuracy was seen: about 2 hours of training for all
  four models at the measured speeds, leaving room inside 2.5 hours.
- Unchanged: the target (1+1-layer seq2seq, 17,547 parameters), the
  families, the OOD intents, each model's library recipe and learning rate.
  Meta-GNN's rate 3e-4 was re-checked on the validation intents against 1e-3
  (`python -m experiments.select --config=experiments/configs/arc1d.py
  --models=meta_gnn --grid="learning_rates.meta_gnn=1e-3"`, 2026-12-03: ID
  0.870, val 0.194 ± 0.052, against 0.740 / 0.500 ± 0.036 at 3e-4 in the run
  below) and kept. With the library's pre-norm rounds, which let ADDMOD train
  at twice the post-norm rate, 6e-4 was tried the same way (`--grid=
  "learning_rates.meta_gnn=6e-4"`, 2026-12-06: ID 0.854, val 0.301 ± 0.062,
  against 0.742 / 0.525 ± 0.069 at 3e-4) and lost too: on these validation
  shifts a closer fit of the training intents generalizes worse.

Measured (BUILD_NOTES.md, "The 1D-ARC table in one piece"): the whole command
as configured took 1 h 16 min 32 s wall on a 2-core AVX-512 host (2026-12-05,
commit 3633b8c, about 4 minutes of it shared with tests; the twenty-first
session's run of the three other models took 1 h 51 min on a slower hour).
OOD mean ± std over 5 seeds: direct 0.169 ± 0.020, Meta-MLP 0.226 ± 0.043,
Meta-gMLP 0.332 ± 0.035, Meta-GNN 0.293 ± 0.013 (paper 0.603 / 0.625 / 0.610
/ 0.713); ID 0.942 / 0.881 / 0.877 / 0.740: 3,500 steps do not reach the
training-intent criterion of 0.95 for any model. Every model reads 0.000 on
the two unseen recolour targets, which caps this split's OOD mean at 0.600
(`python benchmarks/arc1d_ood_ceiling.py WORKDIR`); over the other three OOD
intents 0.282 / 0.377 / 0.553 / 0.488. Official trained-family tasks
(`experiments.eval_arc1d`, seed chosen on validation): 0.860 / 0.800 / 0.705 /
0.530.

Meta-GNN re-run after the library's default became pre-norm rounds
(`--config.models="('meta_gnn',)"`, commit 228414b, 2026-12-06 07:33-08:02 UTC,
alone): ID 0.742 ± 0.033, val 0.525 ± 0.069, OOD 0.317 ± 0.046 (val-selected
seed 0.376; 0.528 over the three OOD intents without the unseen recolours).

Cost on this CPU (`python benchmarks/bench_meta.py --tasks arc1d
--widths=config --config_seeds 5`, 2-core AVX-512 host, matmul 283-299
GFLOP/s, 2026-12-02): seed-steps per second direct 6.9, Meta-MLP about 26
(measured at 8 x 16), Meta-gMLP 17.7, Meta-GNN 7.4; compile 9-28 s.
"""

from experiments.configs import arc1d_paper
from neuroprog.train import loop

# The capacity budget of this protocol; widths from
# neuroprog.train.loop.matched_model_configs("arc1d", budget=PARAM_BUDGET).
# tests/test_configs.py re-checks the 10% match.
PARAM_BUDGET = 400_000
# Meta-gMLP's learned intent-independent program θ_base (`base_program`, zero
# at init; 17,547 more parameters, 396,576 in all) was chosen on the validation
# intents, 3 seeds x the protocol's 3,500 steps (forty-second session,
# 2026-12-05, BUILD_NOTES.md "Meta-gMLP's plateau"; ID / val without 0.800 /
# 0.412 ± 0.071, seeds' ID 0.818 / 0.876 / 0.706; with 0.883 / 0.526 ± 0.032,
# seeds' ID 0.870 / 0.878 / 0.901; OOD not evaluated):
#   python -m experiments.select --config=experiments/configs/arc1d.py \
#       --config.seeds=3 --models=meta_gmlp \
#       --grid="model_configs.meta_gmlp.base_program=False,True"
# Without it the learner sits on a loss plateau (about 0.55) until a step that
# varies by seed; a per-entry program lets every entry leave it at once.
# The same option for Meta-GNN lost on validation (forty-third session, 3 seeds
# x 3,500 steps, 2026-12-05; ID / val without 0.719 / 0.531 ± 0.016, with
# 0.790 / 0.475 ± 0.043; OOD not evaluated), so Meta-GNN keeps none:
#   python -m experiments.select --config=experiments/configs/arc1d.py \
#       --config.seeds=3 --models=meta_gnn \
#       --grid="model_configs.meta_gnn.base_program=False,True"
# Meta-GNN keeps the loop's warm-up (min(200, steps // 10) = 200). The
# 1,000-step warm-up ADDMOD chose (addmod.py) read 0.572 ± 0.081 against
# 0.531 ± 0.016 on the validation intents at 3 seeds (forty-sixth session):
#   python -m experiments.select --config=experiments/configs/arc1d.py \
#       --config.seeds=3 --models=meta_gnn --grid="warmup_steps=1000"
# (the same candidates with the per-model key:
# --grid="warmup_steps_by_model.meta_gnn=-1,1000"). Adopted, it was run at
# this config's 5 seeds (forty-seventh session; this file at commit 31f4bd9
# with --config.models="('meta_gnn',)", the same training as
# `--config.warmup_steps=1000 --config.models="('meta_gnn',)"` here):
# validation 0.450 ± 0.130 against 0.500 ± 0.036 for the configured row, so
# 5 seeds reversed the 3-seed margin and the setting was withdrawn. That run
# also evaluated its OOD intents (0.286 ± 0.034 against 0.293 ± 0.013), which
# point the same way; BUILD_NOTES.md "A per-model warm-up".
MODEL_CONFIGS = {
    "direct": {"d_model": 156},
    "meta_mlp": {"hidden": 22},
    "meta_gmlp": {"hidden": 2, "base_program": True},
    "meta_gnn": {"d": 17},
}


def get_config():
  return loop.default_config(
      task="arc1d",
      model_configs=MODEL_CONFIGS,
      ood_intents=arc1d_paper.OOD_INTENTS,
      val_intents=arc1d_paper.VAL_INTENTS,
      seeds=5,
      steps=3500,
      intents_per_step=4,
      examples_per_intent=32,
      eval_examples=500,
      log_every=250,
      checkpoint_every=500,
  )
