"""Target architectures S* as frozen, hashable specs.

A spec fixes everything about a target network except its weights θ, so it can
be passed as a static argument to `jax.jit` and used as a dictionary key. The
weight layout (which tensor lives where in the flat θ) is a pure function of
the spec; see `neuroprog.programs.layout`.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Optional, Union

ACTIVATIONS = ("relu", "gelu", "tanh", "sigmoid", "silu", "identity")
LN_PLACEMENTS = ("pre", "post", "none")


def _check_positive(owner: str, **values):
  for name, value in values.items():
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
      raise ValueError(
          f"{owner}.{name} must be a positive int, got {value!r}.")


def _check_choice(owner: str, name: str, value, allowed):
  if value not in allowed:
    raise ValueError(
        f"{owner}.{name}={value!r} is not supported; allowed: {list(allowed)}.")


@dataclasses.dataclass(frozen=True)
class MLPSpec:
  """A fully connected network.

  Attributes:
    widths: layer widths including input and output, e.g. (10, 16, 1): input
      float[..., 10] -> hidden 16 -> output float[..., 1].
    activation: hidden activation, one of ACTIVATIONS; the output is linear.
  """
  widths: tuple[int, ...]
  activation: str = "relu"

  def __post_init__(self):
    object.__setattr__(self, "widths", tuple(self.widths))
    if len(self.widths) < 2:
      raise ValueError(
          f"MLPSpec.widths needs at least input and output widths, got "
          f"{self.widths!r}.")
    for i, w in enumerate(self.widths):
      _check_positive("MLPSpec", **{f"widths[{i}]": w})
    _check_choice("MLPSpec", "activation", self.activation, ACTIVATIONS)

  @property
  def d_in(self) -> int:
    return self.widths[0]

  @property
  def d_out(self) -> int:
    return self.widths[-1]


@dataclasses.dataclass(frozen=True)
class TransformerSpec:
  """A decoder-only Transformer that classifies the last position.

  Input int32 tokens [..., seq_len] in 0..vocab_size-1; output float32 logits
  [..., n_classes] read at the last (answer) position. Attention is causal.

  Attributes:
    vocab_size: number of input token ids.
    seq_len: context length L.
    d_model: residual-stream width.
    n_heads: attention heads per layer; d_model must be divisible by it.
    d_head: per-head query/key/value width; None means d_model // n_heads.
    d_mlp: hidden width of each MLP block.
    n_layers: number of blocks.
    ln: layer-norm placement, "pre" (before each sublayer, plus a final
      norm), "post" (after each residual add) or "none".
    n_classes: number of output logits.
    activation: MLP activation, one of ACTIVATIONS.
  """
  vocab_size: int
  seq_len: int
  d_model: int
  n_heads: int
  d_mlp: int
  n_classes: int
  n_layers: int = 1
  d_head: Optional[int] = None
  ln: str = "pre"
  activation: str = "relu"

  def __post_init__(self):
    _check_positive("TransformerSpec", vocab_size=self.vocab_size,
                    seq_len=self.seq_len, d_model=self.d_model,
                    n_heads=self.n_heads, d_mlp=self.d_mlp,
                    n_classes=self.n_classes, n_layers=self.n_layers)
    if self.d_model % self.n_heads:
      raise ValueError(
          f"TransformerSpec.d_model={self.d_model} is not divisible by "
          f"n_heads={self.n_heads}; choose n_heads among the divisors of "
          f"d_model: {[h for h in range(1, self.d_model + 1) if self.d_model % h == 0]}.")
    if self.d_head is None:
      object.__setattr__(self, "d_head", self.d_model // self.n_heads)
    _check_positive("TransformerSpec", d_head=self.d_head)
    _check_choice("TransformerSpec", "ln", self.ln, LN_PLACEMENTS)
    _check_choice("TransformerSpec", "activation", self.activation,
                  ACTIVATIONS)


@dataclasses.dataclass(frozen=True)
class Seq2SeqSpec:
  """An encoder-decoder Transformer over token sequences (1D-ARC grids).

  Input int32 tokens [..., L] with L <= max_len (token `pad_id` = vocab_size-1
  marks padding); output float32 logits [..., L, vocab_size], one distribution
  per output cell. The decoder is non-autoregressive: its queries are learned
  position embeddings that read the encoder memory through cross-attention,
  so one forward pass gives the whole output grid (input and output grids of a
  1D-ARC pair have the same length). Pre-layer-norm throughout.

  Attributes:
    vocab_size: token ids including the padding token (11 for 10 colours).
    max_len: maximum sequence length.
    d_model, n_heads, d_mlp: as in TransformerSpec (d_head = d_model/n_heads
      unless given).
    n_enc_layers, n_dec_layers: encoder and decoder depth.
  """
  vocab_size: int
  max_len: int
  d_model: int
  n_heads: int
  d_mlp: int
  n_enc_layers: int = 1
  n_dec_layers: int = 1
  d_head: Optional[int] = None
  activation: str = "relu"

  def __post_init__(self):
    _check_positive("Seq2SeqSpec", vocab_size=self.vocab_size,
                    max_len=self.max_len, d_model=self.d_model,
                    n_heads=self.n_heads, d_mlp=self.d_mlp,
                    n_enc_layers=self.n_enc_layers,
                    n_dec_layers=self.n_dec_layers)
    if self.d_model % self.n_heads:
      raise ValueError(
          f"Seq2SeqSpec.d_model={self.d_model} is not divisible by "
          f"n_heads={self.n_heads}; choose n_heads among the divisors of "
          f"d_model: {[h for h in range(1, self.d_model + 1) if self.d_model % h == 0]}.")
    if self.d_head is None:
      object.__setattr__(self, "d_head", self.d_model // self.n_heads)
    _check_positive("Seq2SeqSpec", d_head=self.d_head)
    _check_choice("Seq2SeqSpec", "activation", self.activation, ACTIVATIONS)

  @property
  def pad_id(self) -> int:
    return self.vocab_size - 1


PADDINGS = ("SAME", "VALID")


@dataclasses.dataclass(frozen=True)
class CNNSpec:
  """A convolutional network: conv layers, global average pooling, a linear head.

  Input float32[..., *input_shape, in_channels] (channels last); output
  float32[..., n_out]. Each conv layer l maps C_{l-1} to channels[l]
  channels with a kernel of kernel_sizes[l] (square in 2D), stride
  strides[l], the given padding, a bias and the activation; the head averages
  the last layer's feature map over all positions and applies a linear map.

  Attributes:
    input_shape: the spatial size, (L,) for 1D or (H, W) for 2D signals.
    in_channels: C_0.
    channels: output channels of each conv layer (at least one layer).
    kernel_sizes: one kernel size per conv layer.
    n_out: number of outputs.
    strides: one stride per conv layer; () means all 1.
    padding: "SAME" (output size ceil(size / stride)) or "VALID".
    activation: conv activation, one of ACTIVATIONS; the head is linear.
  """
  input_shape: tuple[int, ...]
  in_channels: int
  channels: tuple[int, ...]
  kernel_sizes: tuple[int, ...]
  n_out: int
  strides: tuple[int, ...] = ()
  padding: str = "SAME"
  activation: str = "relu"

  def __post_init__(self):
    for name in ("input_shape", "channels", "kernel_sizes", "strides"):
      value = getattr(self, name)
      if isinstance(value, (int, str)) or not hasattr(value, "__iter__"):
        raise ValueError(f"CNNSpec.{name} must be a tuple of ints, got {value!r}.")
      object.__setattr__(self, name, tuple(value))
    if len(self.input_shape) not in (1, 2):
      raise ValueError(f"CNNSpec.input_shape={self.input_shape!r}: give (L,) for 1D or "
                       "(H, W) for 2D convolutions.")
    if not self.channels:
      raise ValueError("CNNSpec.channels is empty; give at least one conv layer.")
    if not self.strides:
      object.__setattr__(self, "strides", (1,) * len(self.channels))
    for name in ("kernel_sizes", "strides"):
      if len(getattr(self, name)) != len(self.channels):
        raise ValueError(
            f"CNNSpec.{name}={getattr(self, name)!r} has {len(getattr(self, name))} "
            f"entries; channels={self.channels!r} has {len(self.channels)} layers "
            "(one entry per layer).")
    for name in ("input_shape", "channels", "kernel_sizes", "strides"):
      for i, v in enumerate(getattr(self, name)):
        _check_positive("CNNSpec", **{f"{name}[{i}]": v})
    _check_positive("CNNSpec", in_channels=self.in_channels, n_out=self.n_out)
    _check_choice("CNNSpec", "padding", self.padding, PADDINGS)
    _check_choice("CNNSpec", "activation", self.activation, ACTIVATIONS)
    self.feature_shapes   # raises for a layer whose output would be empty

  @property
  def spatial_dims(self) -> int:
    return len(self.input_shape)

  @property
  def d_out(self) -> int:
    return self.n_out

  @property
  def feature_shapes(self) -> tuple[tuple[int, ...], ...]:
    """The spatial shape after each conv layer."""
    shapes, size = [], self.input_shape
    for l, (k, s) in enumerate(zip(self.kernel_sizes, self.strides)):
      if self.padding == "SAME":
        size = tuple(-(-n // s) for n in size)
      else:
        if min(size) < k:
          raise ValueError(
              f"CNNSpec: layer {l} has kernel {k} but its input is {size} with "
              f"padding='VALID'; use padding='SAME' or a kernel <= {min(size)}.")
        size = tuple((n - k) // s + 1 for n in size)
      shapes.append(size)
    return tuple(shapes)


Spec = Union[MLPSpec, TransformerSpec, Seq2SeqSpec, CNNSpec]

_SPEC_TYPES = {"MLPSpec": MLPSpec, "TransformerSpec": TransformerSpec,
               "Seq2SeqSpec": Seq2SeqSpec, "CNNSpec": CNNSpec}


def to_json(spec: Spec) -> dict:
  """A JSON-able dict {"type": ..., fields...}; `from_json` inverts it."""
  return {"type": type(spec).__name__, **dataclasses.asdict(spec)}


def from_json(obj: dict) -> Spec:
  """The spec of a `to_json` dict; errors as `from_config`'s."""
  return from_config(obj, where="spec")


