"""Tests of neuroprog.analysis.clock on planted clocks and trajectories."""

import numpy as np
import pytest

from neuroprog.analysis import clock
from neuroprog.programs import layout
from neuroprog import tasks
from neuroprog.tasks import addmod

V, D = 98, 16


def planted_clock(p, f, noise, seed=0, orientation=1):
  rng = np.random.default_rng(seed)
  basis = np.linalg.qr(rng.normal(size=(D, D)))[0]
  ang = orientation * 2 * np.pi * f * np.arange(V) / p + 0.7
  w = 3.0 * (np.cos(ang)[:, None] * basis[0] + np.sin(ang)[:, None] * basis[1])
  return w + noise * rng.normal(size=(V, D)) + 2.0 * basis[2]


@pytest.mark.parametrize("p,f,orientation", [(83, 7, 1), (47, 13, -1), (23, 1, 1)])
def test_planted_clock_is_recovered(p, f, orientation):
  fit = clock.embedding_pca(planted_clock(p, f, 0.3, orientation=orientation), p)
  assert fit.frequency == f
  assert fit.score > 0.95
  assert fit.r2 > 0.9
  assert fit.points.shape == (p, 2)
  assert fit.explained_variance[0] + fit.explained_variance[1] > 0.8


def test_exact_clock_scores_one():
  fit = clock.embedding_pca(planted_clock(31, 5, 0.0), 31, k=3)
  assert fit.score == pytest.approx(1.0, abs=1e-9)
  assert fit.r2 == pytest.approx(1.0, abs=1e-9)
  assert fit.points.shape == (31, 3)


def test_random_embedding_scores_low():
  rng = np.random.default_rng(1)
  for p in (23, 83):
    fit = clock.embedding_pca(rng.normal(size=(V, D)), p)
    assert fit.score < 0.5


def test_embedding_pca_rejects_bad_input():
  with pytest.raises(ValueError, match="p=99"):
    clock.embedding_pca(np.zeros((V, D)), 99)
  with pytest.raises(ValueError, match="shape"):
    clock.embedding_pca(np.zeros(V), 5)
  with pytest.raises(ValueError, match="k=1"):
    clock.embedding_pca(np.ones((V, D)), 5, k=1)


def planted_trajectory(a, b, c, noise=0.0, seed=0):
  rng = np.random.default_rng(seed)
  direction = rng.normal(size=V * D)
  direction /= np.linalg.norm(direction)
  second = rng.normal(size=V * D)
  second -= second @ direction * direction
  second /= np.linalg.norm(second)
  base = rng.normal(size=V * D)
  out = {}
  for p in addmod.PRIMES:
    pc1 = a * np.cos(b / p + c)
    w = base + pc1 * direction + 0.5 * np.sin(p / 7.0) * second
    out[p] = (w + noise * rng.normal(size=V * D)).reshape(V, D)
  return out


def test_planted_trajectory_constants_are_recovered():
  w = planted_trajectory(23.43, 5.672, 3.631, noise=0.01)
  fit = clock.global_trajectory(w, ood=(23, 47, 61, 83, 89), num_components=2)
  assert fit.r2_train > 0.99 and fit.r2_ood > 0.99 and fit.r2_all > 0.99
  # PCA's sign is arbitrary: a PC1 of -PC gives (a, b, c + pi).
  assert fit.a == pytest.approx(23.43, rel=0.02)
  assert fit.b == pytest.approx(5.672, rel=0.02)
  phase = np.angle(np.exp(1j * (fit.c - 3.631)))
  assert min(abs(phase), abs(abs(phase) - np.pi)) < 0.05
  primes = np.array(addmod.PRIMES, float)
  planted = 23.43 * np.cos(5.672 / primes + 3.631)
  assert abs(np.corrcoef(planted, fit.cos_value(primes))[0, 1]) > 0.999
  assert fit.is_ood.sum() == 5


