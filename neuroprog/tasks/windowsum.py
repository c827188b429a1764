"""WINDOWSUM-a: count the windows of 3 neighbouring cells whose values sum to a.

A 1D signal x of L = 16 cells, each uniform in {0, 1, 2, 3}; y = the number of
positions t in 0..13 with x[t] + x[t+1] + x[t+2] = a, for a in 0..9. The
target is a convolutional network (`default_spec`): a kernel of 3 that sums
the window, channels that fire when the sum is a (a difference of ReLUs whose
biases are linear in a), global average pooling and a linear head that scales
the mean back to a count, so a program exists for every a and its biases
interpolate between intents.

Scaling, as in SUMFIRST: the network reads x' = (x - 1.5) / 1.5 in [-1, 1]
(float32 [..., 16, 1], channels last) and is trained to output
t = (y - 2) / 2; the prediction is round(2 * out + 2) for every intent.
Loss: squared error on t. Exact match: the rounded prediction equals y.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from neuroprog import specs as specs_lib
from neuroprog.tasks import base

LENGTH = 16
WINDOW = 3
MAX_CELL = 3
MAX_SUM = WINDOW * MAX_CELL
N_WINDOWS = LENGTH - WINDOW + 1
# Trainable parameters each meta-learner of the table is matched to.
PARAM_BUDGET = 50_000
_X_CENTRE = MAX_CELL / 2
_Y_CENTRE, _Y_SCALE = 2.0, 2.0


def default_spec() -> specs_lib.CNNSpec:
  """A 1D CNN: conv 1 -> 8 channels (kernel 3, VALID), conv 8 -> 8 (kernel 1),
  ReLU, global average pooling, linear head to 1 output: 113 parameters."""
  return specs_lib.CNNSpec(input_shape=(LENGTH,), in_channels=1, channels=(8, 8),
                           kernel_sizes=(WINDOW, 1), n_out=1, padding="VALID")


class WindowSum(base.Task):
  """Intents: int a in 0..9. Default OOD {3, 7}.

  sample(key, intents, n) -> x float32[B, n, 16, 1] (scaled, see module doc),
  y float32[B, n] (the count, 0..14). Features: [(a + 1) / 10] (F = 1).
  """
  name = "windowsum"
  feature_dim = 1
  param_dim = 1
  default_ood = (3, 7)
  default_spec = staticmethod(default_spec)

  def check_spec(self, spec):
    self._require_spec(spec, specs_lib.CNNSpec, input_shape=(LENGTH,), in_channels=1,
                       n_out=1)

  def all_intents(self):
    return tuple(range(MAX_SUM + 1))

  def check_intent(self, intent):
    return base.check_int(self.name, "a", intent, range(MAX_SUM + 1))

  def intent_features(self, intent):
    # (a + 1) / 10, not a / 9: a zero feature at a = 0 would give a
    # meta-learner without input biases one constant program there.
    return np.array([(intent + 1) / (MAX_SUM + 1)], np.float32)

  def format_intent(self, intent):
    return f"a={intent}"

  def parse_intent(self, text):
    return self._parse_keyed_int(text, "a")

  def params_of(self, intent):
    return (intent,)

  def sample_params(self, key, params_BxP, n):
    a_B = params_BxP[:, 0]
    cells = jax.random.randint(key, (a_B.shape[0], n, LENGTH), 0, MAX_CELL + 1)
    y = (window_sums(cells) == a_B[:, None, None]).sum(-1).astype(jnp.float32)
    return encode_inputs(cells), y

  def reference(self, intent, x):
    intent = self.check_intent(intent)
    x = np.asarray(x)
    if x.shape[-2:] != (LENGTH, 1):
      raise ValueError(f"windowsum: x has shape {x.shape}; expected [..., {LENGTH}, 1].")
    cells = np.rint(x[..., 0] * _X_CENTRE + _X_CENTRE).astype(np.int64)
    return (np.asarray(window_sums(cells)) == intent).sum(-1)

  def loss(self, outputs, y, params_BxP):
    return (outputs[..., 0] - (y - _Y_CENTRE) / _Y_SCALE) ** 2

  def predict(self, outputs, params_BxP):
    return jnp.round(_Y_SCALE * outputs[..., 0] + _Y_CENTRE)


def window_sums(cells):
  """int[..., 14]: the sum of each window of 3 neighbouring cells of int[..., 16]."""
  cells = jnp.asarray(cells)
  return sum(cells[..., i:i + N_WINDOWS] for i in range(WINDOW))


def encode_inputs(cells):
  """Cells 0..3 int[..., 16] -> the network's input float32[..., 16, 1] in [-1, 1]."""
  return ((jnp.asarray(cells, jnp.float32) - _X_CENTRE) / _X_CENTRE)[..., None]


def solution(a: int) -> dict[str, np.ndarray]:
  """The named tensors of a hand-written program for WINDOWSUM-a (the proof
  that the default target can express every intent): channel 0..2 of conv0
  hold s - a + 1, s - a and s - a - 1 for the window sum s, conv1 forms the
  bump relu(s-a+1) - 2 relu(s-a) + relu(s-a-1) (1 when s = a, else 0), and the
  head turns the mean over the 14 windows into the scaled count."""
  w0 = np.zeros((1, 8, WINDOW), np.float32)
  b0 = np.zeros(8, np.float32)
  # Input cells arrive as x' = (x - 1.5) / 1.5, so s = 1.5 * sum(x') + 4.5.
  w0[0, :3, :] = _X_CENTRE
  b0[:3] = WINDOW * _X_CENTRE - a + np.array([1.0, 0.0, -1.0])
  w1 = np.zeros((8, 8, 1), np.float32)
  w1[:3, 0, 0] = [1.0, -2.0, 1.0]
  head_w = np.zeros((8, 1), np.float32)
  head_w[0, 0] = N_WINDOWS / _Y_SCALE
  return {"conv0/w": w0, "conv0/b": b0, "conv1/w": w1, "conv1/b": np.zeros(8, np.float32),
          "head/w": head_w, "head/b": np.array([-_Y_CENTRE / _Y_SCALE], np.float32)}
