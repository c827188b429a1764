"""A workdir belongs to one config: its fingerprint is checked on every rerun.

`prepare(workdir, config)` writes workdir/config.json on the first run and on
later runs compares every key of the new config with it. A changed key is
refused with a ValueError naming the key, its old and its new value, because
checkpoints of one config resumed under another would be reported as a clean
run of the second. The one sanctioned change is training for longer:
`prepare(..., extend=True)` accepts larger values of the schema's step keys
(`step_keys`) and records the extension in workdir/extensions.json, which
`extensions(workdir)` reads back so that results can say so.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, Sequence

import ml_collections

CONFIG_FILE = "config.json"
EXTENSIONS_FILE = "extensions.json"


def config_json(config) -> str:
  """The canonical JSON text of a config (sorted keys, 2-space indent)."""
  if isinstance(config, ml_collections.ConfigDict):
    return config.to_json_best_effort(indent=2, sort_keys=True)
  return json.dumps(config, indent=2, sort_keys=True, default=str)


def read_config(workdir: str) -> ml_collections.ConfigDict:
  """The config a workdir was made with; ValueError if it holds none."""
  path = os.path.join(workdir, CONFIG_FILE)
  if not os.path.isdir(workdir):
    raise ValueError(f"workdir {workdir!r} does not exist.")
  if not os.path.exists(path):
    raise ValueError(f"{workdir!r} is not a neuroprog workdir (no {CONFIG_FILE}).")
  with open(path) as f:
    return ml_collections.ConfigDict(json.load(f))


def changed_keys(old: dict, new: dict) -> list[str]:
  return sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))


def differences(workdir: str, config, *, added_keys=None,
                eval_keys: Sequence[str] = (), fill_stored=None) -> dict[str, list]:
  """{key: [stored value, value in config]} of the keys in which `config`
  differs from the run stored in `workdir` (`prepare`'s comparison: a stored
  config without an added key holds its default; eval_keys are not compared;
  fill_stored, if given, maps the stored config's JSON dict to the dict to
  compare, for keys added inside nested values). ValueError if the workdir
  holds no config."""
  old = json.loads(config_json(read_config(workdir)))
  new = json.loads(config_json(config))
  for key, default in (added_keys or {}).items():
    old.setdefault(key, json.loads(config_json({key: default}))[key])
  if fill_stored is not None:
    old = fill_stored(old)
  return {k: [old.get(k), new.get(k)] for k in changed_keys(old, new) if k not in eval_keys}


def describe(changes: dict[str, list]) -> str:
  """`differences` as "key: old -> new; ..." for error messages."""
  return "; ".join(f"{k}: {o!r} -> {n!r}" for k, (o, n) in changes.items())


def prepare(workdir: str, config, *, step_keys: Sequence[str] = ("steps",),
            extend: bool = False, added_keys=None,
            eval_keys: Sequence[str] = (), fill_stored=None) -> dict[str, Any]:
  """Creates the workdir or checks that it holds a run of this config.

  Args:
    workdir: the run's directory (created if absent).
    config: the run's config (ConfigDict or dict).
    step_keys: the keys that count training steps; with `extend=True` they may
      grow (never shrink) and nothing else may change.
    extend: continue the workdir's run for more steps.
    added_keys: {key: default} of keys the schema gained after workdirs were
      written: a stored config without such a key counts as holding its
      default, so an older run of the same settings still resumes.
    eval_keys: keys that only the evaluation after training reads (a
      sampling scale, the requests to score): they may change between calls,
      since the checkpoints do not depend on them; config.json records the
      latest values.
    fill_stored: as in `differences` (options added inside a nested value,
      such as a model's options).

  Returns:
    {key: [old, new]} of the step keys that grew in this call ({} otherwise).

  Raises:
    ValueError: the workdir holds a run of a different config.
  """
  os.makedirs(workdir, exist_ok=True)
  path = os.path.join(workdir, CONFIG_FILE)
  text = config_json(config)
  grown = {}
  if os.path.exists(path):
    changes = differences(workdir, config, added_keys=added_keys, eval_keys=eval_keys,
                          fill_stored=fill_stored)
    if changes:
      changed = list(changes)
      old = {k: v[0] for k, v in changes.items()}
      new = {k: v[1] for k, v in changes.items()}
      diff = describe(changes)
      steps_only = all(k in step_keys for k in changed)
      longer = steps_only and all(
          isinstance(new.get(k), int) and isinstance(old.get(k), int)
          and new[k] > old[k] for k in changed)
      if not (extend and longer):
        hint = (" To train the existing run for more steps, pass extend=True "
                "(--extend on the command line)." if longer else
                " Use a fresh workdir.")
        raise ValueError(f"{workdir} holds a run with a different config ({diff}).{hint}")
      grown = {k: [old[k], new[k]] for k in changed}
      records = extensions(workdir)
      records.append({"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                      **{k: v for k, v in grown.items()}})
      with open(os.path.join(workdir, EXTENSIONS_FILE), "w") as f:
        json.dump(records, f, indent=1)
  with open(path, "w") as f:
    f.write(text)
  return grown


def extensions(workdir: str) -> list[dict]:
  """The extensions recorded by `prepare(..., extend=True)`, oldest first."""
  path = os.path.join(workdir, EXTENSIONS_FILE)
  if not os.path.exists(path):
    return []
  with open(path) as f:
    return json.load(f)
