"""Meta-learners: interface, output scale at init, capacity, quick learning."""
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import neuroprog
from neuroprog import meta, tasks, train
from neuroprog.meta import base


# CI budget: ADDMOD's Meta-GNN case (about 20 s) and 1D-ARC run in make test-slow.
@pytest.mark.parametrize("task_name,name", [
    (t, n) if (t, n) != ("addmod", "meta_gnn") and t != "arc1d"
    else pytest.param(t, n, marks=pytest.mark.slow)
    for t in ("sumfirst", "addmod", "windowsum", "arc1d")
    for n in ("meta_mlp", "meta_gmlp", "meta_gnn")])
def test_generated_weights_start_at_the_standard_scale(task_name, name):
  """Every weight/embedding tensor's std within 2x of its standard init,
  biases 0 and layer-norm gains 1, for every intent (OOD ones too)."""
  task = tasks.get(task_name)
  # Default configs; one message round for Meta-GNN keeps compilation short
  # (the scale is set by the calibrated output head, not by the depth).
  model = meta.create(name, task.spec, task.feature_dim,
                      {"rounds": 1} if name == "meta_gnn" else None)
  params = model.init(jax.random.key(0), task.features(task.train_intents))
  theta = model.apply(params, task.features(task.intents))
  assert theta.shape == (len(task.intents), neuroprog.num_params(task.spec))
  tensors = neuroprog.unflatten(task.spec, theta)
  for e in neuroprog.layout(task.spec):
    t = np.asarray(tensors[e.name]).reshape(len(task.intents), -1)
    if e.kind in ("weight", "embed"):
      ratio = t.std(1) / e.init_std
      assert ratio.min() > 0.5 and ratio.max() < 2.0, (e.name, ratio.min(), ratio.max())
    else:
      np.testing.assert_allclose(t, 1.0 if e.kind == "gain" else 0.0, atol=1e-5)
  # Different intents give different programs.
  assert float(jnp.abs(theta[0] - theta[1]).max()) > 1e-3


@pytest.mark.slow  # CI time budget; runs in make test-slow
def test_direct_model_maps_u_and_x_to_outputs():
  task = tasks.get("arc1d")
  model = meta.create("direct", task.spec, task.feature_dim)
  params = model.init(jax.random.key(0))
  x, _ = task.sample(jax.random.key(1), task.train_intents[:2], 3)
  y = model.apply(params, task.features(task.train_intents[:2]), x)
  assert y.shape == (2, 3, 33, 11)
  y2 = model.apply(params, task.features(task.train_intents[2:4]), x)
  assert float(jnp.abs(y - y2).max()) > 1e-4     # the intent matters
  with pytest.raises(TypeError, match="'x'"):
    model.apply(params, task.features(task.train_intents[:2]))


def test_create_rejects_unknown_names_and_keys():
  spec = neuroprog.default_spec("sumfirst")
  with pytest.raises(ValueError, match=r"Unknown meta-learner 'meta_rnn'; allowed: \['direct'"):
    meta.create("meta_rnn", spec, 1)
  with pytest.raises(ValueError, match=r"Unknown config key 'width' for meta_gnn; allowed: \["):
    meta.create("meta_gnn", spec, 1, {"width": 3})
  with pytest.raises(ValueError, match="aggregation 'max'.*'sum', 'mean'"):
    meta.create("meta_gnn", spec, 1, {"aggregation": "max"})
  model = meta.create("meta_mlp", spec, 1)
  params = model.init(jax.random.key(0))
  with pytest.raises(ValueError, match=r"u has shape \(2, 3\); expected float32\[B, 1\]"):
    model.apply(params, jnp.zeros((2, 3)))


