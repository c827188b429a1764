"""The 1D-ARC program family as a `Task`."""

from __future__ import annotations

from typing import Optional

import jax
import jax.numpy as jnp
import numpy as np
import optax

from neuroprog import specs as specs_lib
from neuroprog.tasks import base
from neuroprog.tasks.arc1d import families

_PARAM_SCALE = 10.0
# 1.0 for the families with a parameter, in FAMILIES order.
_HAS_PARAM = tuple(float(families.PARAM_DOMAIN[f] is not None) for f in families.FAMILIES)
# Trainable parameters each meta-learner of the paper's table is matched to.
PARAM_BUDGET = 1_000_000
# The heuristic "answer with the input" (`Arc1D.heuristics`).
IDENTITY = "answer with the input"


def default_spec() -> specs_lib.Seq2SeqSpec:
  """The paper-sized target: a 1+1-layer seq2seq Transformer, vocab 11 (colours
  0..9 and pad), max_len 33, d_model 24, 4 heads of 6, d_mlp 80: 17,547
  parameters (paper: 17,568)."""
  return specs_lib.Seq2SeqSpec(vocab_size=families.N_COLOURS + 1, max_len=families.MAX_LEN,
                               d_model=24, n_heads=4, d_mlp=80)


class Arc1D(base.Task):
  """Intents: (family, parameter) tuples; see `families` for the domains.

  Default OOD: MoveRight(3), MoveLeft(3), Recolor(4), Recolor(7), Scale(3).
  sample -> x int32[B, n, 33], y int32[B, n, 33], grids padded with 10.
  Features (F = 11): one-hot family (9), parameter / 10, has-parameter flag.
  Loss: cross entropy per cell over the 11 tokens, averaged over the cells of
  the grid (padding excluded). Exact match: every cell of the grid correct.
  """
  name = "arc1d"
  feature_dim = len(families.FAMILIES) + 2
  param_dim = 2
  default_ood = families.DEFAULT_OOD
  default_spec = staticmethod(default_spec)
  # Example intents (`neuroprog.intents`): an intent can be shown as support
  # pairs of grids padded with `pad`, colours 0..n_colours-1.
  example_intents = True
  pad = families.PAD
  n_colours = families.N_COLOURS

  def check_spec(self, spec):
    self._require_spec(spec, specs_lib.Seq2SeqSpec, vocab_size=families.N_COLOURS + 1)
    if spec.max_len < families.MAX_LEN:
      raise ValueError(f"arc1d: target Seq2SeqSpec has max_len={spec.max_len}, below the "
                       f"generated grids' {families.MAX_LEN}; allowed: max_len >= "
                       f"{families.MAX_LEN}.")

  def all_intents(self):
    return families.all_intents()

  def check_intent(self, intent):
    return families.check_intent(intent)

  # Multipliers that put each label feature in the intent's own units (the
  # parameter in integer steps, the rest as they are): a readout trained with
  # them (config.intent_label_units="intent") is asked for the parameter to
  # within a step, which snap_features' rounding needs; in feature units a
  # parameter one step off costs 1 / 100 of a wrong family entry.
  label_units = (1.0,) * len(families.FAMILIES) + (_PARAM_SCALE, 1.0)

  # The readout's parameter per family (`with_gated_parameter`).
  param_groups = len(families.FAMILIES)

  def with_gated_parameter(self, feats_BxF: jax.Array, param_BxG: jax.Array) -> jax.Array:
    """Estimates float32[B, 11] with the parameter entry replaced by
    param_BxG[b, family], family the largest family entry of row b
    (param_BxG float32[B, 9]: one estimate of the parameter feature, k / 10,
    per family). Differentiable in param_BxG and in the other entries of
    feats_BxF, not through the choice of family. Jit-safe."""
    family_B = jnp.argmax(feats_BxF[:, :self.param_groups], -1)
    param_B = jnp.take_along_axis(param_BxG, family_B[:, None], 1)[:, 0]
    return feats_BxF.at[:, -2].set(param_B)

  def snap_features(self, feats_BxF: jax.Array) -> jax.Array:
    """The label features float32[B, 11] of the intent nearest to estimates
    float32[B, 11] (e.g. a readout of example pairs): the family of the
    largest family entry, and for a family with a parameter the estimate
    rounded to an integer parameter (not clipped to the family's domain, so an
    unseen parameter stays reachable). Jit-safe; not differentiable."""
    n_fam = len(families.FAMILIES)
    family_B = jnp.argmax(feats_BxF[:, :n_fam], -1)
    has_param_B = jnp.asarray(_HAS_PARAM)[family_B]
    param_B = jnp.round(feats_BxF[:, -2] * _PARAM_SCALE) / _PARAM_SCALE
    return jnp.concatenate([jax.nn.one_hot(family_B, n_fam, dtype=jnp.float32),
                            (param_B * has_param_B)[:, None], has_param_B[:, None]], -1)

  def label_candidates(self, feats_BxF: jax.Array, param_BxG: Optional[jax.Array],
                       n_families: int, radius: int) -> jax.Array:
    """Candidate label features float32[B, C, 11], C = n_families * (2 * radius
    + 1), for readout estimates feats_BxF float32[B, 11]: the n_families
    families of the largest family entries, best first, and for each the
    parameter estimate rounded, then one step below and above it, up to
    `radius` steps (0, -1, +1, -2, ...). param_BxG float32[B, 9] gives one
    parameter estimate (k / 10) per family (`with_gated_parameter`'s); None:
    the estimate's own parameter entry for every family. Candidate 0 is
    `snap_features` of the estimates (with a gated parameter, of
    `with_gated_parameter`'s). A family without a parameter repeats its one
    candidate. Parameters are not clipped to the domain, as in snap_features.
    Jit-safe (n_families, radius static); not differentiable.
    """
    n_fam = len(families.FAMILIES)
    if not 1 <= n_families <= n_fam:
      raise ValueError(f"arc1d: n_families={n_families!r}; allowed: 1..{n_fam}.")
    if radius < 0:
      raise ValueError(f"arc1d: radius={radius!r}; allowed: an int >= 0.")
    B = feats_BxF.shape[0]
    _, family_BxM = jax.lax.top_k(feats_BxF[:, :n_fam], n_families)
    if param_BxG is None:
      param_BxG = jnp.broadcast_to(feats_BxF[:, -2:-1], (B, n_fam))
    k_BxM = jnp.round(jnp.take_along_axis(param_BxG, family_BxM, 1) * _PARAM_SCALE)
    offsets_O = jnp.asarray([0] + [s * d for d in range(1, radius + 1) for s in (-1, 1)],
                            jnp.float32)
    k_BxMxO = k_BxM[:, :, None] + offsets_O
    family_BxMxO = jnp.broadcast_to(family_BxM[:, :, None], k_BxMxO.shape)
    has_param = jnp.asarray(_HAS_PARAM)[family_BxMxO]
    feats = jnp.concatenate([jax.nn.one_hot(family_BxMxO, n_fam, dtype=jnp.float32),
                             (k_BxMxO / _PARAM_SCALE * has_param)[..., None],
                             has_param[..., None]], -1)
    return feats.reshape(B, -1, self.feature_dim)

  def intent_features(self, intent):
    fam, param = intent
    f = np.zeros(self.feature_dim, np.float32)
    f[families.FAMILIES.index(fam)] = 1.0
    if param is not None:
      f[-2] = param / _PARAM_SCALE
      f[-1] = 1.0
    return f

  def format_intent(self, intent):
    fam, param = intent
    return fam if param is None else f"{fam},k={param}"

  def parse_intent(self, text):
    """"flip", "move_right,k=3", "family=move_right,k=3" or "move_right,3"."""
    if not isinstance(text, str):
      return self.check_intent(text)
    fields = [f.strip() for f in text.split(",") if f.strip()]
    if not fields:
      raise ValueError(f"arc1d: empty intent {text!r}.")
    fam = fields[0].split("=", 1)[1] if fields[0].startswith("family=") else fields[0]
    if len(fields) == 1:
      return self.check_intent((fam, None))
    if len(fields) > 2:
      raise ValueError(f"arc1d: cannot read an intent from {text!r}; expected "
                       "'family=<name>[,k=<int>]'.")
    value = fields[1].split("=", 1)[-1]
    try:
      return self.check_intent((fam, int(value)))
    except ValueError as e:
      if value.lstrip("-").isdigit():
        raise
      raise ValueError(f"arc1d: parameter {value!r} in {text!r} is not an int.") from e

  def params_of(self, intent):
    fam, param = intent
    return (families.FAMILIES.index(fam), 0 if param is None else param)

  def sample_params(self, key, params_BxP, n):
    b = params_BxP.shape[0]
    keys = jax.random.split(key, (b, n))
    gen = jax.vmap(jax.vmap(families.generate_one, (0, None, None)), (0, 0, 0))
    return gen(keys, params_BxP[:, 0], params_BxP[:, 1])

  def reference(self, intent, x):
    return families.reference(self.check_intent(intent), x)

  def heuristics(self):
    """Besides the nearest parameter's rule: "answer with the input"."""
    return {**super().heuristics(), IDENTITY: lambda intent, x: np.asarray(x)}

  def nearest_train_intent(self, intent):
    """The training intent of the same family with the closest parameter
    (ties: the smaller); None when no intent of the family is trained."""
    family, k = self.check_intent(intent)
    same = [t for t in self.train_intents if t[0] == family]
    if not same:
      return None
    return min(same, key=lambda t: (abs((t[1] or 0) - (k or 0)), t[1] or 0))

  def nearest_reference(self, train_intent, intent, x):
    """int32[n, L]: the rule applied to each grid of x [n, L] without its
    padding, padded back to L; a grid whose answer is longer than L, or an
    intent with no trained rule (train_intent None), gets -1 everywhere,
    which matches nothing."""
    x = np.asarray(x)
    out = np.full(x.shape, -1, np.int32)
    if train_intent is None:
      return out
    for i, grid in enumerate(x):
      answer = families.reference(train_intent, grid[grid != families.PAD])
      if len(answer) <= x.shape[-1]:
        out[i] = families.PAD
        out[i, :len(answer)] = answer
    return out

  def loss(self, outputs, y, params_BxP):
    valid = y != families.PAD
    ce = optax.softmax_cross_entropy_with_integer_labels(outputs, y)
    return (ce * valid).sum(-1) / jnp.maximum(valid.sum(-1), 1)

  def predict(self, outputs, params_BxP):
    return jnp.argmax(outputs, -1)

  def exact_match(self, outputs, y, params_BxP):
    ok = (self.predict(outputs, params_BxP) == y) | (y == families.PAD)
    return ok.all(-1).astype(jnp.float32)
