"""Meta-learners: the hypernetworks Meta-MLP, Meta-gMLP and Meta-GNN, and the
direct baseline.

    model = neuroprog.meta.create("meta_gnn", spec, intent_dim=task.feature_dim)
    params = model.init(jax.random.key(0))
    theta_BxT = model.apply(params, u_BxF)          # a Hypernetwork

`create("direct", ...)` returns a `DirectModel`, whose apply(params, u, x)
gives outputs, not θ.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence


from neuroprog import specs as specs_lib
from neuroprog.meta import base, direct, meta_gmlp, meta_gnn, meta_mlp
from neuroprog.meta.base import DirectModel, Hypernetwork, MetaModel

NAMES = ("direct", "meta_mlp", "meta_gmlp", "meta_gnn")
_MODULES = {"meta_mlp": meta_mlp, "meta_gmlp": meta_gmlp, "meta_gnn": meta_gnn}


def _check_name(name):
  if name not in NAMES:
    raise ValueError(f"Unknown meta-learner {name!r}; allowed: {list(NAMES)}.")


def base_name(entry: str) -> str:
  """The meta-learner of a model entry: `name` or a variant `name@label`.

  A variant is the same meta-learner under a config of its own (a run trains
  "meta_gnn" and "meta_gnn@library" side by side, each with its own options
  and learning rate). ValueError names a bad entry and what is allowed.
  """
  name, sep, label = str(entry).partition("@")
  if name not in NAMES or (sep and not (label and label.replace("_", "").isalnum()
                                        and label.islower())):
    raise ValueError(f"Unknown model {entry!r}; allowed: {list(NAMES)}, or a variant "
                     "'name@label' with a lowercase alphanumeric label (e.g. "
                     "'meta_gnn@library').")
  return name


def default_config(name: str, spec: specs_lib.Spec) -> dict:
  _check_name(name)
  if name == "direct":
    return dict(direct.defaults_for(spec))
  return dict(_MODULES[name].DEFAULTS)


def default_learning_rate(name: str) -> float:
  """The Adam learning rate of the model's recipe (used by the training loop
  when a config names none for it)."""
  _check_name(name)
  return direct.LEARNING_RATE if name == "direct" else _MODULES[name].LEARNING_RATE


def width_key(name: str, spec: specs_lib.Spec) -> str:
  """The config key that `match_capacity` scales."""
  _check_name(name)
  return direct.width_key_for(spec) if name == "direct" else _MODULES[name].WIDTH_KEY


def create(name: str, spec: specs_lib.Spec, intent_dim: int,
           config: Optional[Mapping[str, Any]] = None, **build_kwargs) -> MetaModel:
  """The meta-learner `name` for target `spec` reading intents of width F.

  config: None for the defaults, or a mapping overriding some of them; an
  unknown key raises ValueError naming it and the allowed keys.
  """
  _check_name(name)
  if not isinstance(intent_dim, int) or intent_dim <= 0:
    raise ValueError(f"intent_dim must be a positive int, got {intent_dim!r}.")
  cfg = base.resolve_config(name, default_config(name, spec), config)
  if name == "direct":
    net = direct.build(spec, intent_dim, cfg)
    return DirectModel(name=name, spec=spec, intent_dim=intent_dim, config=cfg, net=net)
  net, head = _MODULES[name].build(spec, intent_dim, cfg, **build_kwargs)
  return Hypernetwork(name=name, spec=spec, intent_dim=intent_dim, config=cfg,
                      net=net, head=head)


def match_capacity(names: Sequence[str], spec: specs_lib.Spec, budget: int, *,
                   intent_dim: int, base_configs: Optional[Mapping[str, Mapping]] = None,
                   tolerance: float = 0.1) -> dict[str, dict]:
  """Per model, a config whose trainable parameter count is within
  `tolerance` of `budget`, found by searching the model's width key.

  Returns {name: config dict (with "num_params")}. Raises ValueError if no
  width reaches the budget within tolerance.
  """
  out = {}
  for name in names:
    key = width_key(name, spec)
    cfg = dict(default_config(name, spec))
    cfg.update((base_configs or {}).get(name, {}))
    step = int(cfg.get("n_heads", 1)) if key == "d_model" else 1

    def count(w, cfg=cfg, key=key, name=name):
      return create(name, spec, intent_dim, {**cfg, key: w * step}).num_params()

    lo, hi = 1, 1
    while count(hi) < budget and hi < 1 << 14:
      lo, hi = hi, hi * 2
    while hi - lo > 1:
      mid = (lo + hi) // 2
      if count(mid) < budget:
        lo = mid
      else:
        hi = mid
    best = min((lo, hi), key=lambda w: abs(count(w) - budget))
    n = count(best)
    if abs(n - budget) > tolerance * budget:
      raise ValueError(
          f"match_capacity: {name} cannot reach {budget:,} parameters within "
          f"{tolerance:.0%} by scaling {key!r} (closest: {n:,} at {key}="
          f"{best * step}); change its other config keys.")
    out[name] = {**cfg, key: best * step, "num_params": n}
  return out
