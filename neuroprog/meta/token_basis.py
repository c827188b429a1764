"""Token-indexed weights as smooth functions of the token's value.

A flat hypernetwork emits every entry of θ from its own output unit. The rows
of a Transformer's token embedding (and the columns of its unembedding) then
have nothing in common: the row of token v is trained only by the intents
whose examples contain v. Where a token value occurs at one training intent
alone (ADDMOD's values 80..96 occur only at p = 97), its row at every other
intent is whatever that output unit happens to give, and an unseen intent
between them interpolates it (BUILD_NOTES.md, "Why 83 and 89 fail").

With a token basis of M frequencies the hypernetwork emits, for each such
tensor, K = 2M + 1 coefficients per feature instead of one entry per token,
and the tensor is their combination on a fixed basis of the token index v:

    Φ[v, j] = cos(π j (v + 1/2) / N),  j = 0..2M,  v = 0..N-1,

the first K columns of the DCT-II, every column scaled to unit root-mean-square
over v: orthogonal (Φᵀ Φ = N I), so coefficients and rows are equally
conditioned, and not periodic in v (token N - 1 is not tied to token 0). The
highest column makes M full cycles over the N tokens, as M Fourier
frequencies would. (Cosines and sines of π m v / N together span nearly the
same functions twice over on 0..N-1, a basis with condition number ~10⁵.) A row is then a smooth
function of v for every intent, fitted on the tokens that intent uses, so a
row no intent trains alone is fixed by its neighbours. This assumes the token
ids of the first N tokens are ordered values (numbers), as in ADDMOD; it is an
option (off by default) because it is a prior about the task's vocabulary.

Which tensors: the tokens that are also output classes, v = 0..N-1 with N the
spec's number of output logits: the first N rows of the token embedding
(`embed/tok`, `enc/embed/tok`; any rows past N, such as ADDMOD's "=" token,
stay one output unit per entry), every column of `unembed/w` and every entry
of `unembed/b`. Defined for Transformer and seq2seq targets.

`expand` maps emitted coefficients to θ's layout (Meta-MLP emits the
coefficients itself); `project` maps θ-shaped values to the nearest ones on
the basis (each token tensor's least-squares fit, `expand(reduce(x))`), for a
hypernetwork that emits one value per entry (Meta-GNN, whose token nodes and
edges stay as they are). Both are pure jnp with static shapes (jit- and
vmap-safe).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from neuroprog import specs as specs_lib
from neuroprog.programs import layout as layout_lib


class Piece(NamedTuple):
  """One layout entry's part of the expansion.

  kind: "plain" (its entries copied), "rows" (an [N, D] block of the first N
    rows from [K, D] coefficients, then the remaining rows copied), "cols"
    ([D, N] from [D, K] coefficients) or "vector" ([N] from [K]).
  shape: the entry's shape in θ.
  reduced_size: how many emitted values it reads.
  """
  kind: str
  shape: tuple
  reduced_size: int


class Plan(NamedTuple):
  """The static expansion from emitted values float32[B, T'] to θ-shaped raw
  values float32[B, T]: pieces in layout order and the basis Φ float32[N, K]."""
  pieces: tuple
  basis_NxK: np.ndarray

  @property
  def reduced_size(self) -> int:
    return sum(p.reduced_size for p in self.pieces)

  @property
  def size(self) -> int:
    return sum(int(np.prod(p.shape)) for p in self.pieces)


def basis(n_tokens: int, n_frequencies: int) -> np.ndarray:
  """float32[N, 2M + 1]: cos(π j (v + 1/2) / N) for j = 0..2M (columns) and
  v = 0..N-1 (rows), each column at unit RMS over v (so Φᵀ Φ = N I)."""
  v = np.arange(n_tokens, dtype=np.float64)[:, None] + 0.5
  j = np.arange(2 * n_frequencies + 1, dtype=np.float64)[None, :]
  phi = np.cos(np.pi * j * v / n_tokens)
  return (phi / np.sqrt((phi ** 2).mean(0))).astype(np.float32)


def _token_count(spec) -> int:
  if isinstance(spec, specs_lib.TransformerSpec):
    return int(spec.n_classes)
  if isinstance(spec, specs_lib.Seq2SeqSpec):
    return int(spec.vocab_size)
  raise ValueError(f"token_basis: the target {type(spec).__name__} has no token "
                   "embedding; allowed: a TransformerSpec or Seq2SeqSpec target "
                   "(or token_basis=0).")


def check(spec, n_frequencies) -> None:
  """ValueError naming a bad token_basis and what is allowed."""
  if isinstance(n_frequencies, (bool, np.bool_)) or not isinstance(
      n_frequencies, (int, np.integer)) or n_frequencies < 0:
    raise ValueError(f"token_basis={n_frequencies!r}; allowed: an integer >= 0 (the "
                     "number of frequencies of the token basis; 0 turns it off).")
  if n_frequencies:
    n = _token_count(spec)
    if 2 * n_frequencies + 1 >= n:
      raise ValueError(f"token_basis={n_frequencies}: 2M + 1 = {2 * n_frequencies + 1} "
                       f"coefficients for {n} tokens emit no fewer values than the "
                       f"tokens; allowed: 1..{(n - 2) // 2}.")


@functools.lru_cache(maxsize=None)
def plan(spec, n_frequencies: int) -> Plan:
  """The expansion for `spec` with M = n_frequencies (cached; spec hashable)."""
  check(spec, n_frequencies)
  n = _token_count(spec)
  k = 2 * n_frequencies + 1
  pieces = []
  for e in layout_lib.layout(spec):
    if e.name.endswith("embed/tok"):
      v, d = e.shape
      pieces.append(Piece("rows", e.shape, k * d + (v - n) * d))
    elif e.name == "unembed/w":
      pieces.append(Piece("cols", e.shape, e.shape[0] * k))
    elif e.name == "unembed/b":
      pieces.append(Piece("vector", e.shape, k))
    else:
      pieces.append(Piece("plain", e.shape, e.size))
  return Plan(tuple(pieces), basis(n, n_frequencies))


def reduced_size(spec, n_frequencies: int) -> int:
  """T': how many values a hypernetwork emits for `spec` (T when M = 0)."""
  if not n_frequencies:
    return layout_lib.num_params(spec)
  return plan(spec, n_frequencies).reduced_size


def _transform(p: Plan, mat_OxI: np.ndarray, x_BxS: jax.Array) -> jax.Array:
  """Every token tensor's token axis (size I) mapped through mat [O, I] (rows
  left-multiplied, columns and vectors right-multiplied by its transpose),
  every other entry copied in order: float32[B, S] -> float32[B, S']."""
  n_out, n_in = mat_OxI.shape
  mat = jnp.asarray(mat_OxI)
  batch = x_BxS.shape[:-1]
  hi = jax.lax.Precision.HIGHEST
  out, start = [], 0
  for piece in p.pieces:
    if piece.kind == "plain":
      size = piece.reduced_size
      out.append(x_BxS[..., start:start + size])
    elif piece.kind == "rows":
      v, d = piece.shape
      size = n_in * d + (v - p.basis_NxK.shape[0]) * d
      chunk = x_BxS[..., start:start + size]
      rows = jnp.einsum("oi,...id->...od", mat, chunk[..., :n_in * d].reshape(batch + (n_in, d)),
                        precision=hi)
      out += [rows.reshape(batch + (n_out * d,)), chunk[..., n_in * d:]]
    elif piece.kind == "cols":
      d = piece.shape[0]
      size = d * n_in
      cols = jnp.einsum("...di,oi->...do", x_BxS[..., start:start + size].reshape(batch + (d, n_in)),
                        mat, precision=hi)
      out.append(cols.reshape(batch + (d * n_out,)))
    else:
      size = n_in
      out.append(jnp.einsum("...i,oi->...o", x_BxS[..., start:start + size], mat, precision=hi))
    start += size
  return jnp.concatenate(out, -1)


def expand(spec, n_frequencies: int, emitted_BxTr: jax.Array) -> jax.Array:
  """float32[B, T'] emitted values -> float32[B, T] in θ's layout (identity
  when M = 0). Token-indexed tensors are Φ times their coefficients; every
  other entry is copied in order."""
  if not n_frequencies:
    return emitted_BxTr
  p = plan(spec, n_frequencies)
  return _transform(p, p.basis_NxK, emitted_BxTr)


def reduce(spec, n_frequencies: int, raw_BxT: jax.Array) -> jax.Array:
  """float32[B, T] in θ's layout -> float32[B, T']: each token tensor's
  least-squares coefficients on the basis (Φ⁺ times its token rows; Φ⁺ =
  Φᵀ / N, the columns being orthogonal at unit RMS), every other entry copied
  in order. `expand` inverts it on the basis's span; identity when M = 0."""
  if not n_frequencies:
    return raw_BxT
  p = plan(spec, n_frequencies)
  return _transform(p, p.basis_NxK.T / p.basis_NxK.shape[0], raw_BxT)


def project(spec, n_frequencies: int, raw_BxT: jax.Array) -> jax.Array:
  """float32[B, T] -> float32[B, T]: every token tensor replaced by its
  least-squares fit on the basis, every other entry unchanged (identity when
  M = 0)."""
  if not n_frequencies:
    return raw_BxT
  return expand(spec, n_frequencies, reduce(spec, n_frequencies, raw_BxT))
