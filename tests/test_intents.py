"""Intents given as examples: the example-set encoder, user pairs, training."""
import dataclasses
import functools
import re

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from neuroprog import intents, meta, tasks
from neuroprog.train import loop, step as step_lib

PAD, L = 10, 33


def _encoder(**kw):
  cfg = {"width": 16, "heads": 2, "layers": 1, "out_dim": 8, **kw}
  return intents.ExampleSetEncoder(vocab_size=11, max_len=L, pad=PAD, **cfg)


def _random_support(key, b=3, k=5, present=None):
  """Random grids of random lengths 5..20 (input and output of a pair alike)."""
  kx, ky, kl = jax.random.split(key, 3)
  x = jax.random.randint(kx, (b, k, L), 0, 10)
  y = jax.random.randint(ky, (b, k, L), 0, 10)
  lengths = jax.random.randint(kl, (b, k, 1), 5, 21)
  cells = jnp.arange(L) < lengths
  x, y = jnp.where(cells, x, PAD), jnp.where(cells, y, PAD)
  mask = jnp.ones((b, k), bool) if present is None else jnp.arange(k)[None] < present
  return intents.SupportSet(x, y, jnp.broadcast_to(mask, (b, k)))


@pytest.fixture(scope="module")
def encoder_and_params():
  enc = _encoder()
  params = enc.init(jax.random.key(0), _random_support(jax.random.key(1)))["params"]
  return enc, params


def test_the_order_of_the_pairs_does_not_matter(encoder_and_params):
  enc, params = encoder_and_params
  s = _random_support(jax.random.key(2))
  perm = np.array([3, 0, 4, 1, 2])
  shuffled = intents.SupportSet(s.x[:, perm], s.y[:, perm], s.mask[:, perm])
  u = enc.apply({"params": params}, s)
  np.testing.assert_allclose(enc.apply({"params": params}, shuffled), u, atol=1e-5)
  # ...while the pairs themselves do: another support set gives another u.
  other = enc.apply({"params": params}, _random_support(jax.random.key(3)))
  assert float(jnp.abs(other - u).max()) > 0.1


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_any_number_of_pairs_from_one_to_five(encoder_and_params, k):
  """k pairs of a 5-slot support set are read; what sits in the other slots
  is not, and the result equals a support set of exactly k slots."""
  enc, params = encoder_and_params
  s = _random_support(jax.random.key(4), present=k)
  u = enc.apply({"params": params}, s)
  assert u.shape == (3, 8) and bool(jnp.all(jnp.isfinite(u)))
  junk = _random_support(jax.random.key(5))
  filled = intents.SupportSet(jnp.where(s.mask[..., None], s.x, junk.x),
                              jnp.where(s.mask[..., None], s.y, junk.y), s.mask)
  np.testing.assert_allclose(enc.apply({"params": params}, filled), u, atol=1e-5)
  exact = intents.SupportSet(s.x[:, :k], s.y[:, :k], s.mask[:, :k])
  np.testing.assert_allclose(enc.apply({"params": params}, exact), u, atol=1e-5)


def test_padding_cells_are_not_read(encoder_and_params):
  enc, params = encoder_and_params
  s = _random_support(jax.random.key(6))
  u = enc.apply({"params": params}, s)
  # Cells past a grid's end hold PAD; an encoder that read them would change
  # when the padded length changes. Same grids, read at L = 40.
  longer = _encoder()
  wide = lambda a: jnp.pad(a, ((0, 0), (0, 0), (0, 7)), constant_values=PAD)
  p40 = dict(params, position=jnp.pad(params["position"], ((0, 7), (0, 0))))
  u40 = longer.apply({"params": p40}, intents.SupportSet(wide(s.x), wide(s.y), s.mask))
  np.testing.assert_allclose(u40, u, atol=1e-5)


def _grid(cells, length=20):
  """One grid of `length` cells (background elsewhere), padded to L."""
  g = np.full(L, PAD)
  g[:length] = 0
  for i, c in cells.items():
    g[i] = c
  return g


def test_pair_relations_read_a_move_a_stretch_and_a_recolour():
  bar = _grid({i: 4 for i in range(6, 11)})
  m = intents.MAX_OFFSET
  n = 2 * m + 1
  for k in (-5, -3, 1, 3, 5):
    moved = _grid({i + k: 4 for i in range(6, 11)})
    r = np.asarray(intents.pair_relations(jnp.asarray(bar), jnp.asarray(moved), PAD))
    assert r.shape == (n + 18 + 6,)
    # The correlation is 1 at the move's offset, (5 - |j|) / 5 at j cells away.
    np.testing.assert_allclose(r[m + k], 1.0)
    np.testing.assert_allclose(r[m + k + 1], 0.8, atol=1e-6)
    shift, ratio, mean_x, mean_y, changed, length = r[-6:]
    np.testing.assert_allclose(shift * 10, k, atol=1e-4)      # symmetric peak: exact
    np.testing.assert_allclose([ratio, mean_x, mean_y, length], [1.0, 0.4, 0.4, 20 / L],
                               atol=1e-6)
    np.testing.assert_allclose(changed, 2 * abs(k) / 20)
  stretched = _grid({i: 4 for i in range(6, 16)})
  r = np.asarray(intents.pair_relations(jnp.asarray(bar), jnp.asarray(stretched), PAD))
  np.testing.assert_allclose(r[-5], 2.0)                        # occupancy ratio = factor
  recoloured = _grid({i: 7 for i in range(6, 11)})
  r = np.asarray(intents.pair_relations(jnp.asarray(bar), jnp.asarray(recoloured), PAD))
  hist_x, hist_y = r[n:n + 9], r[n + 9:n + 18]
  np.testing.assert_allclose(hist_x, np.eye(9)[3])              # colour 4
  np.testing.assert_allclose(hist_y, np.eye(9)[6])              # colour 7
  np.testing.assert_allclose(r[-3], 0.7)
  np.testing.assert_allclose(r[-6], 0.0, atol=1e-6)             # no move


def test_pair_stats_keep_the_encoder_invariant_and_change_u():
  enc = _encoder(pair_stats=1)
  s = _random_support(jax.random.key(2), present=4)
  params = enc.init(jax.random.key(0), s)["params"]
  u = enc.apply({"params": params}, s)
  perm = np.array([2, 0, 3, 1, 4])
  shuffled = intents.SupportSet(s.x[:, perm], s.y[:, perm], s.mask[:, perm])
  np.testing.assert_allclose(enc.apply({"params": params}, shuffled), u, atol=1e-5)
  # The statistics enter through the pair projection: 41 more input rows.
  plain = _encoder().init(jax.random.key(0), s)["params"]
  assert params["pair"]["kernel"].shape[0] == plain["pair"]["kernel"].shape[0] + 41
  # Zeroing those rows gives the plain encoder's u on the same other params.
  zeroed = dict(params, pair=dict(params["pair"], kernel=params["pair"]["kernel"].at[16:].set(0)))
  np.testing.assert_allclose(enc.apply({"params": zeroed}, s),
                             _encoder().apply({"params": dict(zeroed, pair=dict(
                                 zeroed["pair"], kernel=zeroed["pair"]["kernel"][:16]))}, s),
                             atol=1e-5)
  assert float(jnp.abs(enc.apply({"params": zeroed}, s) - u).max()) > 1e-3


def test_pair_stats_refuse_a_pad_that_is_not_the_last_token():
  learner = meta.create("meta_mlp", tasks.get("arc1d").spec, 8, {"hidden": 4})
  with pytest.raises(ValueError, match="got pad=0, vocab_size=11"):
    intents.wrap(learner, learner.spec, 2, {"out_dim": 8, "pair_stats": 1}, pad=0,
                 vocab_size=11)


