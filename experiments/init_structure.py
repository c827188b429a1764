"""How each hypernetwork's generated weights are built at initialization.

  python -m experiments.init_structure --config=experiments/configs/arc1d.py \
      [--config.model_configs.meta_gnn.pe_random=0] [--seed=0]

For every hypernetwork of the config (the direct model emits no θ): init it
as training does (output head calibrated on the training intents), generate
θ for the first training intent, and print per weight tensor the shares of
its variance that are row offsets, column offsets and the rest, and the
rest's effective rank (`neuroprog.analysis.structure`). A standard init
reads rest ~ 1. Then, per tensor, the range over every intent of the task
(training, validation and OOD) and over --keys initialisation keys (seed,
seed + 1, ...) of std(tensor) / its standard-init std: a standard init
reads ~ 1, issue 4 asks for 0.5-2. Then per tensor the intent share of
its variance over the training intents (`structure.intent_share`: 0 when the
intent does not move the program). With --grads, the gradients at
initialization on one batch of every training intent: per generated tensor,
the RMS of dL/dθ over its entries, and per module of the hypernetwork (its
top-level parameter groups), |dL/dp| / |p| (how far one plain gradient step
would move that module, relative to its size).
"""

from absl import app
from absl import flags
import jax
import jax.numpy as jnp
from ml_collections import config_flags

import numpy as np

from neuroprog import meta, programs
from neuroprog.analysis import structure
from neuroprog.programs import layout as layout_lib
from neuroprog.train import step as step_lib
from neuroprog.train import loop

_SEED = flags.DEFINE_integer("seed", 0, "Initialisation seed.")
_GRADS = flags.DEFINE_bool("grads", False, "Also print gradient norms at init.")
_KEYS = flags.DEFINE_integer("keys", 1, "Initialisation keys for the scale range.",
                             lower_bound=1)
config_flags.DEFINE_config_file("config", None, "Training configuration file.",
                                lock_config=True)
flags.mark_flags_as_required(["config"])


def _hypernetworks(config):
  """(task, [(name, model)]) for the config's models that emit θ."""
  loop.validate_config(config)
  task = loop.build_task(config)
  models = [(name, loop.create_model(config, task, name)) for name in config.models]
  return task, [(name, m) for name, m in models if isinstance(m, meta.Hypernetwork)]


def report(config, seed: int = 0) -> dict[str, dict[str, structure.MatrixStructure]]:
  """{model: {tensor: MatrixStructure}} for the config's hypernetworks."""
  task, models = _hypernetworks(config)
  u = jnp.asarray(task.features(task.train_intents))
  out = {}
  for name, model in models:
    theta = model.apply(model.init(jax.random.key(seed), u), u[:1])[0]
    out[name] = structure.theta_structure(task.spec, theta)
  return out


def scale_report(config, seed: int = 0, keys: int = 1) -> dict[str, dict[str, tuple]]:
  """{model: {tensor: (min, max) std / standard init}} over all the task's
  intents and init keys seed .. seed + keys - 1 (`structure.init_scale`)."""
  task, models = _hypernetworks(config)
  u_train = jnp.asarray(task.features(task.train_intents))
  u_all = jnp.asarray(task.features(task.intents))
  out = {}
  for name, model in models:
    apply = jax.jit(model.apply)
    ranges = [structure.init_scale(task.spec, apply(
        model.init(jax.random.key(seed + k), u_train), u_all)) for k in range(keys)]
    out[name] = {t: (min(r[t][0] for r in ranges), max(r[t][1] for r in ranges))
                 for t in ranges[0]}
  return out


def intent_report(config, seed: int = 0) -> dict[str, dict[str, float]]:
  """{model: {tensor: intent share}} of θ at init over the training intents."""
  task, models = _hypernetworks(config)
  u = jnp.asarray(task.features(task.train_intents))
  return {name: structure.intent_share(task.spec, model.apply(
      model.init(jax.random.key(seed), u), u)) for name, model in models}


def grad_report(config, seed: int = 0, examples: int = 64):
  """{model: {"theta": {tensor: RMS of dL/dθ}, "modules": {module: |g| / |p|}}}
  at initialization, on `examples` fresh examples of every training intent."""
  task, models = _hypernetworks(config)
  intents = task.train_intents
  u = jnp.asarray(task.features(intents))
  ip = jnp.asarray(task.intent_params(intents))
  key = jax.random.key(seed + 1)
  entries = layout_lib.layout(task.spec)
  out = {}
  for name, model in models:
    params = model.init(jax.random.key(seed), u)
    loss_fn = step_lib.make_loss_fn(model, task, examples)
    g_params = jax.jit(jax.grad(lambda p: loss_fn(p, key, u, ip)[0]))(params)
    x, y = task.sample_params(key, ip, examples)

    def theta_loss(theta_BxT):
      out_ = jax.vmap(programs.execute, (None, 0, 0))(task.spec, theta_BxT, x)
      return task.loss(out_, y, ip).mean()
    g_theta = np.asarray(jax.jit(jax.grad(theta_loss))(model.apply(params, u)))
    theta_rms = {e.name: float(np.sqrt(np.mean(g_theta[:, e.offset:e.offset + e.size] ** 2)))
                 for e in entries}
    modules = {}
    # A base program (params["base"], zero at init) has no |p| to divide by;
    # its gradient is the θ gradient summed over the intents (tensors above).
    for group, sub in (("net", params["net"]), ("head", params["head"])):
      for mod in sub:
        gp = jax.tree_util.tree_leaves(g_params[group][mod])
        pp = jax.tree_util.tree_leaves(sub[mod])
        g_norm = float(np.sqrt(sum(float(jnp.sum(a ** 2)) for a in gp)))
        p_norm = float(np.sqrt(sum(float(jnp.sum(a ** 2)) for a in pp)))
        modules[f"{group}/{mod}"] = g_norm / max(p_norm, 1e-12)
    out[name] = {"theta": theta_rms, "modules": modules}
  return out


def main(argv):
  if len(argv) > 1:
    raise app.UsageError(f"Too many command-line arguments: {argv[1:]}")
  for name, tensors in report(flags.FLAGS.config, _SEED.value).items():
    print(f"{name}: tensor  row / col / rest  rest rank")
    for tensor, s in tensors.items():
      print(f"  {tensor:24s} {s.row:5.2f} / {s.col:5.2f} / {s.rest:5.2f}  {s.rest_rank:5.1f}")
  keys = _KEYS.value
  for name, tensors in scale_report(flags.FLAGS.config, _SEED.value, keys).items():
    print(f"{name} scale: tensor  std / standard init, min - max over intents "
          f"and {keys} key(s)")
    for tensor, (lo, hi) in tensors.items():
      print(f"  {tensor:24s} {lo:5.2f} - {hi:5.2f}")
  for name, tensors in intent_report(flags.FLAGS.config, _SEED.value).items():
    print(f"{name} intent share: tensor  Var over training intents / total")
    for tensor, v in tensors.items():
      print(f"  {tensor:24s} {v:5.3f}")
  if _GRADS.value:
    for name, rep_ in grad_report(flags.FLAGS.config, _SEED.value).items():
      print(f"{name} gradients at init: tensor  RMS dL/dθ")
      for tensor, v in rep_["theta"].items():
        print(f"  {tensor:24s} {v:9.3e}")
      print(f"{name} gradients at init: module  |dL/dp| / |p|")
      for mod, v in rep_["modules"].items():
        print(f"  {mod:24s} {v:9.3e}")


if __name__ == "__main__":
  app.run(main)
