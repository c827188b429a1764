"""WINDOWSUM-a on a convolutional target (the 1D CNN of
`neuroprog.tasks.windowsum.default_spec`): 4 meta-learners x 3 seeds, OOD
a in {3, 7}, validation a = 5.

  python -m experiments.synthesize --config=experiments/configs/windowsum.py \
      --workdir=workdirs/windowsum

All models are capacity-matched to 50,000 trainable parameters (within 10%;
`neuroprog.meta.match_capacity`). Every model trains with its library recipe
(`neuroprog.meta` DEFAULTS and learning rate): nothing here was tuned on this
task. Measured results: BUILD_NOTES.md, "Convolutional targets", and README.
"""

from neuroprog.train import loop

# neuroprog.train.loop.matched_model_configs("windowsum"); tests/test_configs.py
# re-checks the 10% match.
MODEL_CONFIGS = {
    "direct": {"hidden": 111},
    "meta_mlp": {"hidden": 173},
    "meta_gmlp": {"hidden": 54},
    "meta_gnn": {"d": 22},
}


def get_config():
  return loop.default_config(
      task="windowsum",
      models=("direct", "meta_mlp", "meta_gmlp", "meta_gnn"),
      model_configs=MODEL_CONFIGS,
      ood_intents=("a=3", "a=7"),
      # Held out of training; chooses settings (experiments.select) and seeds.
      val_intents=("a=5",),
      seeds=3,
      steps=4000,
      eval_examples=1000,
      log_every=250,
      checkpoint_every=1000,
  )
