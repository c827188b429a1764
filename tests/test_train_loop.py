"""End-to-end: the main job on the tiny config; resume, determinism, failure."""
import json
import os
import subprocess
import sys

import jax
import numpy as np
import optax
import pytest

from experiments.configs import test as test_config
from neuroprog import synthesis
from neuroprog.train import loop
from neuroprog.train import step as step_lib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _config(**overrides):
  c = test_config.get_config()
  c.update(overrides)
  return c


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
  workdir = str(tmp_path_factory.mktemp("full"))
  out = loop.train_and_evaluate(_config(), workdir)
  return workdir, out


def test_end_to_end_writes_every_output(full_run):
  workdir, out = full_run
  for f in ("config.json", "results.json", "results.md", "metrics.jsonl",
            "ood_by_intent.png"):
    assert os.path.getsize(os.path.join(workdir, f)) > 0, f
  assert os.listdir(os.path.join(workdir, "tensorboard", "meta_gnn"))
  with open(os.path.join(workdir, "results.json")) as f:
    res = json.load(f)
  assert set(res["models"]) == {"meta_mlp", "meta_gnn"}
  m = res["models"]["meta_gnn"]
  assert set(m["ood"]) == {"n=4", "n=8"} and set(m["val"]) == {"n=6"}
  assert "n=4" not in m["id"] and "n=6" not in m["id"] and len(m["id"]) == 7
  for acc in m["ood"].values():
    assert len(acc) == 2 and all(0.0 <= a <= 1.0 for a in acc)
  np.testing.assert_allclose(m["ood_mean"], np.mean(list(m["ood"].values()), 0))
  lines = [json.loads(l) for l in open(os.path.join(workdir, "metrics.jsonl"))]
  assert [l["step"] for l in lines if l["model"] == "meta_mlp"] == [10, 20, 30, 40]
  assert all(np.isfinite(l["loss"]) and l["steps_per_s"] > 0 for l in lines)
  table = open(os.path.join(workdir, "results.md")).read()
  assert "OOD max over seeds" in table and "OOD of val-selected seed" in table
  a, b = (np.asarray(m["ood"][i]) for i in ("n=4", "n=8"))
  assert (f"| meta_gnn | {a.mean():.3f} ± {a.std():.3f} | {b.mean():.3f} ± {b.std():.3f} |"
          in table.split("OOD per intent")[1])
  # The one-line baseline, on the same held-out examples, in both files.
  config = _config()
  want = loop.evaluate_heuristics(config, loop.build_task(config))
  assert res["heuristics"] == want
  h = want["nearest training intent's rule"]
  assert (f"| heuristic: nearest training intent's rule | 0 | – | – | {h['val_mean']:.3f} | "
          f"{h['ood_mean']:.3f} | – | – |") in table
  assert sorted(os.listdir(os.path.join(workdir, "checkpoints", "meta_mlp"))) == ["20", "40"]


def test_training_reduces_the_loss(full_run):
  workdir, _ = full_run
  lines = [json.loads(l) for l in open(os.path.join(workdir, "metrics.jsonl"))]
  mlp = [l["loss"] for l in lines if l["model"] == "meta_mlp"]
  assert mlp[-1] < 0.5 * mlp[0]


def test_resume_after_a_kill_matches_an_uninterrupted_run(full_run, tmp_path):
  ref_dir, ref = full_run
  cfg = _config(models=("meta_mlp",))
  with pytest.raises(loop.Interrupted):
    loop.train_and_evaluate(cfg, str(tmp_path), stop_at_step=30)   # after ckpt 20
  out = loop.train_and_evaluate(cfg, str(tmp_path))                 # resumes at 20
  assert out["models"]["meta_mlp"]["ood"] == ref["models"]["meta_mlp"]["ood"]
  run_a, run_b = synthesis.load_run(ref_dir, "meta_mlp"), synthesis.load_run(str(tmp_path), "meta_mlp")
  params_a, step_a, params_b, step_b = run_a.params_S, run_a.step, run_b.params_S, run_b.step
  assert step_a == step_b == 40
  for a, b in zip(jax.tree_util.tree_leaves(params_a), jax.tree_util.tree_leaves(params_b)):
    np.testing.assert_allclose(a, b, atol=1e-6, rtol=0)


