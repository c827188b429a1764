"""`train_and_evaluate(config, workdir)`: multi-seed meta-training and the table.

For every model in `config.models`: S seeds trained at once (vmap over a
leading seed axis, sharded over a device mesh), `log_every` steps per jitted
call (a `lax.scan`), orbax checkpoints every `checkpoint_every` steps, resume
from the latest readable checkpoint, then exact-match evaluation on fresh
samples of the training intents (ID), the validation intents and the OOD
intents. Per-step randomness is `fold_in(key(seed), step)`, so a resumed run
draws exactly the batches an uninterrupted one would.
"""

from __future__ import annotations

import os
from typing import Any, Optional

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np
import optax
from optax import contrib

from neuroprog import intents as intents_lib
from neuroprog import meta, specs as specs_lib, tasks
from neuroprog.programs import executor as execute_lib
from neuroprog.run import checkpoint, config as config_lib, loop as run_loop, parallel
from neuroprog.run import workdir as workdir_lib
from neuroprog.run.logs import logger
from neuroprog.run.metrics import MetricWriter
from neuroprog.train import matrix_axes as matrix_axes_lib
from neuroprog.train import refine as refine_lib, results as results_lib, step as step_lib

Interrupted = run_loop.Interrupted

# Every key of a meta-training config, with its default: the one place they
# live (experiments/configs/*.py start from `default_config()`).
SCHEMA = config_lib.ConfigSchema("meta-training", {
    "task": config_lib.REQUIRED,
    # The target S*: "" (the task's default, `tasks.default_spec`) or a
    # mapping {"type": "MLPSpec" | "TransformerSpec" | "Seq2SeqSpec", fields}
    # (`specs.from_config`); on the command line as JSON:
    # --config.spec='{"type": "MLPSpec", "widths": [10, 16, 16, 1]}'. A string
    # default, not None, so that the command line may override it.
    "spec": "",
    # Meta-learners (neuroprog.meta.NAMES), or variants "name@label" that
    # train the same learner under their own model_configs / learning_rates
    # entry (e.g. "meta_gnn@library": the library defaults beside a tuned one).
    "models": ("direct", "meta_mlp", "meta_gmlp", "meta_gnn"),
    "model_configs": {},       # {model: options}; unset options: the model's DEFAULTS
    "learning_rates": {},      # {model: rate}; unset models: learning_rate
    "learning_rate": None,     # None: each model's meta.default_learning_rate
    "grad_clip": 1.0,
    # "joint": one global-norm clip over all parameters. "per_part" (example
    # intents): the hypernetwork's parameters (params["learner"]) and the
    # intent reader's (encoder, readout heads) are clipped to grad_clip each,
    # so that a large label-loss gradient does not rescale the learner's step.
    "grad_clip_scope": "joint",
    # Example intents with the "teacher" feed: {model: True} for the
    # hypernetworks that are initialised with their label-intent twin's key
    # and draw their training queries with their twin's keys (the support
    # pairs with keys of their own), their learner's gradient clipped apart
    # from the reader's whatever grad_clip_scope says: such a learner trains
    # as its twin does, so the two intent kinds are compared on common random
    # numbers. Unnamed models: False.
    "teacher_twin_draws": {},
    "weight_decay": 0.0,       # decoupled (AdamW) on kernels (ndim >= 2) only
    # "adam", or "lamb": Adam's update of each parameter tensor rescaled to
    # rate x |tensor| / |update| (the layer-wise trust ratio), so a step moves
    # every tensor by the same fraction of its norm whatever its fan-in or
    # gradient scale; a tensor of norm 0 takes Adam's step. "muon": each
    # weight matrix's momentum orthogonalized (Newton-Schulz, optax.contrib.muon)
    # and scaled to an RMS of about 0.2 x rate (Newton-Schulz leaves singular
    # values in 0.5-1.1), Adam's typical update size, so the
    # rates of the three are comparable; a group-tied kernel [G, in, out] is G
    # matrices (`train.matrix_axes`); vectors (biases, gains) take Adam's step
    # with Nesterov momentum.
    "optimizer": "adam",
    # {model: optimizer}, as learning_rates is to learning_rate; unset: optimizer.
    "optimizer_by_model": {},
    "schedule": "cosine",      # "cosine" (warmup, decay to 1%) or "constant"
    # The cosine schedule's linear warm-up in steps; -1: min(200, steps // 10).
    "warmup_steps": -1,
    # {model: steps}, as learning_rates is to learning_rate: the warm-up of
    # the named entries ("meta_gnn", "meta_gnn@library" apart); unset models:
    # warmup_steps. Per model because a select that trains one model must
    # not change the others' schedules when its choice is adopted.
    "warmup_steps_by_model": {},
    "ood_intents": None,       # None: the task's default OOD intents
    "val_intents": (),         # held out of training, used to select a seed
    # The task's own options (`tasks.options(task)`), e.g. {"loss_classes":
    # "residues"} for addmod; unset options keep the task's defaults.
    "task_options": {},
    "train_intents": None,     # None: every intent not OOD and not validation
    # "label": the task's intent features (n, p, (family, parameter)); "examples":
    # each intent is shown as `shots` support pairs drawn from its generator
    # and read by an example-set encoder (`neuroprog.intents`), trained with
    # the meta-learner; tasks with grid pairs only (1D-ARC).
    "intent": "label",
    "shots": 3,
    "intent_encoder": {},      # options of intents.ExampleSetEncoder (ENCODER_DEFAULTS)
    # Example intents: weight of an auxiliary training loss in which a linear
    # readout of every model's intent representation (the encoder's u; the
    # in-context model's pooled support memory) predicts the intent's label
    # features (`intents.label_loss`). Training intents only; 0: none.
    "intent_label_loss": 0.0,
    # Example intents: with True, every hypernetwork reads that readout (the
    # encoder's estimate of the label features, float32[B, F]) instead of u.
    # Needs intent_label_loss > 0; the in-context model has no u to replace.
    "intent_label_input": False,
    # Example intents, with intent_label_input: how the hypernetworks read the
    # readout (intents.LABEL_FEEDS): "joint" as it is, trained by the task loss
    # too; "detached" through stop_gradient, so the encoder learns only from
    # the label loss (recognise, then synthesize); "snapped" detached and
    # replaced by the label features of the nearest intent (task.snap_features);
    # "teacher": in training the hypernetworks read the true label features
    # (trained as their label-intent twins), elsewhere the snapped readout.
    "intent_label_feed": "joint",
    # Example intents: the label loss's error in the features as they are
    # ("features"), or each feature in the intent's own units ("intent":
    # task.label_units, e.g. arc1d's parameter in integer steps).
    "intent_label_units": "features",
    # Example intents: where the readout's parameter comes from: "dense" (the
    # readout's linear map of u, like the other features) or "pair_stats" (a
    # linear map of the support set's mean pair statistics per family, the
    # one of the readout's family: task.with_gated_parameter).
    "intent_label_parameter": "dense",
    # Example intents, at evaluation only (`train.refine`): Adam steps that fit
    # each synthesized program to its own support pairs before it is scored
    # (0: none), their rate, and what moves: "theta" (the program's weights)
    # or "intent" (what the hypernetwork reads; θ stays the hypernetwork's
    # output). The checkpoints do not depend on them (REFINE_KEYS are
    # evaluation keys of the workdir), so a trained run can be re-scored.
    "refine_steps": 0,
    "refine_learning_rate": 0.01,
    "refine_target": "theta",
    # "always"; "support_wrong": only programs that get a support pair wrong
    # are refined; "held_out": only where leave-one-out refinement wins
    # held-out pairs (`train.refine.GATES`).
    "refine_gate": "always",
    # {model: {"steps", "learning_rate", "target", "gate", "search_families",
    # "search_radius"}}: a model's own values of the refine_* keys (those it does not name: the keys' values), as
    # `select` chooses them per model.
    "refine_by_model": {},
    # Example intents, at evaluation only: before any step, the label features
    # the hypernetwork reads are searched among the readout's best
    # `refine_search_families` families (0: no search), each with its
    # parameter estimate and `refine_search_radius` steps either side, by how
    # many support pairs each candidate's program maps exactly
    # (`train.refine.searched_intent`).
    "refine_search_families": 0,
    "refine_search_radius": 1,
    "seeds": 4,
    "seed": 0,
    "steps": 1000,
    "intents_per_step": 8,
    "examples_per_intent": 64,
    # {model: intents}, {model: examples}, as learning_rates is to
    # learning_rate; unset: intents_per_step, examples_per_intent. The cost of
    # a graph hypernetwork's step grows with the intents it synthesizes, an
    # execution's with the examples, so the batch that trains a model fastest
    # per second is a per-model setting, chosen on validation like its rate.
    "intents_per_step_by_model": {},
    "examples_per_intent_by_model": {},
    # Label intents: each drawn training intent's features, as the model reads
    # them, moved a fraction U(0, intent_jitter) of the way to a neighbouring
    # training intent, its examples unchanged (`train.step.make_grad_fn`).
    # 0: off; at most 0.5.
    "intent_jitter": 0.0,
    # {model: jitter}, as learning_rates is to learning_rate; unset: intent_jitter.
    "intent_jitter_by_model": {},
    # Training intents drawn with probability proportional to
    # task.intent_size(intent) ** intent_sampling (ADDMOD-p: p^2 pairs);
    # 0: uniform; at most 1 (`train.step.make_grad_fn`).
    "intent_sampling": 0.0,
    # {model: power}, as learning_rates is to learning_rate; unset: intent_sampling.
    "intent_sampling_by_model": {},
    "eval_examples": 512,
    "eval_seed": 12345,
    "log_every": 100,
    "checkpoint_every": 500,
    "keep_checkpoints": 3,
}, positive_ints=("seeds", "steps", "intents_per_step", "examples_per_intent",
                  "eval_examples", "log_every", "checkpoint_every", "keep_checkpoints"))


