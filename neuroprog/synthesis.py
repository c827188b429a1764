"""`synthesize(workdir_or_params, intent)`: one forward pass from intent to θ."""

from __future__ import annotations

import json
import os
from typing import Any, Optional

import jax
import jax.numpy as jnp
import ml_collections
import numpy as np

from neuroprog import specs as specs_lib


def load_run(workdir: str, model: str = "meta_gnn"):
  """(config, task, model, params_S) of a trained workdir (latest checkpoint)."""
  from neuroprog.train import checkpoint, loop  # pylint: disable=g-import-not-at-top
  cfg_path = os.path.join(workdir, "config.json")
  if not os.path.exists(cfg_path):
    raise ValueError(f"{workdir} is not a neuroprog workdir (no config.json).")
  with open(cfg_path) as f:
    config = ml_collections.ConfigDict(json.load(f))
  if model not in config.models:
    raise ValueError(f"{workdir} has no model {model!r}; it trained "
                     f"{list(config.models)}.")
  task = loop.build_task(config)
  trainer = loop._Trainer(config, task, model)  # pylint: disable=protected-access
  mngr = checkpoint.manager(os.path.join(workdir, "checkpoints", model),
                            config.keep_checkpoints)
  abstract = jax.eval_shape(trainer.init)
  step, state = checkpoint.restore_latest(mngr, abstract)
  if state is None:
    raise ValueError(f"{workdir}: no checkpoint for model {model!r} in "
                     f"{mngr.directory}.")
  return config, task, trainer.model, state.params, step


def select_seed(workdir: str, model: str) -> int:
  """Seed index chosen without OOD knowledge: best validation accuracy if the
  run has validation intents, else best ID accuracy (0 if no results yet)."""
  path = os.path.join(workdir, "results.json")
  if not os.path.exists(path):
    return 0
  with open(path) as f:
    r = json.load(f)["models"].get(model)
  if not r:
    return 0
  scores = r["val_mean"] or r["id_mean"]
  return int(np.argmax(scores))


def synthesize(workdir_or_params: Any, intent, *, model: str = "meta_gnn",
               seed_index: Optional[int] = None, task=None, meta_model=None):
  """Generates the program θ for `intent`.

  Args:
    workdir_or_params: a trained workdir (path), or a params pytree of one
      seed (then pass `task` and `meta_model`).
    intent: an intent value or string ("p=83", "n=4", "move_right,k=3").
      Invalid intents raise the task's ValueError.
    model: which meta-learner of the workdir.
    seed_index: which seed; default `select_seed` (validation, else ID).

  Returns:
    (spec, theta float32[T]).
  """
  if isinstance(workdir_or_params, (str, os.PathLike)):
    _, task, meta_model, params_s, _ = load_run(str(workdir_or_params), model)
    idx = select_seed(str(workdir_or_params), model) if seed_index is None else seed_index
    params = jax.tree_util.tree_map(lambda a: a[idx], params_s)
  else:
    if task is None or meta_model is None:
      raise ValueError("synthesize(params, ...) needs task= and meta_model=.")
    params = workdir_or_params
  if meta_model.is_direct:
    raise ValueError("the direct model emits no weights; choose a hypernetwork.")
  intent = task.parse_intent(intent)
  u = jnp.asarray(task.features([intent]))
  return task.spec, meta_model.apply(params, u)[0]


def spec_json(spec) -> str:
  return json.dumps(specs_lib.to_json(spec))
