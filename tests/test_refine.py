"""Support refinement: programs fitted to their own support pairs at evaluation."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from neuroprog.programs import executor
from neuroprog.tasks.arc1d import families
from neuroprog.train import loop, refine, step as step_lib

TINY = dict(task="arc1d", models=("meta_mlp",), intent="examples", shots=3,
            model_configs={"meta_mlp": {"hidden": 4}},
            intent_encoder={"width": 8, "heads": 2, "out_dim": 8})


def _untrained(**options):
  """(task, model, params, support, x, y): an untrained tiny example-intent
  Meta-MLP and one support draw of 4 training intents with 8 queries each."""
  config = loop.default_config(**TINY, **options)
  task = loop.build_task(config)
  model = loop.create_model(config, task, "meta_mlp")
  key = jax.random.key(0)
  # Jitted: op by op, the init and the draw took most of a minute.
  params = jax.jit(model.init)(key, step_lib.probe_intents(model, task, key,
                                                           task.train_intents))
  ip = jnp.asarray(task.intent_params(task.train_intents[:4]))
  feats = jnp.asarray(task.features(task.train_intents[:4]))
  support, x, y = jax.jit(lambda k: step_lib.draw(model, task, k, feats, ip, 8))(
      jax.random.key(1))
  return task, model, params, support, x, y


@pytest.fixture(scope="module")
def tiny():
  return _untrained()


def _refined(tiny, refinement, rows=slice(None)):
  task, model, params, support, _, _ = tiny
  part = jax.tree_util.tree_map(lambda a: a[rows], support)
  theta = jax.jit(lambda p, s: refine.refined_theta(model, task, p, s, refinement))(params, part)
  return theta, np.asarray(refine.support_loss_per_set(task, model.spec, theta, part))


def test_theta_refinement_fits_each_program_to_its_own_pairs(tiny):
  task, model, params, support, x, _ = tiny
  theta0, loss0 = _refined(tiny, refine.Refinement(0))
  # No steps: exactly the synthesized programs.
  np.testing.assert_array_equal(theta0, jax.jit(model.apply)(params, support))
  theta, loss = _refined(tiny, refine.Refinement(50, 0.01, "theta"))
  assert loss0.min() > 2.0 and loss.max() < 0.05, (loss0, loss)
  # Each set is fitted on its own: refining two of the four alone reaches the
  # same losses (Adam is element-wise; only float noise in near-zero
  # gradients differs).
  _, loss_two = _refined(tiny, refine.Refinement(50, 0.01, "theta"), slice(0, 2))
  np.testing.assert_allclose(loss_two, loss[:2], atol=0.01)
  # The queries run through the refined programs.
  out = jax.jit(lambda p: refine.outputs(model, task, p, support, x,
                                         refine.Refinement(50, 0.01, "theta")))(params)
  want = jax.vmap(lambda t, xi: executor.execute(model.spec, t, xi))(theta, x)
  # (two compilations of the refinement differ by float rounding over 50 Adam
  # steps: a few logits in 10^4 by up to 0.2%; unrefined ones differ by units)
  np.testing.assert_allclose(out, want, rtol=5e-3, atol=5e-3)
  # The tolerance could not pass the synthesized programs' outputs: they differ
  # by 2.5 on average (10.7 at most).
  unrefined = jax.vmap(lambda t, xi: executor.execute(model.spec, t, xi))(theta0, x)
  assert float(jnp.abs(out - unrefined).mean()) > 1.0


def test_intent_refinement_moves_what_the_hypernetwork_reads(tiny):
  task, model, params, support, _, _ = tiny
  _, loss0 = _refined(tiny, refine.Refinement(0))
  theta, loss = _refined(tiny, refine.Refinement(30, 0.1, "intent"))
  assert np.all(loss < loss0 - 0.1), (loss0, loss)
  # The programs moved (through the hypernetwork: its parameters are constants).
  assert float(jnp.abs(theta - model.apply(params, support)).max()) > 1e-3


def test_the_gate_keeps_programs_that_already_solve_their_pairs(tiny):
  task, model, params, support, _, _ = tiny
  theta0 = model.apply(params, support)
  # Untrained programs solve no support pair.
  assert not np.any(refine.support_solved(task, model.spec, theta0, support))

  class FirstTwoSolved:
    """The task, but sets 0 and 1 count as solved (their loss is unchanged)."""
    loss = staticmethod(task.loss)

    @staticmethod
    def exact_match(out, y, params):
      del params
      return jnp.broadcast_to((jnp.arange(out.shape[0]) < 2)[:, None], y.shape[:2]) * 1.0
  run = lambda t, gate: jax.jit(lambda p, s: refine.refined_theta(
      model, t, p, s, refine.Refinement(10, 0.01, "theta", gate)))(params, support)
  always, gated = run(task, "always"), run(FirstTwoSolved, "support_wrong")
  assert float(jnp.abs(always[:2] - theta0[:2]).max()) > 1e-3
  np.testing.assert_array_equal(gated[:2], theta0[:2])
  np.testing.assert_allclose(gated[2:], always[2:], atol=1e-6)
  # With the real task nothing is solved, so the gate refines every set.
  np.testing.assert_allclose(run(task, "support_wrong"), always, atol=1e-6)


def test_leave_one_out_folds_drop_one_pair_each():
  x = jnp.arange(2 * 3 * 4).reshape(2, 3, 4)
  mask = jnp.array([[True, True, True], [True, False, False]])
  folds, held = refine.leave_one_out(_support(x, x + 1, mask))
  # Row j * B + b is set b without pair j; the grids stay where they were.
  np.testing.assert_array_equal(folds.mask, [[False, True, True], [False, False, False],
                                             [True, False, True], [True, False, False],
                                             [True, True, False], [True, False, False]])
  np.testing.assert_array_equal(folds.x[3], x[1])
  np.testing.assert_array_equal(folds.y[4], x[0] + 1)
  # A set of one pair has no held-out evidence; absent pairs never count.
  np.testing.assert_array_equal(held, [[True, True, True], [False, False, False]])


def _support(x, y, mask):
  from neuroprog.intents import SupportSet
  return SupportSet(x=x, y=y, mask=mask)


def test_the_held_out_gate_keeps_refinement_only_where_held_out_pairs_improve(tiny):
  task, model, params, support, _, _ = tiny
  theta0 = jax.jit(model.apply)(params, support)

  class ExactBelowLoss:
    """The task, with a pair counted exact when its loss is below 0.1, so
    that a fitted program counts as solving what it was fitted to."""
    loss = staticmethod(task.loss)

    @staticmethod
    def exact_match(out, y, params):
      return (task.loss(out, y, params) < 0.1).astype(jnp.float32)
  # Sets 0 and 1 show one pair three times: fitting any two copies fits the
  # held-out third, so each fold gains. Sets 2 and 3 keep their three
  # different pairs: an untrained program fitted to two of them does not get
  # the third (another task's grids), so nothing is gained.
  rep = lambda a: jnp.concatenate([jnp.repeat(a[:2, :1], 3, axis=1), a[2:]])
  same = support._replace(x=rep(support.x), y=rep(support.y))
  run = lambda gate: jax.jit(lambda p, s: refine.refined_theta(
      model, ExactBelowLoss, p, s, refine.Refinement(50, 0.01, "theta", gate)))(params, same)
  always, held = run("always"), run("held_out")
  folds, held_BxK = refine.leave_one_out(same)
  assert np.asarray(held_BxK).all()
  theta0_same = jax.jit(model.apply)(params, same)
  # (synthesis inside a larger batch: float rounding only)
  np.testing.assert_allclose(held[2:], theta0_same[2:], atol=1e-5)
  # The same refinement inside a batch of 16 rows instead of 4: float rounding,
  # which Adam blows up in entries whose gradient is near zero (under 1% of
  # them); the fits are the same.
  close = np.isclose(held[:2], always[:2], atol=5e-3)
  assert close.mean() > 0.99, close.mean()
  loss = lambda th: np.asarray(refine.support_loss_per_set(task, model.spec, th, same))
  np.testing.assert_allclose(loss(held)[:2], loss(always)[:2], atol=0.01)
  assert loss(held)[:2].max() < 0.1 < loss(theta0_same)[:2].min()
  # The gains themselves: 3 held-out pairs won for sets 0 and 1, none for 2, 3.
  both = jax.tree_util.tree_map(lambda a, f: jnp.concatenate([a, f]), same, folds)
  th0, th = jax.jit(lambda p, b: refine._synthesize_and_refine(  # pylint: disable=protected-access
      model, ExactBelowLoss, p, b, refine.Refinement(50, 0.01, "theta")))(params, both)
  gain = refine.held_out_gain(ExactBelowLoss, model.spec, th0[4:], th[4:], folds, held_BxK)
  np.testing.assert_array_equal(gain, [3, 3, 0, 0])
  # With the real task (exact grids) an untrained program gains nothing
  # anywhere, so every set keeps its synthesized program.
  real = jax.jit(lambda p, s: refine.refined_theta(
      model, task, p, s, refine.Refinement(20, 0.01, "theta", "held_out")))(params, support)
  np.testing.assert_allclose(real, theta0, atol=1e-5)


def test_bad_refinement_settings_are_named():
  with pytest.raises(ValueError, match=r"refine_steps=-1; allowed: an int >= 0"):
    refine.check(-1, 0.01, "theta")
  with pytest.raises(ValueError, match=r"refine_learning_rate=0; allowed: a number > 0"):
    refine.check(5, 0, "theta")
  with pytest.raises(ValueError, match=r"refine_target='weights'; allowed: \['theta', 'intent'\]"):
    refine.check(5, 0.01, "weights")
  with pytest.raises(ValueError, match=r"refine_gate='never'; allowed: \['always', "
                     r"'support_wrong', 'held_out'\]"):
    refine.check(5, 0.01, "theta", "never")
  with pytest.raises(ValueError, match=r"config.refine_steps=5 fits programs to their support"):
    loop.validate_config(loop.default_config(task="arc1d", refine_steps=5))
  with pytest.raises(ValueError, match=r"config.refine_target='both'"):
    loop.validate_config(loop.default_config(**TINY, refine_steps=5, refine_target="both"))


def test_only_hypernetworks_behind_an_encoder_are_refined(tiny):
  config = loop.default_config(**{**TINY, "models": ("direct", "meta_mlp"),
                                  "model_configs": {"direct": {"d_model": 16, "n_layers": 1},
                                                    "meta_mlp": {"hidden": 4}}})
  task = loop.build_task(config)
  assert refine.can_refine(tiny[1])
  assert not refine.can_refine(loop.create_model(config, task, "direct"))
  label = loop.default_config(task="arc1d", models=("meta_mlp",),
                              model_configs={"meta_mlp": {"hidden": 4}})
  assert not refine.can_refine(loop.create_model(label, loop.build_task(label), "meta_mlp"))


def test_each_model_may_have_its_own_refinement():
  config = loop.default_config(**{**TINY, "models": ("meta_mlp", "meta_gnn")},
                               refine_steps=50, refine_learning_rate=0.001,
                               refine_by_model={"meta_gnn": {"target": "intent",
                                                             "steps": 20}})
  loop.validate_config(config)
  assert loop.refinement_of(config, "meta_mlp") == refine.Refinement(50, 0.001, "theta")
  assert loop.refinement_of(config, "meta_gnn") == refine.Refinement(20, 0.001, "intent",
                                                                     "always")
  assert loop.refinement_of(config) == refine.Refinement(50, 0.001, "theta")
  # A record of refinements leaves out the direct baseline, never refined.
  assert list(loop.refinements_of(config, ("direct", "meta_gnn", "meta_mlp"))) == [
      "meta_gnn", "meta_mlp"]
  # A model the run does not train may have its values (as in learning_rates:
  # `--config.models` picks models of a config that names them all); a name
  # that is no model is refused.
  config.refine_by_model = {"meta_gmlp": {"steps": 1}}
  loop.validate_config(config)
  config.refine_by_model = {"meta_gmpl": {"steps": 1}}
  with pytest.raises(ValueError, match=r"config.refine_by_model: Unknown model 'meta_gmpl'"):
    loop.validate_config(config)
  config.refine_by_model = {"meta_gnn": {"rate": 1}}
  with pytest.raises(ValueError, match=r"refine_by_model.meta_gnn: keys \['rate'\] unknown"):
    loop.validate_config(config)
  config.refine_by_model = {"meta_gnn": {"steps": -2}}
  with pytest.raises(ValueError, match=r"config.refine_by_model.meta_gnn.steps=-2"):
    loop.validate_config(config)
  label = loop.default_config(task="arc1d", refine_by_model={"meta_gnn": {"steps": 3}})
  with pytest.raises(ValueError, match=r"config.refine_steps=3 fits programs"):
    loop.validate_config(label)


READOUT = dict(intent_label_loss=1.0, intent_label_input=True, intent_label_feed="teacher",
               intent_label_parameter="pair_stats")


def test_label_candidates_rank_families_then_parameters_around_the_estimate():
  task = loop.build_task(loop.default_config(task="arc1d"))
  fams = list(families.FAMILIES)
  feats = np.zeros((1, 11), np.float32)
  feats[0, fams.index("move_right")] = 0.9
  feats[0, fams.index("fill")] = 0.6
  feats[0, fams.index("scale")] = 0.4
  param = np.zeros((1, 9), np.float32)
  param[0, fams.index("move_right")] = 0.32   # k = 3.2 -> 3
  param[0, fams.index("scale")] = 0.18        # k = 1.8 -> 2
  feats[0, -2:] = (0.32, 1.0)                 # as with_gated_parameter leaves it
  cands = np.asarray(task.label_candidates(jnp.asarray(feats), jnp.asarray(param), 3, 1))
  assert cands.shape == (1, 9, 11)
  named = [task.format_intent((fams[int(c[:9].argmax())],
                               round(float(c[-2]) * 10) if c[-1] else None)) for c in cands[0]]
  assert named == ["move_right,k=3", "move_right,k=2", "move_right,k=4",
                   "fill", "fill", "fill", "scale,k=2", "scale,k=1", "scale,k=3"]
  # Candidate 0 is what the snapped feed reads.
  np.testing.assert_allclose(cands[0, 0], task.snap_features(jnp.asarray(feats))[0])
  np.testing.assert_allclose(cands[0, 1], task.intent_features(("move_right", 2)))
  np.testing.assert_allclose(cands[0, 3], task.intent_features(("fill", None)))
  np.testing.assert_allclose(cands[0, 8], task.intent_features(("scale", 3)))
  # Without a per-family head every family reads the readout's own estimate.
  plain = np.asarray(task.label_candidates(jnp.asarray(feats), None, 1, 2))
  assert [round(float(c[-2]) * 10) for c in plain[0]] == [3, 2, 4, 1, 5]
  with pytest.raises(ValueError, match=r"n_families=10; allowed: 1..9"):
    task.label_candidates(jnp.asarray(feats), None, 10, 1)


@pytest.fixture(scope="module")
def tiny_readout():
  """As `tiny`, with a snapped label readout (teacher feed) the search reads."""
  return _untrained(**READOUT)[:4]


def test_the_search_reads_the_candidate_whose_program_fits_the_pairs(tiny_readout):
  task, model, params, support = tiny_readout
  search = refine.Refinement(search_families=3, search_radius=1)
  feats, param = model.readout_estimates(params, support)
  cands = task.label_candidates(feats, param, 3, 1)                  # [4, 9, 11]
  synth = lambda u: model.learner._apply(params["learner"], u)  # pylint: disable=protected-access
  outs = [jax.vmap(executor.execute, (None, 0, 0))(model.spec, synth(cands[:, c]), support.x)
          for c in range(9)]
  loss = [np.asarray(refine.support_loss_per_set(task, model.spec, synth(cands[:, c]), support))
          for c in range(9)]
  # Which candidates "solve" each set's pairs, by outputs equal to theirs:
  # set 0: candidate 4 alone; set 1: 2 and 7 (the lower support loss wins);
  # set 2: every pair of candidate 5 but only the first pair of candidate 1;
  # set 3: none (then the lowest support loss alone decides).
  solves = {0: {4: 3}, 1: {2: 3, 7: 3}, 2: {5: 3, 1: 1}, 3: {}}

  class Solvable:
    loss = staticmethod(task.loss)

    @staticmethod
    def exact_match(out, y, params):
      del y, params
      ok = jnp.zeros(out.shape[:2], bool)
      for b, by_cand in solves.items():
        for c, n_pairs in by_cand.items():
          same = jnp.all(jnp.abs(out[b] - outs[c][b]) < 1e-4, (-2, -1))      # [K]
          ok = ok.at[b].set(ok[b] | (same & (jnp.arange(out.shape[1]) < n_pairs)))
      return ok.astype(jnp.float32)
    label_candidates = staticmethod(task.label_candidates)

  u, theta = jax.jit(lambda p, s: refine.searched_intent(model, Solvable, p, s, search))(
      params, support)
  want = [4, 2 if loss[2][1] < loss[7][1] else 7, 5, int(np.argmin([l[3] for l in loss]))]
  for b, c in enumerate(want):
    np.testing.assert_allclose(u[b], cands[b, c], err_msg=f"set {b}")
    np.testing.assert_allclose(theta[b], synth(cands[:, c])[b], atol=1e-5)
  # With no search and no steps, nothing changes; the search alone is active.
  assert not refine.is_active(refine.Refinement()) and refine.is_active(search)
  np.testing.assert_allclose(
      refine.refined_theta(model, task, params, support, refine.Refinement()),
      model.apply(params, support), atol=1e-6)


def test_search_settings_are_checked_before_any_work(tiny):
  with pytest.raises(ValueError, match=r"refine_search_families=-1; allowed: an int >= 0"):
    refine.check(0, 0.01, "theta", search_families=-1)
  with pytest.raises(ValueError, match=r"config.refine_search_families: arc1d: "
                                        r"n_families=12; allowed: 1..9"):
    loop.validate_config(loop.default_config(**TINY, **READOUT, refine_search_families=12))
  # The search reads the snapped label readout; a model that reads u cannot.
  with pytest.raises(ValueError, match=r"config.refine_search_families=3 searches the label "
                                        r"features.*intent_label_input=True"):
    loop.validate_config(loop.default_config(**TINY, refine_search_families=3))
  with pytest.raises(ValueError, match=r"search_families=3 searches the snapped label"):
    task, model, params, support, _, _ = tiny
    refine.refined_theta(model, task, params, support, refine.Refinement(search_families=3))
  # The evaluation's per-seed path refuses it before its first forward pass.
  with pytest.raises(ValueError, match=r"search_families=3 searches the snapped label"):
    task, model, params, support, _, _ = tiny
    refine.refined_theta_per_seed(model, task, jax.tree_util.tree_map(lambda a: a[None], params),
                                  support, refine.Refinement(search_families=3))
  loop.validate_config(loop.default_config(**TINY, **READOUT, refine_search_families=9,
                                           refine_search_radius=2))
  assert refine.describe(refine.Refinement(search_families=3)._asdict()) == (
      "the intent searched over the readout's 3 best families (parameters +-1) on the "
      "support pairs")
  assert refine.describe(refine.Refinement(50, 0.001, "intent", "support_wrong", 9, 2)
                         ._asdict()).startswith("the intent searched over the readout's 9 best "
                                                "families (parameters +-2) on the support "
                                                "pairs, then 50 Adam steps on its intent")


def _marked(task, mark, level):
  """The task, with a pair counted exact when its target's first cell is
  `mark` (a set whose targets all start with it is solved whatever θ says)
  or when the program's first output cell prefers colour 0 to colour 1 by
  more than `level` (so that seeds differ in which sets they solve).
  Exactness depends only on a set's own outputs and grids, never on its row,
  as the real task's does."""

  class Marked:
    loss = staticmethod(task.loss)
    label_candidates = staticmethod(task.label_candidates)

    @staticmethod
    def exact_match(out, y, params):
      del params
      return ((y[..., 0] == mark) | (out[..., 0, 0] - out[..., 0, 1] > level)).astype(
          jnp.float32)
  return Marked


