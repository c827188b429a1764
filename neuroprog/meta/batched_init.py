"""Normal initialisers whose draws are batched into a few kernels.

Why: XLA:CPU compiles one threefry kernel per `jax.random.normal` call, and
Meta-GNN's default `net.init` makes dozens of draws, so compiling init was
dominated by those kernels (`benchmarks/bench_init.py` times both ways;
BUILD_NOTES.md, "Meta-learners"). Inside
`batched(...)`, a `normal(std)` initialiser records its key and shape and
returns a placeholder; afterwards the recorded draws come from a few vmapped
calls (one per group of sizes whose padding to the group's largest stays
under 16 MB), and each tensor takes the prefix of its row.

The values are bit-identical to `std * jax.random.normal(key, shape)`
(tested): with the partitionable threefry (JAX's default), the draw of a
flat vector of n' >= n elements starts with the draw of any shape of n
elements; and the factors sqrt(2) and std are applied after the slice, in
jax.random.normal's order, so XLA folds them exactly as in the plain draw.
Where that does not hold (the older non-partitionable threefry, another PRNG
implementation, raw uint32 keys), `batched` draws each tensor on its own.

Works under jit and vmap (the training loop vmaps init over seeds). Not for
initialisers called inside flax's lifted transforms (nn.scan, nn.vmap): their
placeholders would belong to an inner trace; no neuroprog module uses them.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any, Callable

import jax
from jax.extend import core as jax_core
import jax.numpy as jnp
import numpy as np

_RECORDING: list[list["_Draw"]] = []


@dataclasses.dataclass(eq=False)
class _Draw:
  placeholder: Any      # the array the initialiser returned
  key: Any              # typed PRNG key array, shape []
  shape: tuple
  dtype: Any
  std: float


def normal(std: float) -> Callable:
  """A flax initialiser: (key, shape, dtype=float32) -> std * N(0, 1) draws.

  Outside `batched` it is exactly `std * jax.random.normal(key, shape,
  dtype)`; inside, the draw is deferred and batched (module docstring).
  """
  def init(key, shape, dtype=jnp.float32):
    shape = tuple(int(s) for s in shape)
    if _RECORDING and _batchable(key):
      placeholder = jnp.zeros(shape, dtype)
      _RECORDING[-1].append(_Draw(placeholder, key, shape, dtype, std))
      return placeholder
    return std * jax.random.normal(key, shape, dtype)
  return init


def _batchable(key) -> bool:
  if not jax.config.jax_threefry_partitionable:
    return False
  if not jax.dtypes.issubdtype(getattr(key, "dtype", None), jax.dtypes.prng_key):
    return False
  return str(jax.random.key_impl(key)) == "threefry2x32" and key.shape == ()


@contextlib.contextmanager
def _record():
  draws: list[_Draw] = []
  _RECORDING.append(draws)
  try:
    yield draws
  finally:
    _RECORDING.pop()


# Padding allowance of one kernel, in elements (16 MB of float32): a group's
# rows are as long as its largest draw, and the padding beyond the real
# elements may not exceed this.
_SLACK = 1 << 22


def _groups(sizes: list[int]) -> list[list[int]]:
  """Indices grouped so that each group is one kernel: largest first, a draw
  joins the open group while rows x width - real elements <= _SLACK."""
  order = sorted(range(len(sizes)), key=lambda i: -sizes[i])
  groups, real = [], 0
  for i in order:
    if groups:
      width = sizes[groups[-1][0]]
      if (len(groups[-1]) + 1) * width - (real + sizes[i]) <= _SLACK:
        groups[-1].append(i)
        real += sizes[i]
        continue
    groups.append([i])
    real = sizes[i]
  return groups


def _standard_normal_rows(keys, width, dtype):
  """erf_inv of uniform(-1, 1) draws, [K, width]: jax.random.normal's draw
  before its final sqrt(2) factor (jax/_src/random, `_normal_real`)."""
  lo = np.nextafter(np.array(-1., dtype), np.array(0., dtype), dtype=dtype)
  hi = np.array(1., dtype)
  u = jax.vmap(lambda k: jax.random.uniform(k, (width,), dtype, lo, hi))(keys)
  return jax.lax.erf_inv(u)


def batched(init_fn: Callable, *args, **kwargs):
  """init_fn(*args, **kwargs) with its `normal` draws batched.

  init_fn is typically a flax `module.init`; the result is its pytree with
  every placeholder replaced by its draw. Pure; works under jit and vmap.
  Raises RuntimeError if a recorded placeholder does not come back in the
  result exactly once (an initialiser whose output the module transformed
  before storing it), rather than return a wrong tree.
  """
  with _record() as draws:
    out = init_fn(*args, **kwargs)
  if not draws:
    return out
  by_dtype: dict[str, list[int]] = {}
  for i, dr in enumerate(draws):
    by_dtype.setdefault(np.dtype(dr.dtype).name, []).append(i)
  value = {}
  for members in by_dtype.values():
    sizes = [int(np.prod(draws[i].shape)) for i in members]
    for group in _groups(sizes):
      idx = [members[g] for g in group]
      width = sizes[group[0]]
      rows = _standard_normal_rows(jnp.stack([draws[i].key for i in idx]), width,
                                   draws[idx[0]].dtype)
      for j, i in enumerate(idx):
        dr = draws[i]
        z = rows[j, :int(np.prod(dr.shape))].reshape(dr.shape)
        # The factors in jax.random.normal's order, after the slice, so that
        # XLA folds sqrt(2) and std exactly as in the unbatched draw.
        value[id(dr.placeholder)] = dr.std * jax.lax.mul(np.array(np.sqrt(2), z.dtype), z)
  seen = []

  def swap(leaf):
    got = value.get(id(leaf))
    if got is None:
      return leaf
    seen.append(id(leaf))
    return got

  out = jax.tree_util.tree_map(swap, out)
  if sorted(seen) != sorted(value):
    raise RuntimeError(
        f"batched_init: {len(value)} deferred draws, {len(seen)} found in the "
        "result; an initialiser's output was transformed before it was stored.")
  return out


def random_bits_calls(fn: Callable, *args) -> int:
  """How many random-bits draws (threefry kernels) tracing fn(*args) makes.

  Counts every call site in the jaxpr, nested ones included (a printed
  jaxpr shows a repeated sub-jaxpr only once, so counting text undercounts).
  A diagnostic for `batched`: Meta-GNN's default `net.init` on SUMFIRST makes
  28 draws, under `batched` one.
  """
  def count(jaxpr):
    n = 0
    for eqn in jaxpr.eqns:
      n += eqn.primitive.name == "random_bits"
      for value in eqn.params.values():
        for sub in value if isinstance(value, (tuple, list)) else (value,):
          if isinstance(sub, jax_core.ClosedJaxpr):
            n += count(sub.jaxpr)
          elif isinstance(sub, jax_core.Jaxpr):
            n += count(sub)
    return n
  return count(jax.make_jaxpr(fn)(*args).jaxpr)