def default_config(**values) -> ml_collections.ConfigDict:
  """A meta-training ConfigDict with every key: the defaults, then `values`.

  model_configs gets an entry per model of `models`, holding every option of
  that learner for the task's default target (`meta.default_config`) updated
  by the given ones: the config records the whole recipe each model trains
  with, and any option can be overridden from the command line
  (`--config.model_configs.meta_gnn.intent_input=raw`).
  """
  config = SCHEMA.default_config(**values)
  spec = target_spec(config)
  for name in config.models:
    given = dict(config.model_configs.get(name, {}) or {})
    config.model_configs[name] = {**meta.default_config(meta.base_name(name), spec),
                                  **given}
  return config


def on_target(config, spec, model_configs, **values) -> ml_collections.ConfigDict:
  """A copy of `config` for another target: `spec` set, training only the models
  of `model_configs`, each with its options updated by them (the widths
  re-matched for the new target), and `values` overriding other keys.
  Everything else (splits, steps, rates) stays as in `config`."""
  out = config.copy_and_resolve_references()
  out.spec = spec
  out.models = tuple(model_configs)
  out.model_configs = {name: {**dict(config.model_configs[name]), **dict(options)}
                       for name, options in model_configs.items()}
  out.update(values)
  return out


# Keys added to SCHEMA after workdirs of it existed; their defaults are what an
# older workdir's run had, so resuming it must not see them as a change.
ADDED_KEYS = {k: SCHEMA.defaults[k]
              for k in ("intent", "shots", "intent_encoder", "intent_label_loss",
                        "intent_label_input", "intent_label_feed", "intent_label_units",
                        "intent_label_parameter", "grad_clip_scope", "teacher_twin_draws",
                        "refine_steps", "refine_learning_rate", "refine_target",
                        "refine_gate", "refine_by_model", "refine_search_families",
                        "refine_search_radius", "warmup_steps", "warmup_steps_by_model",
                        "optimizer", "optimizer_by_model", "intent_jitter",
                        "intent_jitter_by_model", "intent_sampling",
                        "intent_sampling_by_model", "task_options",
                        "intents_per_step_by_model", "examples_per_intent_by_model")}
# Model options added after workdirs with that model existed, {base model:
# {option: the behaviour before the option}}: a stored model config without
# the option ran exactly as one holding that value. It is the option's first
# default, which is not always its library default now (Meta-GNN's norm was
# added as "post" and became "pre" later).
ADDED_MODEL_OPTIONS = {"meta_gnn": {"base_program": False, "intent_film": False,
                                    "pe_learned": False, "decoder_film": 0, "norm": "post",
                                    "token_basis": 0},
                       "meta_gmlp": {"base_program": False, "mixer_input": "standard"},
                       "meta_mlp": {"intent_input": "raw", "intent_scale": 1.0,
                                    "intent_fourier": 0, "token_basis": 0}}


