"""Selection on validation intents: the grid, the choice, and no OOD evaluation."""
import json
import os

import numpy as np
import pytest

from experiments.configs import test as test_config
from experiments.pipelines import select
from neuroprog.train import loop


def test_parse_grid_values_and_errors():
  axes = select.parse_grid("learning_rates.meta_gnn=1e-3, 3e-4; "
                           "model_configs.meta_gnn.pe_features=ramp,sincos+ramp")
  assert axes == [("learning_rates.meta_gnn", [1e-3, 3e-4]),
                  ("model_configs.meta_gnn.pe_features", ["ramp", "sincos+ramp"])]
  with pytest.raises(ValueError, match="expected path=value1"):
    select.parse_grid("steps")
  with pytest.raises(ValueError, match="names a path twice"):
    select.parse_grid("steps=1;steps=2")
  with pytest.raises(ValueError, match=r"'stepz' is not a config key"):
    select.candidates(test_config.get_config(), select.parse_grid("stepz=1,2"))
  with pytest.raises(ValueError, match="Unknown config key 'widht' for meta_mlp"):
    select.candidates(test_config.get_config(),
                      select.parse_grid("model_configs.meta_mlp.widht=3"))
  cands = select.candidates(test_config.get_config(),
                            select.parse_grid("steps=10,20;learning_rates.meta_mlp=0.1"))
  assert [(o["steps"], c.steps, c.learning_rates["meta_mlp"]) for o, c in cands] == [
      (10, 10, 0.1), (20, 20, 0.1)]


def test_selection_needs_validation_intents(tmp_path):
  c = test_config.get_config()
  c.val_intents = ()
  with pytest.raises(ValueError, match="needs validation intents"):
    select.run(c, "steps=10", str(tmp_path))


def test_selection_chooses_on_validation_and_never_evaluates_ood(tmp_path, monkeypatch):
  c = test_config.get_config()
  c.steps = 20
  task = loop.build_task(c)
  evaluated = []
  original = loop.Trainer.evaluate

  def recording(self, params_S, intents, key):
    evaluated.extend(intents)
    return original(self, params_S, intents, key)
  monkeypatch.setattr(loop.Trainer, "evaluate", recording)
  # Nor are the OOD examples drawn for anything else (the heuristics' rows).
  drawn = []
  original_examples = loop.held_out_examples
  monkeypatch.setattr(loop, "held_out_examples",
                      lambda cfg, t, split: drawn.append(split) or original_examples(cfg, t, split))
  partial = []   # selection.json as it stands when the second candidate starts
  original_train = loop.train_model

  def train_and_peek(cfg, *args, **kwargs):
    if cfg.learning_rates["meta_mlp"] == 1e-9:
      partial.append(json.load(open(tmp_path / "selection.json")))
    return original_train(cfg, *args, **kwargs)
  monkeypatch.setattr(loop, "train_model", train_and_peek)
  out = select.run(c, "learning_rates.meta_mlp=3e-3,1e-9", str(tmp_path), ["meta_mlp"])
  assert not partial[0]["complete"] and len(partial[0]["rows"]) == 1
  assert out["complete"]
  assert evaluated and not set(evaluated) & set(task.ood_intents)
  assert "ood" not in drawn
  assert set(evaluated) == set(task.train_intents) | set(task.val_intents)
  rows = out["rows"]
  assert [r["overrides"]["learning_rates.meta_mlp"] for r in rows] == [3e-3, 1e-9]
  # 3e-3 is the test config's own rate: that grid point is the configured row.
  assert [r["configured"] for r in rows] == [True, False]
  for r in rows:
    assert "ood" not in r and set(r["val"]) == {"n=6"}
    np.testing.assert_allclose(r["val_score"], np.mean(r["val"]["n=6"]))
    # Per training intent too, whose means are the ID means; the markdown
    # names the intent fitted worst.
    assert set(r["id"]) == {task.format_intent(i) for i in task.train_intents}
    np.testing.assert_allclose(np.mean([r["id"][k] for k in r["id"]], 0), r["id_mean"],
                               rtol=1e-6)
    worst = min(r["id"], key=lambda k: np.mean(r["id"][k]))
    assert select.lowest_id(r) == f"{worst} {np.mean(r['id'][worst]):.3f}"
  assert select.lowest_id({"id": {"p=2": [1.0, 1.0], "p=97": [0.8, 0.9]}}) == "p=97 0.850"
  assert select.lowest_id({"id": {}}) == "-"
  # A learning rate of 1e-9 leaves the model at its initialisation.
  assert rows[0]["val_score"] != rows[1]["val_score"]
  best = max(rows, key=lambda r: r["val_score"])["candidate"]
  assert out["chosen"]["meta_mlp"]["candidate"] == best
  saved = json.load(open(tmp_path / "selection.json"))
  text = open(tmp_path / "selection.md").read()
  assert saved["chosen"] == out["chosen"] and "OOD intents were not evaluated" in text
  assert "| lowest ID intent |" in text and select.lowest_id(rows[0]) in text
  # The baseline's validation figure beside the table, from the validation examples only.
  assert drawn == ["val"]
  h = loop.evaluate_heuristics(c, task, splits=("val",))["nearest training intent's rule"]
  assert out["heuristics_val"] == {"nearest training intent's rule": h["val_mean"]}
  assert f"nearest training intent's rule {h['val_mean']:.3f}." in text
  assert "INCOMPLETE" not in text
  assert os.path.exists(tmp_path / "candidate_01" / "config.json")
  # A rerun resumes every candidate from its checkpoints and chooses the same.
  again = select.run(c, "learning_rates.meta_mlp=3e-3,1e-9", str(tmp_path), ["meta_mlp"])
  assert again["chosen"] == out["chosen"]
  with pytest.raises(ValueError, match="different config"):
    select.run(c, "learning_rates.meta_mlp=3e-3", str(tmp_path), ["meta_mlp"])


