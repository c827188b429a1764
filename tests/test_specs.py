import pytest

import neuroprog
from neuroprog import specs


def test_default_specs_have_paper_sizes():
  assert neuroprog.num_params(neuroprog.default_spec("sumfirst")) == 193
  addmod = neuroprog.default_spec("addmod")
  assert neuroprog.num_params(addmod) == 6049          # paper: 6,048
  assert addmod.vocab_size >= 97 + 1 and addmod.n_classes == 97   # all p < 100
  arc = neuroprog.default_spec("arc1d")
  assert abs(neuroprog.num_params(arc) - 17568) / 17568 < 0.01   # paper: 17,568
  assert arc.max_len >= 33


def test_specs_are_hashable_and_static():
  a = neuroprog.default_spec("addmod")
  b = neuroprog.default_spec("addmod")
  assert a == b and hash(a) == hash(b)
  assert {a: 1}[b] == 1
  assert a.d_head == 4


@pytest.mark.parametrize("make, match", [
    (lambda: specs.MLPSpec((10, 0, 1)), r"widths\[1\].*positive.*0"),
    (lambda: specs.MLPSpec((10,)), "at least input and output"),
    (lambda: specs.MLPSpec((10, 4, 1), activation="swish"), r"'swish'.*allowed.*relu"),
    (lambda: specs.TransformerSpec(vocab_size=10, seq_len=3, d_model=10, n_heads=4,
                                   d_mlp=8, n_classes=3), r"d_model=10.*n_heads=4.*\[1, 2, 5, 10\]"),
    (lambda: specs.TransformerSpec(vocab_size=10, seq_len=-3, d_model=8, n_heads=4,
                                   d_mlp=8, n_classes=3), r"seq_len.*-3"),
    (lambda: specs.TransformerSpec(vocab_size=10, seq_len=3, d_model=8, n_heads=4,
                                   d_mlp=8, n_classes=3, ln="middle"), r"'middle'.*pre"),
    (lambda: specs.Seq2SeqSpec(vocab_size=11, max_len=33, d_model=24, n_heads=5,
                               d_mlp=8), r"d_model=24.*n_heads=5"),
    (lambda: neuroprog.default_spec("sortfirst"), r"'sortfirst'.*sumfirst"),
])
def test_bad_specs_raise_naming_the_value(make, match):
  with pytest.raises(ValueError, match=match):
    make()