def fill_added_options(stored: dict) -> dict:
  """The stored config (a JSON dict) with every ADDED_MODEL_OPTIONS option
  its model configs lack set to the behaviour before the option: an older
  workdir of the same settings then compares equal (`run.workdir.differences`'s
  fill_stored), and is rebuilt as it ran (`read_run_config`)."""
  for name, options in (stored.get("model_configs") or {}).items():
    base_name = meta.base_name(name)
    if isinstance(options, dict) and base_name in ADDED_MODEL_OPTIONS:
      for key, before in ADDED_MODEL_OPTIONS[base_name].items():
        options.setdefault(key, before)
  return stored


def read_run_config(workdir: str) -> ml_collections.ConfigDict:
  """The config a workdir's run was made with, model options added since
  filled with the values it ran with (`fill_added_options`), so that the
  models rebuilt from it compute what was trained. ValueError if the workdir
  holds no config."""
  stored = workdir_lib.read_config(workdir).to_dict()
  return ml_collections.ConfigDict(fill_added_options(stored))


# Keys only the evaluation reads: a finished workdir may be re-evaluated with
# other values (`run.workdir.prepare`'s eval_keys).
REFINE_KEYS = ("refine_steps", "refine_learning_rate", "refine_target", "refine_gate",
               "refine_by_model", "refine_search_families", "refine_search_radius")

INTENT_KINDS = ("label", "examples")
LABEL_UNITS = ("features", "intent")
LABEL_PARAMETER = ("dense", "pair_stats")
GRAD_CLIP_SCOPES = ("joint", "per_part")
OPTIMIZERS = ("adam", "lamb", "muon")
# Support sets drawn per intent when a model that reads example intents is
# evaluated; the eval_examples queries of an intent are split among them, so
# an accuracy averages over support draws as well as queries.
EVAL_SUPPORT_DRAWS = 10


def _base_names(config, key: str) -> dict[str, str]:
  """{entry: base model} of the model entries that config[key] names (the
  models tuple, or the keys of a per-model dict); ValueError naming the key
  for an entry that is no model. A per-model dict may name models this run
  does not train (a config holds every model's values; `--config.models`
  picks some), but a typo would be silently ignored, so each must name one."""
  out = {}
  for name in _get(config, key) or {}:
    try:
      out[name] = meta.base_name(name)
    except ValueError as e:
      raise ValueError(f"config.{key}: {e}") from None
  return out


def validate_config(config) -> None:
  """ValueError for unknown or missing keys and bad values, before any work."""
  SCHEMA.validate(config)
  target_spec(config)
  models = _base_names(config, "models")
  _base_names(config, "learning_rates")
  warmup_steps(config)
  # A per-model warm-up is checked against the steps only where its model
  # trains, so a shortened run of other models needs no edit of it.
  for name in _base_names(config, "warmup_steps_by_model"):
    if name in models:
      warmup_steps(config, name)
  optimizer_name(config)
  for name in _base_names(config, "optimizer_by_model"):
    optimizer_name(config, name)
  kind = _get(config, "intent")
  if kind not in INTENT_KINDS:
    raise ValueError(f"config.intent={kind!r}; allowed: {list(INTENT_KINDS)}.")
  # One task object answers for the intent kind and the readout options' hooks
  # (example_intents, snap_features, label_units, with_gated_parameter).
  task = tasks.get(_get(config, "task"), **task_options(config))
  if kind == "examples":
    if not getattr(task, "example_intents", False):
      raise ValueError(f"config.intent='examples': task {task.name!r} has no grid pairs "
                       "to show; example intents need a task with them (arc1d).")
    shots = _get(config, "shots")
    if isinstance(shots, bool) or not isinstance(shots, int) \
        or not 1 <= shots <= intents_lib.MAX_SHOTS:
      raise ValueError(f"config.shots={shots!r}; allowed: 1..{intents_lib.MAX_SHOTS}.")
    intents_lib.encoder_config(_get(config, "intent_encoder"))
  weight = intents_lib.check_label_weight(_get(config, "intent_label_loss"),
                                         "config.intent_label_loss")
  label_input = _get(config, "intent_label_input")
  if not isinstance(label_input, bool):
    raise ValueError(f"config.intent_label_input={label_input!r}; allowed: True or False.")
  if label_input and not weight:
    raise ValueError("config.intent_label_input=True reads a label readout that only "
                     "config.intent_label_loss > 0 trains; allowed: set both, or neither.")
  intents_lib.check_label_feed(_get(config, "intent_label_feed"), label_input,
                               hasattr(task, "snap_features"), "config.intent_label_feed")
  units = _get(config, "intent_label_units")
  if units not in LABEL_UNITS:
    raise ValueError(f"config.intent_label_units={units!r}; allowed: {list(LABEL_UNITS)}.")
  if units == "intent" and not weight:
    raise ValueError("config.intent_label_units='intent' sets the units of the label loss; "
                     "it needs config.intent_label_loss > 0.")
  if units == "intent" and not hasattr(task, "label_units"):
    raise ValueError(f"config.intent_label_units='intent': task {_get(config, 'task')!r} "
                     "has no label_units; allowed: 'features'.")
  source = _get(config, "intent_label_parameter")
  if source not in LABEL_PARAMETER:
    raise ValueError(f"config.intent_label_parameter={source!r}; allowed: "
                     f"{list(LABEL_PARAMETER)}.")
  if source == "pair_stats" and not weight:
    raise ValueError("config.intent_label_parameter='pair_stats' is a part of the label "
                     "readout; it needs config.intent_label_loss > 0.")
  if source == "pair_stats" and not hasattr(task, "with_gated_parameter"):
    raise ValueError(f"config.intent_label_parameter='pair_stats': task "
                     f"{_get(config, 'task')!r} has no with_gated_parameter; allowed: 'dense'.")
  if weight and kind != "examples":
    raise ValueError(f"config.intent_label_loss={weight!r} reads the representation of "
                     "example intents; with config.intent='label' the label is the input. "
                     "Allowed: 0, or config.intent='examples'.")
  for name in [None, *_base_names(config, "refine_by_model")]:
    refinement = refinement_of(config, name)
    if refinement.steps and kind != "examples":
      raise ValueError(f"config.refine_steps={refinement.steps} fits programs to their "
                       "support pairs; with config.intent='label' there are none. Allowed: "
                       "0, or config.intent='examples'.")
    if refinement.search_families:
      _check_search(config, task, refinement, name)
  for name in [None, *_base_names(config, "intent_jitter_by_model")]:
    jitter, where = _model_value(config, "intent_jitter", name)
    if step_lib.check_intent_jitter(jitter, where) and kind != "label":
      raise ValueError(f"{where}={jitter} moves the intent features the models read; with "
                       f"config.intent={kind!r} they read example pairs instead. Allowed: 0, "
                       "or config.intent='label'.")
  for key in BATCH_KEYS:
    for name in _base_names(config, f"{key}_by_model"):
      batch_size(config, key, name)
  for name in [None, *_base_names(config, "intent_sampling_by_model")]:
    power, where = _model_value(config, "intent_sampling", name)
    if step_lib.check_intent_sampling(power, where):
      try:
        task.intent_size(task.train_intents[0])
      except NotImplementedError as e:
        raise ValueError(f"{where}={power}: {e}") from None
  scope = _get(config, "grad_clip_scope")
  if scope not in GRAD_CLIP_SCOPES:
    raise ValueError(f"config.grad_clip_scope={scope!r}; allowed: {list(GRAD_CLIP_SCOPES)}.")
  if scope == "per_part" and kind != "examples":
    raise ValueError("config.grad_clip_scope='per_part' splits the example-intent reader "
                     "from the hypernetwork; with config.intent='label' there is one part. "
                     "Allowed: 'joint', or config.intent='examples'.")
  if scope == "per_part" and not _get(config, "grad_clip"):
    raise ValueError("config.grad_clip_scope='per_part' needs config.grad_clip > 0.")
  twins = _get(config, "teacher_twin_draws") or {}
  for name, base in _base_names(config, "teacher_twin_draws").items():
    twin = twins[name]
    if not isinstance(twin, bool):
      raise ValueError(f"config.teacher_twin_draws[{name!r}]={twin!r}; allowed: True or "
                       "False.")
    if twin and base == "direct":
      raise ValueError(f"config.teacher_twin_draws[{name!r}]=True: the in-context model has "
                       "no learner that a label feeds; allowed: hypernetworks only.")
    if twin and (kind != "examples" or _get(config, "intent_label_feed") != "teacher"):
      raise ValueError(
          f"config.teacher_twin_draws[{name!r}]=True trains a hypernetwork on its "
          "label-intent twin's batches; it needs config.intent='examples' and "
          f"config.intent_label_feed='teacher' (got {kind!r}, "
          f"{_get(config, 'intent_label_feed')!r}).")
  names = _get(config, "models")
  if len(set(names)) != len(names):
    raise ValueError(f"config.models names a model twice: {list(names)}.")