def test_finished_models_are_written_before_the_run_ends(full_run, tmp_path, monkeypatch):
  """A run killed during its second model leaves results.json / results.md
  with the first model's figures (those of an uninterrupted run) and the
  models still training named."""
  _, ref = full_run
  real = loop.train_model

  def killed_in_meta_gnn(config, task, name, *args, **kwargs):
    if name == "meta_gnn":
      raise loop.Interrupted("killed")
    return real(config, task, name, *args, **kwargs)

  monkeypatch.setattr(loop, "train_model", killed_in_meta_gnn)
  with pytest.raises(loop.Interrupted):
    loop.train_and_evaluate(_config(), str(tmp_path))
  res = json.load(open(tmp_path / "results.json"))
  assert list(res["models"]) == ["meta_mlp"] and res["pending"] == ["meta_gnn"]
  assert res["models"]["meta_mlp"]["ood"] == ref["models"]["meta_mlp"]["ood"]
  assert "Still training (not in this table yet): meta_gnn." in open(
      tmp_path / "results.md").read()


def test_same_config_same_results(full_run, tmp_path):
  _, ref = full_run
  out = loop.train_and_evaluate(_config(models=("meta_mlp",)), str(tmp_path))
  assert out["models"]["meta_mlp"]["ood"] == ref["models"]["meta_mlp"]["ood"]
  assert out["models"]["meta_mlp"]["id"] == ref["models"]["meta_mlp"]["id"]


def test_corrupt_latest_checkpoint_falls_back(full_run, tmp_path):
  import shutil
  src, _ = full_run
  work = tmp_path / "w"
  shutil.copytree(src, work)
  for root, _, files in os.walk(work / "checkpoints" / "meta_mlp" / "40"):
    for f in files:
      open(os.path.join(root, f), "w").write("garbage")
  assert synthesis.load_run(str(work), "meta_mlp").step == 20
  for root, _, files in os.walk(work / "checkpoints" / "meta_mlp" / "20"):
    for f in files:
      open(os.path.join(root, f), "w").write("garbage")
  with pytest.raises(RuntimeError, match=r"No readable checkpoint in .*meta_mlp"):
    synthesis.load_run(str(work), "meta_mlp")


@pytest.mark.slow   # CI budget: extend is also covered by the command-line test; refusal by test_run
def test_changed_steps_are_refused_and_extend_continues_the_run(full_run, tmp_path):
  import shutil
  src, ref = full_run
  work = tmp_path / "w"
  shutil.copytree(src, work)
  with pytest.raises(ValueError, match=r"steps: 40 -> 60\).*--extend"):
    loop.train_and_evaluate(_config(steps=60), str(work))
  with pytest.raises(ValueError, match=r"seeds: 2 -> 3"):
    loop.train_and_evaluate(_config(seeds=3), str(work), extend=True)
  out = loop.train_and_evaluate(_config(steps=60), str(work), extend=True)
  assert out["extended"][0]["steps"] == [40, 60] and "extended" not in ref
  assert out["models"]["meta_mlp"]["steps"] == 60
  lines = [json.loads(l) for l in open(work / "metrics.jsonl")]
  assert [l["step"] for l in lines if l["model"] == "meta_mlp"] == [10, 20, 30, 40, 50, 60]
  assert sorted(os.listdir(work / "checkpoints" / "meta_mlp"), key=int) == ["40", "60"]
  assert json.load(open(work / "results.json"))["extended"][0]["steps"] == [40, 60]


def test_non_finite_loss_stops_with_model_seed_and_step(tmp_path):
  cfg = _config(models=("meta_mlp",), learning_rates={"meta_mlp": 1e12},
                schedule="constant", grad_clip=0.0, steps=20)
  with pytest.raises(FloatingPointError, match=r"meta_mlp: non-finite loss .* at seed \d+, step \d+"):
    loop.train_and_evaluate(cfg, str(tmp_path))