def test_candidates_are_rematched_to_the_base_capacity():
  c = test_config.get_config()
  task = loop.build_task(c)
  base_n = loop.create_model(c, task, "meta_gnn").num_params()
  cands = select.candidates(
      c, select.parse_grid("model_configs.meta_gnn.grouping=orbit,role;"
                           "model_configs.meta_gnn.intent_weight=0.25"))
  widths, counts = [], []
  for _, cfg in cands:
    widths.append(cfg.model_configs.meta_gnn.d)
    counts.append(loop.create_model(cfg, task, "meta_gnn").num_params())
  # Role tying shares the encoders across inputs: fewer parameters per unit
  # of width, so the width grows to keep the base config's count.
  assert widths[1] > widths[0]
  for n in counts:
    assert abs(n - base_n) <= 0.1 * base_n, (n, base_n)
  # A grid that fixes the width is left alone; so is one that keeps the count.
  fixed = select.candidates(c, select.parse_grid("model_configs.meta_gnn.grouping=role;"
                                                 "model_configs.meta_gnn.d=8"))
  assert fixed[0][1].model_configs.meta_gnn.d == 8
  same = select.candidates(c, select.parse_grid("model_configs.meta_gnn.intent_weight=0.25"))
  assert same[0][1].model_configs.meta_gnn.d == c.model_configs.meta_gnn.d
  # Off: the width stays whatever the count.
  off = select.candidates(c, select.parse_grid("model_configs.meta_gnn.grouping=role"),
                          rematch=False)
  assert off[0][1].model_configs.meta_gnn.d == c.model_configs.meta_gnn.d


def test_a_trained_workdir_is_rescored_only_for_evaluation_keys_of_its_own_config(tmp_path):
  from neuroprog.run import workdir as workdir_lib  # pylint: disable=g-import-not-at-top
  c = test_config.get_config()
  trained = str(tmp_path / "trained")
  workdir_lib.prepare(trained, c)
  with pytest.raises(ValueError, match=r"grid paths \['steps'\] change training; with a "
                     r"trained workdir the grid may name only evaluation keys"):
    select.run(c, "steps=10,20", str(tmp_path / "sel"), trained=trained)
  other = test_config.get_config()
  other.steps = c.steps + 1
  with pytest.raises(ValueError, match=r"holds a run of another config \(steps: "):
    select.run(other, "refine_steps=0,5", str(tmp_path / "sel"), trained=trained)