def test_user_pairs_are_checked_before_any_work():
  ok = [([0, 2, 2, 0], [0, 0, 2, 2]), ([[3, 3, 0]], [[0, 3, 3]])]
  s = intents.support_from_pairs(ok, max_len=6, pad=PAD, shots=3)
  np.testing.assert_array_equal(s.x[0], [[0, 2, 2, 0, 10, 10], [3, 3, 0, 10, 10, 10],
                                         [10] * 6])
  np.testing.assert_array_equal(s.y[0, 1], [0, 3, 3, 10, 10, 10])
  np.testing.assert_array_equal(s.mask, [[True, True, False]])
  cases = [
      ([], "got 0 pairs; allowed: 1..5"),
      ([([1, 2], [2, 1])] * 6, "got 6 pairs; allowed: 1..5"),
      ([([1, 2, 3], [1, 2])], "input has 3 cells and output 2; this task requires equal"),
      ([([1, 10], [1, 2])], "pairs[0] input: colour 10 outside 0..9"),
      ([([1, 2], [1, 2]), ([1, 2], [-1, 2])], "pairs[1] output: colour -1 outside 0..9"),
      ([([1] * 7, [1] * 7)], "7 cells; the target reads at most max_len=6"),
      ([([1.5, 2], [1, 2])], "expected a non-empty row of int colours"),
      ("abc", "expected a list of (input, output) pairs"),
  ]
  for pairs, message in cases:
    with pytest.raises(ValueError, match=re.escape(message)):
      intents.support_from_pairs(pairs, max_len=6, pad=PAD)
  with pytest.raises(ValueError, match="got 2 pairs; this model reads at most 1"):
    intents.support_from_pairs(ok, max_len=6, pad=PAD, shots=1)


def test_config_errors_name_the_bad_value():
  base = dict(task="arc1d", models=("meta_mlp",), intent="examples")
  for values, message in [
      (dict(intent="pairs"), "config.intent='pairs'; allowed: \\['label', 'examples'\\]"),
      (dict(shots=0), "config.shots=0; allowed: 1..5"),
      (dict(shots=6), "config.shots=6; allowed: 1..5"),
      (dict(intent_encoder={"depth": 2}), "unknown option 'depth'"),
      (dict(intent_encoder={"width": 30, "heads": 4}), "not divisible by heads 4"),
      (dict(intent_encoder={"pair_stats": 2}), "pair_stats=2; allowed: 0 or 1"),
      (dict(intent_label_loss=-0.5), "intent_label_loss=-0.5; allowed: a number >= 0"),
      (dict(intent="label", intent_label_loss=1.0),
       "intent_label_loss=1.0 reads the representation of example intents"),
      (dict(intent_label_input=True), "intent_label_input=True reads a label readout"),
      (dict(intent_label_input=1), "intent_label_input=1; allowed: True or False"),
      (dict(intent_label_loss=1.0, intent_label_feed="detached"),
       "intent_label_feed='detached' says how .* needs the label readout as their input"),
      (dict(intent_label_loss=1.0, intent_label_input=True, intent_label_feed="rounded"),
       "intent_label_feed='rounded'; allowed: \\['joint', 'detached', 'snapped', 'teacher'\\]"),
      (dict(intent_label_loss=1.0, intent_label_units="cells"),
       "intent_label_units='cells'; allowed: \\['features', 'intent'\\]"),
      (dict(intent_label_units="intent"),
       "intent_label_units='intent' sets the units .* needs config.intent_label_loss > 0"),
      (dict(intent_label_loss=1.0, intent_label_parameter="conv"),
       "intent_label_parameter='conv'; allowed: \\['dense', 'pair_stats'\\]"),
      (dict(intent_label_parameter="pair_stats"),
       "intent_label_parameter='pair_stats' is a part of the label readout"),
      (dict(task="sumfirst"), "task 'sumfirst' has no grid pairs")]:
    config = loop.default_config(**{**base, **values})
    with pytest.raises(ValueError, match=message):
      loop.validate_config(config)


@pytest.fixture(scope="module")
def wrapped_mlp():
  config = loop.default_config(task="arc1d", models=("meta_mlp",), intent="examples",
                               shots=2, model_configs={"meta_mlp": {"hidden": 4}},
                               intent_encoder={"width": 8, "heads": 2, "out_dim": 8})
  task = loop.build_task(config)
  model = loop.create_model(config, task, "meta_mlp")
  key = jax.random.key(0)
  params = jax.jit(model.init)(key, step_lib.probe_intents(model, task, key, task.train_intents))
  return task, model, params


def test_the_encoder_trains_through_execute_and_labels_are_never_read(wrapped_mlp):
  task, model, params = wrapped_mlp
  assert isinstance(model, intents.ExampleIntentModel) and model.shots == 2
  assert isinstance(model.learner, meta.Hypernetwork) and model.learner.intent_dim == 8
  assert model.num_params() == model.encoder_params() + model.learner.num_params()
  loss_fn = step_lib.make_loss_fn(model, task, 4)
  ip = jnp.asarray(task.intent_params(task.train_intents[:4]))
  feats = jnp.asarray(task.features(task.train_intents[:4]))
  key = jax.random.key(1)
  loss_and_grad = jax.jit(jax.value_and_grad(loss_fn, has_aux=True))   # one compile for both uses
  (loss, _), grads = loss_and_grad(params, key, feats, ip)
  # The loss reaches the encoder's first layer through θ and execute.
  assert float(jnp.abs(grads["encoder"]["token"]["embedding"]).max()) > 0
  # Family and parameter are never an input: other label features, same loss.
  garbage = jax.random.normal(jax.random.key(2), feats.shape)
  np.testing.assert_allclose(loss_and_grad(params, key, garbage, ip)[0][0], loss, rtol=1e-6)
  # θ depends on the support pairs: two draws of the same intents differ.
  theta = jax.jit(lambda k: model.apply(params, step_lib.draw(model, task, k, feats, ip, 0)[0]))
  t1, t2 = (theta(jax.random.key(k)) for k in (3, 4))
  assert t1.shape == (4, model.learner.head.tensor_of_slot.size)
  assert float(jnp.abs(t1 - t2).max()) > 1e-4


TINY = dict(
    task="arc1d", models=("meta_mlp",), intent="examples", shots=2,
    model_configs={"meta_mlp": {"hidden": 4}},
    intent_encoder={"width": 8, "heads": 2, "out_dim": 8},
    ood_intents=("move_right,k=3",), val_intents=("move_left,k=4",),
    train_intents=("flip", "move_right,k=1"), seeds=1, steps=6, intents_per_step=2,
    examples_per_intent=4, eval_examples=20, log_every=3, checkpoint_every=3)


# The tests that train this workdir are slow (make test-slow): compiling the
# seq2seq target's train and evaluation steps takes about a minute on 2 cores.
@pytest.fixture(scope="module")
def examples_workdir(tmp_path_factory):
  workdir = str(tmp_path_factory.mktemp("ex") / "wd")
  return workdir, loop.train_and_evaluate(loop.default_config(**TINY), workdir)


@pytest.mark.slow
def test_main_job_trains_on_example_intents(examples_workdir):
  workdir, out = examples_workdir
  r = out["models"]["meta_mlp"]
  assert set(r["id"]) == {"flip", "move_right,k=1"} and set(r["ood"]) == {"move_right,k=3"}
  config = loop.default_config(**TINY)
  model = loop.create_model(config, loop.build_task(config), "meta_mlp")
  assert r["num_params"] == model.num_params() > model.learner.num_params()  # + encoder
  with open(f"{workdir}/metrics.jsonl") as f:
    losses = [l for l in f.read().splitlines() if '"loss"' in l]
  assert len(losses) == 2
  # A rerun on the finished workdir resumes to the same table.
  again = loop.train_and_evaluate(config, workdir)
  assert again["models"]["meta_mlp"]["id"] == r["id"]