def test_cosine_fit_recovers_constants_exactly():
  primes = np.array(addmod.PRIMES, float)
  for a, b, c in [(23.43, 5.672, 3.631), (2.0, 40.0, 1.0), (0.5, 1.5, 5.9)]:
    y = a * np.cos(b / primes + c)
    fa, fb, fc, fd = clock.fit_cosine(primes, y + 1.5)
    assert fd == pytest.approx(1.5, abs=1e-4)
    assert fa == pytest.approx(a, rel=1e-4)
    assert fb == pytest.approx(b, rel=1e-4)
    assert np.angle(np.exp(1j * (fc - c))) == pytest.approx(0.0, abs=1e-3)


def test_global_trajectory_rejects_bad_input():
  w = planted_trajectory(1.0, 5.0, 0.0)
  with pytest.raises(ValueError, match="101"):
    clock.global_trajectory(w, ood=(101,))
  with pytest.raises(ValueError, match="rows"):
    clock.global_trajectory(w, rows="some")
  bad = dict(w)
  bad[2] = np.zeros((V - 1, D))
  with pytest.raises(ValueError, match="p=2"):
    clock.global_trajectory(bad)


def test_valid_rows_zero_unreadable_rows():
  w = planted_trajectory(1.0, 5.0, 0.0)
  primes, x, shape = clock.flatten_embeddings(w, rows="valid")
  m = x[list(primes).index(7)].reshape(shape)
  assert np.all(m[7:-1] == 0) and np.all(m[:7] == w[7][:7])
  assert np.all(m[-1] == w[7][-1])


def test_closed_form_reconstruction_and_program_accuracy():
  task = tasks.get("addmod")
  spec = task.spec
  entry = layout.entries_by_name(spec)["embed/tok"]
  w = planted_trajectory(4.0, 5.672, 3.631)
  fit = clock.global_trajectory(w, ood=(83,), num_components=2)
  # With the true PC coordinates the top-2 rebuild is exact (the planted
  # W_E lives in a 2-D affine subspace).
  np.testing.assert_allclose(clock.pca_embedding(fit, 83, 2), w[83], atol=1e-8)
  err_cf = np.abs(clock.closed_form_embedding(fit, 83, 1) - w[83]).max()
  assert err_cf < 0.6  # PC2 (amplitude 0.5) is left out with k=1
  theta = np.zeros(layout.num_params(spec), np.float32)
  swapped = clock.replace_embedding(spec, theta, w[83])
  np.testing.assert_allclose(
      swapped[entry.offset:entry.offset + entry.size].reshape(entry.shape),
      w[83].astype(np.float32))
  # All-zero θ: every logit is 0, argmax picks class 0, right for the
  # pairs with (a + b) mod p == 0, i.e. exactly 1/p of them.
  assert clock.program_accuracy(task, theta, 5) == pytest.approx(1 / 5)
  acc = clock.closed_form_program(fit, {5: theta}, task, ks=(1, 2))
  assert set(acc[5]) == {"synthesized", "pca_k1", "pca_k2", "closed_k1", "closed_k2"}
  assert acc[5]["synthesized"] == pytest.approx(1 / 5)
  with pytest.raises(ValueError, match="shape"):
    clock.replace_embedding(spec, theta, np.zeros((3, 3)))


def test_program_errors_split_wrapping_pairs_and_offsets(monkeypatch):
  """program_errors on planted predictions: right wherever a + b < p, off by
  +2 where the sum wraps (the error of the k = (p - 1) / 2 family), and one
  non-wrapping pair off by -1; p = 11."""
  task, p = tasks.get("addmod"), 11
  x, y, valid = (np.asarray(v) for v in task.all_pairs(p))
  wraps = x[:, 0] + x[:, 1] >= p
  pred = np.where(wraps, (y + 2) % p, y)
  first_no_wrap = np.flatnonzero(valid & ~wraps)[3]
  pred[first_no_wrap] = (y[first_no_wrap] - 1) % p
  monkeypatch.setattr(clock, "_all_pairs_predict", lambda t: lambda theta, q: pred)
  e = clock.program_errors(task, np.zeros(3, np.float32), p)
  n_wrap, n_no_wrap = p * (p - 1) // 2, p * (p + 1) // 2
  assert e.wrap_error == 1.0 and e.no_wrap_error == pytest.approx(1 / n_no_wrap)
  assert e.offsets == {2: n_wrap, -1: 1}
  assert e.accuracy == pytest.approx(1 - (n_wrap + 1) / p ** 2)
