"""Does the example-set encoder see the intent? A probe for issue 27.

Trains `neuroprog.intents.ExampleSetEncoder` (the defaults a run uses) with two
small heads on u alone, no meta-learner: the family (softmax over the 9
families) and the parameter (regression on the int parameter; 0 where the
family has none), from `--shots` support pairs drawn from the training intents.
Then reads, on fresh support sets, family accuracy and the parameter's mean
absolute error per split (training, validation and OOD intents of the config;
validation and OOD are never trained on). If the probe reads shifts and scales
from u, the example-intent run's failure on them lies in the learners' reading
of u, not in what the encoder can extract.

  python benchmarks/probe_example_encoder.py [--steps 1500] > probe.jsonl

One JSON line per split (train, val, ood), with the figures per intent.
"""

import argparse
import importlib
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import optax

# common.py lives here; experiments/ (the configs) beside benchmarks/.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # pylint: disable=g-import-not-at-top,wrong-import-position

from neuroprog import intents as intents_lib  # pylint: disable=g-import-not-at-top
from neuroprog.tasks.arc1d import families
from neuroprog.train import loop


class _Probe:
  def __init__(self, encoder, n_families, out_dim):
    self.encoder = encoder
    self.n_families = n_families
    self.out_dim = out_dim

  def init(self, key, support):
    k1, k2, k3 = jax.random.split(key, 3)
    enc = self.encoder.init(k1, support)["params"]
    scale = 1.0 / np.sqrt(self.out_dim)
    return {"encoder": enc,
            "family": scale * jax.random.normal(k2, (self.out_dim, self.n_families)),
            "param": scale * jax.random.normal(k3, (self.out_dim, 1)),
            "param_bias": jnp.zeros((1,))}

  def apply(self, params, support):
    u = self.encoder.apply({"params": params["encoder"]}, support)   # [B, F]
    return u @ params["family"], (u @ params["param"] + params["param_bias"])[:, 0]


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--config", default="arc1d_examples")
  parser.add_argument("--steps", type=int, default=1500)
  parser.add_argument("--intents_per_step", type=int, default=32)
  parser.add_argument("--shots", type=int, default=3)
  parser.add_argument("--eval_draws", type=int, default=64)
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--encoder", default="",
                      help="encoder options over the config's, e.g. 'width=64,layers=2' "
                           f"(keys: {sorted(intents_lib.ENCODER_DEFAULTS)})")
  args = parser.parse_args()
  if args.steps < 1 or args.intents_per_step < 1 or not 1 <= args.shots <= intents_lib.MAX_SHOTS:
    raise SystemExit(f"--steps={args.steps}, --intents_per_step={args.intents_per_step} must "
                     f"be >= 1 and --shots={args.shots} in 1..{intents_lib.MAX_SHOTS}.")
  config = importlib.import_module(f"experiments.configs.{args.config}").get_config()
  if config.task != "arc1d" or config.get("intent") != "examples":
    raise SystemExit(f"--config {args.config}: task {config.task!r}, intent "
                     f"{config.get('intent')!r}; allowed: an arc1d config with intent 'examples'.")
  task = loop.build_task(config)
  spec = task.spec
  options = dict(config.get("intent_encoder", {}))
  for item in filter(None, args.encoder.split(",")):
    name, sep, value = item.partition("=")
    if not sep or not value.strip().isdigit():
      raise SystemExit(f"--encoder: {item!r} is not key=int.")
    options[name.strip()] = int(value)
  try:
    enc_cfg = intents_lib.encoder_config(options)
  except ValueError as e:
    raise SystemExit(f"--encoder: {e}") from e
  encoder = intents_lib.ExampleSetEncoder(vocab_size=spec.vocab_size, max_len=spec.max_len,
                                          pad=families.PAD, **enc_cfg)
  probe = _Probe(encoder, len(families.FAMILIES), enc_cfg["out_dim"])
  train_ip = jnp.asarray(task.intent_params(task.train_intents))      # [I, 2]

  def support_of(key, ip_BxP):
    x, y = task.sample_params(key, ip_BxP, args.shots)
    return intents_lib.SupportSet(x, y, jnp.ones(x.shape[:2], bool))

  def loss_fn(params, key):
    k1, k2 = jax.random.split(key)
    ip = train_ip[jax.random.randint(k1, (args.intents_per_step,), 0, train_ip.shape[0])]
    fam_logits, param = probe.apply(params, support_of(k2, ip))
    ce = optax.softmax_cross_entropy_with_integer_labels(fam_logits, ip[:, 0]).mean()
    return ce + 0.1 * jnp.mean((param - ip[:, 1]) ** 2)

  key = jax.random.key(args.seed)
  params = probe.init(key, support_of(key, train_ip[:2]))
  opt = optax.adamw(optax.cosine_decay_schedule(1e-3, args.steps), weight_decay=0.0)
  opt_state = opt.init(params)

  @jax.jit
  def step(params, opt_state, key):
    loss, grads = jax.value_and_grad(loss_fn)(params, key)
    updates, opt_state = opt.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss

  start = time.time()
  for i in range(args.steps):
    params, opt_state, loss = step(params, opt_state, jax.random.fold_in(key, i))
  loss = float(loss)                       # waits for the last step
  train_s = time.time() - start

  @jax.jit
  def evaluate(params, key, ip_BxP):
    fam_logits, param = probe.apply(params, support_of(key, ip_BxP))
    return fam_logits.argmax(-1) == ip_BxP[:, 0], jnp.abs(param - ip_BxP[:, 1])

  def report(split, intents):
    ip = jnp.asarray(np.repeat(task.intent_params(intents), args.eval_draws, 0))
    hit, err = evaluate(params, jax.random.fold_in(key, 10**6), ip)
    return {"bench": "probe_example_encoder", "encoder": enc_cfg, "split": split,
            "intents": len(intents),
            "family_accuracy": round(float(hit.mean()), 3),
            "param_abs_error": round(float(err.mean()), 3),
            # intent -> [family accuracy, parameter abs error]
            "per_intent": {str(t): [round(float(h), 3), round(float(e), 3)]
                           for t, h, e in zip(intents, hit.reshape(len(intents), -1).mean(1),
                                              err.reshape(len(intents), -1).mean(1))},
            "steps": args.steps, "train_s": round(train_s, 1), "final_loss": round(loss, 4), **common.machine()}

  for split, intents in (("train", task.train_intents), ("val", task.val_intents),
                         ("ood", task.ood_intents)):
    common.emit(report(split, tuple(intents)))


if __name__ == "__main__":
  main()
