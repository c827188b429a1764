"""ADDMOD-p: y = (a + b) mod p for 0 <= a, b < p, p every prime below 100.

Target: the 1-layer Transformer of `default_spec()`. Input tokens
[a, b, EQ] (EQ = 97 marks the answer position), output logits over the
shared 97-value vocabulary 0..96. Loss: cross entropy over all 97 classes.
Exact match: the argmax restricted to 0..p-1 equals y.
With `loss_classes="residues"` the cross entropy is over 0..p-1 only, the
classes exact match reads; with `loss_logit_scale` = s it is the cross
entropy of s x logits (exact match, an argmax, does not change).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax

from neuroprog import specs as specs_lib
from neuroprog.tasks import base

PRIMES = base.primes_below(100)
# Token ids: values 0..96 (every residue of every prime below 100) and one
# "=" token that marks the answer position.
MAX_VALUE = 96
N_VALUES = MAX_VALUE + 1
EQ_TOKEN = MAX_VALUE + 1
# The heuristic "answer a + b, never wrap" (`AddMod.heuristics`).
NO_WRAP = "a + b, never wrap"
# What the training cross entropy normalises over (`AddMod(loss_classes=...)`).
LOSS_CLASSES = ("all", "residues")
# The moduli an AddMod task knows (`AddMod(moduli=...)`): the paper's primes,
# or every modulus 2..97 whose residues the vocabulary holds.
MODULI = {"primes": PRIMES, "all": tuple(range(2, N_VALUES + 1))}
# Trainable parameters each meta-learner of the paper's table is matched to.
PARAM_BUDGET = 400_000


def default_spec() -> specs_lib.TransformerSpec:
  """The paper-sized target: a 1-layer pre-LN Transformer, vocab 98 (0..96 and
  "="), context 3 ("a b ="), d_model 16, 4 heads of 4, d_mlp 48, 97 classes:
  6,049 parameters (paper: 6,048)."""
  return specs_lib.TransformerSpec(vocab_size=N_VALUES + 1, seq_len=3, d_model=16,
                                   n_heads=4, d_mlp=48, n_classes=N_VALUES, n_layers=1,
                                   ln="pre", activation="relu")


def encode(a, b):
  """Input tokens int32[..., 3] = [a, b, EQ] of operand arrays a, b."""
  return jnp.stack([a, b, jnp.full_like(a, EQ_TOKEN)], -1)


class AddMod(base.Task):
  """Intents: prime p < 100. Default OOD {23, 47, 61, 83, 89} (83 is the
  paper's worked example and stays OOD).

  sample -> x int32[B, n, 3] = [a, b, EQ], y int32[B, n].
  Features: [p / 100, 2 / p] (F = 2): both p and 1/p, since the clock
  frequencies of a solution scale with 1/p.
  """
  name = "addmod"
  feature_dim = 2
  param_dim = 1
  default_ood = (23, 47, 61, 83, 89)
  default_spec = staticmethod(default_spec)

  def __init__(self, *, loss_classes: str = "all", loss_logit_scale: float = 1.0,
               moduli: str = "primes", vocabulary_operands: float = 0.0, **splits):
    """`splits`: Task's keywords (train_intents, ood_intents, val_intents,
    spec). loss_classes: "all" (cross entropy over the 97 classes, so a
    program must also rank the values >= p below the answer) or "residues"
    (over 0..p-1 alone: the classes `predict` chooses among, so no part of
    a program is spent on values that can never be the answer).
    loss_logit_scale: s > 0; the training loss reads s x logits. Programs
    whose clock moves smoothly with p separate an answer from its nearest
    confusable neighbour by a logit gap of order (2 pi / p)^2, so at the
    large primes the cross entropy asks for logits far larger than a
    hypernetwork's output layer first gives; s > 1 asks for a gap s times
    smaller, and the argmax that exact match reads is unchanged.
    moduli: "primes" (the paper's task) or "all" (every modulus m in 2..97
    is an intent, so composite moduli can be trained on: a diagnostic of how
    densely the training intents must cover the OOD primes' range, not the
    paper's protocol; the default OOD primes stay).
    vocabulary_operands: the share w in [0, 1] of training examples whose
    operands a, b are drawn from every value 0..96 (y = (a + b) mod p);
    the others, and every evaluation, draw a, b < p. With w > 0 every token
    row is trained at every training prime, as the value it is mod p: a
    change of the training examples, not of the intents, and not the
    paper's protocol (w = 0)."""
    if loss_classes not in LOSS_CLASSES:
      raise ValueError(f"addmod: loss_classes={loss_classes!r}; allowed: "
                       f"{', '.join(map(repr, LOSS_CLASSES))}.")
    if isinstance(loss_logit_scale, bool) or not isinstance(loss_logit_scale, (int, float)) \
        or not 0 < loss_logit_scale < float("inf"):
      raise ValueError(f"addmod: loss_logit_scale={loss_logit_scale!r}; allowed: a finite "
                       "number > 0.")
    if moduli not in MODULI:
      raise ValueError(f"addmod: moduli={moduli!r}; allowed: "
                       f"{', '.join(map(repr, MODULI))}.")
    if isinstance(vocabulary_operands, bool) or not isinstance(
        vocabulary_operands, (int, float)) or not 0 <= vocabulary_operands <= 1:
      raise ValueError(f"addmod: vocabulary_operands={vocabulary_operands!r}; allowed: a "
                       "number in [0, 1] (the share of training examples with operands "
                       "drawn from 0..96).")
    self.vocabulary_operands = float(vocabulary_operands)
    self.loss_classes = loss_classes
    self.loss_logit_scale = float(loss_logit_scale)
    self.moduli = moduli
    super().__init__(**splits)

  def check_spec(self, spec):
    self._require_spec(spec, specs_lib.TransformerSpec, vocab_size=N_VALUES + 1,
                       seq_len=3, n_classes=N_VALUES)

  def all_intents(self):
    return MODULI[self.moduli]

  def check_intent(self, intent):
    if self.moduli == "all":
      return base.check_int(self.name, "p", intent, MODULI["all"])
    if isinstance(intent, (int, np.integer)) and not isinstance(intent, bool) \
        and 2 <= intent < 100 and int(intent) not in PRIMES:
      raise ValueError(
          f"addmod: p={intent} is not prime; allowed: the primes below 100, "
          f"{list(PRIMES)} (moduli='all' allows every modulus 2..97).")
    return base.check_int(self.name, "p", intent, PRIMES)

  def intent_features(self, intent):
    return np.array([intent / 100.0, 2.0 / intent], np.float32)

  def format_intent(self, intent):
    return f"p={intent}"

  def parse_intent(self, text):
    return self._parse_keyed_int(text, "p")

  def params_of(self, intent):
    return (intent,)

  def intent_size(self, intent):
    """p^2: the pairs (a, b) of ADDMOD-p."""
    p = self.check_intent(intent)
    return p * p

  def sample_params(self, key, params_BxP, n):
    p_B = params_BxP[:, 0]
    ka, kb = jax.random.split(key)
    shape = (p_B.shape[0], n)
    p = p_B[:, None]
    a = jnp.floor(jax.random.uniform(ka, shape) * p).astype(jnp.int32)
    b = jnp.floor(jax.random.uniform(kb, shape) * p).astype(jnp.int32)
    return encode(a, b), (a + b) % p

  def sample_train_params(self, key, params_BxP, n):
    """Each example's operands uniform in 0..96 with probability w =
    vocabulary_operands, else `sample_params`'s; y = (a + b) mod p. With
    w = 0 exactly `sample_params`'s draws (the same key gives the same
    ones), with w = 1 the vocabulary's alone."""
    w = self.vocabulary_operands
    if w == 0.0:
      return self.sample_params(key, params_BxP, n)
    ka, kb, kc = jax.random.split(key, 3)
    shape = (params_BxP.shape[0], n)
    a = jax.random.randint(ka, shape, 0, N_VALUES, jnp.int32)
    b = jax.random.randint(kb, shape, 0, N_VALUES, jnp.int32)
    x = encode(a, b)
    if w < 1.0:
      x_res, _ = self.sample_params(jax.random.fold_in(kc, 1), params_BxP, n)
      x = jnp.where(jax.random.bernoulli(kc, w, shape)[..., None], x, x_res)
    return x, (x[..., 0] + x[..., 1]) % params_BxP[:, :1]

  def all_pairs(self, p):
    """Every (a, b) of ADDMOD-p in a fixed-size batch, so that one compiled
    program serves every prime: (x int32[M, 3], y int32[M], valid bool[M]),
    M = 97^2, rows with a or b >= p marked invalid. Jittable in p."""
    a, b = (jnp.asarray(v.ravel()) for v in np.meshgrid(
        np.arange(N_VALUES), np.arange(N_VALUES), indexing="ij"))
    return encode(a, b), (a + b) % p, (a < p) & (b < p)

  def reference(self, intent, x):
    p = self.check_intent(intent)
    x = np.asarray(x)
    if x.shape[-1] not in (2, 3):
      raise ValueError(f"addmod: x has shape {x.shape}; expected [..., 2] "
                       "(a, b) or [..., 3] (a, b, EQ).")
    a, b = x[..., 0], x[..., 1]
    if np.any((a < 0) | (a >= p) | (b < 0) | (b >= p)):
      raise ValueError(f"addmod: operands must lie in 0..{p - 1} for p={p}.")
    return (a + b) % p

  def heuristics(self):
    """Besides the nearest prime's rule (a + b) mod q: "a + b, never wrap",
    right exactly when a + b < p, about half of the pairs."""
    return {**super().heuristics(), NO_WRAP: lambda p, x: np.asarray(x)[..., 0]
            + np.asarray(x)[..., 1]}

  def nearest_reference(self, train_intent, intent, x):
    # The operands of p may reach q or beyond, outside `reference`'s domain.
    x = np.asarray(x)
    return (x[..., 0] + x[..., 1]) % train_intent

  def loss(self, outputs, y, params_BxP):
    """Cross entropy float32[B, n] of logits outputs float32[B, n, 97] against
    y int32[B, n]; with loss_classes="residues" over the classes below each
    row's p (params_BxP int32[B, 1]; None: all 97 classes); the logits
    multiplied by loss_logit_scale first."""
    if self.loss_logit_scale != 1.0:
      outputs = outputs * self.loss_logit_scale
    if self.loss_classes == "residues" and params_BxP is not None:
      classes = jnp.arange(outputs.shape[-1])
      p = params_BxP[:, 0].reshape((-1,) + (1,) * (outputs.ndim - 1))
      # A finite floor, not -inf: the masked classes then take exactly zero
      # probability and zero gradient without inf - inf in the softmax.
      outputs = jnp.where(classes < p, outputs, -1e9)
    return optax.softmax_cross_entropy_with_integer_labels(outputs, y)

  def predict(self, outputs, params_BxP):
    classes = jnp.arange(outputs.shape[-1])
    p = params_BxP[:, 0].reshape((-1,) + (1,) * (outputs.ndim - 1))
    return jnp.argmax(jnp.where(classes < p, outputs, -jnp.inf), -1)