@pytest.mark.parametrize("name", ["direct", "meta_mlp", "meta_gmlp", "meta_gnn"])
def test_apply_is_jittable_and_vmappable_over_intents(name):
  """jax.vmap of apply over single intents (and their inputs, for the
  direct model), under jit, gives the batched apply's outputs."""
  task = tasks.get("sumfirst")
  model = meta.create(name, task.spec, task.feature_dim,
                      {"d": 8, "rounds": 1} if name == "meta_gnn" else None)
  u = jnp.asarray(task.features(task.intents))           # [10, 1]
  params = model.init(jax.random.key(0), u)
  if isinstance(model, meta.DirectModel):
    x, _ = task.sample(jax.random.key(1), task.intents, 4)  # [10, 4, 10]
    batched = model.apply(params, u, x)
    one = jax.jit(jax.vmap(lambda u_F, x_N: model.apply(params, u_F[None], x_N[None])[0]))
    per_intent = one(u, x)
  else:
    batched = model.apply(params, u)
    per_intent = jax.jit(jax.vmap(lambda u_F: model.apply(params, u_F[None])[0]))(u)
  np.testing.assert_allclose(per_intent, batched, rtol=1e-5, atol=1e-6)
  assert float(jnp.abs(batched[0] - batched[-1]).max()) > 1e-4   # intents differ


@pytest.mark.slow  # CI budget: tests/test_configs.py checks every config's 10% match
def test_match_capacity_within_ten_percent():
  spec = neuroprog.default_spec("sumfirst")
  cfgs = meta.match_capacity(meta.NAMES, spec, 20_000, intent_dim=1)
  for name, cfg in cfgs.items():
    n = cfg.pop("num_params")
    assert abs(n - 20_000) <= 2_000, (name, n)
    assert meta.create(name, spec, 1, cfg).num_params() == n
  with pytest.raises(ValueError, match="cannot reach 10 parameters"):
    meta.match_capacity(["meta_gnn"], spec, 10, intent_dim=1)


LEARNING_RATES = {"direct": 3e-3, "meta_mlp": 3e-3, "meta_gmlp": 1e-3, "meta_gnn": 1e-3}


# CI budget: Meta-GNN's learning check runs in make test-slow (the end-to-end
# test trains it on the test config in make test).
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n == "meta_gnn"
                                  else n for n in meta.NAMES])
def test_quick_learning_check_sumfirst(name):
  """Two training intents: 300 Adam steps cut the training loss >= 10x."""
  task = tasks.get("sumfirst", train_intents=(3, 7), ood_intents=(4, 8))
  model = meta.create(name, task.spec, task.feature_dim)
  opt = optax.adam(LEARNING_RATES[name])
  state = train.init_state(model, task, opt, jax.random.key(0))
  step = train.make_train_step(model, task, opt, intents_per_step=2, examples_per_intent=64)
  run = jax.jit(lambda s, ks: jax.lax.scan(step, s, ks))
  _, metrics = run(state, jax.random.split(jax.random.key(1), 300))
  loss = np.asarray(metrics["loss"])
  assert loss[:5].mean() / loss[-20:].mean() >= 10, (loss[:5].mean(), loss[-20:].mean())


def test_layer_norm_custom_vjp_matches_autodiff():
  def reference(x):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) * jax.lax.rsqrt(var + 1e-6)

  x = 3 * jax.random.normal(jax.random.key(0), (5, 2, 16)) + 1
  w = jax.random.normal(jax.random.key(1), x.shape)
  np.testing.assert_allclose(base.layer_norm(x), reference(x), rtol=1e-5, atol=1e-5)
  y = base.layer_norm(x)
  np.testing.assert_allclose(y.mean(-1), 0, atol=1e-5)
  np.testing.assert_allclose(y.std(-1), 1, atol=1e-3)
  g_got = jax.grad(lambda x: jnp.sum(jnp.sin(base.layer_norm(x)) * w))(x)
  g_ref = jax.grad(lambda x: jnp.sum(jnp.sin(reference(x)) * w))(x)
  np.testing.assert_allclose(g_got, g_ref, rtol=1e-4, atol=1e-5)
  # under vmap (the seed axis of the train state) too
  g_vmap = jax.vmap(jax.grad(lambda x, w: jnp.sum(base.layer_norm(x) * w)))(x, w)
  g_vref = jax.vmap(jax.grad(lambda x, w: jnp.sum(reference(x) * w)))(x, w)
  np.testing.assert_allclose(g_vmap, g_vref, rtol=1e-4, atol=1e-5)
  # The means are matrix-vector products: a large common offset must still
  # cancel to float32 rounding, and the feature width need not be a multiple
  # of a vector length (Meta-GNN's capacity-matched widths: 26 on SUMFIRST).
  x_off = jax.random.normal(jax.random.key(2), (7, 26)) + 300.0
  np.testing.assert_allclose(base.layer_norm(x_off), reference(x_off),
                             rtol=1e-3, atol=1e-3)
  np.testing.assert_allclose(np.asarray(base.layer_norm(x_off)).mean(-1), 0, atol=1e-4)