def test_bad_configs():
  with pytest.raises(ValueError, match=r"Unknown config key\(s\) \['sedes'\]"):
    loop.validate_config({**_config().to_dict(), "sedes": 3})
  with pytest.raises(ValueError, match="config.seeds must be a positive int"):
    loop.validate_config({**_config().to_dict(), "seeds": 0})
  with pytest.raises(ValueError, match="overlap"):
    loop.build_task(_config(val_intents=("n=4",)))
  with pytest.raises(ValueError, match="n=11 is outside its domain"):
    loop.build_task(_config(ood_intents=("n=11",)))
  steps = _config().steps
  for bad in (-2, steps, 2.5, True):
    with pytest.raises(ValueError, match=rf"warmup_steps={bad!r}; allowed: -1 .* 0\.\.{steps - 1}"):
      loop.validate_config({**_config().to_dict(), "warmup_steps": bad})
    with pytest.raises(ValueError, match=rf"warmup_steps_by_model\['meta_gnn'\]={bad!r}; "
                                         rf"allowed: -1 .* 0\.\.{steps - 1}"):
      loop.validate_config({**_config().to_dict(),
                            "warmup_steps_by_model": {"meta_gnn": bad}})
  with pytest.raises(ValueError, match=r"config.warmup_steps_by_model: .*'meta_gcn'"):
    loop.validate_config({**_config().to_dict(), "warmup_steps_by_model": {"meta_gcn": 10}})
  with pytest.raises(ValueError, match=r"config.learning_rates: .*'meta_gcn'"):
    loop.validate_config({**_config().to_dict(), "learning_rates": {"meta_gcn": 1e-3}})
  # An entry longer than the run is refused only where its model trains.
  loop.validate_config({**_config().to_dict(), "models": ("meta_mlp",),
                        "warmup_steps_by_model": {"meta_gnn": steps}})


def _adam_moves(opt, count=1002) -> np.ndarray:
  """[count] the step each optimizer update takes on one entry under a
  constant gradient below the clip: Adam moves it by the step's rate."""
  params = {"w": jax.numpy.ones(3)}
  grads = {"w": jax.numpy.full(3, 1e-3)}

  @jax.jit
  def step(state):
    updates, state = opt.update(grads, state, params)
    return state, updates["w"][0]

  state, moves = opt.init(params), []
  for _ in range(count):
    state, move = step(state)
    moves.append(-float(move))
  return np.array(moves)


def test_warmup_steps_sets_the_cosine_warmup_and_minus_one_keeps_the_old_rule():
  """-1 (the default) is min(200, steps // 10), as before the key existed; a
  value is the warm-up's length: the rate rises linearly to its peak there."""
  assert loop.warmup_steps(_config(steps=100)) == 10
  assert loop.warmup_steps(_config(steps=5000)) == 200
  assert loop.warmup_steps(_config(steps=5000, warmup_steps=1000)) == 1000
  assert loop.warmup_steps(_config(steps=5000, warmup_steps=0)) == 1
  config = _config(steps=5000, warmup_steps=1000, learning_rates={"meta_mlp": 2e-3})
  moves = _adam_moves(loop.create_optimizer(config, "meta_mlp"))
  # The warm-up rises linearly to 2e-3 at step 1,000.
  np.testing.assert_allclose(moves[[250, 500, 1000]], [5e-4, 1e-3, 2e-3], rtol=1e-3)


def test_warmup_steps_by_model_sets_only_the_named_entries_schedule():
  """A per-model warm-up moves that entry's rate and no other's: the named
  entry follows the value (the @variant apart from its base), the rest keep
  config.warmup_steps; a run that trains only the named model has the same
  schedule as with the config-wide value."""
  config = _config(steps=5000, warmup_steps_by_model={"meta_gnn": 1000},
                   learning_rates={"meta_gnn": 2e-3, "meta_mlp": 2e-3})
  assert loop.warmup_steps(config, "meta_gnn") == 1000
  assert loop.warmup_steps(config, "meta_gnn@library") == 200
  assert loop.warmup_steps(config, "meta_mlp") == 200
  assert loop.warmup_steps(config) == 200
  wide = _config(steps=5000, warmup_steps=1000, learning_rates={"meta_gnn": 2e-3})
  gnn = _adam_moves(loop.create_optimizer(config, "meta_gnn"))
  np.testing.assert_allclose(gnn[[250, 500, 1000]], [5e-4, 1e-3, 2e-3], rtol=1e-3)
  np.testing.assert_array_equal(gnn, _adam_moves(loop.create_optimizer(wide, "meta_gnn")))
  mlp = _adam_moves(loop.create_optimizer(config, "meta_mlp"), 201)
  np.testing.assert_allclose(mlp[[100, 200]], [1e-3, 2e-3], rtol=1e-3)