@pytest.mark.slow
def test_synthesize_takes_pairs(examples_workdir):
  import neuroprog  # pylint: disable=g-import-not-at-top
  from neuroprog.run import seeds as seeds_lib  # pylint: disable=g-import-not-at-top
  workdir, _ = examples_workdir
  pairs = [{"input": [[0, 2, 2, 0, 0]], "output": [[0, 0, 2, 2, 0]]},
           ([3, 3, 0, 0], [0, 3, 3, 0])]
  spec, theta = neuroprog.synthesize(workdir, pairs, model="meta_mlp")
  run = neuroprog.synthesis.load_run(workdir, "meta_mlp")
  support = intents.support_from_pairs(pairs, max_len=33, pad=PAD, shots=2)
  want = run.model.apply(seeds_lib.take(run.params_S, 0), support)[0]
  assert spec == run.task.spec and theta.shape == want.shape
  np.testing.assert_allclose(theta, want, rtol=1e-6)
  other = neuroprog.synthesize(workdir, pairs[:1], model="meta_mlp")[1]
  assert float(jnp.abs(other - theta).max()) > 0      # one pair is another intent
  with pytest.raises(ValueError, match="trained on example intents: give the intent as"):
    neuroprog.synthesize(workdir, "flip", model="meta_mlp")
  with pytest.raises(ValueError, match=re.escape("pairs[1] output: colour 12 outside 0..9")):
    neuroprog.synthesize(workdir, [([1, 2], [2, 1]), ([1, 2], [12, 1])], model="meta_mlp")


@pytest.mark.slow
def test_refinement_is_chosen_on_validation_of_the_trained_run_and_used_by_synthesize(
    examples_workdir, tmp_path, monkeypatch):
  from experiments.pipelines import select  # pylint: disable=g-import-not-at-top
  from neuroprog import synthesis  # pylint: disable=g-import-not-at-top
  from neuroprog.run import seeds as seeds_lib  # pylint: disable=g-import-not-at-top
  from neuroprog.train import refine  # pylint: disable=g-import-not-at-top
  workdir, out = examples_workdir
  config = loop.default_config(**TINY)
  evaluated = []
  original = loop.Trainer.evaluate

  def recording(self, params_S, intents_, key):
    evaluated.extend(intents_)
    return original(self, params_S, intents_, key)
  monkeypatch.setattr(loop.Trainer, "evaluate", recording)
  refined_with = []
  original_refined = refine.refined_theta_per_seed

  def traced(model, task, params_S, support, refinement):
    refined_with.append(refinement)
    return original_refined(model, task, params_S, support, refinement)
  monkeypatch.setattr(refine, "refined_theta_per_seed", traced)
  result = select.run(config, "refine_steps=0,20;refine_learning_rate=0.01", str(tmp_path),
                      trained=workdir)
  assert refined_with == [refine.Refinement(20, 0.01, "theta")]   # candidate 1 only
  assert set(evaluated) == {("move_left", 4)}          # validation only, no training
  rows = result["rows"]
  # No refinement re-scores the run's own validation figure exactly.
  assert rows[0]["val"] == out["models"]["meta_mlp"]["val"]
  assert [r["overrides"]["refine_steps"] for r in rows] == [0, 20]
  assert rows[0]["id_score"] is None
  assert "| meta_mlp" in select.markdown(result) and " | - | " in select.markdown(result)
  # synthesize fits θ to the given pairs as the config's refine_* keys say.
  pairs = [([0, 2, 2, 0, 0], [0, 0, 2, 2, 0]), ([3, 3, 0, 0], [0, 3, 3, 0])]
  run = synthesis.load_run(workdir, "meta_mlp")
  params = seeds_lib.take(run.params_S, 0)
  refinement = refine.Refinement(20, 0.01, "theta")
  _, plain = synthesis.synthesize_from_params(params, pairs, model=run.model, task=run.task)
  _, fitted = synthesis.synthesize_from_params(params, pairs, model=run.model, task=run.task,
                                               refinement=refinement)
  support = intents.support_from_pairs(pairs, max_len=33, pad=PAD, shots=2)
  loss = lambda th: float(
      refine.support_loss_per_set(run.task, run.task.spec, th[None], support)[0])
  assert loss(fitted) < 0.5 * loss(plain)
  monkeypatch.setattr(loop, "refinement_of", lambda c, name=None: refinement)
  np.testing.assert_allclose(neuroprog_synthesize(workdir, pairs), fitted, atol=1e-5)
  np.testing.assert_array_equal(neuroprog_synthesize(workdir, pairs, refine=False), plain)
  # The main job re-scores a finished run with a refinement, training nothing,
  # and says so in results.md; refine_* are evaluation keys of the workdir.
  monkeypatch.undo()
  rescored = loop.train_and_evaluate(loop.default_config(
      **TINY, refine_steps=5, refine_by_model={"meta_mlp": {"steps": 20}}), workdir)
  assert rescored["refinement"] == {"meta_mlp": {"steps": 20, "learning_rate": 0.01,
                                                 "target": "theta", "gate": "always",
                                                 "search_families": 0, "search_radius": 1}}
  assert rescored["models"]["meta_mlp"]["train_time_s"] == out["models"]["meta_mlp"][
      "train_time_s"]
  with open(f"{workdir}/results.md") as f:
    assert "before they were scored (`train.refine`; the in-context model is never " \
        "refined): meta_mlp: 20 Adam steps on its theta at rate 0.01." in f.read()
  plain_again = loop.train_and_evaluate(loop.default_config(**TINY), workdir)
  assert "refinement" not in plain_again
  assert plain_again["models"]["meta_mlp"]["id"] == out["models"]["meta_mlp"]["id"]


def neuroprog_synthesize(workdir, pairs, **kw):
  import neuroprog  # pylint: disable=g-import-not-at-top
  return neuroprog.synthesize(workdir, pairs, model="meta_mlp", seed=0, **kw)[1]