def test_the_direct_model_is_its_own_kind_and_synthesizes_nothing():
  task = tasks.get("sumfirst")
  direct = meta.create("direct", task.spec, task.feature_dim)
  hyper = meta.create("meta_mlp", task.spec, task.feature_dim)
  assert isinstance(direct, meta.DirectModel) and not isinstance(direct, meta.Hypernetwork)
  assert isinstance(hyper, meta.Hypernetwork) and not isinstance(hyper, meta.DirectModel)
  params = direct.init(jax.random.key(0))
  with pytest.raises(TypeError):
    direct.apply(params, jnp.zeros((1, 1)))            # outputs need inputs x
  with pytest.raises(ValueError, match="emits no weights"):
    neuroprog.synthesize_from_params(params, 4, model=direct, task=task)
  theta = neuroprog.synthesize_from_params(hyper.init(jax.random.key(0)), "n=4",
                                           model=hyper, task=task)[1]
  assert theta.shape == (193,)


@pytest.mark.slow   # CI time budget (15 s on SUMFIRST); runs in make test-slow
@pytest.mark.parametrize("task_name", ["sumfirst", "addmod"])
def test_meta_gnn_reads_the_intent_from_initialization(task_name):
  """intent_input="balanced" standardizes the intents on the
  training intents and gives them a set share of the encoders' first layer:
  the θ it generates at init varies between training intents (intent share,
  `analysis.structure.intent_share`), where under "raw" the positional codes
  drown the intent (SUMFIRST: 0.5-0.8% of θ's variance, ADDMOD: 1-5% at
  one round)."""
  from neuroprog.analysis import structure  # pylint: disable=g-import-not-at-top
  task = tasks.get(task_name)
  u = task.features(task.train_intents)
  shares = {}
  for intent_input in ("balanced", "raw"):
    model = meta.create("meta_gnn", task.spec, task.feature_dim,
                        {"rounds": 1, "intent_input": intent_input})
    params = model.init(jax.random.key(0), u)
    shares[intent_input] = structure.intent_share(task.spec, np.asarray(model.apply(params, u)))
    if intent_input == "balanced":
      # The statistics are those of the training intents, and stay fixed.
      np.testing.assert_allclose(params["intent"]["mean"], np.mean(u, 0), rtol=1e-5)
      np.testing.assert_allclose(params["intent"]["std"], np.std(u, 0), rtol=1e-4)
      assert model.num_params() == sum(
          int(np.prod(a.shape)) for k in ("net", "head")
          for a in jax.tree_util.tree_leaves(params[k]))
  raw, balanced = (np.array(list(shares[k].values())) for k in ("raw", "balanced"))
  assert raw.max() < 0.1 and balanced.mean() > 0.25, shares
  assert balanced.mean() > 5 * raw.mean(), shares


def test_standardized_intent_statistics_get_no_gradient():
  task = tasks.get("sumfirst")
  model = meta.create("meta_gnn", task.spec, task.feature_dim,
                      {"d": 8, "rounds": 1, "intent_input": "balanced"})
  u = jnp.asarray(task.features(task.train_intents))
  params = model.init(jax.random.key(0), u)
  grads = jax.grad(lambda p: jnp.sum(model.apply(p, u) ** 2))(params)
  assert float(jnp.abs(grads["intent"]["mean"]).max()) == 0.0
  assert float(jnp.abs(grads["intent"]["std"]).max()) == 0.0
  assert float(jnp.abs(grads["net"]["enc_edge_in"]["kernel_intent"]).max()) > 0.0


