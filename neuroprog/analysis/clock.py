"""The "clock" inside synthesized ADDMOD Transformers, and a closed form for p -> W_E.

Three analyses of the token-embedding matrices W_E(p) float32[V, D] that a
meta-learner generates for primes p (V = 98 token ids of the ADDMOD target:
values 0..96 and "="; D = d_model):

* `embedding_pca(W_E, p)`: PCA of the rows of tokens 0..p-1 and a clock score:
  do the tokens sit on a circle at angles 2*pi*f*a/p for one frequency f?
* `global_trajectory({p: W_E(p)}, ood=...)`: flatten every W_E(p), PCA across
  primes, and fit PC_j(p) = a * cos(b / p + c) (and a polynomial in 1/p) on the
  training primes; R^2 on training, OOD and all primes.
* `frequency_power(W_E, p)`: the share of W_E(p)'s power at each frequency of
  the token axis (which clock frequencies a program uses, and whether they
  move with p).
* `closed_form_program(fit, thetas, task)`: rebuild W_E(p) from the mean, the
  top principal directions and their fitted closed forms, put it into the
  synthesized θ(p), and measure exact match on all p^2 pairs (a, b).

Everything here is NumPy on the host (small matrices; no jit needed) except
the program evaluation, which runs the jitted `execute`. Plot helpers import
matplotlib lazily.
"""

from __future__ import annotations

import functools
from typing import Mapping, NamedTuple, Optional, Sequence

import numpy as np

TWO_PI = 2.0 * np.pi
B_MIN = 0.1   # lower bound of the b search in fit_cosine (see there)


class ClockFit(NamedTuple):
  """Result of `embedding_pca`.

  points: float64[p, k], the tokens 0..p-1 projected on the top k principal
    directions of their embedding rows.
  explained_variance: float64[k], fraction of the variance of the p rows that
    each direction explains.
  frequency: int, the f in 1..(p-1)//2 whose angles 2*pi*f*a/p best match the
    angles of the points in the PC1-PC2 plane (either orientation).
  score: float in [0, 1], mean resultant length of the residual angles
    angle(a) -/+ 2*pi*f*a/p at that f; 1.0 = a perfect clock (any rotation).
  r2: float, R^2 of the best-fitting circle to the 2-D points:
    1 - sum_a (|x_a - centre| - radius)^2 / sum_a |x_a - mean|^2.
  orientation: +1 if angles grow with a in the PC1-PC2 plane, -1 if they
    shrink (depends on the PCA's sign convention: a reflection flips it).
  centre: float64[2], radius: float, the fitted circle (for plotting).
  """
  points: np.ndarray
  explained_variance: np.ndarray
  frequency: int
  score: float
  r2: float
  orientation: int = 1
  centre: np.ndarray = np.zeros(2)
  radius: float = 0.0


class TrajectoryFit(NamedTuple):
  """Result of `global_trajectory`.

  a, b, c, d: the fit PC1(p) = a * cos(b / p + c) + d on the training
    primes, with a >= 0 and c in [0, 2*pi) (the paper's form: a = 23.43,
    b = 5.672, c = 3.631). The offset d is needed because PCs are centred over
    the primes: a planted a*cos(b/p + c) comes back as itself minus its mean.
  r2_train, r2_ood, r2_all: R^2 of that fit on the training primes, the OOD
    primes (nan if none) and all primes.
  primes: int[P], sorted primes; is_ood: bool[P].
  scores: float64[P, k], the PC coordinates of each flattened W_E(p).
  explained_variance: float64[k], variance ratio of each global PC.
  mean: float64[V*D], components: float64[k, V*D], the PCA basis;
    shape: (V, D) of one W_E.
  cos_params: float64[k, 4], (a, b, c, d) of the cosine fit of every PC;
    cos_r2: float64[k, 3], its (train, ood, all) R^2.
  poly_coeffs: float64[k, degree+1], polynomial-in-1/p fit of every PC
    (highest power first, np.polyval order); poly_r2: float64[k, 3].
  rows: the row handling used ("all" or "valid").
  """
  a: float
  b: float
  c: float
  d: float
  r2_train: float
  r2_ood: float
  r2_all: float
  primes: np.ndarray
  is_ood: np.ndarray
  scores: np.ndarray
  explained_variance: np.ndarray
  mean: np.ndarray
  components: np.ndarray
  shape: tuple
  cos_params: np.ndarray
  cos_r2: np.ndarray
  poly_coeffs: np.ndarray
  poly_r2: np.ndarray
  rows: str

  def cos_value(self, p, j: int = 0):
    """Fitted PC_j at prime(s) p: a_j * cos(b_j / p + c_j) + d_j."""
    a, b, c, d = self.cos_params[j]
    return a * np.cos(b / np.asarray(p, np.float64) + c) + d

  def poly_value(self, p, j: int = 0):
    return np.polyval(self.poly_coeffs[j], 1.0 / np.asarray(p, np.float64))