def from_config(value, where: str = "config.spec") -> Optional[Spec]:
  """A spec from a config value, or None when the value asks for the task's default.

  Args:
    value: None or "" (the task's default target); a spec; a mapping
      {"type": "MLPSpec" | "TransformerSpec" | "Seq2SeqSpec" | "CNNSpec", field: value,
      ...}
      (a dict or ml_collections ConfigDict; lists become tuples); or the same
      mapping as a JSON string, which is how it is given on the command line:
      --config.spec='{"type": "MLPSpec", "widths": [10, 16, 16, 1]}'.
    where: the name of the value in error messages.

  Raises:
    ValueError naming the bad type, an unknown or missing field (with the
    allowed ones), or the constructor's own complaint about a value.
  """
  if value is None or (isinstance(value, str) and not value.strip()):
    return None
  if isinstance(value, tuple(_SPEC_TYPES.values())):
    return value
  if isinstance(value, str):
    try:
      value = json.loads(value)
    except json.JSONDecodeError as e:
      raise ValueError(f"{where}={value!r} is not JSON ({e.msg}); give a mapping such as "
                       '\'{"type": "MLPSpec", "widths": [10, 16, 1]}\'.') from None
  if hasattr(value, "to_dict"):
    value = value.to_dict()
  if not isinstance(value, dict):
    raise ValueError(f"{where} must be a mapping with a 'type' key, got {value!r}.")
  obj = dict(value)
  kind = obj.pop("type", None)
  if kind not in _SPEC_TYPES:
    raise ValueError(f"{where}.type={kind!r} is not a spec type; allowed: "
                     f"{sorted(_SPEC_TYPES)}.")
  cls = _SPEC_TYPES[kind]
  fields = {f.name: f for f in dataclasses.fields(cls)}
  unknown = sorted(set(obj) - set(fields))
  if unknown:
    raise ValueError(f"{where}: unknown field(s) {unknown} for {kind}; allowed: "
                     f"{list(fields)}.")
  missing = [n for n, f in fields.items() if n not in obj
             and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
  if missing:
    raise ValueError(f"{where}: {kind} needs field(s) {missing}.")
  obj = {k: tuple(v) if isinstance(v, list) else v for k, v in obj.items()}
  try:
    return cls(**obj)
  except (TypeError, ValueError) as e:
    raise ValueError(f"{where}: {e}") from None