def test_scaled_mixer_input_takes_the_fan_in_out_of_the_step():
  """meta_gmlp mixer_input="scaled": the mixer's first layer computes
  x W / sqrt(n) + b with W ~ N(0, 1). Adam's first step, -lr sign(g), then
  moves each output by lr (sum_j |x_j| / sqrt(n) + 1) where the standard
  layer moves it by lr (sum_j |x_j| + 1): the fan-in factor sqrt(n) is out.
  Same parameter count, θ at the standard scale at init, bad value refused."""
  from neuroprog.meta import meta_gmlp   # pylint: disable=import-outside-toplevel
  n, lr = 400, 1e-3
  x = jax.random.normal(jax.random.key(1), (3, n))
  layer = meta_gmlp.ScaledDense(5)
  p = layer.init(jax.random.key(0), x)["params"]
  np.testing.assert_allclose(layer.apply({"params": p}, x),
                             np.asarray(x) @ np.asarray(p["kernel"]) / np.sqrt(n),
                             rtol=1e-5, atol=1e-5)
  assert float(jnp.std(p["kernel"])) == pytest.approx(1.0, abs=0.05)
  dense = meta_gmlp.nn.Dense(5)
  pd = dense.init(jax.random.key(0), x)["params"]
  row = x[:1]   # one input row: the sign step is exact for it
  steps = {}
  for name, mod, params in (("scaled", layer, p), ("standard", dense, pd)):
    g = jax.grad(lambda q, m=mod: m.apply({"params": q}, row).sum())(params)
    moved = jax.tree_util.tree_map(lambda a, b: a - lr * jnp.sign(b), params, g)
    steps[name] = np.asarray(mod.apply({"params": params}, row)
                             - mod.apply({"params": moved}, row))
  l1 = float(jnp.abs(row).sum())
  np.testing.assert_allclose(steps["scaled"], lr * (l1 / np.sqrt(n) + 1), rtol=1e-3)
  np.testing.assert_allclose(steps["standard"], lr * (l1 + 1), rtol=1e-3)
  task = tasks.get("sumfirst")
  plain = meta.create("meta_gmlp", task.spec, task.feature_dim)
  scaled = meta.create("meta_gmlp", task.spec, task.feature_dim, {"mixer_input": "scaled"})
  assert scaled.num_params() == plain.num_params()
  params = scaled.init(jax.random.key(0), task.features(task.train_intents))
  assert "mixer_in" in params["net"]
  theta = scaled.apply(params, task.features(task.intents))
  for e in neuroprog.layout(task.spec):
    if e.kind == "weight":
      t = np.asarray(neuroprog.unflatten(task.spec, theta)[e.name]).reshape(len(theta), -1)
      ratio = t.std(1) / e.init_std
      assert 0.5 < ratio.min() and ratio.max() < 2.0, (e.name, ratio)
  with pytest.raises(ValueError, match=r"mixer_input='wide'; allowed: \['standard', 'scaled'\]"):
    meta.create("meta_gmlp", task.spec, task.feature_dim, {"mixer_input": "wide"})


def test_meta_mlp_balanced_intents_are_the_raw_net_on_z_scores():
  """meta_mlp intent_input="balanced": the same net reads (u - mean) / std
  of the probe (training) intents, fixed in params["intent"]; bad values are
  refused by name."""
  task = tasks.get("addmod")
  u = jnp.asarray(task.features(task.train_intents))
  balanced = meta.create("meta_mlp", task.spec, task.feature_dim, {"intent_input": "balanced"})
  raw = meta.create("meta_mlp", task.spec, task.feature_dim, {})
  params = balanced.init(jax.random.key(0), u)
  mean, std = np.mean(np.asarray(u), 0), np.std(np.asarray(u), 0)
  np.testing.assert_allclose(params["intent"]["mean"], mean, rtol=1e-5)
  np.testing.assert_allclose(params["intent"]["std"], std, rtol=1e-4)
  # The same net and head, fed the z-scores, give the same θ.
  raw_params = {k: v for k, v in params.items() if k != "intent"}
  np.testing.assert_allclose(balanced.apply(params, u),
                             raw.apply(raw_params, (u - mean) / std), rtol=1e-4, atol=1e-5)
  # Standardized, the intents move θ at init more than the raw [p / 100, 2 / p]
  # (whose spread over ADDMOD's training primes is 0.28 and 0.25): the share
  # of θ's spread that varies between primes, 0.54 against 0.38 at key 0.
  raw_theta = raw.apply(raw.init(jax.random.key(0), u), u)
  spread = lambda theta: float(jnp.std(theta, 0).mean() / jnp.std(theta))
  assert spread(balanced.apply(params, u)) > 1.25 * spread(raw_theta)
  assert balanced.num_params() == raw.num_params()
  with pytest.raises(ValueError, match="intent_input='z'.*allowed"):
    meta.create("meta_mlp", task.spec, task.feature_dim, {"intent_input": "z"})
  with pytest.raises(ValueError, match="depth=0.*allowed"):
    meta.create("meta_mlp", task.spec, task.feature_dim, {"depth": 0})


