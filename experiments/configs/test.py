"""Tiny SUMFIRST config for the end-to-end test (about a minute on 2 CPU cores).

  python -m experiments.synthesize --config=experiments/configs/test.py --workdir=/tmp/np_test
"""

import ml_collections


def get_config():
  c = ml_collections.ConfigDict()
  c.task = "sumfirst"
  c.models = ("meta_mlp", "meta_gnn")
  c.model_configs = {"meta_mlp": {"hidden": 16}, "meta_gnn": {"d": 8, "rounds": 1}}
  c.learning_rates = {"meta_mlp": 3e-3, "meta_gnn": 1e-3}
  c.learning_rate = 1e-3
  c.grad_clip = 1.0
  c.weight_decay = 0.0
  c.schedule = "cosine"
  c.ood_intents = ("n=4", "n=8")
  c.val_intents = ("n=6",)
  c.train_intents = None
  c.seeds = 2
  c.seed = 0
  c.steps = 40
  c.intents_per_step = 4
  c.examples_per_intent = 32
  c.eval_examples = 64
  c.eval_seed = 12345
  c.log_every = 10
  c.checkpoint_every = 20
  c.keep_checkpoints = 2
  return c