def test_synthesize_api_and_program_command(full_run, tmp_path):
  workdir, _ = full_run
  import neuroprog
  spec, theta = neuroprog.synthesize(workdir, "n=4", model="meta_gnn")
  assert theta.shape == (193,)
  with pytest.raises(ValueError, match="n=0 is outside its domain"):
    neuroprog.synthesize(workdir, 0, model="meta_gnn")
  # The default seed is the validation-selected one; naming it gives the same θ.
  res = json.load(open(os.path.join(workdir, "results.json")))["models"]["meta_gnn"]
  chosen = res["seeds"][int(np.argmax(res["val_mean"]))]
  assert synthesis.select_seed(workdir, "meta_gnn") == chosen
  np.testing.assert_array_equal(neuroprog.synthesize(workdir, "n=4", model="meta_gnn",
                                                     seed=chosen)[1], theta)
  other = [s for s in res["seeds"] if s != chosen][0]
  assert np.abs(neuroprog.synthesize(workdir, "n=4", model="meta_gnn", seed=other)[1]
                - theta).max() > 1e-4
  with pytest.raises(ValueError, match=r"seed 99 was not trained in this run; its seeds are \[0, 1\]"):
    neuroprog.synthesize(workdir, "n=4", model="meta_gnn", seed=99)
  # In memory: the same program from the run's parameters.
  run = synthesis.load_run(workdir, "meta_gnn")
  params = jax.tree_util.tree_map(lambda a: a[res["seeds"].index(chosen)], run.params_S)
  _, theta_mem = neuroprog.synthesize_from_params(params, "n=4", model=run.model, task=run.task)
  np.testing.assert_allclose(theta_mem, theta, atol=1e-6)
  with pytest.raises(ValueError, match="no model 'direct'"):
    neuroprog.synthesize(workdir, "n=4", model="direct")
  out = tmp_path / "p.npz"
  cmd = [sys.executable, "-m", "experiments.synthesize_program", f"--workdir={workdir}",
         "--model=meta_gnn", "--intent=n=4", f"--out={out}", "--examples=200"]
  r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
  assert r.returncode == 0, r.stderr[-2000:]
  assert "exact match" in r.stdout
  saved = np.load(out)
  assert json.loads(str(saved["spec"]))["widths"] == [10, 16, 1]
  np.testing.assert_allclose(saved["l0/w"], np.asarray(theta[:160]).reshape(10, 16), atol=1e-6)
  bad = subprocess.run(cmd[:4] + ["--intent=n=11", f"--out={out}"], cwd=ROOT,
                       capture_output=True, text=True, timeout=300)
  assert bad.returncode != 0 and "n=11 is outside its domain" in bad.stderr


def test_evaluation_compiles_once_per_intent_count_and_matches_a_direct_computation():
  # bench_tta evaluates every few hundred steps: each call must reuse the
  # compiled evaluation (a fresh jit per call recompiled it every time).
  config = _config(models=("meta_mlp",))
  task = loop.build_task(config)
  tr = loop.Trainer(config, task, "meta_mlp")
  params_S = tr.init().params
  key = jax.random.key(5)
  acc = tr.evaluate(params_S, task.train_intents, key)
  tr.evaluate(params_S, task.train_intents, jax.random.key(6))
  assert acc.shape == (config.seeds, len(task.train_intents))
  assert tr._exact_match_S._cache_size() == 1
  tr.evaluate(params_S, task.val_intents, key)
  assert tr._exact_match_S._cache_size() == 2
  # Seed 1 by hand, on the examples evaluate draws from the same key.
  feats = jax.numpy.asarray(task.features(task.train_intents))
  ip = jax.numpy.asarray(task.intent_params(task.train_intents))
  u, x, y = step_lib.draw(tr.model, task, key, feats, ip, config.eval_examples)
  params_1 = jax.tree.map(lambda a: a[1], params_S)
  out = step_lib.outputs_for(tr.model, params_1, u, x)
  np.testing.assert_allclose(acc[1], np.asarray(task.exact_match(out, y, ip).mean(-1)),
                             rtol=1e-6)