def test_meta_mlp_intent_scale_multiplies_the_features_before_the_first_layer():
  """meta_mlp intent_scale = s: the net reads s * u (after standardization),
  so its θ equals the plain net's on s * u; s <= 0 is refused by name."""
  task = tasks.get("addmod")
  u = jnp.asarray(task.features(task.train_intents))
  scaled = meta.create("meta_mlp", task.spec, task.feature_dim, {"intent_scale": 4.0})
  plain = meta.create("meta_mlp", task.spec, task.feature_dim, {})
  params = scaled.init(jax.random.key(1), u)
  # The plain net's head calibrated on 4 u is the scaled net's calibrated on u.
  plain_params = plain.init(jax.random.key(1), 4.0 * u)
  np.testing.assert_allclose(scaled.apply(params, u), plain.apply(plain_params, 4.0 * u),
                             rtol=1e-4, atol=1e-5)
  assert not np.allclose(scaled.apply(params, u), plain.apply(plain_params, u), atol=1e-2)
  assert scaled.num_params() == plain.num_params()
  for bad in (0.0, -1.0):
    with pytest.raises(ValueError, match=f"intent_scale={bad}.*allowed: > 0"):
      meta.create("meta_mlp", task.spec, task.feature_dim, {"intent_scale": bad})


def test_meta_mlp_intent_fourier_reads_sines_and_cosines_of_the_features():
  """meta_mlp intent_fourier = M: the first layer reads [v, sin(pi m v),
  cos(pi m v)], m = 1..M, so its θ is a plain net's (F (1 + 2M) inputs, the
  same parameters) on those features; M = 0 is the net without the option and
  a bad M is refused by name."""
  from neuroprog.meta import meta_mlp  # pylint: disable=g-import-not-at-top
  task = tasks.get("addmod")
  u = jnp.asarray(task.features(task.train_intents))               # [18, 2]
  feats = meta_mlp.fourier_features(u, 2)
  assert feats.shape == (len(task.train_intents), 10)
  # p = 5's first feature 0.05: sin(pi 0.05), sin(2 pi 0.05), then its second
  # feature 0.4: sin(0.4 pi), sin(0.8 pi); then the cosines in that order.
  row = list(task.train_intents).index(5)
  np.testing.assert_allclose(
      feats[row], [0.05, 0.4, np.sin(0.05 * np.pi), np.sin(0.1 * np.pi), np.sin(0.4 * np.pi),
                   np.sin(0.8 * np.pi), np.cos(0.05 * np.pi), np.cos(0.1 * np.pi),
                   np.cos(0.4 * np.pi), np.cos(0.8 * np.pi)], rtol=1e-5)
  fourier = meta.create("meta_mlp", task.spec, task.feature_dim, {"intent_fourier": 2})
  wide = meta.create("meta_mlp", task.spec, 10, {})
  params = fourier.init(jax.random.key(0), u)
  assert params["net"]["Dense_0"]["kernel"].shape == (10, 64)
  np.testing.assert_allclose(fourier.apply(params, u), wide.apply(params, feats),
                             rtol=1e-5, atol=1e-6)
  plain = meta.create("meta_mlp", task.spec, task.feature_dim, {})
  assert fourier.num_params() == plain.num_params() + 8 * 64
  np.testing.assert_array_equal(meta_mlp.fourier_features(u, 0), u)
  assert meta.create("meta_mlp", task.spec, task.feature_dim,
                     {"intent_fourier": 0}).num_params() == plain.num_params()
  for bad in (-1, 1.5, True):
    with pytest.raises(ValueError, match=f"intent_fourier={bad!r}; allowed: an integer >= 0"):
      meta.create("meta_mlp", task.spec, task.feature_dim, {"intent_fourier": bad})
