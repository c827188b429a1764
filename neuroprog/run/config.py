"""Config schemas: one table of keys and defaults per entry point.

    SCHEMA = ConfigSchema("PNAG", {"space": REQUIRED, "seed": 0, ...},
                          positive_ints=("batch_size",),
                          sub_keys={"ae": AE_KEYS})
    SCHEMA.validate(config)          # ValueError naming the bad key and what is allowed
    SCHEMA.get(config, "seed")       # the config's value, else the default
    config = SCHEMA.default_config() # a ConfigDict holding every key

A schema is the only place an entry point's defaults live: `get_config()`
files start from `default_config()` and set what differs, and the code reads
every key through `get`, so a key can neither be misspelled silently nor have
two defaults.
"""

from __future__ import annotations

import copy
from typing import Any, Mapping, Optional, Sequence

import ml_collections


class _Required:
  """A singleton marker; copies are itself, so `is REQUIRED` always works."""

  def __repr__(self):
    return "REQUIRED"

  def __copy__(self):
    return self

  def __deepcopy__(self, memo):
    return self


REQUIRED = _Required()   # the default of a key the config must set


class ConfigSchema:
  """The keys of one entry point's config, with their defaults.

  Args:
    name: what the config configures, for error messages ("PNAG", ...).
    defaults: {key: default}; `REQUIRED` marks keys without a default.
    positive_ints: keys whose value must be an int > 0.
    sub_keys: {key: allowed keys} for keys holding a dict of options.
  """

  def __init__(self, name: str, defaults: Mapping[str, Any], *,
               positive_ints: Sequence[str] = (),
               sub_keys: Optional[Mapping[str, Sequence[str]]] = None):
    self.name = name
    self.defaults = dict(defaults)
    self.positive_ints = tuple(positive_ints)
    self.sub_keys = {k: tuple(v) for k, v in (sub_keys or {}).items()}
    for k in self.positive_ints + tuple(self.sub_keys):
      if k not in self.defaults:
        raise KeyError(f"{name} schema: {k!r} is not among its keys.")

  @property
  def keys(self) -> tuple[str, ...]:
    return tuple(self.defaults)

  def get(self, config, key: str):
    """config[key] if set, else the default; a key outside the schema raises."""
    if key not in self.defaults:
      raise KeyError(f"{self.name} config has no key {key!r}; allowed: "
                     f"{sorted(self.defaults)}.")
    value = config.get(key, self.defaults[key]) if hasattr(config, "get") else getattr(
        config, key)
    if value is REQUIRED:
      raise ValueError(f"{self.name} config is missing the required key {key!r}.")
    return value

  def validate(self, config) -> None:
    """ValueError for an unknown or missing key, a bad sub-key, or a count that
    is not a positive int; each message names the key and what is allowed."""
    keys = set(config.keys())
    unknown = sorted(keys - set(self.defaults))
    if unknown:
      raise ValueError(f"Unknown config key(s) {unknown}; allowed: "
                       f"{sorted(self.defaults)}.")
    missing = sorted(k for k, v in self.defaults.items()
                     if v is REQUIRED and k not in keys)
    if missing:
      raise ValueError(f"Config is missing required key(s) {missing}.")
    for key, allowed in self.sub_keys.items():
      bad = sorted(set(dict(self.get(config, key) or {})) - set(allowed))
      if bad:
        raise ValueError(f"Unknown config.{key} key(s) {bad}; allowed: {list(allowed)}.")
    for k in self.positive_ints:
      v = self.get(config, k)
      if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
        raise ValueError(f"config.{k} must be a positive int, got {v!r}.")

  def default_config(self, **values) -> ml_collections.ConfigDict:
    """A ConfigDict with every key: the defaults, then `values`.

    Keys whose default is REQUIRED must be given in `values`. Dict-valued
    defaults are copied, so configs never share them. For a key with
    sub-keys, a dict in `values` is laid over the default dict, so options a
    config does not set keep their default entry (and stay settable from the
    command line: ml_collections cannot add a key to a nested dict there).
    """
    unknown = sorted(set(values) - set(self.defaults))
    if unknown:
      raise ValueError(f"Unknown config key(s) {unknown}; allowed: "
                       f"{sorted(self.defaults)}.")
    merged = {k: copy.deepcopy(v) for k, v in self.defaults.items()}
    for k, v in values.items():
      if k in self.sub_keys and isinstance(merged[k], dict) and hasattr(v, "items"):
        merged[k] = {**merged[k], **dict(v)}
      else:
        merged[k] = v
    missing = sorted(k for k, v in merged.items() if v is REQUIRED)
    if missing:
      raise ValueError(f"default_config needs a value for {missing}.")
    # type_safe=False: None-valued defaults (e.g. "use the task's own") may be
    # overridden by values of any type from the command line.
    return ml_collections.ConfigDict(merged, type_safe=False)

  def extend(self, name: str, defaults: Mapping[str, Any], *,
             drop: Sequence[str] = (), positive_ints: Sequence[str] = (),
             sub_keys: Optional[Mapping[str, Sequence[str]]] = None) -> "ConfigSchema":
    """A schema with this one's keys less `drop`, plus (or overriding) `defaults`."""
    base = {k: v for k, v in self.defaults.items() if k not in set(drop)}
    base.update(defaults)
    ints = tuple(k for k in self.positive_ints + tuple(positive_ints) if k in base)
    subs = {k: v for k, v in self.sub_keys.items() if k in base}
    subs.update(sub_keys or {})
    return ConfigSchema(name, base, positive_ints=tuple(dict.fromkeys(ints)),
                        sub_keys=subs)