def test_weight_decay_shrinks_kernels_only():
  params = {"kernel": np.full((2, 3), 2.0, np.float32),
            "bias": np.full((3,), 2.0, np.float32)}
  zero_grads = jax.tree_util.tree_map(np.zeros_like, params)
  for decay, expect_kernel in ((0.0, 2.0), (0.5, 2.0 * (1 - 0.1 * 0.5))):
    opt = loop.create_optimizer(
        {"learning_rate": 0.1, "schedule": "constant", "grad_clip": 0.0,
         "weight_decay": decay}, "meta_gnn")
    updates, _ = opt.update(zero_grads, opt.init(params), params)
    new = jax.tree_util.tree_map(lambda p, u: p + u, params, updates)
    np.testing.assert_allclose(new["kernel"], expect_kernel, rtol=1e-6)
    np.testing.assert_allclose(new["bias"], 2.0, rtol=1e-6)
  with pytest.raises(ValueError, match=r"weight_decay=-1.0; allowed: >= 0"):
    loop.create_optimizer({"weight_decay": -1.0}, "meta_gnn")


def test_per_part_clip_scales_the_learner_and_the_reader_each_to_their_own_norm():
  # Learner gradient norm 0.5 (under the clip), reader norm 5 (over it): the
  # joint clip (norm sqrt(25.25)) shrinks both, the per-part clip only the reader.
  grads = {"learner": {"w": np.array([0.3, 0.4], np.float32)},
           "encoder": {"w": np.array([3.0, 4.0], np.float32)},
           "label_head": {"b": np.zeros((2,), np.float32)}}
  joint = optax.clip_by_global_norm(1.0)
  out, _ = joint.update(grads, joint.init(grads))
  np.testing.assert_allclose(out["learner"]["w"], np.array([0.3, 0.4]) / np.sqrt(25.25),
                             rtol=1e-5)
  per_part = loop.clip_by_part(1.0)
  out, _ = per_part.update(grads, per_part.init(grads))
  np.testing.assert_allclose(out["learner"]["w"], [0.3, 0.4], rtol=1e-6)
  np.testing.assert_allclose(out["encoder"]["w"], [0.6, 0.8], rtol=1e-5)
  np.testing.assert_allclose(out["label_head"]["b"], 0.0)
  # A config with the scope builds it in front of Adam; the default does not.
  base = {"learning_rate": 0.1, "schedule": "constant"}
  opt = loop.create_optimizer({**base, "grad_clip_scope": "per_part"}, "meta_gnn")
  assert isinstance(opt.init(grads)[0], optax.MultiTransformState)
  assert not isinstance(loop.create_optimizer(base, "meta_gnn").init(grads)[0],
                        optax.MultiTransformState)
  updates, _ = opt.update(grads, opt.init(grads), grads)
  np.testing.assert_allclose(updates["learner"]["w"], [-0.1, -0.1], rtol=1e-3)


def test_per_part_clip_is_refused_without_example_intents():
  config = loop.default_config(task="sumfirst", grad_clip_scope="per_part")
  with pytest.raises(ValueError, match=r"grad_clip_scope='per_part'.*intent='examples'"):
    loop.validate_config(config)
  config = loop.default_config(task="sumfirst", grad_clip_scope="each")
  with pytest.raises(ValueError, match=r"grad_clip_scope='each'; allowed: \['joint', "
                     r"'per_part'\]"):
    loop.validate_config(config)


