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
intent does not move the program), or over those of --share_intents. With
--grads, the gradients at initialization on one batch of every training
intent: per generated tensor,
the RMS of dL/dθ over its entries, and per module of the hypernetwork (its
top-level parameter groups), |dL/dp| / |p| (how far one plain gradient step
would move that module, relative to its size). With --updates, what one
optimizer update does to the generated programs, module by module and all
together (`neuroprog.analysis.updates`): at init (--train_steps=0) the update
is Adam's first step at the model's peak rate, -lr sign(dL/dp); after
--train_steps steps of the config's own training (seed --seed), the
optimizer's next update at that point of its schedule. Both on one fixed
batch of --examples examples of every training intent.
"""

from absl import app
from absl import flags
import jax
import jax.numpy as jnp
from ml_collections import config_flags

import numpy as np

from neuroprog import meta, programs
from neuroprog.analysis import structure
from neuroprog.analysis import updates as updates_lib
from neuroprog.programs import layout as layout_lib
from neuroprog.train import step as step_lib
from neuroprog.train import loop

_SEED = flags.DEFINE_integer("seed", 0, "Initialisation seed.")
_GRADS = flags.DEFINE_bool("grads", False, "Also print gradient norms at init.")
_KEYS = flags.DEFINE_integer("keys", 1, "Initialisation keys for the scale range.",
                             lower_bound=1)
_UPDATES = flags.DEFINE_bool("updates", False,
                             "Also print what one optimizer update does, per module.")
_TRAIN_STEPS = flags.DEFINE_integer("train_steps", 0, "With --updates: training steps "
                                    "before the update is measured.", lower_bound=0)
_EXAMPLES = flags.DEFINE_integer("examples", 64, "With --grads or --updates: examples "
                                 "per training intent in the fixed batch.", lower_bound=1)
_SHARE_INTENTS = flags.DEFINE_list(
    "share_intents", None, "Training intents the intent share is taken over "
    "(default: all of them), e.g. p=59,p=67,p=73,p=79,p=97.")
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


def intent_report(config, seed: int = 0, intents=None) -> dict[str, dict[str, float]]:
  """{model: {tensor: intent share}} of θ at init over the training intents,
  or over `intents` (a subset of them, as the task writes them: "p=59"); the
  head is calibrated on all training intents either way, as training does."""
  task, models = _hypernetworks(config)
  u = jnp.asarray(task.features(task.train_intents))
  shown = u
  if intents:
    parsed = [task.parse_intent(i) for i in intents]
    bad = [task.format_intent(i) for i in parsed if i not in task.train_intents]
    if bad or len(parsed) < 2:
      raise ValueError(f"--share_intents {bad or list(intents)}: give at least two training "
                       f"intents; allowed: {[task.format_intent(i) for i in task.train_intents]}.")
    shown = jnp.asarray(task.features(parsed))
  return {name: structure.intent_share(task.spec, model.apply(
      model.init(jax.random.key(seed), u), shown)) for name, model in models}


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


def update_report(config, seed: int = 0, train_steps: int = 0, examples: int = 64):
  """{model: {"loss": float, "rate": float, "effects": {module: UpdateEffect}}}.

  rate: the step size the update was taken at (the peak rate at init, the
  schedule's rate after train_steps). The model is initialised and trained
  as `train.loop` does for one seed (init_state, the config's optimizer,
  intents_per_step x examples_per_intent per step); the probe batch is
  `examples` fresh examples of every training intent, drawn once.
  """
  task, models = _hypernetworks(config)
  intents = task.train_intents
  u = jnp.asarray(task.features(intents))
  ip = jnp.asarray(task.intent_params(intents))
  x, y = task.sample_params(jax.random.key(seed + 1), ip, examples)

  def theta_loss(theta_BxT):
    out_ = jax.vmap(programs.execute, (None, 0, 0))(task.spec, theta_BxT, x)
    return task.loss(out_, y, ip).mean()

  out = {}
  for name, model in models:
    optimizer = loop.create_optimizer(config, name)
    state = step_lib.init_state(model, task, optimizer, jax.random.key(seed))
    theta_fn = lambda p, m=model: m.apply(p, u)
    if train_steps:
      train_step = jax.jit(step_lib.make_train_step(
          model, task, optimizer,
          intents_per_step=loop.batch_size(config, "intents_per_step", name),
          examples_per_intent=loop.batch_size(config, "examples_per_intent", name)))
      for i in range(train_steps):
        state, _ = train_step(state, jax.random.fold_in(jax.random.key(seed + 2), i))
    grads = jax.jit(jax.grad(lambda p: theta_loss(theta_fn(p))))(state.params)
    peak = loop.learning_rate(config, name)
    if train_steps:
      upd, _ = optimizer.update(grads, state.opt_state, state.params)
      schedule = loop.rate_schedule(config, name)
      rate = float(schedule(train_steps)) if callable(schedule) else schedule
    else:
      upd = jax.tree_util.tree_map(lambda g: -peak * jnp.sign(g), grads)
      rate = peak
    out[name] = {"loss": float(theta_loss(theta_fn(state.params))), "rate": rate,
                 "effects": updates_lib.update_effects(task.spec, theta_fn, theta_loss,
                                                       state.params, upd)}
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
  share_over = _SHARE_INTENTS.value
  for name, tensors in intent_report(flags.FLAGS.config, _SEED.value, share_over).items():
    print(f"{name} intent share: tensor  Var over "
          + (", ".join(share_over) if share_over else "training intents") + " / total")
    for tensor, v in tensors.items():
      print(f"  {tensor:24s} {v:5.3f}")
  if _GRADS.value:
    for name, rep_ in grad_report(flags.FLAGS.config, _SEED.value,
                                  _EXAMPLES.value).items():
      print(f"{name} gradients at init: tensor  RMS dL/dθ")
      for tensor, v in rep_["theta"].items():
        print(f"  {tensor:24s} {v:9.3e}")
      print(f"{name} gradients at init: module  |dL/dp| / |p|")
      for mod, v in rep_["modules"].items():
        print(f"  {mod:24s} {v:9.3e}")
  if _UPDATES.value:
    steps = _TRAIN_STEPS.value
    for name, rep_ in update_report(flags.FLAGS.config, _SEED.value, steps,
                                    _EXAMPLES.value).items():
      print(f"{name} one update after {steps} steps (rate {rep_['rate']:.2e}, loss "
            f"{rep_['loss']:.4f}): module  params  first-order dL  realized dL  "
            "cos(dθ, -dL/dθ)  |dθ|/|θ|  largest |dθ_t|/|θ_t| (tensors at 0 skipped)")
      for mod, e in rep_["effects"].items():
        top = sorted(((k, v) for k, v in e.by_tensor.items() if np.isfinite(v)),
                     key=lambda kv: -kv[1])[:3]
        print(f"  {mod:24s} {e.n_params:8d} {e.first_order:+10.3e} {e.realized:+10.3e} "
              f"{e.cosine:+7.3f} {e.theta_change:9.2e}  "
              + ", ".join(f"{k} {v:.1e}" for k, v in top))


if __name__ == "__main__":
  app.run(main)