@pytest.mark.slow
def test_official_tasks_are_scored_from_their_own_train_pairs(examples_workdir, tmp_path):
  from experiments.pipelines import eval_arc1d  # pylint: disable=g-import-not-at-top
  from neuroprog import programs, synthesis  # pylint: disable=g-import-not-at-top
  from neuroprog.run import seeds as seeds_lib  # pylint: disable=g-import-not-at-top
  from neuroprog.tasks.arc1d import io  # pylint: disable=g-import-not-at-top
  workdir, _ = examples_workdir
  data, key = tmp_path / "data", jax.random.key(0)
  moves = [io.generate(jax.random.fold_in(key, i), ("move_right", 1), name=f"t{i}")
           for i in range(2)]
  io.save(moves, data / "1d_move_1p")                       # a trained family
  io.save([io.generate(key, ("scale", 2), name="p0")], data / "1d_pcopy_1c")  # unseen
  flip = io.generate(jax.random.fold_in(key, 9), ("flip", None), name="f0")
  long_x = np.array([0] * 30 + [3, 3, 3, 4, 0], np.int64)   # 35 cells > max_len 33
  io.save([io.ArcTask("long", train=((long_x, long_x),) + flip.train[1:], test=flip.test)],
          data / "1d_flip")
  out = eval_arc1d.run(workdir, data, intent="examples", out_dir=str(tmp_path / "o"))
  m = out["models"]["meta_mlp"]
  fams = m["families"]
  assert (fams["1d_move_1p"]["split"], fams["1d_pcopy_1c"]["split"]) == (
      "train", "unseen family")
  assert out["unmapped"] == [] and m["unseen families"]["tasks"] == 1
  # The long support pair: the task cannot be encoded, its test pair does not fit.
  assert fams["1d_flip"]["test"]["does_not_fit"] == len(flip.test)
  assert fams["1d_flip"]["tasks_solved"] == 0
  # By hand: each move task's θ from its own first two train pairs.
  run = synthesis.load_run(workdir, "meta_mlp")
  params = seeds_lib.take(run.params_S, 0)
  correct = 0
  for t in moves:
    theta = run.model.apply(params, intents.support_from_pairs(
        list(t.train[:2]), max_len=33, pad=PAD, shots=2))[0]
    for x, y in t.test:
      pred = np.argmax(programs.execute(run.task.spec, theta, jnp.asarray(
          io.encode([x], 33))), -1)[0][:len(y)]
      correct += int(np.array_equal(pred, y))
  assert fams["1d_move_1p"]["test"]["correct"] == correct
  with open(tmp_path / "o" / "arc1d_eval.md") as f:
    md = f.read()
  assert "| **unseen families** |" in md and "first 2 train pairs" in md
  with pytest.raises(ValueError, match="trained on examples intents; allowed: --intent=examples"):
    eval_arc1d.run(workdir, data, intent="label")
  # With a support refinement each task's θ is fitted to the same two pairs first.
  from neuroprog.train import refine  # pylint: disable=g-import-not-at-top
  fitted = eval_arc1d.run(workdir, data, intent="examples", out_dir=str(tmp_path / "r"),
                          refine_steps=30, refine_learning_rate=0.01)
  assert fitted["refinement"] == {"meta_mlp": {"steps": 30, "learning_rate": 0.01,
                                               "target": "theta", "gate": "always",
                                               "search_families": 0, "search_radius": 1}}
  refinement = refine.Refinement(30, 0.01, "theta")
  correct = 0
  for t in moves:
    support = intents.support_from_pairs(list(t.train[:2]), max_len=33, pad=PAD, shots=2)
    theta = jax.jit(lambda p, s: refine.refined_theta(run.model, run.task, p, s, refinement))(
        params, support)[0]
    for x, y in t.test:
      pred = np.argmax(programs.execute(run.task.spec, theta, jnp.asarray(
          io.encode([x], 33))), -1)[0][:len(y)]
      correct += int(np.array_equal(pred, y))
  assert fitted["models"]["meta_mlp"]["families"]["1d_move_1p"]["test"]["correct"] == correct
  # The support pairs are train pairs: fitted, the program gets more of them right.
  train_right = lambda o: o["models"]["meta_mlp"]["families"]["1d_move_1p"]["train"]["correct"]
  assert train_right(fitted) > train_right(out)
  with open(tmp_path / "r" / "arc1d_eval.md") as f:
    assert ("chosen on or fitted to those pairs (meta_mlp: 30 Adam steps on its theta at "
            "rate 0.01)") in f.read()
  with pytest.raises(ValueError, match=r"--refine_target='w'; allowed"):
    eval_arc1d.run(workdir, data, intent="examples", refine_steps=3, refine_target="w")


def test_in_context_direct_model_reads_pairs_in_any_order():
  config = loop.default_config(task="arc1d", models=("direct",), intent="examples", shots=3,
                               model_configs={"direct": {"d_model": 16, "n_layers": 1}})
  task = loop.build_task(config)
  model = loop.create_model(config, task, "direct")
  assert isinstance(model, intents.InContextModel) and step_lib.is_direct(model)
  s = _random_support(jax.random.key(7), b=2, k=3, present=2)
  params = model.init(jax.random.key(0), s)
  q = _random_support(jax.random.key(8), b=2, k=4).x                # 4 query grids per intent
  apply = jax.jit(model.apply)   # one program for the five forward passes
  out = apply(params, s, q)
  assert out.shape == (2, 4, L, 11) and model.num_params() > 0
  perm = np.array([1, 0, 2])
  swapped = intents.SupportSet(s.x[:, perm], s.y[:, perm], s.mask[:, perm])
  np.testing.assert_allclose(apply(params, swapped, q), out, atol=1e-4)
  junk = _random_support(jax.random.key(9), b=2, k=3)
  filled = intents.SupportSet(jnp.where(s.mask[..., None], s.x, junk.x),
                              jnp.where(s.mask[..., None], s.y, junk.y), s.mask)
  np.testing.assert_allclose(apply(params, filled, q), out, atol=1e-4)
  other = apply(params, _random_support(jax.random.key(10), b=2, k=3), q)
  assert float(jnp.abs(other - out).max()) > 1e-3    # the pairs are read
  loss_fn = step_lib.make_loss_fn(model, task, 2)
  ip = jnp.asarray(task.intent_params(task.train_intents[:2]))
  grads = jax.jit(jax.grad(lambda p: loss_fn(p, jax.random.key(1), None, ip)[0]))(params)
  assert float(jnp.abs(grads["net"]["memory_0_self"]["query"]["kernel"]).max()) > 0
  from neuroprog import synthesis  # pylint: disable=g-import-not-at-top
  with pytest.raises(ValueError, match="emits no weights"):
    synthesis.synthesize_from_params(params, [([1, 2], [2, 1])], model=model, task=task)


def test_label_readout_is_a_training_target_only():
  """With config.intent_label_loss = w, the objective is the task loss plus w
  times the squared error of a linear readout of u against the label
  features; the readout's gradient reaches the encoder but not the learner,
  and θ (hence the task loss) does not depend on the labels."""
  config = loop.default_config(task="arc1d", models=("meta_mlp",), intent="examples",
                               shots=2, model_configs={"meta_mlp": {"hidden": 4}},
                               intent_encoder={"width": 8, "heads": 2, "out_dim": 8},
                               intent_label_loss=0.5)
  task = loop.build_task(config)
  model = loop.create_model(config, task, "meta_mlp")
  assert (model.label_dim, model.label_weight) == (task.feature_dim, 0.5)
  key = jax.random.key(0)
  params = model.init(key, step_lib.probe_intents(model, task, key, task.train_intents))
  assert params["label_head"]["kernel"].shape == (8, task.feature_dim)
  assert model.num_params() == (model.encoder_params() + model.learner.num_params()
                                + 9 * task.feature_dim)
  ip = jnp.asarray(task.intent_params(task.train_intents[:4]))
  feats = jnp.asarray(task.features(task.train_intents[:4]))
  # Forward passes only: compiling the objective's gradient through the arc1d
  # Transformer would double this test's time, and the gradient checks below
  # need only the readout term's.
  objective = step_lib.make_objective_fn(model, task, 4)
  total, metrics = jax.jit(objective)(params, jax.random.key(1), feats, ip)
  # The readout loss by hand, on the support sets the step drew.
  # Jitted, as everything below: op by op, the draw, the encoder and its
  # gradient took three quarters of this test's time.
  support = jax.jit(lambda k: step_lib.draw(model, task, k, feats, ip, 4)[0])(jax.random.key(1))
  u = jax.jit(model.encode)(params, support)
  pred = u @ params["label_head"]["kernel"] + params["label_head"]["bias"]
  by_hand = float(jnp.mean(jnp.sum((pred - feats) ** 2, -1)))
  np.testing.assert_allclose(float(metrics["label_loss"]), by_hand, rtol=1e-4)
  np.testing.assert_allclose(float(total), float(metrics["loss"]) + 0.5 * by_hand, rtol=1e-5)
  # Without the weight, the same params give the same task loss and no readout term.
  plain = dataclasses.replace(model, label_weight=0.0)
  total0, metrics0 = jax.jit(step_lib.make_objective_fn(plain, task, 4))(
      params, jax.random.key(1), feats, ip)
  np.testing.assert_allclose(float(total0), float(metrics["loss"]), rtol=1e-5)
  assert "label_loss" not in metrics0
  # The readout term alone: gradient in the encoder and the head, none in the learner.
  g = jax.jit(jax.grad(lambda p: intents.label_loss(model, p, support, feats)))(params)
  assert float(jnp.abs(g["encoder"]["token"]["embedding"]).max()) > 0
  assert float(jnp.abs(g["label_head"]["kernel"]).max()) > 0
  assert all(float(jnp.abs(a).max()) == 0 for a in jax.tree_util.tree_leaves(g["learner"]))


