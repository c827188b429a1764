"""Tiny SUMFIRST config for the end-to-end test (about a minute on 2 CPU cores).

  python -m experiments.synthesize --config=experiments/configs/test.py --workdir=/tmp/np_test
"""

from neuroprog.train import loop


def get_config():
  return loop.default_config(
      task="sumfirst",
      models=("meta_mlp", "meta_gnn"),
      model_configs={"meta_mlp": {"hidden": 16}, "meta_gnn": {"d": 8, "rounds": 1}},
      learning_rates={"meta_mlp": 3e-3, "meta_gnn": 1e-3},
      ood_intents=("n=4", "n=8"),
      val_intents=("n=6",),
      seeds=2,
      steps=40,
      intents_per_step=4,
      examples_per_intent=32,
      eval_examples=64,
      log_every=10,
      checkpoint_every=20,
      keep_checkpoints=2,
  )
