"""SUMFIRST-n: y = x_0 + ... + x_{n-1} for x in {0..9}^10, n in 1..10.

Target: the MLP 10-16-1. Scaling (what decides whether training starts): the
network reads x' = (x - 4.5) / 4.5 in [-1, 1] and is trained to output
t = (y - 22.5) / 4.5, the sum centred on the middle intent (n = 5) and in
units of the input scale, so t = x'_0 + ... + x'_{n-1} + (n - 5). Decoding is
the same for every intent (a synthesized program is self-contained): the
prediction is round(4.5 * out + 22.5). Loss: squared error on t. Exact match:
the rounded prediction equals y.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from neuroprog import specs as specs_lib
from neuroprog.tasks import base

N_INPUTS = 10
MAX_DIGIT = 9
# Trainable parameters each meta-learner of the paper's table is matched to.
PARAM_BUDGET = 50_000
_CENTRE = MAX_DIGIT / 2
_Y_CENTRE = _CENTRE * N_INPUTS / 2


def default_spec() -> specs_lib.MLPSpec:
  """The paper's target: MLPSpec((10, 16, 1), relu), 193 parameters."""
  return specs_lib.MLPSpec(widths=(N_INPUTS, 16, 1), activation="relu")


class SumFirst(base.Task):
  """Intents: int n in 1..10. Default OOD {4, 8}.

  sample(key, intents, n) -> x float32[B, n, 10] (scaled, see module doc),
  y float32[B, n] (the integer sum). Features: [n / 10] (F = 1).
  """
  name = "sumfirst"
  feature_dim = 1
  param_dim = 1
  default_ood = (4, 8)
  default_spec = staticmethod(default_spec)

  def check_spec(self, spec):
    self._require_spec(spec, specs_lib.MLPSpec, d_in=N_INPUTS, d_out=1)

  def all_intents(self):
    return tuple(range(1, N_INPUTS + 1))

  def check_intent(self, intent):
    return base.check_int(self.name, "n", intent, range(1, N_INPUTS + 1))

  def intent_features(self, intent):
    return np.array([intent / N_INPUTS], np.float32)

  def format_intent(self, intent):
    return f"n={intent}"

  def parse_intent(self, text):
    return self._parse_keyed_int(text, "n")

  def params_of(self, intent):
    return (intent,)

  def sample_params(self, key, params_BxP, n):
    count_B = params_BxP[:, 0]
    digits = _digits(key, (count_B.shape[0], n))
    take_BxNxI = jnp.arange(N_INPUTS) < count_B[:, None, None]
    y = jnp.where(take_BxNxI, digits, 0).sum(-1).astype(jnp.float32)
    return encode_inputs(digits), y

  def reference(self, intent, x):
    intent = self.check_intent(intent)
    x = np.asarray(x)
    if x.shape[-1] != N_INPUTS:
      raise ValueError(f"sumfirst: x has shape {x.shape}; expected [..., 10].")
    return x[..., :intent].sum(-1)

  def nearest_reference(self, train_intent, intent, x):
    # `reference` reads digits; the sampler's x is the network's input scale.
    return self.reference(train_intent, decode_inputs(x)).astype(np.float32)

  def loss(self, outputs, y, params_BxP):
    return (outputs[..., 0] - encode_targets(y)) ** 2

  def predict(self, outputs, params_BxP):
    return jnp.round(_CENTRE * outputs[..., 0] + _Y_CENTRE)


_POW10 = np.array([1, 10, 100, 1000, 10000], np.uint32)


def _digits(key, lead_shape):
  """int32[*lead_shape, 10] uniform digits: five decimal digits from each of
  two random uint32 words (5x fewer random bits than one draw per digit, the
  sampler's bottleneck). Non-uniformity from 2^32 not being a multiple of
  10^5 is below 2.4e-5 per digit value."""
  bits = jax.random.bits(key, lead_shape + (2,), jnp.uint32)
  digits = (bits[..., None] // _POW10) % 10
  return digits.reshape(lead_shape + (N_INPUTS,)).astype(jnp.int32)


def encode_inputs(digits):
  """Digits 0..9 -> the network's input scale [-1, 1] (float32)."""
  return (jnp.asarray(digits, jnp.float32) - _CENTRE) / _CENTRE


def encode_targets(y):
  """Sums in task units -> the network's output scale (float32)."""
  return (jnp.asarray(y, jnp.float32) - _Y_CENTRE) / _CENTRE


def decode_inputs(x):
  """Inverse of encode_inputs (rounded to the nearest digit)."""
  return np.rint(np.asarray(x) * _CENTRE + _CENTRE).astype(np.int64)