def _check_search(config, task, refinement, name):
  """ValueError unless the intent search (`train.refine.searched_intent`) can
  run: example intents read through the snapped label readout, and a task
  whose `label_candidates` accepts the search's sizes (checked on shapes)."""
  where = "config.refine_search_families" + (f" (model {name})" if name else "")
  feed = _get(config, "intent_label_feed")
  if (_get(config, "intent") != "examples" or not _get(config, "intent_label_input")
      or feed not in ("snapped", "teacher")):
    raise ValueError(f"{where}={refinement.search_families} searches the label features "
                     "the hypernetwork reads; it needs config.intent='examples', "
                     "config.intent_label_input=True and config.intent_label_feed in "
                     f"['snapped', 'teacher'] (got {_get(config, 'intent')!r}, "
                     f"{_get(config, 'intent_label_input')!r}, {feed!r}). Allowed: 0.")
  if not hasattr(task, "label_candidates"):
    raise ValueError(f"{where}={refinement.search_families}: task {task.name!r} has no "
                     "label_candidates; allowed: 0.")
  feats = jax.ShapeDtypeStruct((1, task.feature_dim), jnp.float32)
  try:
    jax.eval_shape(lambda f: task.label_candidates(f, None, refinement.search_families,
                                                   refinement.search_radius), feats)
  except ValueError as e:
    raise ValueError(f"{where}: {e}") from None


def _get(config, key):
  return SCHEMA.get(config, key)


def refinement_of(config, name: Optional[str] = None) -> refine_lib.Refinement:
  """The support refinement (`train.refine`) of model `name` (None: the
  config-wide keys), checked."""
  values = {f: _get(config, f"refine_{f}") for f in refine_lib.Refinement._fields}
  by_model = _get(config, "refine_by_model") or {}
  own = dict((by_model.get(name) if name is not None else None) or {})
  bad = sorted(set(own) - set(values))
  if bad:
    raise ValueError(f"config.refine_by_model.{name}: keys {bad} unknown; allowed: "
                     f"{list(values)}.")
  values.update(own)
  prefix = "config.refine_" if not own else f"config.refine_by_model.{name}."
  return refine_lib.check(**values, prefix=prefix)


def refinements_of(config, names) -> dict[str, refine_lib.Refinement]:
  """`refinement_of` each model named, leaving out the direct baseline (it
  emits no θ and is never refined), so that a record of refinements names
  only models that were refined."""
  return {n: refinement_of(config, n) for n in names if meta.base_name(n) != "direct"}


def target_spec(config):
  """The target spec of a config: `config.spec` parsed (`specs.from_config`),
  else the task's default. ValueError naming a bad field."""
  spec = specs_lib.from_config(_get(config, "spec"), where="config.spec")
  return tasks.default_spec(_get(config, "task")) if spec is None else spec


def task_options(config) -> dict:
  """config.task_options as keywords of `tasks.get`; ValueError naming an
  option the task does not have, before any work (a bad value is refused by
  the task itself)."""
  given = dict(_get(config, "task_options") or {})
  allowed = tasks.options(_get(config, "task"))
  unknown = sorted(set(given) - set(allowed))
  if unknown:
    raise ValueError(f"config.task_options: {unknown} not options of task "
                     f"{_get(config, 'task')!r}; allowed: {sorted(allowed) or 'none'}.")
  return given


