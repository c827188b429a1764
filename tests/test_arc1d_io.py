import json

import jax
import numpy as np
import pytest

from neuroprog.tasks import arc1d

from conftest import require_shared

MAPPED_IN_SHARED = ("1d_move_1p", "1d_move_2p", "1d_flip", "1d_fill")


def test_save_load_round_trip(tmp_path):
  tasks_ = [arc1d.generate(jax.random.key(i), ("move_right", 2), name=f"t{i}")
            for i in range(3)]
  arc1d.save(tasks_, tmp_path / "fam")
  back = arc1d.load(tmp_path / "fam")
  assert [t.name for t in back] == ["t0", "t1", "t2"]
  for a, b in zip(tasks_, back):
    for (x1, y1), (x2, y2) in zip(a.pairs(), b.pairs()):
      np.testing.assert_array_equal(x1, x2)
      np.testing.assert_array_equal(y1, y2)
  one = arc1d.save(tasks_[0], tmp_path / "one.json")[0]
  obj = json.loads(one.read_text())
  assert len(obj["train"]) == 3 and len(obj["test"]) == 1
  assert isinstance(obj["train"][0]["input"][0], list)


def test_encode_pads_and_rejects_long_grids():
  enc = arc1d.encode([[1, 2], [0, 0, 3]])
  assert enc.shape == (2, 33) and enc[0, 2] == arc1d.PAD and enc[1, 2] == 3
  with pytest.raises(ValueError, match="grid 1 has 40 cells.*max_len = 33"):
    arc1d.encode([[1], [0] * 40])


@pytest.mark.parametrize("content, match", [
    ("{not json", r"bad\.json: not valid JSON"),
    ('{"test": []}', r"bad\.json: missing field 'train'"),
    ('{"train": [{"input": [[0, 1]], "output": [[0, 1]]}]}', "missing field 'test'"),
    ('{"train": [{"input": [[0, 1]], "output": [[0, 1, 2]]}], "test": [{"input": [[0]], "output": [[0]]}]}',
     r"train\[0\]: input has 2 cells, output 3"),
    ('{"train": [{"input": [[0, 11]], "output": [[0, 1]]}], "test": [{"input": [[0]], "output": [[0]]}]}',
     r"train\[0\]\.input: colour 11"),
    ('{"train": [{"input": [[0, 1], [1, 0]], "output": [[0, 1]]}], "test": [{"input": [[0]], "output": [[0]]}]}',
     r"train\[0\]\.input: a grid must be a list holding one row"),
    ('{"train": [{"input": [[0, "a"]], "output": [[0, 1]]}], "test": [{"input": [[0]], "output": [[0]]}]}',
     r"must be integers, got 'a'"),
    ('{"train": [{"output": [[0, 1]]}], "test": []}', r"train\[0\]: a pair needs 'input'"),
])
def test_bad_files_name_file_and_field(tmp_path, content, match):
  f = tmp_path / "bad.json"
  f.write_text(content)
  with pytest.raises(ValueError, match=match):
    arc1d.load(f)


def test_intent_for():
  assert arc1d.intent_for("1d_move_1p") == ("move_right", 1)
  assert arc1d.intent_for("/data/1d-arc/1d_move_3p/") == ("move_right", 3)
  assert arc1d.intent_for("1d_denoising_1c") == ("denoise", None)
  with pytest.raises(ValueError, match="'1d_recolor_oe' has no matching"):
    arc1d.intent_for("1d_recolor_oe")
  with pytest.raises(ValueError, match="not an official"):
    arc1d.intent_for("2d_stuff")


@pytest.mark.parametrize("folder", MAPPED_IN_SHARED)
def test_reference_solves_every_real_task(folder):
  path = require_shared(f"1d-arc/{folder}")
  real = arc1d.load(path)
  assert len(real) == 50
  intent = arc1d.intent_for(folder)
  solved = [np.array_equal(arc1d.reference(intent, x), y)
            for t in real for x, y in t.pairs()]
  assert len(solved) == 200 and all(solved)


def _stats(pairs):
  lengths, bars, colours = [], [], set()
  for x, _ in pairs:
    nz = np.flatnonzero(x)
    lengths.append(len(x))
    bars.append(nz[-1] - nz[0] + 1)
    colours |= set(x[nz].tolist())
  return np.array(lengths), np.array(bars), colours


@pytest.mark.parametrize("folder", MAPPED_IN_SHARED)
def test_generated_tasks_match_real_statistics(folder):
  real = arc1d.load(require_shared(f"1d-arc/{folder}"))
  rl, rb, rc = _stats([p for t in real for p in t.pairs()])
  gen = arc1d.generate(jax.random.key(0), arc1d.intent_for(folder), n_train=2000, n_test=0)
  gl, gb, gc = _stats(gen.train)
  assert (gl.min(), gl.max()) == (rl.min(), rl.max()), "length range"
  assert (gb.min(), gb.max()) == (rb.min(), rb.max()), "bar-length range"
  assert gc == rc, "colours"
  assert abs(gl.mean() - rl.mean()) / rl.mean() < 0.15
  assert abs(gb.mean() - rb.mean()) / rb.mean() < 0.35
