"""From an intent to a program θ, with a trained workdir or in-memory parameters.

    spec, theta = neuroprog.synthesize("workdirs/addmod", "p=83")          # a workdir
    spec, theta = neuroprog.synthesize_from_params(params, "p=83",          # a notebook
                                                   model=hypernet, task=task)
    y = neuroprog.execute(spec, theta, x)

A run trained on example intents (config.intent="examples", 1D-ARC) takes
the intent as its support pairs instead of a name:

    spec, theta = neuroprog.synthesize("workdirs/arc1d_examples",
                                       [([0, 2, 2, 0, 0], [0, 0, 2, 2, 0]),
                                        ([3, 3, 0, 0], [0, 3, 3, 0])])

Only hypernetworks synthesize programs; the direct baseline maps (intent,
input) to output and has no θ (`meta.DirectModel`).
"""

from __future__ import annotations

import json
import os
from typing import Any, NamedTuple, Optional

import jax.numpy as jnp

from neuroprog import intents as intents_lib
from neuroprog import meta, specs as specs_lib
from neuroprog.run import seeds as seeds_lib, workdir as workdir_lib


class Run(NamedTuple):
  """A trained model of a workdir (`load_run`).

  config: the workdir's config; task: its task (with its intent splits);
  model: the meta-learner (`meta.Hypernetwork` or `meta.DirectModel`);
  seeds: the seed values trained, in the order of the leading axis;
  params_S: parameters with a leading seed axis [S, ...]; step: the
  checkpoint's step.
  """
  config: Any
  task: Any
  model: Any
  seeds: list
  params_S: Any
  step: int


def load_run(workdir: str, model: str = "meta_gnn", step: Optional[int] = None) -> Run:
  """The newest readable checkpoint of `model` in a meta-training workdir, or
  its checkpoint at `step`.

  ValueError if the workdir is not one, did not train `model`, or has no
  checkpoint at `step`.
  """
  from neuroprog.train import loop  # pylint: disable=g-import-not-at-top
  config = loop.read_run_config(workdir)
  if model not in config.models:
    raise ValueError(f"{workdir} has no model {model!r}; it trained "
                     f"{list(config.models)}.")
  task = loop.build_task(config)
  trainer = loop.Trainer(config, task, model)
  step, state = trainer.restore(workdir, step)
  return Run(config, task, trainer.model, trainer.seeds, state.params, step)


def select_seed(workdir: str, model: str) -> int:
  """The seed value chosen without OOD knowledge: best validation accuracy if
  the run has validation intents, else best ID accuracy; the first seed
  before results.json exists."""
  config = workdir_lib.read_config(workdir)
  seeds = [int(config.get("seed", 0)) + i for i in range(int(config.get("seeds", 1)))]
  path = os.path.join(workdir, "results.json")
  if not os.path.exists(path):
    return seeds[0]
  with open(path) as f:
    r = json.load(f)["models"].get(model)
  if not r:
    return seeds[0]
  return int(r["seeds"][seeds_lib.select_index(r["val_mean"], r["id_mean"])])


def synthesize(workdir: str, intent, *, model: str = "meta_gnn",
               seed: Optional[int] = None, refine: bool = True):
  """The program θ that `model` of a trained workdir synthesizes for `intent`.

  Args:
    workdir: a workdir of `experiments.synthesize` (`train.loop.train_and_evaluate`).
    intent: an intent value or string ("p=83", "n=4", "move_right,k=3");
      an invalid one raises the task's ValueError. For a run trained on
      example intents: a list of 1..shots (input, output) pairs of grids
      (lists of colours, or the official {"input": [[...]], "output": [[...]]}
      dicts); bad pairs raise a ValueError naming the pair and the value.
    model: which meta-learner of the workdir (a hypernetwork).
    seed: which trained seed (a seed value of the run); default
      `select_seed` (validation, else ID).
    refine: for example intents, fit θ to the given pairs as the workdir
      config's refine_* keys say (`train.refine`; nothing when refine_steps
      is 0); False: the hypernetwork's θ as synthesized.

  Returns:
    (spec, theta float32[T]).
  """
  from neuroprog.train import loop  # pylint: disable=g-import-not-at-top
  run = load_run(os.fspath(workdir), model)
  seed = select_seed(os.fspath(workdir), model) if seed is None else seed
  params = seeds_lib.take(run.params_S, seeds_lib.index_of(run.seeds, seed))
  refinement = loop.refinement_of(run.config, model) if refine else None
  return synthesize_from_params(params, intent, model=run.model, task=run.task,
                                refinement=refinement)


def intent_input(intent, *, model, task):
  """What `model` reads for one intent: features float32[1, F], or, for a
  model behind an example-set encoder, the `intents.SupportSet` of the given
  pairs (a label intent is refused there: it never saw one)."""
  if isinstance(model, intents_lib.ExampleIntentModel):
    if isinstance(intent, str):
      raise ValueError(f"model {model.name!r} was trained on example intents: give the "
                       f"intent as a list of (input, output) pairs, not {intent!r}.")
    return intents_lib.support_from_pairs(intent, max_len=task.spec.max_len, pad=task.pad,
                                          n_colours=task.n_colours, shots=model.shots)
  return jnp.asarray(task.features([task.parse_intent(intent)]))


def synthesize_from_params(params, intent, *, model, task, refinement=None):
  """(spec, theta float32[T]) of `intent` from one seed's parameters in memory.

  model: a `meta.Hypernetwork`, or an `intents.ExampleIntentModel` around one
  (then `intent` is a list of pairs); task: the task whose intents it reads.
  refinement: a `train.refine.Refinement` for example intents (the intent
  searched on the pairs, θ fitted to them); None, or 0 steps and no search:
  θ as synthesized.
  """
  learner = getattr(model, "learner", model)
  if not isinstance(learner, meta.Hypernetwork):
    raise ValueError(f"model {getattr(model, 'name', model)!r} emits no weights (it is "
                     "the direct baseline); choose a hypernetwork.")
  u = intent_input(intent, model=model, task=task)
  if refinement is not None and isinstance(model, intents_lib.ExampleIntentModel):
    from neuroprog.train import refine  # pylint: disable=g-import-not-at-top
    if refine.is_active(refinement):
      return task.spec, refine.jitted(model, task, refinement)(params, u)[0]
  return task.spec, model.apply(params, u)[0]


def spec_json(spec) -> str:
  return json.dumps(specs_lib.to_json(spec))