def test_learner_can_read_the_label_readout_instead_of_u():
  config = loop.default_config(task="arc1d", models=("meta_gmlp",), intent="examples",
                               shots=2, model_configs={"meta_gmlp": {"hidden": 2}},
                               intent_encoder={"width": 8, "heads": 2, "out_dim": 8},
                               intent_label_loss=1.0, intent_label_input=True)
  task = loop.build_task(config)
  model = loop.create_model(config, task, "meta_gmlp")
  assert model.label_input and model.learner.intent_dim == task.feature_dim
  key = jax.random.key(0)
  params = model.init(key, step_lib.probe_intents(model, task, key, task.train_intents))
  ip = jnp.asarray(task.intent_params(task.train_intents[:3]))
  feats = jnp.asarray(task.features(task.train_intents[:3]))
  # Jitted: op by op, each encoder pass takes seconds.
  support = jax.jit(lambda k: step_lib.draw(model, task, k, feats, ip, 0)[0])(jax.random.key(1))
  readout = jax.jit(model.label_prediction)(params, support)
  apply = jax.jit(model.apply)
  theta = apply(params, support)
  # rtol too: the two paths fuse differently, and on some CPUs (an AMD EPYC) an
  # entry near 2 differs by 5e-5 of itself.
  np.testing.assert_allclose(
      theta, model.learner._apply(params["learner"], readout), rtol=1e-4, atol=1e-4)  # pylint: disable=protected-access
  # The readout is what θ depends on: another readout head, another θ.
  moved = jax.tree_util.tree_map(lambda a: a, params)
  moved["label_head"] = {**params["label_head"], "bias": params["label_head"]["bias"] + 1.0}
  assert float(jnp.abs(apply(moved, support) - theta).max()) > 1e-4
  with pytest.raises(ValueError, match="needs a label loss weight > 0"):
    intents.wrap(model.learner, task.spec, 2, {"width": 8, "heads": 2, "out_dim": 8},
                 pad=task.pad, vocab_size=11, label_input=True)


def _readout_models(*feeds):
  """(task, one tiny Meta-gMLP reading the label readout per label feed)."""
  values = dict(task="arc1d", models=("meta_gmlp",), intent="examples", shots=2,
                model_configs={"meta_gmlp": {"hidden": 2}},
                intent_encoder={"width": 8, "heads": 2, "out_dim": 8},
                intent_label_loss=1.0, intent_label_input=True)
  task = loop.build_task(loop.default_config(**values))
  return task, [loop.create_model(loop.default_config(**values, intent_label_feed=feed), task,
                                  "meta_gmlp") for feed in feeds]


# Slow (75-105 s on 2 cores: seq2seq training-step compiles); the fast suite keeps
# the readout's core tests (a training target only, the teacher feed).
@pytest.mark.slow
def test_detached_readout_leaves_the_encoder_to_the_label_loss():
  """With intent_label_feed="detached" the learner reads the same readout
  (same θ), but the task loss's gradient stops there: the encoder and the
  readout head move only with the label loss, the learner only with the task
  loss. "snapped" feeds the learner the features of the nearest intent."""
  task, (joint, detached, snapped) = _readout_models("joint", "detached", "snapped")
  assert (joint.label_feed, detached.label_feed) == ("joint", "detached")
  key = jax.random.key(0)
  params = joint.init(key, step_lib.probe_intents(joint, task, key, task.train_intents))
  ip = jnp.asarray(task.intent_params(task.train_intents[:3]))
  feats = jnp.asarray(task.features(task.train_intents[:3]))
  support = step_lib.draw(joint, task, jax.random.key(1), feats, ip, 0)[0]
  np.testing.assert_allclose(detached.apply(params, support), joint.apply(params, support),
                             atol=1e-6)
  snapped_input = task.snap_features(joint.label_prediction(params, support))
  np.testing.assert_array_equal(snapped.intent_input(params, support), snapped_input)
  np.testing.assert_allclose(
      snapped.apply(params, support),
      snapped.learner._apply(params["learner"], snapped_input), atol=1e-5)  # pylint: disable=protected-access

  def task_grads(model):
    objective = step_lib.make_objective_fn(dataclasses.replace(model, label_weight=0.0),
                                           task, 4)
    # label_weight 0 drops the label term; the learner still reads the readout.
    return jax.grad(lambda p: objective(p, jax.random.key(1), feats, ip)[0])(params)

  def biggest(tree):
    return max(float(jnp.abs(a).max()) for a in jax.tree_util.tree_leaves(tree))

  g_joint, g_detached = task_grads(joint), task_grads(detached)
  assert biggest(g_joint["encoder"]) > 0 and biggest(g_joint["label_head"]) > 0
  assert biggest(g_detached["encoder"]) == 0 and biggest(g_detached["label_head"]) == 0
  g_snapped = task_grads(snapped)
  assert biggest(g_snapped["encoder"]) == 0 and biggest(g_snapped["learner"]) > 0
  np.testing.assert_allclose(biggest(g_detached["learner"]), biggest(g_joint["learner"]),
                             rtol=1e-5)
  # The label loss still trains the encoder through the detached readout.
  g_label = jax.grad(lambda p: intents.label_loss(detached, p, support, feats))(params)
  assert biggest(g_label["encoder"]) > 0 and biggest(g_label["learner"]) == 0
  wrap = functools.partial(intents.wrap, joint.learner, task.spec, 2,
                           {"width": 8, "heads": 2, "out_dim": 8}, pad=task.pad,
                           vocab_size=11, label_dim=task.feature_dim, label_weight=1.0)
  with pytest.raises(ValueError, match="label feed='detached' .* needs the label readout"):
    wrap(label_feed="detached")
  with pytest.raises(ValueError, match="label feed='snapped' needs the task's snap_features"):
    wrap(label_input=True, label_feed="snapped")


# Slow (75-105 s on 2 cores: seq2seq training-step compiles); the fast suite keeps
# the readout's core tests (a training target only, the teacher feed).
@pytest.mark.slow
def test_snapped_learner_is_calibrated_on_the_training_intents_label_features():
  """A detached or snapped learner reads label features once the readout
  recognises the intent, so init_state calibrates its output head on the
  training intents' features, not on the untrained readout (which snaps the
  probe support sets to a few intents). The joint learner keeps its calibration
  on the readout."""
  task, (joint, snapped) = _readout_models("joint", "snapped")
  assert (joint.calibrates_on_labels, snapped.calibrates_on_labels) == (False, True)
  key = jax.random.key(3)
  feats = jnp.asarray(task.features(task.train_intents))
  state = step_lib.init_state(snapped, task, optax.sgd(0.1), key)
  want = snapped.learner.init(jax.random.split(key)[1], feats)
  np.testing.assert_allclose(state.params["learner"]["head"]["gain"],
                             want["head"]["gain"], rtol=1e-4)
  probe = step_lib.probe_intents(snapped, task, jax.random.fold_in(key, 7),
                                 task.train_intents)
  # What the learner reads at init: the 22 probes snapped to a few intents
  # (8 here; 2 with the pair-statistics parameter, which starts at 0).
  read = np.asarray(snapped.intent_input(state.params, probe))
  assert len({tuple(row) for row in read}) < len(task.train_intents) // 2
  uncalibrated = snapped.init(key, probe)
  gain_uncal = np.asarray(uncalibrated["learner"]["head"]["gain"])
  assert np.abs(gain_uncal - np.asarray(want["head"]["gain"])).max() > 1e-2
  # The joint learner ignores the labels: its head is fit to its readout.
  jax.tree_util.tree_map(np.testing.assert_array_equal, joint.init(key, probe, feats),
                         joint.init(key, probe))
  with pytest.raises(ValueError, match=r"probe_labels has shape \(3, 5\)"):
    snapped.init(key, probe, jnp.zeros((3, 5)))