# One variant in the fast suite: the batching of the sets a gate may change
# is the same code for every gate and search, so the other two variants,
# each about a minute on two cores, run in `make test-slow`.
@pytest.mark.parametrize("gate,search", [
    ("support_wrong", 0),
    pytest.param("held_out", 0, marks=pytest.mark.slow),
    pytest.param("support_wrong", 3, marks=pytest.mark.slow)])
def test_steps_run_only_on_the_sets_the_gate_may_change(tiny_readout, gate, search):
  task, model, params, support = tiny_readout
  # Eight sets: the four drawn and the same with their pairs' order reversed;
  # sets 0 and 4 have every target marked, so no gate refines them.
  flip = lambda a: jnp.concatenate([a, a[:, ::-1]])
  support = support._replace(x=flip(support.x), y=flip(support.y), mask=flip(support.mask))
  mark = 7
  support = support._replace(y=support.y.at[jnp.array([0, 4]), :, 0].set(mark))
  # Everything below is jitted: op by op it took most of this test's time.
  params_S = jax.tree_util.tree_map(
      lambda a, b: jnp.stack([a, b]),
      params, jax.jit(model.init)(jax.random.key(9), support))
  refinement = refine.Refinement(20, 0.05, "intent", gate, search_families=search)
  # The level: the median over seed 1's sets of its worst pair's preference,
  # so that seed 1 solves about half of its sets (seed 0's untrained
  # programs prefer either colour by less).
  out = jax.jit(lambda p: jax.vmap(executor.execute, (None, 0, 0))(
      model.spec, refine._initial(model, task, p, support, refinement)[1],  # pylint: disable=protected-access
      support.x))(jax.tree_util.tree_map(lambda a: a[1], params_S))
  marked = _marked(task, mark, float(np.median((out[..., 0, 0] - out[..., 0, 1]).min(-1))))
  theta0_S, needs_S = jax.jit(jax.vmap(lambda p: refine.needs_refinement(
      model, marked, p, support, refinement)))(params_S)
  needs_S = np.asarray(needs_S)
  assert not needs_S[:, [0, 4]].any()
  # The test means something only if the seeds need different sets, and not all.
  assert needs_S.sum() < needs_S.size and (needs_S[0] != needs_S[1]).any(), needs_S
  full_S = jax.jit(jax.vmap(lambda p: refine.refined_theta(
      model, marked, p, support, refinement)))(params_S)
  loss = lambda th, s: np.asarray(refine.support_loss_per_set(task, model.spec, th[s], support))
  # One batch for both seeds, and one per seed.
  for per_seed in (False, True):
    theta_S = refine.refined_theta_per_seed(model, marked, params_S, support, refinement,
                                            per_seed=per_seed)
    # Sets no gate refines: the synthesized programs, exactly.
    np.testing.assert_array_equal(np.asarray(theta_S)[~needs_S],
                                  np.asarray(theta0_S)[~needs_S])
    # The others: the same refinement in a smaller batch (float rounding only).
    for s in range(2):
      np.testing.assert_allclose(loss(theta_S, s), loss(full_S, s), atol=0.01)
      kept_full = np.isclose(np.asarray(full_S[s]), np.asarray(theta0_S[s]), atol=1e-5).all(-1)
      kept = np.isclose(np.asarray(theta_S[s]), np.asarray(theta0_S[s]), atol=1e-5).all(-1)
      np.testing.assert_array_equal(kept, kept_full)
  # Something was refined at all (the comparison is not between two θ0s).
  assert not np.allclose(np.asarray(full_S)[needs_S], np.asarray(theta0_S)[needs_S], atol=1e-3)


def test_refinement_rows_are_rounded_up_to_a_sixteenth_of_the_batch():
  assert refine._bucket(0, 200) == 0          # pylint: disable=protected-access
  assert refine._bucket(1, 200) == 13         # pylint: disable=protected-access
  assert refine._bucket(14, 200) == 26        # pylint: disable=protected-access
  assert refine._bucket(199, 200) == 200      # pylint: disable=protected-access
  assert refine._bucket(3, 4) == 3            # pylint: disable=protected-access