# Slow (about 26 s, three subprocess runs): the in-process end-to-end, resume
# and refusal tests (test_run) stay in the fast suite.
@pytest.mark.slow
def test_command_is_quiet_by_default_refuses_a_changed_config_and_extends(tmp_path):
  base = [sys.executable, "-m", "experiments.synthesize", "--config=experiments/configs/test.py",
          "--config.models=('meta_mlp',)", f"--workdir={tmp_path}"]
  run = lambda *extra: subprocess.run(base + list(extra), cwd=ROOT, capture_output=True,
                                      text=True, timeout=600)
  first = run("--config.steps=20")
  assert first.returncode == 0, first.stderr[-2000:]
  assert "meta_mlp step 10/20 loss" in first.stderr and "steps/s | ETA" in first.stderr
  assert "CheckpointManager" not in first.stderr            # orbax INFO stays quiet
  assert not [l for l in first.stderr.splitlines() if l.startswith("I1")]  # absl INFO
  changed = run("--config.steps=30")
  assert changed.returncode != 0
  assert "steps: 20 -> 30" in changed.stderr and "--extend" in changed.stderr
  longer = run("--config.steps=30", "--extend", "-v", "0")
  assert longer.returncode == 0, longer.stderr[-2000:]
  assert "resumed from step 20" in longer.stderr and "CheckpointManager" in longer.stderr
  res = json.load(open(tmp_path / "results.json"))
  assert res["extended"][0]["steps"] == [20, 30] and res["models"]["meta_mlp"]["steps"] == 30



def _twin_configs(**example_values):
  """(label config, example config) of one tiny arc1d Meta-MLP."""
  values = dict(task="arc1d", models=("meta_mlp",), seeds=1, steps=4,
                intents_per_step=3, examples_per_intent=4,
                model_configs={"meta_mlp": {"hidden": 4}})
  example = dict(intent="examples", shots=2,
                 intent_encoder={"width": 8, "heads": 2, "out_dim": 8},
                 intent_label_loss=1.0, intent_label_input=True,
                 intent_label_feed="teacher")
  return (loop.default_config(**values),
          loop.default_config(**values, **{**example, **example_values}))


def _learner_after(config, steps):
  task = loop.build_task(config)
  tr = loop.Trainer(config, task, "meta_mlp")
  state = tr.init()
  first = state.params
  state, _ = tr.chunk(state, 0, steps)
  pick = (lambda p: p["learner"]) if config.intent == "examples" else (lambda p: p)
  return pick(first), pick(state.params)


@pytest.mark.slow   # CI budget: 80-100 s of compiling two example-intent trainers;
# the option's refusals stay in the fast suite (the test below)
def test_teacher_twin_draws_train_the_learner_as_its_label_intent_twin():
  """teacher_twin_draws={model: True}: the teacher-fed learner starts from its
  label-intent twin's init and trains on its twin's batches, its gradient
  clipped apart from the reader's (grad_clip_scope stays "joint" here), bit for
  bit; without it (support and queries from one generator call, the learner's
  own init key) it is another draw."""
  label, twin = _twin_configs(teacher_twin_draws={"meta_mlp": True})
  loop.validate_config(twin)
  assert twin.grad_clip_scope == "joint" and loop.twin_draws(twin, "meta_mlp")
  assert isinstance(loop.create_optimizer(twin, "meta_mlp").init(
      {"learner": {"w": np.zeros(2)}})[0], optax.MultiTransformState)
  want = _learner_after(label, 3)
  got = _learner_after(twin, 3)
  for w, g in zip(want, got):
    assert jax.tree_util.tree_structure(w) == jax.tree_util.tree_structure(g)
    jax.tree_util.tree_map(np.testing.assert_array_equal, g, w)
  moved = [float(np.abs(a - b).max()) for a, b in zip(jax.tree_util.tree_leaves(want[1]),
                                                     jax.tree_util.tree_leaves(want[0]))]
  assert max(moved) > 1e-4
  # Without it the learner's init key is another one (and so are its queries).
  config = _twin_configs()[1]
  assert not loop.twin_draws(config, "meta_mlp")
  task = loop.build_task(config)
  other = loop.Trainer(config, task, "meta_mlp").init().params["learner"]
  diffs = [float(np.abs(a - b).max()) for a, b in zip(jax.tree_util.tree_leaves(other),
                                                     jax.tree_util.tree_leaves(want[0]))]
  assert max(diffs) > 1e-3


