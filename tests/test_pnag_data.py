"""NAS-Bench-201 tables: the shared CSV, the official-API conversion, errors."""
import numpy as np
import pytest

from neuroprog.pnag import data, spaces
from tests.conftest import require_shared

ARCH1 = ("|nor_conv_3x3~0|+|nor_conv_3x3~0|avg_pool_3x3~1|+|skip_connect~0|"
         "nor_conv_3x3~1|skip_connect~2|")
ARCH0 = ("|avg_pool_3x3~0|+|nor_conv_1x1~0|skip_connect~1|+|nor_conv_1x1~0|"
         "skip_connect~1|skip_connect~2|")
HEADER = ("index,arch_str,cifar10-test,cifar10-val,cifar100-test,cifar100-val,"
          "imagenet16-120-test,imagenet16-120-val")


@pytest.fixture(scope="module")
def table():
  path = require_shared("nas-bench-201/nb201_hp12_accuracy.csv")
  return data.load_nb201(str(path))


def test_shared_csv_loads_in_index_order(table):
  space = spaces.get("nb201")
  assert len(table) == 15625
  assert table.archs == tuple(space.canonical(a) for a in space.enumerate())
  assert table.archs[1] == ARCH1 and table.index_of(ARCH1) == 1
  assert table.index_of(space.from_string(ARCH0)) == 0
  assert table.accuracy("cifar10", "test")[1] == pytest.approx(88.22)
  assert table.accuracy("imagenet16-120", "val")[0] == pytest.approx(18.4667)
  assert table.accuracy("cifar10", "test").max() == pytest.approx(89.16)
  ops, adj = table.encodings
  o, a = space.encode_batch(table.arch_tuples[:50])
  np.testing.assert_array_equal(ops[:50], o)
  np.testing.assert_array_equal(adj[:50], a)
  assert table.datasets == data.DATASETS


def test_percentile(table):
  acc = table.accuracy("cifar10", "test")
  assert table.percentile("cifar10", "test", acc.max() + 1) == 1.0
  assert table.percentile("cifar10", "test", acc.min()) == 0.0


def _write(tmp_path, lines, name="t.csv"):
  p = tmp_path / name
  p.write_text("\n".join(lines) + "\n")
  return str(p)


def _row(i, arch, v=50.0):
  return f"{i},{arch}," + ",".join([str(v)] * 6)


def test_small_csv_sorted_by_index(tmp_path):
  t = data.load_nb201(_write(tmp_path, [HEADER, _row(1, ARCH1, 60), _row(0, ARCH0, 40)]))
  assert t.archs == (ARCH0, ARCH1)
  np.testing.assert_allclose(t.accuracy("cifar100", "val"), [40, 60])


def test_csv_errors_name_file_row_and_field(tmp_path):
  with pytest.raises(ValueError, match="does not exist"):
    data.load_nb201(str(tmp_path / "missing.csv"))
  with pytest.raises(ValueError, match="missing columns \\['arch_str'\\]"):
    data.load_nb201(_write(tmp_path, ["index,arch,cifar10-test", "0,x,1"]))
  with pytest.raises(ValueError, match="unknown column 'mnist-test'"):
    data.load_nb201(_write(tmp_path, ["index,arch_str,mnist-test", f"0,{ARCH0},1"]))
  bad = ARCH1.replace("nor_conv_3x3~0|+", "conv9~0|+", 1)
  with pytest.raises(ValueError, match="row 3, field 'arch_str'.*conv9"):
    data.load_nb201(_write(tmp_path, [HEADER, _row(0, ARCH0), _row(1, bad)]))
  with pytest.raises(ValueError, match="row 2, field 'cifar10-val': 'n/a'"):
    data.load_nb201(_write(tmp_path, [HEADER, f"0,{ARCH0},1,n/a,1,1,1,1"]))
  with pytest.raises(ValueError, match="index 0 appears twice \\(rows \\[2, 3\\]\\)"):
    data.load_nb201(_write(tmp_path, [HEADER, _row(0, ARCH0), _row(0, ARCH1)]))
  with pytest.raises(ValueError, match="appears twice"):
    data.load_nb201(_write(tmp_path, [HEADER, _row(0, ARCH0), _row(1, ARCH0)]))
  with pytest.raises(ValueError, match="row 2: 3 fields"):
    data.load_nb201(_write(tmp_path, [HEADER, f"0,{ARCH0},1"]))


def test_table_accuracy_errors():
  t = data.NB201Table([ARCH0], {("cifar10", "val"): np.array([1.0])})
  with pytest.raises(ValueError, match="'mnist'"):
    t.accuracy("mnist", "val")
  with pytest.raises(ValueError, match="'train'"):
    t.accuracy("cifar10", "train")
  with pytest.raises(ValueError, match="no cifar100-test"):
    t.accuracy("cifar100", "test")
  with pytest.raises(ValueError, match="is not in"):
    t.index_of(ARCH1)


class FakeAPI:
  """The documented surface of the official NAS-Bench-201 / NATS-Bench APIs."""

  def __init__(self):
    self.archs = [ARCH0, ARCH1]

  def __len__(self):
    return 2

  def arch(self, i):
    return self.archs[i]

  def get_more_info(self, i, dataset, hp="12", is_random=True):
    assert hp == "200" and is_random is False
    base = {"cifar10-valid": 10, "cifar10": 20, "cifar100": 30, "ImageNet16-120": 40}[dataset]
    info = {"valid-accuracy": base + i + 0.5, "test-accuracy": base + i}
    if dataset == "cifar10-valid":
      info.pop("test-accuracy")
    return info


def test_official_api_conversion():
  t = data.load_nb201("NAS-Bench-201-v1_1.pth", api=FakeAPI())
  assert t.archs == (ARCH0, ARCH1)
  np.testing.assert_allclose(t.accuracy("cifar10", "val"), [10.5, 11.5])
  np.testing.assert_allclose(t.accuracy("cifar10", "test"), [20, 21])
  np.testing.assert_allclose(t.accuracy("cifar100", "val"), [30.5, 31.5])
  np.testing.assert_allclose(t.accuracy("imagenet16-120", "test"), [40, 41])


def test_official_file_without_package_is_a_clear_error(tmp_path):
  import importlib.util
  for pkg in ("nats_bench", "nas_201_api"):
    if importlib.util.find_spec(pkg) is not None:
      pytest.skip(f"{pkg} is installed here")
  p = tmp_path / "NAS-Bench-201-v1_1.pth"
  p.write_bytes(b"\0")
  with pytest.raises(ValueError, match="pip install nats_bench"):
    data.load_nb201(str(p))
