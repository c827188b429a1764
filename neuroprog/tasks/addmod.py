"""ADDMOD-p: y = (a + b) mod p for 0 <= a, b < p, p every prime below 100.

Target: the 1-layer Transformer of `default_spec("addmod")`. Input tokens
[a, b, EQ] (EQ = 97 marks the answer position), output logits over the
shared 97-value vocabulary 0..96. Loss: cross entropy over all 97 classes.
Exact match: the argmax restricted to 0..p-1 equals y.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax

from neuroprog import specs as specs_lib
from neuroprog.tasks import base

PRIMES = base.primes_below(100)


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

  def all_intents(self):
    return PRIMES

  def check_intent(self, intent):
    if isinstance(intent, (int, np.integer)) and not isinstance(intent, bool) \
        and 2 <= intent < 100 and int(intent) not in PRIMES:
      raise ValueError(
          f"addmod: p={intent} is not prime; allowed: the primes below 100, "
          f"{list(PRIMES)}.")
    return base.check_int(self.name, "p", intent, PRIMES)

  def intent_features(self, intent):
    return np.array([intent / 100.0, 2.0 / intent], np.float32)

  def format_intent(self, intent):
    return f"p={intent}"

  def parse_intent(self, text):
    return self._parse_keyed_int(text, "p")

  def params_of(self, intent):
    return (intent,)

  def sample_params(self, key, params_BxP, n):
    p_B = params_BxP[:, 0]
    ka, kb = jax.random.split(key)
    shape = (p_B.shape[0], n)
    p = p_B[:, None]
    a = jnp.floor(jax.random.uniform(ka, shape) * p).astype(jnp.int32)
    b = jnp.floor(jax.random.uniform(kb, shape) * p).astype(jnp.int32)
    eq = jnp.full(shape, specs_lib.ADDMOD_EQ_TOKEN, jnp.int32)
    return jnp.stack([a, b, eq], -1), (a + b) % p

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

  def loss(self, outputs, y, params_BxP):
    return optax.softmax_cross_entropy_with_integer_labels(outputs, y)

  def predict(self, outputs, params_BxP):
    classes = jnp.arange(outputs.shape[-1])
    p = params_BxP[:, 0].reshape((-1,) + (1,) * (outputs.ndim - 1))
    return jnp.argmax(jnp.where(classes < p, outputs, -jnp.inf), -1)
