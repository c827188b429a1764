"""Tiny 1D-ARC config with intents given as examples (tests; about a minute).

  python -m experiments.synthesize --config=experiments/configs/arc1d_examples_test.py \
      --workdir=/tmp/np_arc1d_examples
"""

from experiments.configs import arc1d_paper
from neuroprog.train import loop


def get_config():
  return loop.default_config(
      task="arc1d",
      models=("direct", "meta_mlp", "meta_gmlp", "meta_gnn"),
      model_configs={"direct": {"d_model": 16, "n_layers": 1}, "meta_mlp": {"hidden": 4},
                     "meta_gmlp": {"hidden": 1}, "meta_gnn": {"d": 4, "rounds": 1}},
      intent="examples",
      shots=2,
      # pair_stats as in arc1d_examples.py, so the slow tests train, resume,
      # synthesize and evaluate through the relation statistics.
      intent_encoder={"width": 8, "heads": 2, "out_dim": 8, "pair_stats": 1},
      # and the label readout with its parameter from the pair statistics,
      # read through the teacher feed (true labels in training, the snapped
      # readout elsewhere), as it sets.
      intent_label_loss=1.0,
      intent_label_input=True,
      intent_label_feed="teacher",
      intent_label_parameter="pair_stats",
      ood_intents=arc1d_paper.OOD_INTENTS,
      val_intents=arc1d_paper.VAL_INTENTS,
      seeds=2,
      steps=4,
      intents_per_step=2,
      examples_per_intent=4,
      eval_examples=20,
      log_every=2,
      checkpoint_every=2,
      keep_checkpoints=1,
  )