def test_grids_joined_by_a_bar_are_a_union_of_candidates():
  grids = select.parse_grids("refine_steps=0 | refine_steps=50;refine_learning_rate=1e-3,3e-3")
  assert grids == [[("refine_steps", [0])],
                   [("refine_steps", [50]), ("refine_learning_rate", [1e-3, 3e-3])]]
  assert select.all_axes(grids) == [("refine_steps", [0, 50]),
                                    ("refine_learning_rate", [1e-3, 3e-3])]
  from experiments.configs import arc1d_examples_test  # pylint: disable=g-import-not-at-top
  c = arc1d_examples_test.get_config()
  cands = [o for g in grids for o, _ in select.candidates(c, g)]
  assert cands == [{"refine_steps": 0}, {"refine_steps": 50, "refine_learning_rate": 1e-3},
                   {"refine_steps": 50, "refine_learning_rate": 3e-3}]
  with pytest.raises(ValueError, match="names no setting"):
    select.parse_grids("refine_steps=0 | ")


def test_the_id_and_val_score_reads_the_id_intents_and_can_choose_otherwise(tmp_path,
                                                                          monkeypatch):
  from experiments.configs import arc1d_examples_test  # pylint: disable=g-import-not-at-top
  from neuroprog.run import workdir as workdir_lib  # pylint: disable=g-import-not-at-top
  c = arc1d_examples_test.get_config()
  trained = str(tmp_path / "trained")
  workdir_lib.prepare(trained, c)
  asked = []
  # Refinement that lifts validation (0.3 -> 0.5) but costs the ID intents
  # (0.9 -> 0.5): validation alone takes it, the mean of both does not.
  table = {0: (0.9, 0.3), 50: (0.5, 0.5)}

  def fake(cfg, task, name, workdir, splits):
    asked.append(tuple(splits))
    id_acc, val_acc = table[cfg.refine_steps]
    return {"num_params": 1, "seeds": [0, 1], "steps": cfg.steps, "val": {"v": [val_acc] * 2},
            "id_mean": [id_acc] * 2 if "id" in splits else [], "val_mean": [val_acc] * 2}
  monkeypatch.setattr(loop, "evaluate_trained", fake)
  model = c.models[0]
  by_val = select.run(c, "refine_steps=0,50", str(tmp_path / "v"), [model], trained=trained)
  assert asked == [("val",)] * 2 and by_val["chosen"][model]["overrides"] == {"refine_steps": 50}
  assert by_val["rows"][0]["id_score"] is None
  asked.clear()
  both = select.run(c, "refine_steps=0,50", str(tmp_path / "b"), [model], trained=trained,
                    score="id+val")
  assert asked == [("id", "val")] * 2
  assert both["chosen"][model] == {"candidate": 0, "overrides": {"refine_steps": 0},
                                   "val_score": 0.3, "score": pytest.approx(0.6)}
  text = open(tmp_path / "b" / "selection.md").read()
  assert "Chosen on the mean of ID and val" in text and "**0.600**" in text
  with pytest.raises(ValueError, match=r"score='ood'; allowed: \['val', 'id\+val'\]"):
    select.run(c, "refine_steps=0", str(tmp_path / "x"), [model], trained=trained, score="ood")


