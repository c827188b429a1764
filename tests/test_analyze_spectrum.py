"""experiments.analyze_spectrum and clock.frequency_power: planted spectra by
value, the interpolation moduli of the ADDMOD split, and a run on a tiny
workdir that synthesizes no OOD prime."""
import jax.numpy as jnp
import numpy as np
import pytest

import conftest

from experiments import analyze_spectrum
from neuroprog import synthesis
from neuroprog.analysis import clock
from neuroprog.run import seeds as seeds_lib


def test_frequency_power_finds_planted_frequencies():
  p = 31
  a = np.arange(98)[:, None]
  w = np.concatenate([np.cos(2 * np.pi * 3 * a / p), 0.5 * np.sin(2 * np.pi * 3 * a / p),
                      np.full_like(a, 7.0, dtype=float)], 1)
  share = clock.frequency_power(w, p)
  assert share.shape == (15,)
  np.testing.assert_allclose(share[2], 1.0, atol=1e-12)   # k = 3; the constant column is removed
  # (-1)^a cos(pi a / p) lives at k = (p - 1) / 2 alone.
  half = (-1.0) ** a * np.cos(np.pi * a / p)
  np.testing.assert_allclose(clock.frequency_power(half, p)[-1], 1.0, atol=1e-12)
  # Two columns at k = 1 and k = 5 with powers 4 : 1.
  two = np.concatenate([2 * np.cos(2 * np.pi * a / p), np.cos(2 * np.pi * 5 * a / p)], 1)
  np.testing.assert_allclose(clock.frequency_power(two, p)[[0, 4]], [0.8, 0.2], atol=1e-12)
  with pytest.raises(ValueError, match=r"int p in 3..V; got shape \(98, 1\) and p=99"):
    clock.frequency_power(half, 99)


def test_interpolation_moduli_skip_every_gap_with_an_ood_prime():
  train = (2, 3, 5, 7, 11, 13, 17, 19, 29, 31, 37, 41, 43, 59, 67, 73, 79, 97)
  known = train + (53, 71)
  got = analyze_spectrum.interpolation_moduli(known, (23, 47, 61, 83, 89))
  assert got == [9, 15, 33, 35, 39, 55, 57, 69, 75, 77]
  # Without OOD primes the gaps around 23, 47, 61 and 83/89 count too.
  assert analyze_spectrum.interpolation_moduli(known + (23, 47, 61, 83, 89), ()) == [
      9, 15, 21, 25, 27, 33, 35, 39, 45, 49, 51, 55, 57, 63, 65, 69, 75, 77, 81, 85, 87,
      91, 93, 95]


@pytest.fixture(scope="module")
def addmod_workdir(tmp_path_factory):
  return conftest.train_tiny_addmod(str(tmp_path_factory.mktemp("addmod_spectrum")),
                                    seeds=2, checkpoint_every=2)


def test_analysis_of_a_tiny_workdir(addmod_workdir, monkeypatch):
  seen = []
  original = clock.program_accuracy
  monkeypatch.setattr(clock, "program_accuracy",
                      lambda task, theta, m: seen.append(m) or original(task, theta, m))
  r = analyze_spectrum.analyze(addmod_workdir, "meta_mlp", step=2, primes=[53, 97])
  run = synthesis.load_run(addmod_workdir, "meta_mlp", 2)
  assert r["step"] == 2 and r["primes"] == [53, 97] and list(r["seeds"]) == [0, 1]
  # 83 and 89 are OOD here: the gap 79..97 is skipped, and no OOD prime is
  # synthesized or scored.
  assert r["moduli"] == [9, 15, 21, 25, 27, 33, 35, 39, 45, 49, 51, 55, 57, 63, 65, 69, 75,
                         77]
  assert sorted(set(seen)) == r["moduli"] and not {83, 89} & set(seen)
  for seed in (0, 1):
    top = r["seeds"][seed]["top"]
    assert set(top) == {53, 97} and len(top[53]) == 2 and 1 <= top[53][0][0] <= 26
    assert top[53][0][1] >= top[53][1][1]
    # 4 steps of training: about chance, 1/m, on every modulus.
    assert r["seeds"][seed]["moduli_mean"] < 0.3
    # The fit at each shown prime is its program's exact match on all p^2 pairs.
    params = seeds_lib.take(run.params_S, [0, 1].index(seed))
    for p in (53, 97):
      theta = np.asarray(run.model.apply(params, jnp.asarray(run.task.features([p]))))[0]
      assert r["seeds"][seed]["fit"][p] == pytest.approx(round(original(run.task, theta, p), 4),
                                                         abs=1e-4)
      e = r["seeds"][seed]["errors"][p]
      assert sum(e["offsets"].values()) <= round((1 - r["seeds"][seed]["fit"][p]) * p * p)
  assert "| 0 | " in analyze_spectrum.markdown(r)
  assert f"| 0 | {r['seeds'][0]['fit'][53]:.3f} (" in analyze_spectrum.markdown(r)
  with pytest.raises(ValueError, match=r"--primes \[83\] are not training or validation"):
    analyze_spectrum.analyze(addmod_workdir, "meta_mlp", primes=[83])
  with pytest.raises(ValueError, match=r"no checkpoint of 'meta_mlp' at step 3; it has \[2, 4\]"):
    analyze_spectrum.analyze(addmod_workdir, "meta_mlp", step=3)