# -- per-prime clock ----------------------------------------------------------
def _pca(x_NxD: np.ndarray, k: int):
  """(mean[D], components[k, D], variance ratio[k], scores[N, k])."""
  mean = x_NxD.mean(0)
  xc = x_NxD - mean
  _, s, vt = np.linalg.svd(xc, full_matrices=False)
  total = float((s ** 2).sum())
  k = min(k, vt.shape[0])
  ratio = (s[:k] ** 2) / total if total > 0 else np.zeros(k)
  # Fix each direction's sign (largest |loading| positive) so results do not
  # flip between LAPACK builds.
  comps = vt[:k].copy()
  for j in range(k):
    if comps[j, np.argmax(np.abs(comps[j]))] < 0:
      comps[j] = -comps[j]
  return mean, comps, ratio, xc @ comps.T


def _fit_circle(xy_Nx2: np.ndarray):
  """Algebraic (Kasa) circle fit: (centre[2], radius, R^2)."""
  x, y = xy_Nx2[:, 0], xy_Nx2[:, 1]
  a = np.stack([x, y, np.ones_like(x)], 1)
  rhs = x ** 2 + y ** 2
  sol, *_ = np.linalg.lstsq(a, rhs, rcond=None)
  centre = sol[:2] / 2.0
  radius = float(np.sqrt(max(sol[2] + centre @ centre, 0.0)))
  resid = np.linalg.norm(xy_Nx2 - centre, axis=1) - radius
  total = float(((xy_Nx2 - xy_Nx2.mean(0)) ** 2).sum())
  r2 = 1.0 - float((resid ** 2).sum()) / total if total > 0 else 0.0
  return centre, radius, r2


