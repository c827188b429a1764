"""Choose settings on validation intents only, never on the OOD intents.

  python -m experiments.select --config=experiments/configs/sumfirst.py \
      --config.val_intents="('n=6',)" --models=meta_gnn \
      --grid="model_configs.meta_gnn.pe_features=ramp,sincos+ramp" \
      --workdir=workdirs/select_sumfirst

Trains every candidate of the grid on the training intents, scores it on the
training and validation intents, and writes workdir/selection.md and
selection.json (the table chosen from, the choice per model, and the task's
one-line baselines on the same validation examples). The pipeline is
`experiments.pipelines.select.run`.

Settings that act only at evaluation (the support refinement of example
intents, `--grid="refine_steps=0 | refine_steps=50;refine_learning_rate=0.001,0.003"`) are
chosen on a finished run instead of retraining it:

  python -m experiments.select --config=experiments/configs/arc1d_examples.py \
      --trained=workdirs/arc1d_examples --grid="refine_steps=0,10,30" \
      --workdir=workdirs/select_refine

`--score=id+val` chooses on the mean of the ID and validation accuracies
instead of validation alone (a refinement can move programs that were right;
the ID intents show that cost). With `--trained` the setting as configured is
re-scored as a row of the table too (`--configured` to ask for it, or
`--noconfigured` to skip it), and a tie keeps it.
"""

from absl import app
from absl import flags
from ml_collections import config_flags

from experiments.pipelines import select
from neuroprog.run import logs

_WORKDIR = flags.DEFINE_string("workdir", None, "Directory for the candidates' runs.")
_GRID = flags.DEFINE_string("grid", None, "path=v1,v2;path2=w1,w2 (see the pipeline).")
_MODELS = flags.DEFINE_list("models", [], "Models to choose for (default: the config's).")
_TRAINED = flags.DEFINE_string(
    "trained", None, "A finished workdir of --config: re-score its checkpoints for each "
    "candidate of a grid of evaluation keys (refine_*) instead of training.")
_SCORE = flags.DEFINE_enum(
    "score", "val", select.SCORES, "What is maximised: validation accuracy, or the mean of "
    "the ID and validation accuracies (for settings that can lose what a model does well).")
_CONFIGURED = flags.DEFINE_boolean(
    "configured", None, "Also score the setting as configured, as a row of the table "
    "(default: with --trained only, where it costs one re-scoring; a grid candidate equal "
    "to the config counts as it). A tie keeps the configured setting.")
config_flags.DEFINE_config_file("config", None, "Training configuration file.",
                                lock_config=True)
flags.mark_flags_as_required(["config", "workdir", "grid"])


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Too many command-line arguments: {argv[1:]}")
  logs.setup_from_flags()
  result = select.run(flags.FLAGS.config, _GRID.value, _WORKDIR.value, _MODELS.value,
                      trained=_TRAINED.value, score=_SCORE.value,
                      configured=_CONFIGURED.value)
  print(select.markdown(result))


if __name__ == "__main__":
  app.run(main)