def build_task(config) -> tasks.Task:
  """The task with OOD, validation and training intents and its own options
  (config.task_options) from the config."""
  options = task_options(config)
  probe = tasks.get(config.task, **options)
  parse = lambda xs: tuple(probe.parse_intent(x) for x in xs)
  ood = _get(config, "ood_intents")
  train = _get(config, "train_intents")
  return tasks.get(config.task, spec=target_spec(config), **options,
                   ood_intents=None if ood is None else parse(ood),
                   val_intents=parse(_get(config, "val_intents")),
                   train_intents=None if train is None else parse(train))


def create_model(config, task, name):
  """The meta-learner of entry `name`: a `meta.MetaModel` reading the task's
  features, or, with config.intent="examples", a hypernetwork behind an
  example-set encoder (`intents.ExampleIntentModel`; it reads u of the
  encoder's out_dim) or, for "direct", the in-context Transformer
  (`intents.InContextModel`) that reads the support pairs itself."""
  cfg = dict(_get(config, "model_configs").get(name, {}) or {})
  cfg.pop("num_params", None)
  if _get(config, "intent") != "examples":
    return meta.create(meta.base_name(name), task.spec, task.feature_dim, cfg)
  # Every model of the run gets the same label readout (or none).
  readout = {"label_weight": float(_get(config, "intent_label_loss"))}
  readout["label_dim"] = task.feature_dim if readout["label_weight"] else 0
  if _get(config, "intent_label_units") == "intent":
    readout["label_units"] = task.label_units
  if meta.base_name(name) == "direct":
    # The direct baseline reads the support pairs in context itself: the
    # few-shot form of (U, X) -> Y, with no encoder and no θ in between.
    return intents_lib.in_context(name, task.spec, _get(config, "shots"),
                                  {**meta.default_config("direct", task.spec), **cfg},
                                  pad=task.pad, **readout)
  enc = intents_lib.encoder_config(_get(config, "intent_encoder"))
  label_input = bool(_get(config, "intent_label_input"))
  width = task.feature_dim if label_input else enc["out_dim"]
  learner = meta.create(meta.base_name(name), task.spec, width, cfg)
  return intents_lib.wrap(learner, task.spec, _get(config, "shots"), enc,
                          pad=task.pad, vocab_size=task.spec.vocab_size,
                          label_input=label_input,
                          label_feed=_get(config, "intent_label_feed"),
                          snap=getattr(task, "snap_features", None), **readout,
                          twin_draws=twin_draws(config, name),
                          **_gated_parameter(config, task))


def twin_draws(config, name) -> bool:
  """Whether model entry `name` trains on its label-intent twin's init and
  batches (config.teacher_twin_draws)."""
  return bool((_get(config, "teacher_twin_draws") or {}).get(name, False))


def _gated_parameter(config, task) -> dict:
  """wrap()'s parameter-head arguments for config.intent_label_parameter."""
  if _get(config, "intent_label_parameter") != "pair_stats":
    return {}
  return {"gate_parameter": task.with_gated_parameter, "param_groups": task.param_groups}


def matched_model_configs(task_name: str, names=meta.NAMES, *,
                          budget: Optional[int] = None,
                          spec=None) -> dict[str, dict]:
  """Configs of `names` for the task's target (`spec`, default the task's own),
  each within 10% of the parameter budget (default the task's,
  `tasks.PARAM_BUDGETS`; `meta.match_capacity`)."""
  task = tasks.get(task_name, spec=spec)
  return meta.match_capacity(names, task.spec, budget or tasks.PARAM_BUDGETS[task_name],
                             intent_dim=task.feature_dim)


def learning_rate(config, name) -> float:
  """The peak Adam rate of model entry `name`: config.learning_rates[name],
  else config.learning_rate, else the learner's recipe
  (`meta.default_learning_rate`)."""
  lr = _get(config, "learning_rates").get(name, _get(config, "learning_rate"))
  if lr is None:
    lr = meta.default_learning_rate(meta.base_name(name))
  if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not lr > 0:
    raise ValueError(f"learning rate of {name!r}: {lr!r}; allowed: a number > 0.")
  return float(lr)


def _model_value(config, key: str, name: Optional[str]) -> tuple[Any, str]:
  """(value, where) of the per-model key `key` for model entry `name`:
  config[key + "_by_model"][name] if set, else config[key] (also for name
  None); `where` names the key read, for error messages."""
  by_model = _get(config, f"{key}_by_model") or {}
  if name is not None and name in by_model:
    return by_model[name], f"config.{key}_by_model[{name!r}]"
  return _get(config, key), f"config.{key}"