def embedding_pca(W_E, p: int, k: int = 2) -> ClockFit:
  """PCA of the embedding rows of tokens 0..p-1 and their clock score.

  Args:
    W_E: float[V, D] token embeddings (V >= p; rows p.. are ignored).
    p: the modulus, an int >= 5 (frequencies 1..(p-1)//2 need p >= 5... p = 3
      has the single frequency 1 and is accepted too).
    k: number of principal directions to return, >= 2.

  Returns:
    ClockFit. The score uses the angles in the PC1-PC2 plane around the fitted
    circle's centre; the best of both orientations is kept.
  """
  w = np.asarray(W_E, np.float64)
  if w.ndim != 2:
    raise ValueError(f"W_E must be a matrix [V, D]; got shape {w.shape}.")
  if not isinstance(p, (int, np.integer)) or p < 3 or p > w.shape[0]:
    raise ValueError(f"p={p!r} must be an int in 3..{w.shape[0]} (the rows of "
                     f"W_E with shape {w.shape}).")
  if k < 2:
    raise ValueError(f"k={k} must be >= 2 (the clock lives in a plane).")
  _, _, ratio, pts = _pca(w[:p], k)
  centre, radius, r2 = _fit_circle(pts[:, :2])
  d = pts[:, :2] - centre
  ang = np.arctan2(d[:, 1], d[:, 0])
  tokens = np.arange(p)
  best = (-1.0, 1, 1)
  for f in range(1, (p - 1) // 2 + 1):
    for orient in (1, -1):
      resid = ang - orient * TWO_PI * f * tokens / p
      score = float(np.abs(np.exp(1j * resid).mean()))
      if score > best[0] + 1e-12:
        best = (score, f, orient)
  return ClockFit(points=pts, explained_variance=ratio, frequency=int(best[1]),
                  score=best[0], r2=float(r2), orientation=int(best[2]),
                  centre=centre, radius=radius)


def frequency_power(W_E, p: int) -> np.ndarray:
  """float64[(p - 1) // 2]: the share of the embedding power of tokens 0..p-1
  at each frequency k = 1..(p-1)//2 of the token axis (entry k - 1), summed
  over the D columns; the shares add to 1.

  The rows' mean over tokens is removed first (frequency 0); k and p - k carry
  the same power for real rows, so each k counts once. A clock at frequency f
  puts its power at k = f; k = (p - 1) / 2 is the row pattern (-1)^a cos(pi a
  / p), a sign flip on every token times a half-turn over the p tokens.
  """
  w = np.asarray(W_E, np.float64)
  if w.ndim != 2 or not isinstance(p, (int, np.integer)) or not 3 <= p <= w.shape[0]:
    raise ValueError(f"frequency_power needs W_E [V, D] and an int p in 3..V; got shape "
                     f"{w.shape} and p={p!r}.")
  rows = w[:p] - w[:p].mean(0)
  power = (np.abs(np.fft.fft(rows, axis=0)[1:(p - 1) // 2 + 1]) ** 2).sum(1)
  total = power.sum()
  return power / total if total > 0 else power


# -- trajectory across primes --------------------------------------------------
def _r2(y, yhat) -> float:
  y, yhat = np.asarray(y, np.float64), np.asarray(yhat, np.float64)
  if y.size == 0:
    return float("nan")
  ss = float(((y - y.mean()) ** 2).sum())
  res = float(((y - yhat) ** 2).sum())
  if ss <= 0:
    return 1.0 if res <= 1e-20 else float("-inf")
  return 1.0 - res / ss


def _cos_lstsq(inv_p, y, b):
  """For fixed b, the best (alpha, beta, d) of alpha*cos(b/p) + beta*sin(b/p) + d."""
  basis = np.stack([np.cos(b * inv_p), np.sin(b * inv_p), np.ones_like(inv_p)], 1)
  coef, *_ = np.linalg.lstsq(basis, y, rcond=None)
  return coef, float(((basis @ coef - y) ** 2).sum())


def fit_cosine(p, y, *, b_min: float = B_MIN, b_max: float = 300.0, restarts: int = 5):
  """Least squares fit of y = a * cos(b / p + c) + d.

  For a fixed b the model is linear in (a cos c, -a sin c, d), so the search is
  over b alone: a log-spaced grid on [b_min, b_max], then a bounded
  refinement around each of the `restarts` best local minima of the grid.
  When PC(p) is nearly linear in 1/p the optimum runs to b -> 0 with a -> inf
  (a cosine's linear regime); b_min stops it there, and a fit with b at b_min
  should be read as "linear in 1/p" (the polynomial fit says the same).

  Returns: (a >= 0, b > 0, c in [0, 2*pi), d).
  """
  from scipy import optimize  # pylint: disable=g-import-not-at-top
  inv_p = 1.0 / np.asarray(p, np.float64)
  y = np.asarray(y, np.float64)
  if inv_p.shape != y.shape or y.size < 4:
    raise ValueError(f"fit_cosine needs >= 4 matching (p, y) values; got "
                     f"{inv_p.shape} and {y.shape}.")
  grid = np.geomspace(b_min, b_max, 6000)
  sse = np.array([_cos_lstsq(inv_p, y, b)[1] for b in grid])
  local = [i for i in range(len(grid))
           if sse[i] <= sse[max(i - 1, 0)] and sse[i] <= sse[min(i + 1, len(grid) - 1)]]
  local = sorted(local, key=lambda i: sse[i])[:restarts]
  best_b, best_sse = grid[int(np.argmin(sse))], float(sse.min())
  for i in local:
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    res = optimize.minimize_scalar(lambda b: _cos_lstsq(inv_p, y, b)[1],
                                   bounds=(lo, hi), method="bounded",
                                   options={"xatol": 1e-10})
    if res.fun < best_sse:
      best_b, best_sse = float(res.x), float(res.fun)
  (alpha, beta, d), _ = _cos_lstsq(inv_p, y, best_b)
  a = float(np.hypot(alpha, beta))
  c = float(np.arctan2(-beta, alpha) % TWO_PI)
  return a, float(best_b), c, float(d)


def flatten_embeddings(W_E_by_p: Mapping[int, np.ndarray], rows: str = "all"):
  """(primes int[P], X float64[P, V*D], shape (V, D)).

  rows="all" flattens the whole generated matrix (the paper's choice: the
  meta-learner emits every row, and the rows p..96, which program p never
  reads, still move with p). rows="valid" zeroes the value rows p..V-2 first
  (keeping rows 0..p-1 and the final "=" row), so only rows the program can
  read enter the PCA.
  """
  if rows not in ("all", "valid"):
    raise ValueError(f"rows={rows!r}; allowed: 'all', 'valid'.")
  if len(W_E_by_p) < 3:
    raise ValueError(f"global_trajectory needs W_E for >= 3 primes; got "
                     f"{sorted(W_E_by_p)}.")
  primes = np.array(sorted(int(p) for p in W_E_by_p))
  mats = [np.asarray(W_E_by_p[p], np.float64) for p in primes]
  shape = mats[0].shape
  for p, m in zip(primes, mats):
    if m.shape != shape:
      raise ValueError(f"W_E for p={p} has shape {m.shape}; p={primes[0]} has "
                       f"{shape}. All must match.")
  if rows == "valid":
    mats = [np.concatenate([m[:p], np.zeros_like(m[p:-1]), m[-1:]])
            for p, m in zip(primes, mats)]
  return primes, np.stack([m.reshape(-1) for m in mats]), shape


def global_trajectory(W_E_by_p: Mapping[int, np.ndarray], ood: Sequence[int] = (),
                      *, num_components: int = 4, rows: str = "all",
                      pca_on: str = "all", poly_degree: int = 2) -> TrajectoryFit:
  """Global PCA of the flattened W_E(p) and closed-form fits of each PC.

  Args:
    W_E_by_p: {prime: float[V, D]}, the generated embeddings.
    ood: the OOD primes among them; fits use only the others.
    num_components: k principal components to keep and fit.
    rows: "all" | "valid", see `flatten_embeddings`.
    pca_on: "all" (the paper: one PCA over every prime) or "train" (PCA of the
      training primes only; OOD primes projected on that basis).
    poly_degree: degree of the alternative polynomial in 1/p.

  Returns: TrajectoryFit (PC1's cosine fit in a, b, c, r2_*).
  """
  if pca_on not in ("all", "train"):
    raise ValueError(f"pca_on={pca_on!r}; allowed: 'all', 'train'.")
  primes, x, shape = flatten_embeddings(W_E_by_p, rows)
  unknown = sorted(set(int(q) for q in ood) - set(primes.tolist()))
  if unknown:
    raise ValueError(f"ood primes {unknown} have no W_E; given primes "
                     f"{primes.tolist()}.")
  is_ood = np.isin(primes, np.asarray(list(ood), int))
  train = ~is_ood
  if train.sum() < 4:
    raise ValueError("global_trajectory needs >= 4 training (non-OOD) primes.")
  basis_rows = x if pca_on == "all" else x[train]
  mean, comps, ratio, _ = _pca(basis_rows, num_components)
  scores = (x - mean) @ comps.T
  k = comps.shape[0]
  cos_params = np.zeros((k, 4))
  cos_r2 = np.zeros((k, 3))
  poly = np.zeros((k, poly_degree + 1))
  poly_r2 = np.zeros((k, 3))
  inv_p = 1.0 / primes
  for j in range(k):
    y = scores[:, j]
    cos_params[j] = fit_cosine(primes[train], y[train])
    a, b, c, d = cos_params[j]
    yhat = a * np.cos(b * inv_p + c) + d
    cos_r2[j] = (_r2(y[train], yhat[train]), _r2(y[is_ood], yhat[is_ood]),
                 _r2(y, yhat))
    poly[j] = np.polyfit(inv_p[train], y[train], poly_degree)
    yp = np.polyval(poly[j], inv_p)
    poly_r2[j] = (_r2(y[train], yp[train]), _r2(y[is_ood], yp[is_ood]),
                  _r2(y, yp))
  a, b, c, d = cos_params[0]
  return TrajectoryFit(a=float(a), b=float(b), c=float(c), d=float(d),
                       r2_train=float(cos_r2[0, 0]), r2_ood=float(cos_r2[0, 1]),
                       r2_all=float(cos_r2[0, 2]), primes=primes, is_ood=is_ood,
                       scores=scores, explained_variance=ratio, mean=mean,
                       components=comps, shape=tuple(shape),
                       cos_params=cos_params, cos_r2=cos_r2, poly_coeffs=poly,
                       poly_r2=poly_r2, rows=rows)


def closed_form_embedding(fit: TrajectoryFit, p: int, k: Optional[int] = None,
                          form: str = "cos") -> np.ndarray:
  """W_E(p) float64[V, D] = mean + sum_{j<k} PC_j(p) * component_j, with PC_j(p)
  from the fitted closed form ("cos", or "poly" for the polynomial in 1/p).
  Works for any p, seen or not."""
  k = fit.components.shape[0] if k is None else k
  if not 1 <= k <= fit.components.shape[0]:
    raise ValueError(f"k={k} must be in 1..{fit.components.shape[0]} (the "
                     "fitted components).")
  if form not in ("cos", "poly"):
    raise ValueError(f"form={form!r}; allowed: 'cos', 'poly'.")
  value = fit.cos_value if form == "cos" else fit.poly_value
  coords = np.array([value(p, j) for j in range(k)])
  return (fit.mean + coords @ fit.components[:k]).reshape(fit.shape)


def pca_embedding(fit: TrajectoryFit, p: int, k: Optional[int] = None) -> np.ndarray:
  """W_E(p) rebuilt from its *true* top-k PC coordinates (no closed form):
  the best the closed form could do with k components."""
  k = fit.components.shape[0] if k is None else k
  i = int(np.searchsorted(fit.primes, p))
  if i >= len(fit.primes) or fit.primes[i] != p:
    raise ValueError(f"p={p} is not among the analysed primes {fit.primes.tolist()}.")
  return (fit.mean + fit.scores[i, :k] @ fit.components[:k]).reshape(fit.shape)


@functools.lru_cache(maxsize=None)
def _all_pairs_predict(task):
  """Jitted predictions int32[97^2] of θ on every pair of p, with the ADDMOD
  task's own inputs (`AddMod.all_pairs`, a fixed 97^2 batch, so every prime
  reuses one compilation) and its argmax over classes 0..p-1 (`predict`,
  whose equality with y is the task's exact match)."""
  import jax  # pylint: disable=g-import-not-at-top
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  from neuroprog import programs  # pylint: disable=g-import-not-at-top

  @jax.jit
  def run(theta_T, p):
    x, _, _ = task.all_pairs(p)
    logits = programs.execute(task.spec, theta_T, x)
    return task.predict(logits[None], jnp.reshape(p, (1, 1)))[0]
  return run


def _predictions(task, theta, p: int):
  """(pred, x, y, valid), numpy arrays over the 97^2 pair batch of p."""
  import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
  pred = np.asarray(_all_pairs_predict(task)(jnp.asarray(theta, jnp.float32), jnp.int32(p)))
  x, y, valid = (np.asarray(v) for v in task.all_pairs(p))
  return pred, x, y, valid


def program_accuracy(task, theta, p: int) -> float:
  """Exact match of the ADDMOD program θ float32[T] (for `task.spec`) on all
  p^2 pairs (a, b): the task's exact match, the argmax over logits 0..p-1 at
  the "=" position equals (a + b) mod p."""
  pred, _, y, valid = _predictions(task, theta, p)
  return float(((pred == y) & valid).sum() / valid.sum())


class ProgramErrors(NamedTuple):
  """Where an ADDMOD program fails on the p^2 pairs of p (`program_errors`)."""
  accuracy: float        # exact match over all pairs
  wrap_error: float      # share wrong among pairs with a + b >= p
  no_wrap_error: float   # share wrong among pairs with a + b < p
  offsets: dict          # {d: count} of wrong pairs by d = (prediction - y) mod p,
                         # written in -p//2..p//2, most common first


def program_errors(task, theta, p: int, top: int = 3) -> ProgramErrors:
  """Errors of the ADDMOD program θ float32[T] on all p^2 pairs: how often it
  is wrong where the sum wraps and where it does not, and by how much the
  wrong answers are off (a program at clock frequency k confuses y with the
  y + d whose phase 2 pi k d / p is nearest a full turn: d = ±1 at k = 1,
  ±2 at k = (p - 1) / 2)."""
  pred, x, y, valid = _predictions(task, theta, p)
  wraps = x[:, 0] + x[:, 1] >= p
  wrong = (pred != y) & valid
  d = (pred - y) % p
  d = np.where(d > p // 2, d - p, d)[wrong]
  values, counts = np.unique(d, return_counts=True)
  order = np.argsort(-counts, kind="stable")[:top]
  return ProgramErrors(
      accuracy=float(1.0 - wrong.sum() / valid.sum()),
      wrap_error=float(wrong[valid & wraps].mean()) if (valid & wraps).any() else 0.0,
      no_wrap_error=float(wrong[valid & ~wraps].mean()),
      offsets={int(values[i]): int(counts[i]) for i in order})


def reach(train_moduli: Sequence[int], p: int) -> int:
  """The largest training modulus below p (0 if none): the largest token value
  that a training modulus below p shows as an operand or an answer. A program
  for p uses the values reach..p-1 too, and in training only moduli above p
  show those, so the rows of W_E and of the unembedding for them are fitted
  at p's larger neighbours alone."""
  below = [int(m) for m in train_moduli if int(m) < p]
  return max(below) if below else 0


class ReachSplit(NamedTuple):
  """Exact match of an ADDMOD program on the pairs of p split at a reach r
  (`reach_split`)."""
  accuracy: float        # over all p^2 pairs
  within: float          # over pairs with a, b and y all <= r
  beyond: float          # over pairs with a, b or y > r (nan if there are none)
  beyond_share: float    # share of the p^2 pairs that are beyond r


def reach_split(pred, x, y, valid, r: int) -> ReachSplit:
  """`ReachSplit` of predictions pred int[M] against y int[M] for operands
  x int[M, >=2], over the rows marked valid bool[M] (numpy; the all-pairs
  batch of `task.all_pairs`)."""
  pred, x, y, valid = (np.asarray(v) for v in (pred, x, y, valid))
  right = pred == y
  beyond = (np.maximum(np.maximum(x[:, 0], x[:, 1]), y) > r) & valid
  within = valid & ~beyond
  return ReachSplit(
      accuracy=float(right[valid].mean()),
      within=float(right[within].mean()) if within.any() else float("nan"),
      beyond=float(right[beyond].mean()) if beyond.any() else float("nan"),
      beyond_share=float(beyond.sum() / valid.sum()))


def program_reach(task, theta, p: int, r: int) -> ReachSplit:
  """`reach_split` of the ADDMOD program θ float32[T] on all p^2 pairs."""
  return reach_split(*_predictions(task, theta, p), r)


def replace_embedding(spec, theta, W_E) -> np.ndarray:
  """θ float32[T] with its token-embedding tensor replaced by W_E [V, D]."""
  from neuroprog.programs import layout as layout_lib  # pylint: disable=g-import-not-at-top
  entry = layout_lib.entries_by_name(spec)["embed/tok"]
  w = np.asarray(W_E, np.float32)
  if w.shape != entry.shape:
    raise ValueError(f"W_E has shape {w.shape}; {type(spec).__name__} "
                     f"embed/tok has {entry.shape}.")
  out = np.array(theta, np.float32, copy=True)
  out[entry.offset:entry.offset + entry.size] = w.reshape(-1)
  return out


def closed_form_program(fit: TrajectoryFit, thetas: Mapping[int, np.ndarray], task,
                        *, ks: Sequence[int] = (1, 2, 4), form: str = "cos"):
  """Does the closed form alone still compute (a + b) mod p?

  For each prime p in `thetas` (the synthesized θ(p) float32[T] of the ADDMOD
  `task`'s target) this measures
  exact match on all p^2 pairs for: the synthesized program; the program with
  W_E(p) replaced by its own top-k PCA reconstruction; and with W_E(p)
  replaced by the closed-form reconstruction from k fitted components (every
  other tensor of θ(p) is kept as synthesized).

  Returns: {p: {"synthesized": acc, "pca_k{k}": acc, "closed_k{k}": acc}}.
  """
  out = {}
  spec = task.spec
  for p in sorted(int(q) for q in thetas):
    theta = np.asarray(thetas[p], np.float32)
    row = {"synthesized": program_accuracy(task, theta, p)}
    for k in ks:
      if k > fit.components.shape[0]:
        continue
      if p in fit.primes:
        row[f"pca_k{k}"] = program_accuracy(
            task, replace_embedding(spec, theta, pca_embedding(fit, p, k)), p)
      row[f"closed_k{k}"] = program_accuracy(
          task, replace_embedding(spec, theta, closed_form_embedding(fit, p, k, form)), p)
    out[p] = row
  return out


# -- plots ---------------------------------------------------------------------
def plot_clock(ax, fit: ClockFit, p: int, title: Optional[str] = None):
  """Draws the PC1-PC2 points of one W_E(p), labelled by token, and the
  fitted circle, on a matplotlib Axes."""
  pts = fit.points
  ax.scatter(pts[:, 0], pts[:, 1], c=np.arange(p), cmap="hsv", s=14)
  for a in range(p):
    ax.annotate(str(a), pts[a, :2], fontsize=5, ha="center", va="bottom")
  t = np.linspace(0, TWO_PI, 200)
  ax.plot(fit.centre[0] + fit.radius * np.cos(t),
          fit.centre[1] + fit.radius * np.sin(t), "k--", lw=0.7)
  ax.set_aspect("equal", adjustable="datalim")
  ax.set_title(title or f"p={p}: f={fit.frequency}, score={fit.score:.2f}, "
               f"R2={fit.r2:.2f}", fontsize=7)
  ax.tick_params(labelsize=5)


def plot_trajectory(ax, fit: TrajectoryFit, label: str = ""):
  """PC1 against p with the fitted a*cos(b/p + c); train and OOD marked."""
  p = fit.primes
  ax.scatter(p[~fit.is_ood], fit.scores[~fit.is_ood, 0], c="C0", label="train p")
  ax.scatter(p[fit.is_ood], fit.scores[fit.is_ood, 0], c="C3", marker="s",
             label="OOD p")
  grid = np.linspace(p.min(), p.max(), 400)
  ax.plot(grid, fit.cos_value(grid), "k-", lw=1,
          label=f"{fit.a:.2f} cos({fit.b:.3f}/p + {fit.c:.3f}) {fit.d:+.2f}, "
                f"R2 all={fit.r2_all:.3f}")
  ax.set_xlabel("p")
  ax.set_ylabel("PC1 of flattened W_E(p)")
  ax.set_title(label, fontsize=8)
  ax.legend(fontsize=6)
