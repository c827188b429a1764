"""Validity, uniqueness and novelty on hand-made sample lists."""
import pytest

from neuroprog.pnag import metrics, spaces

SP = spaces.get("nb201")


def test_definitions_on_a_hand_made_list():
  a, b, c = SP.from_code(0), SP.from_code(1), SP.from_code(2)
  m = metrics.evaluate(SP, [a, a, b, None, c, None, None, c], {SP.canonical(a)})
  assert m.num_samples == 8 and m.num_valid == 5 and m.num_unique == 3 and m.num_novel == 2
  assert m.validity == 5 / 8 and m.uniqueness == 3 / 5 and m.novelty == 2 / 3


def test_darts_uniqueness_uses_the_canonical_string():
  sp = spaces.get("darts")
  g = sp.sample(0, 1)[0]
  swapped = g._replace(reduce=(g.reduce[1], g.reduce[0]) + g.reduce[2:])
  m = metrics.evaluate(sp, [g, swapped])
  assert m.uniqueness == 0.5 and m.novelty == 1.0


def test_nothing_valid_and_empty():
  m = metrics.evaluate(SP, [None, None])
  assert (m.validity, m.uniqueness, m.novelty) == (0.0, 0.0, 0.0)
  with pytest.raises(ValueError, match="no samples"):
    metrics.evaluate(SP, [])


def test_uniform_uniqueness_bound():
  assert metrics.expected_unique_uniform(15625, 1000) == pytest.approx(968.7, abs=0.05)
  assert metrics.expected_unique_uniform(10 ** 12, 1000) == pytest.approx(1000, abs=1e-3)