def warmup_steps(config, name: Optional[str] = None) -> int:
  """The cosine schedule's warm-up length of model entry `name` (None: the
  config-wide value): config.warmup_steps_by_model[name], else
  config.warmup_steps; -1 (the default) is min(200, steps // 10). At least 1
  (optax needs a step)."""
  warm, where = _model_value(config, "warmup_steps", name)
  steps = _get(config, "steps")
  if isinstance(warm, bool) or not isinstance(warm, int) or not -1 <= warm < steps:
    raise ValueError(f"{where}={warm!r}; allowed: -1 (min(200, steps // 10)) "
                     f"or an int in 0..{steps - 1} (config.steps={steps}).")
  return max(1, min(200, steps // 10) if warm == -1 else warm)


def optimizer_name(config, name: Optional[str] = None) -> str:
  """Model entry `name`'s optimizer (None: the config-wide one), one of
  OPTIMIZERS: config.optimizer_by_model[name], else config.optimizer."""
  value, where = _model_value(config, "optimizer", name)
  if value not in OPTIMIZERS:
    raise ValueError(f"{where}={value!r}; allowed: {list(OPTIMIZERS)}.")
  return value


def intent_jitter(config, name: Optional[str] = None) -> float:
  """Model entry `name`'s intent jitter (None: the config-wide one):
  config.intent_jitter_by_model[name], else config.intent_jitter."""
  value, where = _model_value(config, "intent_jitter", name)
  return step_lib.check_intent_jitter(value, where)


# The config keys of a training batch, each with a per-model "<key>_by_model".
BATCH_KEYS = ("intents_per_step", "examples_per_intent")


def batch_size(config, key: str, name: Optional[str] = None) -> int:
  """Model entry `name`'s `key` ("intents_per_step" or "examples_per_intent";
  None: the config-wide value): config[key + "_by_model"][name], else
  config[key]. ValueError naming the entry unless it is a positive int."""
  if key not in BATCH_KEYS:
    raise ValueError(f"batch_size: key={key!r}; allowed: {list(BATCH_KEYS)}.")
  value, where = _model_value(config, key, name)
  if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
    raise ValueError(f"{where}={value!r}; allowed: a positive int.")
  return int(value)


def intent_sampling(config, name: Optional[str] = None) -> float:
  """Model entry `name`'s intent-draw power (None: the config-wide one):
  config.intent_sampling_by_model[name], else config.intent_sampling."""
  value, where = _model_value(config, "intent_sampling", name)
  return step_lib.check_intent_sampling(value, where)


def rate_schedule(config, name):
  """Model entry `name`'s Adam rate: a float ("constant") or an optax
  schedule step -> rate ("cosine": warm-up from 0, then cosine decay to 1%)."""
  lr = learning_rate(config, name)
  schedule = _get(config, "schedule")
  if schedule == "cosine":
    return optax.warmup_cosine_decay_schedule(
        0.0, lr, warmup_steps=warmup_steps(config, name), decay_steps=_get(config, "steps"),
        end_value=0.01 * lr)
  if schedule != "constant":
    raise ValueError(f"config.schedule={schedule!r}; allowed: 'cosine', 'constant'.")
  return lr


def create_optimizer(config, name) -> optax.GradientTransformation:
  lr = rate_schedule(config, name)
  clip = _get(config, "grad_clip")
  decay = float(_get(config, "weight_decay"))
  if decay < 0:
    raise ValueError(f"config.weight_decay={decay}; allowed: >= 0.")
  # Kernels only (the usual AdamW convention): biases and the output head's
  # per-tensor gain/center set offsets and scales, not capacity. The step is
  # vmapped over seeds, so ndim here, and the trust ratio's norms, are per seed.
  kernels = lambda p: jax.tree_util.tree_map(lambda a: a.ndim >= 2, p)
  kind = optimizer_name(config, name)
  if kind == "lamb":
    adam = optax.lamb(lr, weight_decay=decay, mask=kernels)
  elif kind == "muon":
    # consistent_rms: every matrix's update has RMS about 0.2 x rate whatever its
    # shape (Adam's steady-state size), so one rate serves every group's
    # matrices and the rate grids of Adam carry over.
    # Only kernels take the orthogonalized step, so its weight decay needs no
    # mask; the vectors' Adam branch takes none (adam_weight_decay 0), as AdamW's mask.
    adam = contrib.muon(lr, weight_decay=decay, consistent_rms=0.2,
                        muon_weight_dimension_numbers=matrix_axes_lib.matrix_axes)
  elif decay:
    adam = optax.adamw(lr, weight_decay=decay, mask=kernels)
  else:
    adam = optax.adam(lr)
  if not clip:
    return adam
  # A twin-drawing learner is clipped as its twin is: on its own gradient.
  if _get(config, "grad_clip_scope") == "per_part" or twin_draws(config, name):
    return optax.chain(clip_by_part(clip), adam)
  return optax.chain(optax.clip_by_global_norm(clip), adam)


def _part_labels(params):
  """"learner" for every leaf of params["learner"], "reader" for the rest
  (one part when params is not a dict with a "learner" entry)."""
  if not isinstance(params, dict) or "learner" not in params:
    return jax.tree_util.tree_map(lambda _: "reader", params)
  return {key: jax.tree_util.tree_map(lambda _, k=key: "learner" if k == "learner"
                                      else "reader", value)
          for key, value in params.items()}


def clip_by_part(max_norm: float) -> optax.GradientTransformation:
  """Global-norm clipping of the learner's and the intent reader's gradients
  separately (`_part_labels`), each to max_norm: with the teacher feed the two
  parts have disjoint losses, and one shared clip would scale the learner's
  update by a factor set by the reader's gradient."""
  clip = optax.clip_by_global_norm(max_norm)
  return optax.multi_transform({"learner": clip, "reader": clip}, _part_labels)


class Trainer:
  """Everything compiled for one (model, config): init, chunks, evaluation,
  and the checkpoints of the model's seeds in a workdir."""

  def __init__(self, config, task, name):
    self.config, self.task, self.name = config, task, name
    self.model = create_model(config, task, name)
    self.opt = create_optimizer(config, name)
    self.seeds = [int(_get(config, "seed")) + i for i in range(_get(config, "seeds"))]
    self.mesh = parallel.seed_mesh(len(self.seeds))
    self.seed_keys = parallel.shard_seeds(
        jax.vmap(jax.random.key)(jnp.asarray(self.seeds)), self.mesh)
    step = step_lib.make_train_step(
        self.model, task, self.opt,
        intents_per_step=batch_size(config, "intents_per_step", name),
        examples_per_intent=batch_size(config, "examples_per_intent", name),
        intent_jitter=intent_jitter(config, name),
        intent_sampling=intent_sampling(config, name))
    step_S = jax.vmap(step)

    def seeds_step(state_S, i):
      # Each seed's randomness at step i is fold_in(key(seed), i): a resumed
      # run draws the batches an uninterrupted one would.
      return step_S(state_S, jax.vmap(lambda k: jax.random.fold_in(k, i))(self.seed_keys))

    self.chunk = run_loop.scan_chunks(seeds_step)
    self._exact_match_S = jax.jit(self._exact_match_per_seed, static_argnames="draws")
    self._exact_match_theta_S = jax.jit(self._exact_match_from_theta,
                                        static_argnames="draws")
    self._init = jax.jit(jax.vmap(
        lambda k: step_lib.init_state(self.model, task, self.opt, k)),
        out_shardings=parallel.seed_sharding(self.mesh))

  def init(self) -> step_lib.TrainState:
    """The initial TrainState of every seed (leading axis S)."""
    return self._init(self.seed_keys)

  def checkpoints(self, workdir: str):
    """The orbax manager of this model's checkpoints in `workdir`."""
    return checkpoint.manager(os.path.join(workdir, "checkpoints", self.name),
                              _get(self.config, "keep_checkpoints"))

  def restore(self, workdir: str, step: Optional[int] = None
              ) -> tuple[int, step_lib.TrainState]:
    """(step, state_S) of the newest readable checkpoint in `workdir`, or of
    the checkpoint at `step` if given.

    ValueError if the model has no checkpoint there (or none at `step`, naming
    the steps it has); RuntimeError (naming the directory) if none can be read.
    """
    mngr = self.checkpoints(workdir)
    if step is not None:
      if step not in mngr.all_steps():
        raise ValueError(f"{workdir}: no checkpoint of {self.name!r} at step {step}; it "
                         f"has {sorted(mngr.all_steps())}.")
      return step, checkpoint.restore_at(mngr, step, jax.eval_shape(self.init))
    step, state = checkpoint.restore_latest(mngr, jax.eval_shape(self.init))
    if state is None:
      raise ValueError(f"{workdir}: no checkpoint for model {self.name!r} in "
                       f"{mngr.directory}.")
    return step, state

  def evaluate(self, params_S, intents, key):
    """Exact match float[S, len(intents)] on `eval_examples` fresh examples per intent."""
    if not intents:
      return np.zeros((len(self.seeds), 0))
    task, model = self.task, self.model
    feats = jnp.asarray(task.features(intents))
    ip = jnp.asarray(task.intent_params(intents))
    n = _get(self.config, "eval_examples")
    draws = min(EVAL_SUPPORT_DRAWS, n) if step_lib.shots_of(model) else 1
    # Example intents: each intent repeated `draws` times, each copy with its
    # own support set and n // draws queries.
    feats_r, ip_r = jnp.tile(feats, (draws, 1)), jnp.tile(ip, (draws, 1))
    u, x, y = step_lib.draw(model, task, key, feats_r, ip_r, n // draws)
    refinement = refinement_of(self.config, self.name)
    if refine_lib.is_active(refinement) and refine_lib.can_refine(model):
      # Host-level: the refinement steps run only on the support sets its gate
      # may change (`refine.refined_theta_per_seed`).
      theta_S = refine_lib.refined_theta_per_seed(model, task, params_S, u, refinement)
      return np.asarray(self._exact_match_theta_S(theta_S, x, y, ip_r, draws=draws))
    return np.asarray(self._exact_match_S(params_S, u, x, y, ip_r, draws=draws))

  def _exact_match_per_seed(self, params_S, u, x, y, ip_r, *, draws):
    """Exact match float32[S, B] of each seed's programs, B = len(ip_r) // draws.

    params_S: the model's params with a leading seed axis S; u, x, y: one
    `step_lib.draw` batch for the B * draws intent rows of ip_r (int or float
    [B * draws, P]); draws (static): copies of each intent, averaged.
    """
    # The examples are arguments, not closed-over constants, and the jitted
    # function is built once per Trainer (in __init__): a run that evaluates
    # every few hundred steps (bench_tta, select) compiles once per intent
    # count instead of once per call, and the examples are not baked into HLO.
    def one_seed(params):
      out = step_lib.outputs_for(self.model, params, u, x)
      return self.task.exact_match(out, y, ip_r).mean(-1).reshape(draws, -1).mean(0)
    return jax.vmap(one_seed)(params_S)

  def _exact_match_from_theta(self, theta_S, x, y, ip_r, *, draws):
    """As `_exact_match_per_seed`, from each seed's programs θ float32[S, B *
    draws, T] (refined ones) instead of its params."""
    def one_seed(theta_BxT):
      out = jax.vmap(execute_lib.execute, (None, 0, 0))(self.model.spec, theta_BxT, x)
      return self.task.exact_match(out, y, ip_r).mean(-1).reshape(draws, -1).mean(0)
    return jax.vmap(one_seed)(theta_S)


SPLITS = ("id", "val", "ood")


def train_model(config, task, name, workdir, writer, stop_at_step=None,
                splits=SPLITS) -> dict[str, Any]:
  """Trains all seeds of one model (resuming if possible) and evaluates.

  stop_at_step: raise `Interrupted` once this step is reached (after any
  checkpoint due at it), as a kill would; a rerun resumes.
  splits: which intents are evaluated after training, a subset of
    ("id", "val", "ood"); the others are not sampled at all, their per-intent
    entries are left out and their means are [] (model selection passes
    ("id", "val"), so that no OOD intent is evaluated while a setting is
    chosen).
  """
  bad = sorted(set(splits) - set(SPLITS))
  if bad:
    raise ValueError(f"splits {bad} unknown; allowed: {list(SPLITS)}.")
  tr = Trainer(config, task, name)
  total = _get(config, "steps")
  n_params = tr.model.num_params()
  logger.info("%s: %d trainable parameters, %d seeds on %d device(s), %d steps",
              name, n_params, len(tr.seeds), tr.mesh.size, total)
  result = run_loop.train_loop(
      name, tr.init(), tr.chunk, total=total, log_every=_get(config, "log_every"),
      checkpoint_every=_get(config, "checkpoint_every"), manager=tr.checkpoints(workdir),
      writer=writer, stop_at_step=stop_at_step, seed_labels=tr.seeds)
  return {"num_params": n_params, "config": dict(tr.model.config), "seeds": tr.seeds,
          "steps": total, "train_time_s": round(result.train_seconds, 2),
          "devices": tr.mesh.size,
          **_evaluate_splits(config, task, tr, result.state.params, splits)}


def _split_keys(config) -> dict[str, jax.Array]:
  """The evaluation key of each split (one per split, from config.eval_seed)."""
  return dict(zip(SPLITS, jax.random.split(jax.random.key(_get(config, "eval_seed")), 3)))


def split_key(config, split: str) -> jax.Array:
  """The key a split's held-out examples are drawn with after training
  (`Trainer.evaluate`), for split "id", "val" or "ood"."""
  if split not in SPLITS:
    raise ValueError(f"split {split!r} unknown; allowed: {list(SPLITS)}.")
  return _split_keys(config)[split]


def held_out_examples(config, task, split: str) -> tuple[tuple, np.ndarray, np.ndarray]:
  """(intents, x, y) of a split: the examples every label-intent model is
  scored on after training (`Trainer.evaluate` under `_split_keys`),
  config.eval_examples per intent, as numpy arrays x [I, n, ...], y [I, n, ...].
  """
  if split not in SPLITS:
    raise ValueError(f"split {split!r} unknown; allowed: {list(SPLITS)}.")
  intents = {"id": task.train_intents, "val": task.val_intents,
             "ood": task.ood_intents}[split]
  if not intents:
    return (), np.zeros((0,)), np.zeros((0,))
  x, y = task.sample_params(_split_keys(config)[split],
                            jnp.asarray(task.intent_params(intents)),
                            _get(config, "eval_examples"))
  return tuple(intents), np.asarray(x), np.asarray(y)


def evaluate_heuristics(config, task, splits=("val", "ood")) -> dict[str, Any]:
  """Exact match of each of the task's one-line baselines (`Task.heuristics`)
  on the held-out examples the models are scored on (`held_out_examples`):
  {name: {split: {intent: accuracy}, f"{split}_mean": float}} for each split
  named (default the validation and OOD intents: on training intents the
  nearest-intent rule is the task itself). Deterministic; nothing is trained.
  """
  rules = task.heuristics()
  out = {name: {} for name in rules}
  for split in splits:
    intents, x, y = held_out_examples(config, task, split)
    for name, rule in rules.items():
      acc = [float(task.heuristic_accuracy(rule(i, x[j]), y[j]).mean())
             for j, i in enumerate(intents)]
      out[name][split] = {task.format_intent(i): a for i, a in zip(intents, acc)}
      out[name][f"{split}_mean"] = float(np.mean(acc)) if acc else None
  return out


def _evaluate_splits(config, task, tr, params_S, splits) -> dict[str, Any]:
  """Per-intent and mean exact match of the splits named (the others: [])."""
  keys = _split_keys(config)
  intents = {"id": task.train_intents, "val": task.val_intents, "ood": task.ood_intents}
  acc = {s: tr.evaluate(params_S, intents[s] if s in splits else (), keys[s]) for s in SPLITS}
  fmt = task.format_intent
  return {**{s: {fmt(i): acc[s][:, j].tolist() for j, i in enumerate(intents[s])}
             for s in SPLITS if s in splits},
          **{f"{s}_mean": acc[s].mean(1).tolist() if acc[s].size else [] for s in SPLITS}}


def evaluate_trained(config, task, name, workdir, splits=SPLITS) -> dict[str, Any]:
  """`train_model`'s result for a model whose training in `workdir` (a run of
  `config` up to evaluation keys) is finished, re-scored under `config`'s
  evaluation keys (`REFINE_KEYS`) without training; ValueError if its newest
  checkpoint is not at config.steps."""
  tr = Trainer(config, task, name)
  step, state = tr.restore(workdir)
  total = _get(config, "steps")
  if step != total:
    raise ValueError(f"{workdir}: model {name!r} is at step {step} of {total}; finish its "
                     "training before re-scoring it.")
  return {"num_params": tr.model.num_params(), "config": dict(tr.model.config),
          "seeds": tr.seeds, "steps": total, "devices": tr.mesh.size,
          **_evaluate_splits(config, task, tr, state.params, splits)}


def train_and_evaluate(config, workdir: str, *, stop_at_step=None,
                       extend: bool = False) -> dict[str, Any]:
  """Trains every model of the config for all seeds and writes the results.

  Args:
    config: a meta-training config (`SCHEMA`).
    workdir: where everything goes; a rerun on the same workdir resumes, and a
      workdir of a different config is refused (`run.workdir.prepare`).
    stop_at_step: raise `Interrupted` at this step (resumption tests).
    extend: continue a finished or running workdir for more `steps` (the
      cosine schedule then follows the new length from the resumed step;
      results.json lists the extension under "extended").

  Writes to workdir: config.json, checkpoints/<model>/, metrics.jsonl,
  tensorboard/<model>/, results.json, results.md, ood_by_intent.png.
  results.json holds each model's per-seed accuracies and, under
  "heuristics", the task's one-line baselines on the same held-out examples
  (`evaluate_heuristics`).
  Returns the results dict (also in results.json).
  """
  validate_config(config)
  task = build_task(config)
  workdir_lib.prepare(workdir, config, extend=extend, added_keys=ADDED_KEYS,
                      eval_keys=REFINE_KEYS, fill_stored=fill_added_options)
  out = {"task": _get(config, "task"), "spec": specs_lib.to_json(task.spec),
         "models": {},
         "intents": {
             "train": [task.format_intent(i) for i in task.train_intents],
             "val": [task.format_intent(i) for i in task.val_intents],
             "ood": [task.format_intent(i) for i in task.ood_intents]}}
  extended = workdir_lib.extensions(workdir)
  if extended:
    out["extended"] = extended
  refined = {n: r._asdict() for n, r in refinements_of(config, _get(config, "models")).items()}
  if any(refine_lib.is_active(r) for r in refined.values()):
    out["refinement"] = refined
  # The one-line baselines first: they cost nothing and stand beside every
  # model in results.md, scored on the same held-out examples.
  out["heuristics"] = evaluate_heuristics(config, task)
  for name, h in out["heuristics"].items():
    logger.info("heuristic %s: val %s, OOD %s", name,
                "-" if h["val_mean"] is None else f"{h['val_mean']:.3f}",
                "-" if h["ood_mean"] is None else f"{h['ood_mean']:.3f}")
  names = list(_get(config, "models"))
  with MetricWriter(workdir) as writer:
    for i, name in enumerate(names):
      out["models"][name] = train_model(config, task, name, workdir, writer,
                                        stop_at_step=stop_at_step)
      res = out["models"][name]
      logger.info("%s: ID %.3f, val %s, OOD %s (mean over %d seeds)", name,
                  float(np.mean(res["id_mean"])),
                  f"{np.mean(res['val_mean']):.3f}" if res["val_mean"] else "-",
                  f"{np.mean(res['ood_mean']):.3f}" if res["ood_mean"] else "-",
                  len(res["seeds"]))
      if i + 1 < len(names):
        # A long run's finished models are readable before the rest end (or
        # if the run is killed); the final write replaces these files.
        results_lib.write_all(workdir, task, {**out, "pending": names[i + 1:]})
  results_lib.write_all(workdir, task, out)
  return out