def test_teacher_feed_trains_the_learner_on_true_labels_and_synthesizes_from_the_readout():
  """intent_label_feed="teacher": in the training objective the learner reads
  the drawn intents' true label features (so the task loss never reaches the
  encoder or the readout), and everywhere else the snapped readout."""
  task, (teacher, snapped) = _readout_models("teacher", "snapped")
  assert teacher.calibrates_on_labels
  key = jax.random.key(0)
  params = step_lib.init_state(teacher, task, optax.sgd(0.1), key).params
  ip = jnp.asarray(task.intent_params(task.train_intents[:3]))
  feats = jnp.asarray(task.features(task.train_intents[:3]))
  support = jax.jit(lambda k: step_lib.draw(teacher, task, k, feats, ip, 0)[0])(
      jax.random.key(1))
  learner = lambda u: teacher.learner._apply(params["learner"], u)  # pylint: disable=protected-access

  # Every forward quantity below from one jitted program: op by op, each
  # encoder pass took seconds.
  @jax.jit
  def forward(p, support):
    return {"teacher": teacher.apply(p, support), "snapped": snapped.apply(p, support),
            "input": teacher.intent_input(p, support),
            "theta_and_readout": teacher.theta_and_labels(p, support, feats),
            "learner_on_labels": learner(feats),
            "readout": teacher.label_prediction(p, support),
            "snapped_given_labels": snapped.theta_and_labels(p, support, feats)[0],
            "snapped_alone": snapped.theta_and_labels(p, support)[0]}
  out = forward(params, support)
  # Synthesis: the snapped readout, as the snapped feed reads it.
  np.testing.assert_array_equal(out["teacher"], out["snapped"])
  assert not np.allclose(out["input"], feats)
  # Training: the true labels.
  theta, readout = out["theta_and_readout"]
  np.testing.assert_allclose(theta, out["learner_on_labels"], atol=1e-5)
  np.testing.assert_array_equal(readout, out["readout"])
  objective = step_lib.make_objective_fn(teacher, task, 4)
  # The whole objective's gradient and the task loss's alone, from one jitted
  # program (one forward pass, two backward passes): compiling the arc1d
  # Transformer's gradient is most of this test's time.
  def objective_and_task_grads(p):
    _, pullback = jax.vjp(
        lambda q: (lambda total, m: (total, m["loss"]))(
            *objective(q, jax.random.key(1), feats, ip)), p)
    one, zero = jnp.float32(1.0), jnp.float32(0.0)
    return pullback((one, zero))[0], pullback((zero, one))[0]
  grads, g_task = jax.jit(objective_and_task_grads)(params)
  biggest = lambda tree: max(float(jnp.abs(a).max()) for a in jax.tree_util.tree_leaves(tree))
  assert biggest(g_task["encoder"]) < 1e-20 and biggest(g_task["learner"]) > 1e-3
  assert biggest(grads["encoder"]) > 1e-3 and biggest(grads["label_head"]) > 1e-3
  # Other feeds ignore the true labels.
  np.testing.assert_array_equal(out["snapped_given_labels"], out["snapped_alone"])
  with pytest.raises(ValueError, match="needs the task's snap_features"):
    intents.check_label_feed("teacher", True, False)
  # Twin draws follow a label-intent twin, which only the teacher feed trains as.
  wrap = functools.partial(intents.wrap, teacher.learner, task.spec, 2,
                           {"width": 8, "heads": 2, "out_dim": 8}, pad=task.pad,
                           vocab_size=11, label_dim=task.feature_dim, label_weight=1.0,
                           label_input=True, snap=task.snap_features)
  assert wrap(label_feed="teacher", twin_draws=True).twin_draws
  with pytest.raises(ValueError, match="twin_draws=True .* got label_feed='snapped'"):
    wrap(label_feed="snapped", twin_draws=True)
  with pytest.raises(ValueError, match="twin_draws=1; allowed: True or False"):
    wrap(label_feed="teacher", twin_draws=1)


def test_label_loss_in_the_intents_units():
  """intent_label_units="intent": the readout's error on arc1d's parameter
  feature counts in parameter steps (x 10), the other features as they are."""
  values = dict(task="arc1d", models=("meta_mlp", "direct"), intent="examples", shots=2,
                model_configs={"meta_mlp": {"hidden": 4},
                               "direct": {"d_model": 16, "n_layers": 1}},
                intent_encoder={"width": 8, "heads": 2, "out_dim": 8}, intent_label_loss=1.0)
  config = loop.default_config(**values, intent_label_units="intent")
  loop.validate_config(config)
  task = loop.build_task(config)
  assert task.label_units == (1.0,) * 9 + (10.0, 1.0)
  for name in ("meta_mlp", "direct"):
    model = loop.create_model(config, task, name)
    assert model.label_units == task.label_units
    assert loop.create_model(loop.default_config(**values), task, name).label_units is None
  model = loop.create_model(config, task, "meta_mlp")
  key = jax.random.key(0)
  params = model.init(key, step_lib.probe_intents(model, task, key, task.train_intents))
  ip = jnp.asarray(task.intent_params(task.train_intents[:4]))
  feats = jnp.asarray(task.features(task.train_intents[:4]))
  metrics = step_lib.make_objective_fn(model, task, 4)(params, jax.random.key(1), feats, ip)[1]
  support = step_lib.draw(model, task, jax.random.key(1), feats, ip, 4)[0]
  diff = model.label_prediction(params, support) - feats
  by_hand = jnp.mean(jnp.sum(diff[:, :9] ** 2, -1) + (10 * diff[:, 9]) ** 2 + diff[:, 10] ** 2)
  np.testing.assert_allclose(float(metrics["label_loss"]), float(by_hand), rtol=1e-4)
  np.testing.assert_allclose(float(intents.label_loss(model, params, support, feats)),
                             float(by_hand), rtol=1e-4)
  with pytest.raises(ValueError, match="label_units=\\(1.0, 2.0\\); allowed: None, or 11"):
    intents.wrap(model.learner, task.spec, 2, {"width": 8, "heads": 2, "out_dim": 8},
                 pad=task.pad, vocab_size=11, label_dim=11, label_weight=1.0,
                 label_units=(1.0, 2.0))


