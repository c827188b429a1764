"""How each hypernetwork's generated weights are built at initialization.

  python -m experiments.init_structure --config=experiments/configs/arc1d.py \
      [--config.model_configs.meta_gnn.pe_random=0] [--seed=0]

For every hypernetwork of the config (the direct model emits no θ): init it
as training does (output head calibrated on the training intents), generate
θ for the first training intent, and print per weight tensor the shares of
its variance that are row offsets, column offsets and the rest, and the
rest's effective rank (`neuroprog.analysis.structure`). A standard init
reads rest ~ 1.
"""

from absl import app
from absl import flags
import jax
import jax.numpy as jnp
from ml_collections import config_flags

from neuroprog.analysis import structure
from neuroprog.train import loop

_SEED = flags.DEFINE_integer("seed", 0, "Initialisation seed.")
config_flags.DEFINE_config_file("config", None, "Training configuration file.",
                                lock_config=True)
flags.mark_flags_as_required(["config"])


def report(config, seed: int = 0) -> dict[str, dict[str, structure.MatrixStructure]]:
  """{model: {tensor: MatrixStructure}} for the config's hypernetworks."""
  loop.validate_config(config)
  task = loop.build_task(config)
  u = jnp.asarray(task.features(task.train_intents))
  out = {}
  for name in config.models:
    model = loop.create_model(config, task, name)
    if model.is_direct:
      continue
    theta = model.apply(model.init(jax.random.key(seed), u), u[:1])[0]
    out[name] = structure.theta_structure(task.spec, theta)
  return out


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Too many command-line arguments: {argv[1:]}")
  for name, tensors in report(flags.FLAGS.config, _SEED.value).items():
    print(f"{name}: tensor  row / col / rest  rest rank")
    for tensor, s in tensors.items():
      print(f"  {tensor:24s} {s.row:5.2f} / {s.col:5.2f} / {s.rest:5.2f}  {s.rest_rank:5.1f}")


if __name__ == "__main__":
  app.run(main)
