"""Program families: SUMFIRST-n, ADDMOD-p, parameterized 1D-ARC, and WINDOWSUM-a
(on a convolutional target).

    task = neuroprog.tasks.get("addmod", ood_intents=(83, 89))
    x, y = task.sample(jax.random.key(0), task.train_intents, 128)
"""

from __future__ import annotations

import inspect

from neuroprog import specs as specs_lib
from neuroprog.tasks import addmod, arc1d, sumfirst, windowsum
from neuroprog.tasks.addmod import AddMod
from neuroprog.tasks.base import Task
from neuroprog.tasks.sumfirst import SumFirst

_TASKS = {"sumfirst": SumFirst, "addmod": AddMod, "arc1d": arc1d.Arc1D,
          "windowsum": windowsum.WindowSum}
NAMES = tuple(_TASKS)
# Trainable-parameter budget of each task's paper table (all four models
# matched to within 10%, `train.loop.matched_model_configs`).
PARAM_BUDGETS = {"sumfirst": sumfirst.PARAM_BUDGET, "addmod": addmod.PARAM_BUDGET,
                 "arc1d": arc1d.PARAM_BUDGET, "windowsum": windowsum.PARAM_BUDGET}


def _check_name(name: str) -> None:
  if name not in _TASKS:
    raise ValueError(f"Unknown task {name!r}; allowed: {list(NAMES)}.")


def default_spec(name: str) -> specs_lib.Spec:
  """The paper-sized target architecture of task `name` (see each task's
  `default_spec`)."""
  _check_name(name)
  return _TASKS[name].default_spec()


def options(name: str) -> dict:
  """{option: default} of task `name`'s own keyword options (beyond Task's
  splits and spec); {} for a task with none."""
  _check_name(name)
  splits = inspect.signature(Task.__init__).parameters
  params = inspect.signature(_TASKS[name].__init__).parameters
  return {k: p.default for k, p in params.items()
          if p.kind is inspect.Parameter.KEYWORD_ONLY and k not in splits}


def get(name: str, **overrides) -> Task:
  """The task `name` ("sumfirst" | "addmod" | "arc1d" | "windowsum").

  Overrides (keyword-only): train_intents, ood_intents, val_intents (disjoint
  sequences of intents; train defaults to every intent in neither of the
  others), spec (a target spec), and the task's own options (`options(name)`,
  e.g. addmod's loss_classes).
  Unknown names or override keys raise ValueError.
  """
  _check_name(name)
  cls = _TASKS[name]
  allowed = [p for p in inspect.signature(Task.__init__).parameters if p != "self"]
  allowed += list(options(name))
  unknown = sorted(set(overrides) - set(allowed))
  if unknown:
    raise ValueError(f"Unknown override(s) {unknown} for task {name!r}; "
                     f"allowed: {allowed}.")
  return cls(**overrides)