# Slow (75-105 s on 2 cores: seq2seq training-step compiles); the fast suite keeps
# the readout's core tests (a training target only, the teacher feed).
@pytest.mark.slow
def test_parameter_from_the_pair_statistics_of_the_readouts_family():
  """intent_label_parameter="pair_stats": the readout's parameter entry is
  gain x (mean pair statistics @ kernel + bias)[family], family the readout's
  argmax; the label loss trains that head, and its parameters are counted."""
  values = dict(task="arc1d", models=("meta_gmlp",), intent="examples", shots=3,
                model_configs={"meta_gmlp": {"hidden": 2}},
                intent_encoder={"width": 8, "heads": 2, "out_dim": 8},
                intent_label_loss=1.0, intent_label_input=True)
  config = loop.default_config(**values, intent_label_parameter="pair_stats")
  loop.validate_config(config)
  task = loop.build_task(config)
  model = loop.create_model(config, task, "meta_gmlp")
  dense = loop.create_model(loop.default_config(**values), task, "meta_gmlp")
  key = jax.random.key(0)
  params = model.init(key, step_lib.probe_intents(model, task, key, task.train_intents))
  n_stats = params["param_head"]["kernel"].shape[0]
  assert params["param_head"]["kernel"].shape == (n_stats, 9)
  assert model.num_params() == dense.num_params() + (n_stats + 1) * 9
  intents_ = [("move_right", 2), ("scale", 4), ("recolor", 6)]
  ip = jnp.asarray(task.intent_params(intents_))
  feats = jnp.asarray(task.features(intents_))
  support = step_lib.draw(model, task, jax.random.key(1), feats, ip, 0)[0]
  kernel = jax.random.normal(jax.random.key(2), (n_stats, 9))
  bias = jnp.arange(9.0)
  params["param_head"] = {"kernel": kernel, "bias": bias}
  readout = model.label_prediction(params, support)
  plain = dense.label_prediction(params, support)     # the same Dense readout of u
  stats = intents.mean_pair_relations(support, task.pad)
  family = jnp.argmax(plain[:, :9], -1)
  expected = intents.PARAM_HEAD_GAIN * (stats @ kernel + bias)[jnp.arange(3), family]
  np.testing.assert_allclose(readout[:, -2], expected, rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(readout[:, :-2], plain[:, :-2], atol=1e-6)
  np.testing.assert_allclose(readout[:, -1], plain[:, -1], atol=1e-6)
  # Only the chosen family's column of the head learns from the label loss.
  g = jax.grad(lambda p: intents.label_loss(model, p, support, feats))(params)
  chosen = set(np.asarray(family).tolist())
  moved = {j for j in range(9) if float(jnp.abs(g["param_head"]["kernel"][:, j]).max()) > 0}
  assert moved == chosen
  # The mean statistics skip absent pairs.
  fewer = support._replace(mask=support.mask.at[:, 2].set(False))
  np.testing.assert_allclose(
      intents.mean_pair_relations(fewer, task.pad),
      intents.pair_relations(support.x[:, :2], support.y[:, :2], task.pad).mean(1),
      rtol=1e-6)


def test_arc1d_snaps_estimates_to_the_nearest_intent():
  """snap_features: the family of the largest family entry and, where the
  family has one, the parameter rounded to an integer, unseen ones included."""
  task = tasks.get("arc1d")
  intents_ = [("move_right", 3), ("scale", 4), ("flip", None), ("recolor", 7)]
  exact = jnp.asarray(task.features(intents_))
  noise = 0.04 * jax.random.normal(jax.random.key(0), exact.shape)   # < 0.05: k moves < 0.5
  noisy = exact + jnp.clip(noise, -0.045, 0.045)
  np.testing.assert_array_equal(task.snap_features(noisy), exact)
  # A parameter estimate of 3.6 on a family with a parameter reads as 4; on a
  # family without one the parameter entries are 0 whatever the estimate.
  est = exact.at[0, -2].set(0.36).at[2, -2].set(0.5).at[2, -1].set(0.7)
  snapped = np.asarray(task.snap_features(est))
  np.testing.assert_allclose(snapped[0], task.features([("move_right", 4)])[0], atol=1e-7)
  np.testing.assert_array_equal(snapped[2], exact[2])


# CI budget (about 20 s of one worker): the readout itself is checked by
# test_label_readout_is_a_training_target_only; this variant, the direct
# in-context model carrying it, runs in make test-slow.
@pytest.mark.slow
def test_in_context_model_has_the_same_readout():
  config = loop.default_config(task="arc1d", models=("direct",), intent="examples", shots=3,
                               model_configs={"direct": {"d_model": 16, "n_layers": 1}},
                               intent_label_loss=1.0)
  task = loop.build_task(config)
  model = loop.create_model(config, task, "direct")
  s = _random_support(jax.random.key(7), b=2, k=3, present=2)
  params = model.init(jax.random.key(0), s)
  assert params["net"]["label_head"]["kernel"].shape == (16, task.feature_dim)
  plain_config = config.copy_and_resolve_references()
  plain_config.intent_label_loss = 0.0
  plain = loop.create_model(plain_config, task, "direct")
  assert model.num_params() == plain.num_params() + 17 * task.feature_dim
  feats = jnp.ones((2, task.feature_dim))
  pred = model.label_prediction(params, s)
  assert pred.shape == (2, task.feature_dim)
  # One pass gives the outputs and the readout of the separate calls.
  q = _random_support(jax.random.key(8), b=2, k=4).x
  logits, labels = model.outputs_and_labels(params, s, q)
  np.testing.assert_allclose(logits, model.apply(params, s, q), atol=1e-4)
  np.testing.assert_allclose(labels, pred, atol=1e-5)
  np.testing.assert_allclose(float(intents.label_loss(model, params, s, feats)),
                             float(jnp.mean(jnp.sum((pred - feats) ** 2, -1))), rtol=1e-5)
  # Padding pairs are not read by the readout either.
  junk = _random_support(jax.random.key(9), b=2, k=3)
  filled = intents.SupportSet(jnp.where(s.mask[..., None], s.x, junk.x),
                              jnp.where(s.mask[..., None], s.y, junk.y), s.mask)
  np.testing.assert_allclose(model.label_prediction(params, filled), pred, atol=1e-4)
  with pytest.raises(ValueError, match="weight=-1.0; allowed: a number >= 0"):
    intents.in_context("direct", task.spec, 3, dict(model.config), pad=task.pad,
                       label_dim=task.feature_dim, label_weight=-1.0)


def test_a_workdir_written_before_the_intent_keys_still_resumes(tmp_path):
  """config.json of an older label run lacks intent/shots/intent_encoder; the
  same settings today must resume, and a real change is still refused."""
  import json  # pylint: disable=g-import-not-at-top
  from neuroprog.run import workdir as workdir_lib  # pylint: disable=g-import-not-at-top
  config = loop.default_config(task="sumfirst", models=("meta_mlp",))
  old = json.loads(workdir_lib.config_json(config))
  for key in loop.ADDED_KEYS:
    del old[key]
  for name in ("wd", "wd_plain"):
    (tmp_path / name).mkdir()
    with open(tmp_path / name / "config.json", "w") as f:
      json.dump(old, f)
  # Without the added keys' defaults the same settings would look changed.
  with pytest.raises(ValueError, match="intent: None -> 'label'"):
    workdir_lib.prepare(str(tmp_path / "wd_plain"), config)
  assert workdir_lib.prepare(str(tmp_path / "wd"), config,
                             added_keys=loop.ADDED_KEYS) == {}
  config.intent = "examples"
  with pytest.raises(ValueError, match="intent: 'label' -> 'examples'"):
    workdir_lib.prepare(str(tmp_path / "wd"), config, added_keys=loop.ADDED_KEYS)


def test_a_workdir_written_before_a_model_option_still_resumes(tmp_path, monkeypatch):
  """A model option added later (Meta-GNN's pe_learned) is missing from the
  model_configs of an older config.json, for every model of that base
  (meta_gnn and meta_gnn@library); the same settings today must resume, and a
  real change of a model option is still refused."""
  import json  # pylint: disable=g-import-not-at-top
  from neuroprog.run import workdir as workdir_lib  # pylint: disable=g-import-not-at-top
  config = loop.default_config(task="sumfirst", models=("meta_mlp", "meta_gnn",
                                                        "meta_gnn@library"))
  old = json.loads(workdir_lib.config_json(config))
  for name in ("meta_gnn", "meta_gnn@library"):
    del old["model_configs"][name]["pe_learned"]
  (tmp_path / "wd").mkdir()
  with open(tmp_path / "wd" / "config.json", "w") as f:
    json.dump(old, f)
  with pytest.raises(ValueError, match="model_configs"):
    workdir_lib.prepare(str(tmp_path / "wd"), config, added_keys=loop.ADDED_KEYS)
  assert workdir_lib.differences(str(tmp_path / "wd"), config, added_keys=loop.ADDED_KEYS,
                                 fill_stored=loop.fill_added_options) == {}
  config.model_configs.meta_gnn.pe_learned = True
  with pytest.raises(ValueError, match="model_configs"):
    workdir_lib.prepare(str(tmp_path / "wd"), config, added_keys=loop.ADDED_KEYS,
                        fill_stored=loop.fill_added_options)
  config.model_configs.meta_gnn.pe_learned = False
  # train_and_evaluate's own check accepts it: stop right after its prepare.
  real_prepare = workdir_lib.prepare

  class Prepared(Exception):
    pass

  def prepare_then_stop(*args, **kwargs):
    real_prepare(*args, **kwargs)
    raise Prepared

  monkeypatch.setattr(loop.workdir_lib, "prepare", prepare_then_stop)
  with pytest.raises(Prepared):
    loop.train_and_evaluate(config, str(tmp_path / "wd"))
  config.model_configs.meta_gnn.rounds = 2
  with pytest.raises(ValueError, match="model_configs"):
    loop.train_and_evaluate(config, str(tmp_path / "wd"))


def test_memory_attention_equals_flax_attention_on_the_broadcast_memory():
  """The per-intent key/value projection changes the cost, not the result."""
  b, n, length, m, d, heads = 2, 3, 5, 7, 8, 2
  kx, km, kp, ki = jax.random.split(jax.random.key(0), 4)
  x = jax.random.normal(kx, (b, n, length, d))
  memory = jax.random.normal(km, (b, m, d))
  present = jax.random.bernoulli(kp, 0.6, (b, m)).at[:, 0].set(True)
  flax_attn = nn.MultiHeadDotProductAttention(num_heads=heads)
  params = flax_attn.init(ki, x, x)["params"]
  want = flax_attn.apply({"params": params}, x,
                         jnp.broadcast_to(memory[:, None], (b, n, m, d)),
                         mask=jnp.broadcast_to(present[:, None, None, None, :],
                                               (b, n, 1, 1, m)))
  got = intents.MemoryAttention(num_heads=heads).apply({"params": params}, x, memory, present)
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
  # Masked cells are not read: changing them leaves the output as it was.
  junk = jnp.where(present[..., None], memory, 100.0)
  np.testing.assert_allclose(
      intents.MemoryAttention(num_heads=heads).apply({"params": params}, x, junk, present),
      got, rtol=1e-6, atol=1e-6)


# Slow (about 45 s: compiling the readout, the learner and the seq2seq target
# for the benchmark's jitted scorer and for the check by hand).
@pytest.mark.slow
def test_recognition_gap_scores_official_tasks_as_eval_does_and_names_what_was_recognised(
    tmp_path):
  """benchmarks/recognition_gap.py --data: per seed, the share of a folder's
  official tasks solved from the readout and from the true label, and the
  share whose readout names the right family (and the snapped parameter),
  each task read from its first `shots` train pairs; tasks with a grid over
  max_len are counted apart."""
  import types  # pylint: disable=g-import-not-at-top
  from benchmarks import recognition_gap  # pylint: disable=g-import-not-at-top
  from neuroprog import programs  # pylint: disable=g-import-not-at-top
  from neuroprog.tasks.arc1d import io  # pylint: disable=g-import-not-at-top
  task, (model,) = _readout_models("snapped")
  key = jax.random.key(0)
  probe = step_lib.probe_intents(model, task, key, task.train_intents)
  params_S = jax.tree_util.tree_map(lambda *a: jnp.stack(a), *(
      model.init(jax.random.key(s), probe) for s in (0, 1)))
  intent = ("move_right", 1)
  arc_tasks = [io.generate(jax.random.fold_in(key, i), intent, name=f"t{i}") for i in range(3)]
  long_x = np.array([0] * 30 + [3, 3, 3, 4, 0], np.int64)   # 35 cells > max_len 33
  arc_tasks.append(io.ArcTask("long", train=((long_x, long_x),) + arc_tasks[0].train[1:],
                              test=arc_tasks[0].test))
  trainer = types.SimpleNamespace(task=task, model=model)
  (acc, oracle, fam_ok, both_ok), skipped = recognition_gap.score_official(
      trainer, params_S, arc_tasks, intent)
  assert skipped == 1 and acc.shape == oracle.shape == fam_ok.shape == (2, 3)
  feats = jnp.asarray(task.features([intent]))
  run = jax.jit(lambda theta, x: jnp.argmax(programs.execute(task.spec, theta, x), -1))
  labels_of_seed = []
  for s in range(2):
    params = jax.tree_util.tree_map(lambda a, s=s: a[s], params_S)
    for j, t in enumerate(arc_tasks[:3]):
      support = intents.support_from_pairs(list(t.train[:2]), max_len=33, pad=PAD, shots=2)
      labels = np.asarray(model.label_prediction(params, support))
      snapped = np.asarray(task.snap_features(labels))[0]
      assert fam_ok[s, j] == float(np.argmax(labels[0, :-2]) == np.argmax(feats[0, :-2]))
      assert both_ok[s, j] == float(fam_ok[s, j] and np.allclose(snapped[-2:], feats[0, -2:]))
      for theta, got in ((model.apply(params, support)[0], acc[s, j]),
                         (model.learner._apply(params["learner"], feats)[0], oracle[s, j])):  # pylint: disable=protected-access
        solved = all(np.array_equal(np.asarray(run(theta, jnp.asarray(io.encode([x], 33))))[0]
                                    [:len(y)], y) for x, y in t.test)
        assert got == float(solved)
      labels_of_seed.append(labels)
  # The two seeds' readouts differ, so the checks are not of one shared value.
  assert not np.allclose(labels_of_seed[0], labels_of_seed[3])


def test_a_workdir_from_before_an_option_is_rebuilt_as_it_ran(tmp_path):
  """An older workdir's model config lacks options added since; it ran with
  each option's behaviour before it existed, which need not be today's
  default: Meta-GNN's norm was added as "post" and is "pre" now. Resuming
  compares it with that value, and `read_run_config` rebuilds it so."""
  import json  # pylint: disable=g-import-not-at-top
  from neuroprog.run import workdir as workdir_lib  # pylint: disable=g-import-not-at-top
  config = loop.default_config(task="sumfirst", models=("meta_gnn",))
  assert config.model_configs.meta_gnn.norm == "pre"
  old = json.loads(workdir_lib.config_json(config))
  del old["model_configs"]["meta_gnn"]["norm"]
  (tmp_path / "wd").mkdir()
  with open(tmp_path / "wd" / "config.json", "w") as f:
    json.dump(old, f)
  stored = loop.read_run_config(str(tmp_path / "wd"))
  assert stored.model_configs.meta_gnn.norm == "post"
  assert workdir_lib.differences(str(tmp_path / "wd"), config, added_keys=loop.ADDED_KEYS,
                                 fill_stored=loop.fill_added_options) == {
                                     "model_configs": [stored.to_dict()["model_configs"],
                                                       config.to_dict()["model_configs"]]}
  config.model_configs.meta_gnn.norm = "post"
  assert workdir_lib.differences(str(tmp_path / "wd"), config, added_keys=loop.ADDED_KEYS,
                                 fill_stored=loop.fill_added_options) == {}
  # A Meta-MLP workdir from before its intent options compares equal.
  config = loop.default_config(task="sumfirst", models=("meta_mlp",))
  old = json.loads(workdir_lib.config_json(config))
  for key in ("intent_input", "intent_scale", "intent_fourier"):
    del old["model_configs"]["meta_mlp"][key]
  (tmp_path / "wd_mlp").mkdir()
  with open(tmp_path / "wd_mlp" / "config.json", "w") as f:
    json.dump(old, f)
  assert workdir_lib.differences(str(tmp_path / "wd_mlp"), config, added_keys=loop.ADDED_KEYS,
                                 fill_stored=loop.fill_added_options) == {}
  # Every added option is one its model has (a renamed option would leave a
  # stale entry here that fills nothing).
  for name, options in loop.ADDED_MODEL_OPTIONS.items():
    assert set(options) <= set(meta.default_config(name, None)), name
