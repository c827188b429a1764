"""What one optimizer update does to the generated program, module by module.

A hypernetwork is trained in parameter space but judged in program space:
an update Δp of its parameters moves the generated θ by Δθ = θ(p + Δp) -
θ(p), and the loss by L(θ(p + Δp)) - L(θ(p)). For a deep generator the
modules' updates stack: each alone may be a small, nearly linear step in θ,
and all together a large one whose realized loss change falls far short of
the first-order prediction <dL/dθ, Δθ>. `update_effects` applies the update
of one module at a time (the top-level parameter collections of `params`,
e.g. "net/msg_0_in") and then of all, and reports per step:

  first_order   <dL/dθ, Δθ>: the loss change a linear model of L(θ) predicts
  realized      L(θ(p + Δp)) - L(θ(p))
  cosine        cos(Δθ, -dL/dθ): how well the step in θ points downhill
  theta_change  |Δθ| / |θ| over the whole program
  by_tensor     {tensor: |Δθ_tensor| / |θ_tensor|} (layout order)

realized / first_order near 1 means the step stays in the linear regime;
far below 1 (or of the other sign), that it overshoots. Pure jax and numpy;
`experiments.init_structure --updates` prints it for a config's models.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from neuroprog.programs import layout as layout_lib


class UpdateEffect(NamedTuple):
  """What adding one module's update (or all) to the parameters does."""
  n_params: int            # parameters the update touches
  first_order: float       # <dL/dθ, Δθ>
  realized: float          # L(θ(p + Δp)) - L(θ(p))
  cosine: float            # cos(Δθ, -dL/dθ); 0 when Δθ = 0
  theta_change: float      # |Δθ| / |θ|
  by_tensor: dict          # {tensor name: |Δθ_tensor| / |θ_tensor|}


def modules(params) -> list[tuple[str, ...]]:
  """Paths of the modules: ("net", "msg_0_in"), ("head", "gain"), ... for a
  dict of dicts; a top-level leaf (e.g. a base program) is its own module."""
  out = []
  for group, sub in params.items():
    if isinstance(sub, dict):
      out.extend((group, name) for name in sub)
    else:
      out.append((group,))
  return out


def _with_update(params, updates, path):
  """params + updates at `path` only (a module path, or () for all)."""
  if not path:
    return jax.tree_util.tree_map(jnp.add, params, updates)
  out = dict(params)
  if len(path) == 1:
    out[path[0]] = jax.tree_util.tree_map(jnp.add, params[path[0]], updates[path[0]])
    return out
  out[path[0]] = dict(params[path[0]])
  out[path[0]][path[1]] = jax.tree_util.tree_map(
      jnp.add, params[path[0]][path[1]], updates[path[0]][path[1]])
  return out


def update_effects(spec, theta_fn: Callable, theta_loss: Callable, params,
                   updates) -> dict[str, UpdateEffect]:
  """{module ("net/msg_0_in", ..., and "all"): UpdateEffect}.

  theta_fn(params) -> θ float32[B, T] (the programs of a fixed batch of B
  intents); theta_loss(θ_BxT) -> float32[] (the task loss of those programs
  on a fixed batch of examples); updates: a pytree like params (what the
  optimizer would add, e.g. `optimizer.update(...)[0]`). spec fixes the
  tensor layout of θ. Evaluated eagerly: one θ_fn and one loss per module.
  """
  theta_fn, loss_fn = jax.jit(theta_fn), jax.jit(theta_loss)
  theta0 = theta_fn(params)
  g_theta = np.asarray(jax.jit(jax.grad(theta_loss))(theta0), np.float64)
  theta0_np = np.asarray(theta0, np.float64)
  loss0 = float(loss_fn(theta0))
  entries = layout_lib.layout(spec)
  g_norm = np.linalg.norm(g_theta)
  slices = {e.name: slice(e.offset, e.offset + e.size) for e in entries}
  ref = {name: np.linalg.norm(theta0_np[:, sl]) for name, sl in slices.items()}
  out = {}
  for path in modules(params) + [()]:
    moved = _with_update(params, updates, path)
    theta = theta_fn(moved)
    d_theta = np.asarray(theta, np.float64) - theta0_np
    d_norm = np.linalg.norm(d_theta)
    first = float(np.sum(g_theta * d_theta))
    touched = updates if not path else (updates[path[0]] if len(path) == 1
                                        else updates[path[0]][path[1]])
    by_tensor = {}
    for name, sl in slices.items():
      change = np.linalg.norm(d_theta[:, sl])
      by_tensor[name] = (float(change / ref[name]) if ref[name] > 0
                         else float("inf") if change else 0.0)
    out["/".join(path) or "all"] = UpdateEffect(
        n_params=int(sum(np.size(a) for a in jax.tree_util.tree_leaves(touched))),
        first_order=first,
        realized=float(loss_fn(theta)) - loss0,
        cosine=float(-first / (g_norm * d_norm)) if d_norm > 0 and g_norm > 0 else 0.0,
        theta_change=float(d_norm / np.linalg.norm(theta0_np)),
        by_tensor=by_tensor)
  return out