@pytest.mark.parametrize("twins,change,expect", [
    ({"meta_mlp": True}, dict(intent_label_feed="snapped"),
     r"teacher_twin_draws\['meta_mlp'\]=True .*\(got 'examples', 'snapped'\)"),
    ({"meta_mlp": 1}, {}, r"teacher_twin_draws\['meta_mlp'\]=1; allowed: True or False"),
    ({"direct": True}, {}, r"teacher_twin_draws\['direct'\]=True: the in-context model"),
    ({"meta_mpl": True}, {}, r"config.teacher_twin_draws: .*meta_mpl"),
])
def test_teacher_twin_draws_is_refused_where_there_is_no_twin_to_follow(twins, change, expect):
  config = _twin_configs(teacher_twin_draws=twins, **change)[1]
  with pytest.raises(ValueError, match=expect):
    loop.validate_config(config)


def test_lamb_moves_every_tensor_by_the_rate_times_its_norm():
  """optimizer="lamb": the first step moves each tensor by rate x its norm,
  whatever its gradient's scale or its size; a tensor of norm 0 takes Adam's
  first step (rate x sign(g)); the per-model entry overrides the config-wide
  one and a bad name is refused before any work."""
  params = {"small": np.full((2, 2), 0.1, np.float32),
            "big": np.full((8, 8), 3.0, np.float32),
            "zero": np.zeros((3,), np.float32)}
  grads = {"small": np.array([[1e-4, -2e-4], [3e-4, 1e-4]], np.float32),
           "big": np.full((8, 8), 50.0, np.float32),
           "zero": np.array([1.0, -2.0, 0.5], np.float32)}
  base = {"learning_rate": 0.01, "schedule": "constant", "grad_clip": 0.0}
  opt = loop.create_optimizer({**base, "optimizer_by_model": {"meta_gnn": "lamb"}},
                              "meta_gnn")
  updates, _ = opt.update(grads, opt.init(params), params)
  np.testing.assert_allclose(np.linalg.norm(updates["small"]), 0.01 * 0.2, rtol=1e-4)
  np.testing.assert_allclose(np.linalg.norm(updates["big"]), 0.01 * 24.0, rtol=1e-4)
  np.testing.assert_allclose(updates["zero"], [-0.01, 0.01, -0.01], rtol=1e-4)
  # Adam for the other entries: every entry moves by the rate.
  adam = loop.create_optimizer({**base, "optimizer_by_model": {"meta_gnn": "lamb"}},
                               "meta_mlp")
  updates, _ = adam.update(grads, adam.init(params), params)
  np.testing.assert_allclose(np.abs(updates["big"]), 0.01, rtol=1e-4)
  assert loop.optimizer_name(_config(optimizer="lamb"), "meta_mlp") == "lamb"
  with pytest.raises(ValueError, match=r"optimizer_by_model\['meta_gnn'\]='sgd'; "
                     r"allowed: \['adam', 'lamb', 'muon'\]"):
    loop.validate_config(_config(optimizer_by_model={"meta_gnn": "sgd"}))


def test_muon_orthogonalizes_each_matrix_of_a_grouped_kernel():
  """optimizer="muon": the first step of a [G, in, out] kernel is G separately
  orthogonalized matrices, each with every singular value alike (the
  Newton-Schulz band) although the gradient's spread 1,000x, at an RMS of
  about 0.2 x rate; a 2-D kernel likewise; a bias takes Nesterov-Adam's first step."""
  rng = np.random.default_rng(0)
  u, _ = np.linalg.qr(rng.normal(size=(6, 6)))
  v, _ = np.linalg.qr(rng.normal(size=(4, 4)))
  spread = u[:, :4] @ np.diag([10.0, 1.0, 0.1, 0.01]) @ v.T       # [6, 4]
  params = {"net": {"grouped": {"kernel": np.zeros((3, 6, 4), np.float32),
                                "bias": np.zeros((3, 4), np.float32)},
                    "dense": {"kernel": np.zeros((6, 4), np.float32)}}}
  grads = {"net": {"grouped": {"kernel": np.stack([spread, 5.0 * spread, rng.normal(size=(6, 4))]
                                                  ).astype(np.float32),
                               "bias": np.array([[1.0, -2.0, 0.5, 3.0]] * 3, np.float32)},
                   "dense": {"kernel": spread.astype(np.float32)}}}
  config = {"learning_rate": 0.01, "schedule": "constant", "grad_clip": 0.0,
            "optimizer": "muon"}
  opt = loop.create_optimizer(config, "meta_gnn")
  updates, _ = opt.update(grads, opt.init(params), params)
  for m in [*np.asarray(updates["net"]["grouped"]["kernel"]),
            np.asarray(updates["net"]["dense"]["kernel"])]:
    sv = np.linalg.svd(m, compute_uv=False)
    assert sv.max() / sv.min() < 2.0, sv            # gradient's ratio: 1,000
    # Newton-Schulz's quintic leaves singular values in about 0.5-1.1, not at
    # 1: the RMS is 0.2 x rate x that.
    assert 0.5 * 0.002 < np.sqrt(np.mean(m ** 2)) < 1.15 * 0.002
  # Group 1's gradient is group 0's times 5: the same step (each group alone).
  np.testing.assert_allclose(updates["net"]["grouped"]["kernel"][1],
                             updates["net"]["grouped"]["kernel"][0], rtol=1e-4, atol=1e-7)
  nadam = optax.adam(0.01, nesterov=True)
  bias = {"b": params["net"]["grouped"]["bias"]}
  expected, _ = nadam.update({"b": grads["net"]["grouped"]["bias"]}, nadam.init(bias), bias)
  np.testing.assert_allclose(updates["net"]["grouped"]["bias"], expected["b"], rtol=1e-5)