def test_a_grid_key_a_model_overrides_is_refused(tmp_path):
  from experiments.configs import arc1d_examples  # pylint: disable=g-import-not-at-top
  c = arc1d_examples.get_config()   # Meta-gMLP has its own refine gate
  c.refine_by_model.meta_gmlp.gate = "held_out"
  with pytest.raises(ValueError, match=r"grid path 'refine_gate' does not reach meta_gmlp: "
                     r"config.refine_by_model.meta_gmlp.gate='held_out' overrides it; name "
                     r"'refine_by_model.meta_gmlp.gate'"):
    select.run(c, "refine_gate=support_wrong", str(tmp_path / "sel"), models=["meta_gmlp"],
               trained=str(tmp_path / "none"))
  assert not os.path.exists(tmp_path / "sel")
  # The per-model path reaches it, and a model without its own value is reached.
  select.check_not_shadowed(c, select.all_axes(select.parse_grids(
      "refine_by_model.meta_gmlp.gate=support_wrong")), ["meta_gmlp"])
  select.check_not_shadowed(c, [("refine_steps", [0])], ["meta_gmlp"])
  # ... and is an evaluation key a trained workdir may be re-scored with.
  from neuroprog.run import workdir as workdir_lib  # pylint: disable=g-import-not-at-top
  workdir_lib.prepare(str(tmp_path / "trained"), c)
  select._check_trained(c, [("refine_by_model.meta_gmlp.gate", ["support_wrong"])],  # pylint: disable=protected-access
                        str(tmp_path / "trained"))


def test_a_config_wide_rate_or_warmup_a_model_overrides_is_refused(tmp_path):
  """addmod_cpu.py gives Meta-GNN its own rate, warm-up and optimizer: the
  config-wide keys would not reach it, so a grid over them is refused before
  any training, while the per-model paths, and models without an entry, are
  reached."""
  from experiments.configs import addmod_cpu  # pylint: disable=g-import-not-at-top
  c = addmod_cpu.get_config()
  for path, per_model, grid_value in (("warmup_steps", "warmup_steps_by_model", 500),
                                      ("learning_rate", "learning_rates", 500),
                                      ("optimizer", "optimizer_by_model", "adam")):
    value = c[per_model]["meta_gnn"]
    with pytest.raises(ValueError, match=rf"grid path '{path}' does not reach meta_gnn: "
                       rf"config.{per_model}.meta_gnn={value!r} overrides it; name "
                       rf"'{per_model}.meta_gnn'"):
      select.run(c, f"{path}={grid_value}", str(tmp_path / "sel"), models=["meta_gnn"])
    # Models with no entry of their own (the library row always) are reached.
    without = [m for m in c.models if m not in c[per_model]]
    assert "meta_gnn@library" in without
    select.check_not_shadowed(c, [(path, [grid_value])], without)
    select.check_not_shadowed(c, [(f"{per_model}.meta_gnn", [grid_value])], ["meta_gnn"])
  # Meta-MLP's own intent jitter shadows the config-wide one the same way.
  with pytest.raises(ValueError, match=r"grid path 'intent_jitter' does not reach meta_mlp: "
                     r"config.intent_jitter_by_model.meta_mlp=0.1 overrides it"):
    select.run(c, "intent_jitter=0.25", str(tmp_path / "sel"), models=["meta_mlp"])
  select.check_not_shadowed(c, [("intent_jitter", [0.25])], ["meta_gnn", "direct"])
  assert not os.path.exists(tmp_path / "sel")
  # The per-model path gives the candidates it names.
  axes = select.all_axes(select.parse_grids("warmup_steps_by_model.meta_gnn=-1,1000"))
  configs = [cfg for _, cfg in select.candidates(c, axes)]
  assert [loop.warmup_steps(cfg, "meta_gnn") for cfg in configs] == [200, 1000]
  assert [loop.warmup_steps(cfg, "meta_mlp") for cfg in configs] == [200, 200]


