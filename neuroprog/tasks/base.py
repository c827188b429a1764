"""The `Task` interface shared by every program family.

A task knows its intents (the programs a user can ask for), how the
meta-learner reads an intent (`intent_features`), how to draw input/output
examples of an intent under `jit` (`sample_params`), the ground-truth program
(`reference`), and how outputs of the target network are scored (`loss`,
`exact_match`). Intents are plain hashable Python values; inside `jit` they
travel as an int32 parameter array [B, P] made by `intent_params`.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Hashable, Sequence

import jax
import numpy as np

from neuroprog import specs as specs_lib

Intent = Hashable
# The heuristic every task has (`Task.heuristics`).
NEAREST_RULE = "nearest training intent's rule"


class Task:
  """Base class. Subclasses set the class attributes and the abstract methods.

  Attributes:
    name: "sumfirst" | "addmod" | "arc1d".
    spec: the target spec (default: `default_spec()`, the paper's).
    intents: every valid intent, in a fixed order.
    train_intents, ood_intents: disjoint subsets of `intents`.
    val_intents: held out of training and disjoint from the OOD intents;
      used only to select among trained models (default: none).
    feature_dim: F, the length of `intent_features(intent)`.
    param_dim: P, the width of `intent_params(intents)`.
  """
  name: str = ""
  feature_dim: int = 0
  param_dim: int = 1
  default_ood: tuple = ()

  @staticmethod
  def default_spec() -> specs_lib.Spec:
    """The paper-sized target architecture of the task."""
    raise NotImplementedError

  def __init__(self, *, train_intents: Sequence[Intent] | None = None,
               ood_intents: Sequence[Intent] | None = None,
               val_intents: Sequence[Intent] = (),
               spec: specs_lib.Spec | None = None):
    self.spec = self.default_spec() if spec is None else spec
    self.check_spec(self.spec)
    self.intents = tuple(self.all_intents())
    ood = self._checked_list(
        "ood_intents", self.default_ood if ood_intents is None else ood_intents)
    val = self._checked_list("val_intents", val_intents)
    if train_intents is None:
      train = tuple(i for i in self.intents if i not in set(ood) | set(val))
    else:
      train = self._checked_list("train_intents", train_intents)
    for (a, xs), (b, ys) in (
        (("train_intents", train), ("ood_intents", ood)),
        (("train_intents", train), ("val_intents", val)),
        (("val_intents", val), ("ood_intents", ood))):
      overlap = sorted(set(xs) & set(ys), key=str)
      if overlap:
        raise ValueError(
            f"{self.name}: {a} and {b} overlap in {overlap}; held-out intents "
            "must never be trained on, and validation must not see OOD tests.")
    if not train:
      raise ValueError(f"{self.name}: train_intents is empty.")
    self.train_intents = train
    self.ood_intents = ood
    self.val_intents = val
    self._sample_jit = jax.jit(self.sample_params, static_argnums=2)

  # -- to implement -------------------------------------------------------
  def check_spec(self, spec) -> None:
    """ValueError unless `spec` can be this task's target: its type and the
    sizes the task's inputs and outputs fix (named in the message)."""
    raise NotImplementedError

  def all_intents(self) -> Sequence[Intent]:
    raise NotImplementedError

  def check_intent(self, intent: Any) -> Intent:
    """Returns the canonical intent or raises ValueError naming the domain."""
    raise NotImplementedError

  def intent_features(self, intent: Intent) -> np.ndarray:
    """float32[F]: what the meta-learner reads for this intent."""
    raise NotImplementedError

  def params_of(self, intent: Intent) -> tuple[int, ...]:
    """The int parameters (length P) that identify an intent inside jit."""
    raise NotImplementedError

  def intent_size(self, intent: Intent) -> int:
    """How many distinct examples the intent has (ADDMOD-p: p^2 pairs), for
    training draws weighted by size (`config.intent_sampling`). Tasks whose
    inputs are not a finite, intent-dependent set define none."""
    raise NotImplementedError(
        f"task {self.name!r} defines no intent size (a finite number of distinct "
        "examples per intent), so config.intent_sampling must be 0 (uniform draws).")

  def sample_params(self, key: jax.Array, params_BxP: jax.Array, n: int):
    """Pure and jittable (n static): examples for B intents given as params.

    Returns (x, y) with leading axes [B, n]; see the subclass for the rest.
    """
    raise NotImplementedError

  def sample_train_params(self, key: jax.Array, params_BxP: jax.Array, n: int):
    """The training draws (`train.step`'s objective): by default exactly
    `sample_params`'s, the distribution every evaluation reads. A task option
    may widen it (ADDMOD's `vocabulary_operands`); evaluation never changes."""
    return self.sample_params(key, params_BxP, n)

  def reference(self, intent: Intent, x) -> np.ndarray:
    raise NotImplementedError

  def loss(self, outputs, y, params_BxP) -> jax.Array:
    """Per-example loss float32[B, n] of target-network outputs."""
    raise NotImplementedError

  def heuristics(self) -> dict[str, Callable[[Intent, np.ndarray], np.ndarray]]:
    """The task's one-line baselines, which need no training: name -> rule.

    rule(intent, x) takes one intent's examples x (numpy, [n, ...] as
    `sample_params` draws them) and returns predictions shaped like that
    intent's y [n, ...], in y's units. `heuristic_accuracy` scores them; the
    training loop reports them beside the models on the same held-out
    examples. Every task has "nearest training intent's rule" (the reference
    program of `nearest_train_intent`); subclasses add their own.
    """
    def nearest_rule(intent, x):
      return self.nearest_reference(self.nearest_train_intent(intent), intent, x)
    return {NEAREST_RULE: nearest_rule}

  def nearest_train_intent(self, intent: Intent) -> Intent | None:
    """The training intent whose program a user would try on `intent`: for
    int intents the closest by |difference| (ties: the smaller); None when no
    training intent is comparable (the subclass decides)."""
    intent = self.check_intent(intent)
    return min(self.train_intents, key=lambda t: (abs(t - intent), t))

  def nearest_reference(self, train_intent: Intent, intent: Intent, x) -> np.ndarray:
    """`train_intent`'s program applied to examples x [n, ...] drawn for
    `intent` (which may lie outside train_intent's input domain); default
    `reference`."""
    del intent
    return np.asarray(self.reference(train_intent, x))

  def heuristic_accuracy(self, predictions, y) -> np.ndarray:
    """float64[n]: 1.0 where a heuristic's prediction equals y [n, ...] exactly
    (every element of an example)."""
    equal = np.asarray(predictions) == np.asarray(y)
    return equal.reshape(equal.shape[0], -1).all(-1).astype(np.float64)

  def predict(self, outputs, params_BxP) -> jax.Array:
    """Target-network outputs -> predictions in the units of y."""
    raise NotImplementedError

  def format_intent(self, intent: Intent) -> str:
    """A short string for tables and files, e.g. "n=4"; parse_intent inverts it."""
    raise NotImplementedError

  def parse_intent(self, text) -> Intent:
    """An intent from its string ("n=4", "p=83", "family=move_right,k=3")
    or from an intent value; ValueError (the task's) when invalid."""
    raise NotImplementedError

  # -- shared ---------------------------------------------------------------
  def _require_spec(self, spec, cls, **fixed) -> None:
    """ValueError unless spec is a `cls` whose fields equal `fixed`."""
    if not isinstance(spec, cls):
      raise ValueError(f"{self.name}: the target must be a {cls.__name__}, got "
                       f"{type(spec).__name__} ({spec}).")
    bad = {k: getattr(spec, k) for k, v in fixed.items() if getattr(spec, k) != v}
    if bad:
      raise ValueError(
          f"{self.name}: target {type(spec).__name__} has "
          + ", ".join(f"{k}={v!r}" for k, v in bad.items())
          + "; the task needs " + ", ".join(f"{k}={fixed[k]!r}" for k in bad)
          + " (its inputs and outputs fix them).")

  def _parse_keyed_int(self, text, key):
    if not isinstance(text, str):
      return self.check_intent(text)
    value = text.split("=", 1)[1] if text.startswith(f"{key}=") else text
    try:
      number = int(value)
    except ValueError:
      raise ValueError(f"{self.name}: cannot read an intent from {text!r}; "
                       f"expected '{key}=<int>'.") from None
    return self.check_intent(number)

  def _checked_list(self, field, intents):
    if isinstance(intents, (str, bytes)) or not hasattr(intents, "__iter__"):
      raise ValueError(f"{self.name}: {field} must be a sequence of intents, "
                       f"got {intents!r}.")
    out = []
    for i in intents:
      c = self.check_intent(i)
      if c not in out:
        out.append(c)
    return tuple(out)

  def features(self, intents: Sequence[Intent]) -> np.ndarray:
    """float32[B, F] for a list of intents (validated)."""
    return np.stack([self.intent_features(self.check_intent(i))
                     for i in intents]).astype(np.float32)

  def intent_params(self, intents: Sequence[Intent]) -> np.ndarray:
    """int32[B, P] for a list of intents (validated)."""
    return np.asarray([self.params_of(self.check_intent(i)) for i in intents],
                      np.int32).reshape(len(intents), self.param_dim)

  def sample(self, key: jax.Array, intents: Sequence[Intent], n: int):
    """(x, y) for each intent: leading axes [len(intents), n].

    Validates every intent first (ValueError), then runs the jitted sampler.
    Deterministic in `key`.
    """
    if not isinstance(n, int) or n <= 0:
      raise ValueError(f"n must be a positive int, got {n!r}.")
    return self._sample_jit(key, self.intent_params(intents), n)

  def exact_match(self, outputs, y, params_BxP) -> jax.Array:
    """float32[B, n]: 1.0 where the prediction equals y exactly."""
    pred = self.predict(outputs, params_BxP)
    equal = pred == y
    extra = tuple(range(2, equal.ndim))
    return equal.all(axis=extra).astype(np.float32) if extra else equal.astype(np.float32)

  def __repr__(self):
    return (f"{type(self).__name__}(train={len(self.train_intents)} intents, "
            f"ood={list(self.ood_intents)})")


@functools.lru_cache(maxsize=None)
def primes_below(n: int) -> tuple[int, ...]:
  sieve = np.ones(n, bool)
  sieve[:2] = False
  for i in range(2, int(n ** 0.5) + 1):
    if sieve[i]:
      sieve[i * i::i] = False
  return tuple(int(p) for p in np.flatnonzero(sieve))


def check_int(task: str, what: str, value, allowed: Sequence[int]) -> int:
  """An int in `allowed`, or ValueError naming the value and the domain."""
  if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
    raise ValueError(f"{task}: {what} must be an int, got {value!r}.")
  if int(value) not in allowed:
    lo, hi = min(allowed), max(allowed)
    dense = len(allowed) == hi - lo + 1
    domain = f"{lo}..{hi}" if dense else f"{list(allowed)}"
    raise ValueError(f"{task}: {what}={value!r} is outside its domain; "
                     f"allowed: {domain}.")
  return int(value)