def test_matrix_axes_follow_each_layout():
  """train.matrix_axes: Dense [in, out], group-tied [G, in, out], attention
  [in, H, Dh] and [H, Dh, out], conv [k, in, out]; vectors and embeddings
  are None (Adam's step)."""
  from neuroprog.train import matrix_axes  # pylint: disable=g-import-not-at-top
  tree = {"Dense_0": {"kernel": np.zeros((2, 3)), "bias": np.zeros(3)},
          "enc_edge_in": {"kernel_pe": np.zeros((7, 5, 4)), "bias": np.zeros((7, 4))},
          "MultiHeadDotProductAttention_0": {"query": {"kernel": np.zeros((8, 2, 4))},
                                             "out": {"kernel": np.zeros((2, 4, 8))}},
          "Conv_0": {"kernel": np.zeros((3, 5, 6))},
          "Embed_0": {"embedding": np.zeros((10, 8))}}
  axes = matrix_axes.matrix_axes(tree)
  A = matrix_axes.Axes
  assert axes["Dense_0"] == {"kernel": A(0, 1), "bias": None}
  assert axes["enc_edge_in"] == {"kernel_pe": A(1, 2), "bias": None}
  assert axes["MultiHeadDotProductAttention_0"] == {"query": {"kernel": A(0, (1, 2))},
                                                    "out": {"kernel": A((0, 1), 2)}}
  assert axes["Conv_0"]["kernel"] == A((0, 1), 2)
  assert axes["Embed_0"]["embedding"] is None


@pytest.mark.parametrize("optimizer", ["lamb", "muon"])
def test_per_tensor_optimizers_keep_seeds_apart(optimizer):
  """The seeds are independent under LAMB and Muon too: their per-tensor norms
  and orthogonalizations are taken inside the vmapped step, so seed 1 trained
  beside seed 0 ends where seed 1 trained alone does (a norm or a matrix over
  the stacked seeds would couple them)."""
  config = _config(models=("meta_mlp",), optimizer=optimizer, seeds=2, seed=0,
                   learning_rates={"meta_mlp": 1e-2})
  task = loop.build_task(config)
  both = loop.Trainer(config, task, "meta_mlp")
  state, _ = both.chunk(both.init(), 0, 5)
  alone_config = _config(models=("meta_mlp",), optimizer=optimizer, seeds=1, seed=1,
                         learning_rates={"meta_mlp": 1e-2})
  alone = loop.Trainer(alone_config, task, "meta_mlp")
  start = alone.init()
  state_1, _ = alone.chunk(start, 0, 5)
  moved = jax.tree.map(lambda a, b: float(np.abs(np.asarray(a[0]) - np.asarray(b[0])).max()),
                       state_1.params, start.params)
  assert max(jax.tree.leaves(moved)) > 1e-3
  jax.tree.map(lambda a, b: np.testing.assert_allclose(np.asarray(a[1]), np.asarray(b[0]),
                                                       rtol=1e-5, atol=1e-6),
               state.params, state_1.params)
