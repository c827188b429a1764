"""Parameterized 1D-ARC at the paper's scale: 4 meta-learners x 10 seeds.

OOD: MoveRight(3), MoveLeft(3), Recolor(4), Recolor(7), Scale(3);
validation: MoveRight(4) (held out of training, used only to select a seed).

  python -m experiments.synthesize --config=experiments/configs/arc1d.py \
      --workdir=workdirs/arc1d

Models are capacity-matched to 1,000,000 trainable parameters (within 10%).
Expected run time and table at this scale: not yet measured (a GPU job).

Measured cut-down runs on the 2-core CPU (1 seed, 32 examples per intent;
BUILD_NOTES.md, "1D-ARC run"): at 2,000 steps ID / OOD direct 0.940 / 0.160,
meta_mlp 0.913 / 0.290, meta_gmlp 0.764 / 0.384 (2026-11-30, 77 min) and
meta_gnn 0.786 / 0.379 (2026-12-01, 14 min); at 6,000 steps meta_mlp 0.987 /
0.261, meta_gmlp 0.920 / 0.346, meta_gnn 0.951 / 0.336 (8, 15 and 29 min,
cores shared). Without `pe_random` Meta-GNN had not started learning.
"""

from neuroprog.train import loop

# Only the widths: every other option, and the learning rates, are the
# models' library defaults (neuroprog.meta; Meta-GNN's recipe and where it was
# chosen are in neuroprog/meta/meta_gnn.py). Widths from
# neuroprog.train.loop.matched_model_configs("arc1d") (budget 1,000,000);
# Meta-GNN d = 30: 1,053,574 parameters. tests/test_configs.py re-checks the
# 10% match.
MODEL_CONFIGS = {
    "direct": {"d_model": 248},
    "meta_mlp": {"hidden": 56},
    "meta_gmlp": {"hidden": 6},
    "meta_gnn": {"d": 30},
}


def get_config():
  return loop.default_config(
      task="arc1d",
      model_configs=MODEL_CONFIGS,
      ood_intents=("move_right,k=3", "move_left,k=3", "recolor,k=4", "recolor,k=7",
                   "scale,k=3"),
      val_intents=("move_right,k=4",),
      seeds=10,
      steps=20000,
      eval_examples=500,
      log_every=500,
      checkpoint_every=2000,
  )
