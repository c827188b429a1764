"""Parameterized 1D-ARC families: jittable generators and reference solvers.

A grid is one row of colours 0..9 (0 is the background). An intent is a
`(family, parameter)` tuple, parameter None for families without one.

| family       | parameter (domain)    | rule (reference solver)                                  |
|--------------|-----------------------|----------------------------------------------------------|
| flip         | None                  | reverse every bar (maximal run of non-zero cells)         |
| move_right   | k in 1..5             | shift every cell k cells right (cells pushed off drop)    |
| move_left    | k in 1..5             | shift every cell k cells left                             |
| recolor      | colour in 1..9        | every non-zero cell takes the colour                      |
| fill         | None                  | fill between consecutive pairs of coloured endpoints      |
| hollow       | None                  | keep the two end cells of every bar of length >= 3        |
| mirror       | None                  | reflect every cell across the single pivot cell (colour 9)|
| denoise      | None                  | keep only the longest bar(s); noise cells are isolated    |
| scale        | k in 2..4             | stretch every bar k times from its start                  |

Generators draw inputs with the statistics of the public benchmark where it
has the family (lengths, bar lengths, colours): move 7..30 cells, bars 3..26,
colours 1..8, at least 3 free cells after the bar (more for k > 2); flip
9..32 cells, bars 3..16, colours 1..9, a head cell of a second colour at the
bar's left end; fill 8..31 cells, spans 3..26, colours 1..8. Families absent
from the shared data use lengths 7..32 (denoise 12..32).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

N_COLOURS = 10
PAD = N_COLOURS          # token 10 pads a grid to the model's max_len
MAX_LEN = 33             # model maximum (default Seq2SeqSpec.max_len)
PIVOT = 9                # mirror's pivot colour

FAMILIES = ("flip", "move_right", "move_left", "recolor", "fill", "hollow",
            "mirror", "denoise", "scale")
PARAM_DOMAIN = {
    "flip": None, "move_right": tuple(range(1, 6)),
    "move_left": tuple(range(1, 6)), "recolor": tuple(range(1, 10)),
    "fill": None, "hollow": None, "mirror": None, "denoise": None,
    "scale": tuple(range(2, 5)),
}
DEFAULT_OOD = (("move_right", 3), ("move_left", 3), ("recolor", 4),
               ("recolor", 7), ("scale", 3))


def check_intent(intent):
  """Canonical (family, parameter) or ValueError naming the domain."""
  if not isinstance(intent, (tuple, list)) or len(intent) != 2:
    raise ValueError(
        f"arc1d: an intent is a (family, parameter) pair, got {intent!r}; "
        f"families: {list(FAMILIES)}.")
  family, param = intent
  if family not in FAMILIES:
    raise ValueError(
        f"arc1d: unknown family {family!r}; allowed: {list(FAMILIES)}.")
  domain = PARAM_DOMAIN[family]
  if domain is None:
    if param is not None:
      raise ValueError(f"arc1d: family {family!r} takes no parameter "
                       f"(use None), got {param!r}.")
    return (family, None)
  if isinstance(param, bool) or not isinstance(param, (int, np.integer)) \
      or int(param) not in domain:
    raise ValueError(
        f"arc1d: parameter {param!r} of {family!r} is outside its domain; "
        f"allowed: {domain[0]}..{domain[-1]}.")
  return (family, int(param))


def all_intents():
  out = []
  for f in FAMILIES:
    dom = PARAM_DOMAIN[f]
    out.extend([(f, None)] if dom is None else [(f, k) for k in dom])
  return tuple(out)


# ---------------------------------------------------------------------------
# Reference solvers: numpy, 1-D int grids of any length.


def check_grid(grid, where="grid") -> np.ndarray:
  """A 1-D int64 array of colours 0..9, or ValueError naming the problem."""
  arr = np.asarray(grid, dtype=object) if not isinstance(grid, np.ndarray) else grid
  if arr.ndim != 1:
    raise ValueError(f"{where}: expected one row of cells, got shape {arr.shape}.")
  if arr.dtype == object or not np.issubdtype(arr.dtype, np.integer):
    bad = [c for c in arr.tolist()
           if isinstance(c, bool) or not isinstance(c, (int, np.integer))]
    if bad:
      raise ValueError(f"{where}: cells must be integers, got {bad[0]!r}.")
  arr = arr.astype(np.int64)
  bad = arr[(arr < 0) | (arr >= N_COLOURS)]
  if bad.size:
    raise ValueError(f"{where}: colour {int(bad[0])} is outside 0..9.")
  return arr


def _runs(g):
  """(start, stop) of every maximal run of non-zero cells."""
  nz = np.r_[0, (g != 0).astype(np.int8), 0]
  edges = np.diff(nz)
  return list(zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)))


def reference(intent, grid) -> np.ndarray:
  """Applies the rule of `intent` to one grid (any length); returns int64[L]."""
  family, k = check_intent(intent)
  g = check_grid(grid)
  n = len(g)
  out = np.zeros_like(g)
  if family == "flip":
    out = g.copy()
    for s, e in _runs(g):
      out[s:e] = g[s:e][::-1]
  elif family == "move_right":
    out[k:] = g[:max(n - k, 0)]
  elif family == "move_left":
    out[:max(n - k, 0)] = g[k:]
  elif family == "recolor":
    out = np.where(g != 0, k, 0)
  elif family == "fill":
    nz = np.flatnonzero(g)
    out = g.copy()
    for a, b in zip(nz[0::2], nz[1::2]):
      out[a:b + 1] = g[a]
  elif family == "hollow":
    out = g.copy()
    for s, e in _runs(g):
      if e - s >= 3:
        out[s + 1:e - 1] = 0
  elif family == "mirror":
    pivots = np.flatnonzero(g == PIVOT)
    if len(pivots) != 1:
      raise ValueError(f"mirror: expected exactly one pivot cell (colour "
                       f"{PIVOT}), found {len(pivots)}.")
    q = pivots[0]
    out[q] = PIVOT
    for i in np.flatnonzero((g != 0) & (g != PIVOT)):
      j = 2 * q - i
      if 0 <= j < n:
        out[j] = g[i]
  elif family == "denoise":
    runs = _runs(g)
    if runs:
      longest = max(e - s for s, e in runs)
      for s, e in runs:
        if e - s == longest:
          out[s:e] = g[s:e]
  elif family == "scale":
    for s, e in _runs(g):
      stretched = np.repeat(g[s:e], k)
      out[s:s + len(stretched)] = stretched[:n - s]
  return out


# ---------------------------------------------------------------------------
# Generators: jittable, one example per call, grids padded to MAX_LEN.


def _uint(key, lo, hi):
  """Uniform int in [lo, hi] (inclusive) for traced bounds, hi >= lo."""
  return lo + jnp.floor(jax.random.uniform(key) * (hi - lo + 1)).astype(jnp.int32)


# numpy, not jnp: importing the library must not start a JAX backend (device
# settings such as jax_num_cpu_devices or jax.distributed come after import).
_I = np.arange(MAX_LEN, dtype=np.int32)


def _bar(s, b):
  return (_I >= s) & (_I < s + b)


def _move(key, k, right):
  ks = jax.random.split(key, 4)
  gap = jnp.maximum(3, k + 1)
  n = _uint(ks[0], jnp.maximum(7, 3 + gap), 30)
  b = _uint(ks[1], 3, jnp.minimum(26, n - gap))
  if right:
    s = _uint(ks[2], 0, n - gap - b)
    s_out = s + k
  else:
    s = _uint(ks[2], gap, n - b)
    s_out = s - k
  c = _uint(ks[3], 1, 8)
  return n, c * _bar(s, b), c * _bar(s_out, b)


def _gen_flip(key, k):
  del k
  ks = jax.random.split(key, 5)
  n = _uint(ks[0], 9, 32)
  b = _uint(ks[1], 3, jnp.minimum(16, n - 1))
  s = _uint(ks[2], 0, n - 1 - b)
  head = _uint(ks[3], 1, 9)
  body = 1 + (head - 1 + _uint(ks[4], 1, 8)) % 9
  bar = _bar(s, b)
  x = jnp.where(_I == s, head, jnp.where(bar, body, 0))
  y = jnp.where(_I == s + b - 1, head, jnp.where(bar, body, 0))
  return n, x, y


def _gen_move_right(key, k):
  return _move(key, k, right=True)


def _gen_move_left(key, k):
  return _move(key, k, right=False)


def _gen_recolor(key, k):
  ks = jax.random.split(key, 7)
  n = _uint(ks[0], 8, 32)
  h = n // 2
  b1 = _uint(ks[1], 1, h - 2)
  s1 = _uint(ks[2], 0, h - 1 - b1)
  b2 = _uint(ks[3], 1, n - h - 1)
  s2 = _uint(ks[4], h, n - 1 - b2)
  c1, c2 = _uint(ks[5], 1, 9), _uint(ks[6], 1, 9)
  bar1, bar2 = _bar(s1, b1), _bar(s2, b2)
  x = jnp.where(bar1, c1, 0) + jnp.where(bar2, c2, 0)
  return n, x, k * (bar1 | bar2)


def _gen_fill(key, k):
  del k
  ks = jax.random.split(key, 4)
  n = _uint(ks[0], 8, 31)
  b = _uint(ks[1], 3, jnp.minimum(26, n - 1))
  s = _uint(ks[2], 0, n - 1 - b)
  c = _uint(ks[3], 1, 8)
  return n, c * ((_I == s) | (_I == s + b - 1)), c * _bar(s, b)


def _gen_hollow(key, k):
  del k
  ks = jax.random.split(key, 4)
  n = _uint(ks[0], 7, 32)
  b = _uint(ks[1], 3, jnp.minimum(26, n - 1))
  s = _uint(ks[2], 0, n - 1 - b)
  c = _uint(ks[3], 1, 8)
  return n, c * _bar(s, b), c * ((_I == s) | (_I == s + b - 1))


def _gen_mirror(key, k):
  del k
  ks = jax.random.split(key, 6)
  b = _uint(ks[0], 2, 6)
  g = _uint(ks[1], 0, 3)
  n = _uint(ks[2], jnp.maximum(9, 2 * (b + g) + 1), 32)
  q = _uint(ks[3], b + g, n - 1 - b - g)
  left, right = _bar(q - g - b, b), _bar(q + g + 1, b)
  on_left = jax.random.bernoulli(ks[4])
  c = _uint(ks[5], 1, 8)
  pivot = jnp.where(_I == q, PIVOT, 0)
  x = pivot + c * jnp.where(on_left, left, right)
  y = pivot + c * jnp.where(on_left, right, left)
  return n, x, y


def _gen_denoise(key, k):
  del k
  ks = jax.random.split(key, 5)
  n = _uint(ks[0], 12, 32)
  b = _uint(ks[1], 4, jnp.minimum(12, n - 4))
  s = _uint(ks[2], 0, n - b)
  c = _uint(ks[3], 1, 8)
  bar = _bar(s, b)
  far = (_I < s - 1) | (_I > s + b)       # not touching the bar
  cand = (jax.random.uniform(ks[4], (MAX_LEN,)) < 0.2) & far & (_I < n)
  left_cand = jnp.concatenate([jnp.zeros(1, bool), cand[:-1]])
  noise = cand & ~left_cand               # no two noise cells side by side
  return n, c * (bar | noise), c * bar


def _gen_scale(key, k):
  ks = jax.random.split(key, 4)
  n = _uint(ks[0], 8, 32)
  b = _uint(ks[1], 1, jnp.minimum(4, (n - 1) // k))
  s = _uint(ks[2], 0, n - 1 - b * k)
  c = _uint(ks[3], 1, 8)
  return n, c * _bar(s, b), c * _bar(s, b * k)


_GENERATORS = tuple(globals()[f"_gen_{f}"] for f in FAMILIES)


def generate_one(key, family_id, param):
  """One padded example: (x int32[MAX_LEN], y int32[MAX_LEN]). Jittable.

  family_id indexes FAMILIES; param is the family's parameter (0 if none).
  """
  n, x, y = jax.lax.switch(family_id, _GENERATORS, key, param)
  valid = _I < n
  return (jnp.where(valid, x, PAD).astype(jnp.int32),
          jnp.where(valid, y, PAD).astype(jnp.int32))
