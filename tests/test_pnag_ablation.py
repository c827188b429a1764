"""The SCC ablation driver: settings, config checks, table; a tiny run is slow."""
import json
import os

import pytest

from experiments.configs import pnag_scc_ablation, pnag_test
from experiments.pipelines import scc_ablation as ablation


def _tiny():
  """The tiny PNAG config as an ablation config: its values over the
  ablation's defaults (so decoding is plain unless set)."""
  values = {k: v for k, v in pnag_test.get_config().items() if k != "decode"}
  return ablation.default_config(**values)


def test_the_ablation_decodes_plainly_by_default():
  assert ablation.default_config(space="nb201").decode == "argmax"
  assert _tiny().decode == "argmax" and pnag_scc_ablation.get_config().decode == "argmax"


def test_default_settings_cover_every_scale():
  assert ablation.settings(pnag_scc_ablation.get_config()) == [0, 1, 2, 3, 4, 5, 6]
  assert ablation.settings(_tiny()) == [0, 1, 2, 3]


def test_bad_settings_and_keys():
  c = _tiny()
  c.scc_settings = (0, 5)
  with pytest.raises(ValueError, match="scc_settings=\\[0, 5\\].*0..3"):
    ablation.settings(c)
  c = _tiny()
  c.ae = dict(c.ae, scc_num_scales=2)
  with pytest.raises(ValueError, match="scc_num_scales"):
    ablation.settings(c)
  c = _tiny()
  c.sweep = 1
  with pytest.raises(ValueError, match="\\['sweep'\\]"):
    ablation.settings(c)


def test_markdown_labels_the_scales():
  res = {"space": "nb201", "scales": [1, 2, 4, 8],
         "rows": [{"scc_scales": 0, "validity": 0.5, "uniqueness": 1.0, "novelty": 0.25,
                   "heldout_reconstruction": 0.9},
                  {"scc_scales": 2, "validity": 1.0, "uniqueness": 0.5, "novelty": 0.5,
                   "heldout_reconstruction": 1.0}]}
  md = ablation.markdown(res)
  assert "| none | 50.0% | 100.0% | 25.0% | 90.0% |  |" in md
  assert "| first 2 (1, 2) | 100.0% | 50.0% | 50.0% | 100.0% |  |" in md
  # With several seeds: mean ± std, and the plain validity of every scale.
  row = {"scc_scales": 1, "seeds": [0, 1], "validity": 0.75, "validity_std": 0.25,
         "uniqueness": 1.0, "uniqueness_std": 0.0, "novelty": 0.5, "novelty_std": 0.1,
         "heldout_reconstruction": 1.0, "heldout_reconstruction_std": 0.0,
         "scale_validity": [0.5, 0.25, 0.75], "heldout_scale_reconstruction": [1.0, 0.5, 1.0]}
  md = ablation.markdown({"space": "nb201", "scales": [3, 5, 8], "rows": [row]})
  assert ("| first 1 (3) | 75.0% ± 25.0 | 100.0% ± 0.0 | 50.0% ± 10.0 | 100.0% ± 0.0 "
          "| 50.0 / 25.0 / 75.0 | 100.0 / 50.0 / 100.0 |") in md
  assert "plain validity per scale (n = 3, 5, 8)" in md
  assert "held-out reconstruction per scale (n = 3, 5, 8)" in md


def test_seeds():
  c = _tiny()
  assert ablation.seeds_of(c) == (0,)
  c.scc_seeds = (0, 1, 2)
  assert ablation.seeds_of(c) == (0, 1, 2) and ablation.settings(c) == [0, 1, 2, 3]
  c.scc_seeds = (1, 1)
  with pytest.raises(ValueError, match=r"config.scc_seeds=\[1, 1\] must be distinct ints"):
    ablation.seeds_of(c)


@pytest.mark.slow
def test_tiny_ablation_end_to_end(tmp_path):
  c = _tiny()
  c.scc_settings = (0, 3)
  out = ablation.run(c, str(tmp_path))
  assert [r["scc_scales"] for r in out["rows"]] == [0, 3]
  assert all(len(r["scale_validity"]) == 3 for r in out["rows"])
  assert all(len(r["heldout_scale_reconstruction"]) == 3 for r in out["rows"])
  for r in out["rows"]:
    for m in ablation.METRICS:
      assert 0.0 <= r[m] <= 1.0
  for f in ("results.json", "results.md", "scc_ablation.png"):
    assert os.path.getsize(tmp_path / f) > 0
  cfg0 = json.load(open(tmp_path / "scc_0" / "config.json"))
  assert cfg0["ae"]["scc_num_scales"] == 0
  assert cfg0["decode"] == "argmax"     # the ablation measures the plain generator
  # The two settings train different autoencoders.
  assert json.load(open(tmp_path / "scc_3" / "config.json"))["ae"]["scc_num_scales"] == 3


def test_report_rebuilds_the_table_from_finished_runs(tmp_path):
  c = _tiny()
  c.scc_settings, c.scc_seeds = (0, 2), (0, 1)
  (tmp_path / "config.json").write_text(json.dumps(c.to_dict()))
  for t in (0, 2):
    for seed in (0, 1):
      d = tmp_path / ablation.run_name(t, (0, 1), seed)
      d.mkdir()
      res = {"validity": 0.5 + 0.25 * seed, "uniqueness": 1.0, "novelty": 0.5,
             "heldout_reconstruction": 1.0, "scales": [3, 5, 8], "train_time_s": {},
             "scale_validity": [0.1 * t, 0.2, 0.5 + 0.25 * seed],
             "heldout_scale_reconstruction": [1.0, 0.5 * seed, 1.0]}
      (d / "results.json").write_text(json.dumps(res))
  out = ablation.report(str(tmp_path))
  assert [r["scc_scales"] for r in out["rows"]] == [0, 2]
  assert out["rows"][1]["validity"] == 0.625 and out["rows"][1]["validity_std"] == 0.125
  assert out["rows"][1]["scale_validity"] == [0.2, 0.2, 0.625]
  assert out["rows"][0]["heldout_scale_reconstruction"] == [1.0, 0.25, 1.0]
  assert "| first 2 (3, 5) | 62.5% ± 12.5" in (tmp_path / "results.md").read_text()
  os.remove(tmp_path / "scc_2_seed1" / "results.json")
  with pytest.raises(ValueError, match="setting 2, seed 1 has not finished"):
    ablation.report(str(tmp_path))