def test_the_setting_as_configured_is_a_row_and_keeps_a_tie(tmp_path, monkeypatch):
  from experiments.configs import arc1d_examples_test  # pylint: disable=g-import-not-at-top
  from neuroprog.run import workdir as workdir_lib  # pylint: disable=g-import-not-at-top
  c = arc1d_examples_test.get_config()
  assert c.refine_steps == 0          # the configured value, absent from the grids below
  trained = str(tmp_path / "trained")
  workdir_lib.prepare(trained, c)
  steps_seen = []
  # 0 steps (configured) ties 50 steps on validation; 5 steps is worse.
  table = {0: 0.4, 5: 0.2, 50: 0.4}

  def fake(cfg, task, name, workdir, splits):
    steps_seen.append(cfg.refine_steps)
    v = table[cfg.refine_steps]
    return {"num_params": 1, "seeds": [0, 1], "steps": cfg.steps, "val": {"v": [v] * 2},
            "id_mean": [], "val_mean": [v] * 2}
  monkeypatch.setattr(loop, "evaluate_trained", fake)
  model = c.models[0]
  out = select.run(c, "refine_steps=5,50", str(tmp_path / "a"), [model], trained=trained)
  # The configured setting is re-scored last, and the tie keeps it.
  assert steps_seen == [5, 50, 0]
  assert [r["configured"] for r in out["rows"]] == [False, False, True]
  assert out["chosen"][model] == {"candidate": 2, "overrides": {}, "val_score": 0.4,
                                  "score": 0.4}
  text = open(tmp_path / "a" / "selection.md").read()
  assert f"| {model} (as configured, chosen) | - |" in text
  assert f"| {model} | 50 |" in text
  # A grid candidate equal to the config is that row: nothing is added.
  steps_seen.clear()
  out = select.run(c, "refine_steps=50,0", str(tmp_path / "b"), [model], trained=trained)
  assert steps_seen == [50, 0]
  assert [r["configured"] for r in out["rows"]] == [False, True]
  assert out["chosen"][model]["candidate"] == 1
  # Asked not to, it is not added.
  steps_seen.clear()
  out = select.run(c, "refine_steps=5,50", str(tmp_path / "c"), [model], trained=trained,
                   configured=False)
  assert steps_seen == [5, 50] and out["chosen"][model]["overrides"] == {"refine_steps": 50}
  assert not any(r["configured"] for r in out["rows"])
  # In training mode (a whole training per row) it is added only when asked.
  monkeypatch.setattr(loop, "train_model",
                      lambda cfg, task, name, workdir, writer, splits: fake(
                          cfg, task, name, workdir, splits))
  steps_seen.clear()
  out = select.run(c, "refine_steps=5,50", str(tmp_path / "d"), [model])
  assert steps_seen == [5, 50] and not any(r["configured"] for r in out["rows"])
  steps_seen.clear()
  out = select.run(c, "refine_steps=5,50", str(tmp_path / "e"), [model], configured=True)
  assert steps_seen == [5, 50, 0] and out["chosen"][model]["candidate"] == 2


def test_a_select_workdir_from_before_an_added_option_resumes(tmp_path):
  """A select started before a run-config key or a model option existed holds
  a stored config without them; the same select resumes, and a real change
  is still refused."""
  from neuroprog.run import workdir as workdir_lib
  config = test_config.get_config()
  entry = lambda c: {"config": json.loads(workdir_lib.config_json(c)), "grid": "steps=10",
                     "models": ["meta_mlp"]}
  workdir_lib.prepare(str(tmp_path), entry(config), step_keys=())
  path = os.path.join(str(tmp_path), "config.json")
  with open(path) as f:
    stored = json.load(f)
  del stored["config"]["task_options"]
  stored["config"]["model_configs"]["meta_mlp"] = {"hidden": 8}
  with open(path, "w") as f:
    json.dump(stored, f)
  # What the model's options were before each was added.
  config.model_configs["meta_mlp"] = {"hidden": 8, **loop.ADDED_MODEL_OPTIONS["meta_mlp"]}
  assert config.model_configs["meta_mlp"]["token_basis"] == 0
  with pytest.raises(ValueError, match="different config"):
    workdir_lib.prepare(str(tmp_path), entry(config), step_keys=())
  workdir_lib.prepare(str(tmp_path), entry(config), step_keys=(),
                      fill_stored=select.fill_stored_select)
  config.model_configs["meta_mlp"]["token_basis"] = 2
  with pytest.raises(ValueError, match="token_basis"):
    workdir_lib.prepare(str(tmp_path), entry(config), step_keys=(),
                        fill_stored=select.fill_stored_select)
