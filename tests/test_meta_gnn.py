"""Meta-GNN equivariance: automorphisms fix θ without PEs; PEs break it."""
import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import neuroprog
from neuroprog import graphs, meta, tasks
from neuroprog.analysis import structure

SMALL = {"d": 8, "rounds": 1}


def _model(task, **cfg):
  return meta.create("meta_gnn", task.spec, task.feature_dim, {**SMALL, **cfg})


# CI time budget: ADDMOD (15-18 s per grouping), 1D-ARC and WINDOWSUM's role
# grouping run in make test-slow; both groupings stay in make test on SUMFIRST.
@pytest.mark.parametrize("task_name,grouping", [
    ("sumfirst", "orbit"), ("sumfirst", "role"), ("windowsum", "orbit"),
    pytest.param("windowsum", "role", marks=pytest.mark.slow),
    pytest.param("addmod", "role", marks=pytest.mark.slow),
    pytest.param("addmod", "orbit", marks=pytest.mark.slow),
    pytest.param("arc1d", "orbit", marks=pytest.mark.slow),
    pytest.param("arc1d", "role", marks=pytest.mark.slow)])
def test_equivariance_without_positional_encodings(task_name, grouping):
  """θ(U; φ·G) = ρ(φ) θ(U; G): an automorphism maps the graph to itself, so
  the generated θ must be a fixed point of ρ(φ) = random_automorphism."""
  task = tasks.get(task_name)
  u = task.features(task.train_intents[:3])
  plain = _model(task, grouping=grouping, use_pe=False)
  params = plain.init(jax.random.key(0), u)
  theta = plain.apply(params, u)
  for seed in range(3):
    perm = neuroprog.random_automorphism(task.spec, seed)
    assert np.any(perm != np.arange(len(perm)))
    np.testing.assert_allclose(theta[:, perm], theta, rtol=1e-4, atol=1e-5)
  # Not vacuous: within a group, θ varies with the intent's features.
  assert float(jnp.abs(theta[0] - theta[1]).max()) > 1e-4


@pytest.mark.parametrize("grouping", graphs.GROUPINGS)
def test_positional_encodings_break_the_symmetry(grouping):
  task = tasks.get("sumfirst")   # ADDMOD's case costs 22 s per grouping
  u = task.features(task.train_intents[:2])
  with_pe = _model(task, grouping=grouping, use_pe=True)
  theta = with_pe.apply(with_pe.init(jax.random.key(0), u), u)
  perm = neuroprog.random_automorphism(task.spec, 0)
  assert float(jnp.abs(theta[:, perm] - theta).max()) > 1e-3


def test_full_orbit_tying_is_equivariant_too():
  task = tasks.get("sumfirst")
  u = task.features([1, 2, 9])
  model = _model(task, grouping="orbit", message_grouping="orbit", use_pe=False, rounds=2)
  theta = model.apply(model.init(jax.random.key(0), u), u)
  for seed in range(3):
    perm = neuroprog.random_automorphism(task.spec, seed)
    np.testing.assert_allclose(theta[:, perm], theta, rtol=1e-4, atol=1e-5)


@pytest.mark.slow   # CI budget (19 s); runs in make test-slow
def test_output_does_not_depend_on_element_order():
  """Relabel nodes and shuffle edges (not an automorphism): the same params
  give the same θ, since slots, groups and PEs travel with their elements."""
  task = tasks.get("addmod")
  ng = neuroprog.neural_graph(task.spec, "role")
  rng = np.random.default_rng(0)
  node_perm = rng.permutation(ng.num_nodes)          # new node i = old node_perm[i]
  new_id = np.argsort(node_perm)
  edge_perm = rng.permutation(ng.num_edges)
  g = ng.graph
  shuffled = dataclasses.replace(
      ng,
      graph=g._replace(nodes=g.nodes[node_perm], edges=g.edges[edge_perm],
                       senders=new_id[g.senders[edge_perm]].astype(np.int32),
                       receivers=new_id[g.receivers[edge_perm]].astype(np.int32)),
      node_slot=ng.node_slot[node_perm], edge_slot=ng.edge_slot[edge_perm],
      node_group=ng.node_group[node_perm], edge_group=ng.edge_group[edge_perm],
      node_role=ng.node_role[node_perm], edge_role=ng.edge_role[edge_perm])
  cfg = {**SMALL, "grouping": "role", "message_grouping": "role"}
  a = meta.create("meta_gnn", task.spec, task.feature_dim, cfg)
  b = meta.create("meta_gnn", task.spec, task.feature_dim, cfg, graph=shuffled)
  u = task.features(task.train_intents[:2])
  params = a.init(jax.random.key(0), u)
  np.testing.assert_allclose(b.apply(params, u), a.apply(params, u), rtol=1e-4, atol=1e-5)


@pytest.mark.slow  # CI time budget; runs in make test-slow
def test_mean_aggregation_runs_and_differs_from_sum():
  task = tasks.get("sumfirst")
  u = task.features([1, 2])
  # Two rounds: with one, node states never reach an output that is non-zero
  # at init (generated biases start at exactly 0).
  s = _model(task, aggregation="sum", rounds=2)
  m = _model(task, aggregation="mean", rounds=2)
  p = s.init(jax.random.key(0), u)
  assert float(jnp.abs(s.apply(p, u) - m.apply(p, u)).max()) > 1e-4


@pytest.mark.slow   # CI budget: options that are not the recipe's
def test_intent_scale_multiplies_the_intent_features():
  task = tasks.get("sumfirst")
  u = task.features([1, 3, 9])
  # Raw intents: the features themselves are scaled.
  scaled = _model(task, intent_scale=5.0, intent_input="raw")
  plain = _model(task, intent_input="raw")
  p = scaled.init(jax.random.key(0), u)   # head calibrated on 5 u
  np.testing.assert_allclose(scaled.apply(p, u), plain.apply(p, 5.0 * u), rtol=1e-5, atol=1e-6)
  assert float(jnp.abs(scaled.apply(p, u) - plain.apply(p, u)).max()) > 1e-3
  # Balanced: the standardized features are, so scaling is a
  # stretch about the training intents' mean.
  scaled = _model(task, intent_scale=5.0, intent_input="balanced")
  plain = _model(task, intent_input="balanced")
  p = scaled.init(jax.random.key(0), u)
  mean = np.asarray(p["intent"]["mean"])
  np.testing.assert_allclose(scaled.apply(p, u), plain.apply(p, mean + 5.0 * (u - mean)),
                             rtol=1e-4, atol=1e-5)
  with pytest.raises(ValueError, match=r"intent_scale=0.0; allowed: > 0"):
    _model(task, intent_scale=0.0)


@pytest.mark.slow   # CI budget (13 s); runs in make test-slow
def test_random_edge_features_give_weights_their_own_initial_values():
  """pe_random appends fixed N(0, 1) features to every edge's PE: the
  generated first-layer matrix of SUMFIRST (orbit grouping: one orbit per
  input row) is then less a sum of per-neuron offsets: the share of its
  variance left after row and column offsets rose from 0.22 to 0.35 at d = 8
  (measured), at n_edge_groups * k * d more parameters."""
  task = tasks.get("sumfirst")
  u = task.features(task.train_intents)
  plain = _model(task, grouping="orbit", pe_random=0)
  noisy = _model(task, grouping="orbit", pe_random=16)
  n_edge_groups = graphs.neural_graph(task.spec, "orbit").num_edge_groups
  assert noisy.num_params() - plain.num_params() == n_edge_groups * 16 * SMALL["d"]
  shares = []
  for model in (plain, noisy):
    theta = model.apply(model.init(jax.random.key(0), u), u[:1])[0]
    shares.append(structure.theta_structure(task.spec, theta)["l0/w"].rest)
  assert shares[1] > shares[0] + 0.08, shares
  for bad in (-1, 2.5, True):
    with pytest.raises(ValueError, match=r"pe_random=.*allowed: an int >= 0"):
      _model(task, pe_random=bad)


@pytest.mark.parametrize("name", ["meta_gnn", pytest.param("meta_gmlp", marks=pytest.mark.slow)])
def test_pe_features_ramp_is_the_full_encoding_with_sincos_weights_zeroed(name):
  """pe_features="ramp" keeps exactly the ramp columns of every node and
  edge encoding: the full model with its sin/cos input weights set to zero
  and the rest copied from the ramp-only model generates the same θ."""
  task = tasks.get("sumfirst")
  u = task.features(task.train_intents)
  cfg = ({**SMALL, "grouping": "role", "pe_random": 0} if name == "meta_gnn"
         else {"grouping": "role"})
  full = meta.create(name, task.spec, task.feature_dim, cfg)
  ramp = meta.create(name, task.spec, task.feature_dim, {**cfg, "pe_features": "ramp"})
  p_ramp = ramp.init(jax.random.key(1), u)
  p_full = full.init(jax.random.key(2), u)
  flat_full = dict(jax.tree_util.tree_flatten_with_path(p_full)[0])
  leaves = jax.tree_util.tree_flatten_with_path(p_ramp)[0]
  assert [k for k, _ in leaves] == list(flat_full)
  merged, with_sincos = [], []
  for path, r in leaves:
    f = flat_full[path]
    if r.shape != f.shape:   # a PE kernel: [groups, P, features], P rows by column
      rows = _pe_rows(f.shape[1])
      merged.append(jnp.zeros_like(f).at[:, rows].set(r))
      with_sincos.append(f.at[:, rows].set(r))   # sin/cos rows left nonzero
    else:
      merged.append(r)
      with_sincos.append(r)
  assert len([1 for a, b in zip(merged, with_sincos) if a is not b]) >= 1
  tree = jax.tree_util.tree_structure(p_full)
  out_merged = full.apply(jax.tree_util.tree_unflatten(tree, merged), u)
  np.testing.assert_allclose(out_merged, ramp.apply(p_ramp, u), rtol=1e-5, atol=1e-6)
  # The full model does read the sin/cos columns: the same weights with
  # their sin/cos rows nonzero generate another θ.
  out_sincos = full.apply(jax.tree_util.tree_unflatten(tree, with_sincos), u)
  assert not np.allclose(out_sincos, out_merged, atol=1e-3)


def _pe_rows(n_rows):
  """Rows of a full PE kernel that the ramp-only kernel's rows map to."""
  node, edge = graphs.pe_columns("ramp")
  if n_rows == graphs.NODE_PE_DIM:
    return node
  if n_rows == graphs.EDGE_PE_DIM:
    return edge
  # Meta-gMLP's first layer reads [u (1 feature) || pe(a) || pe(b) or zeros
  # || node/edge flag].
  assert n_rows == 1 + graphs.EDGE_PE_DIM + 1, n_rows
  return np.concatenate([[0], 1 + edge, [1 + graphs.EDGE_PE_DIM]])


@pytest.mark.slow   # CI budget: options that are not the recipe's
def test_intent_film_starts_as_the_additive_model_and_keeps_equivariance():
  """intent_film adds a zero-initialised gain (1 + u W_g): the initial θ is
  the plain model's; a nonzero gain changes θ and keeps the symmetry."""
  task = tasks.get("sumfirst")
  u = task.features(task.train_intents[:3])
  plain = _model(task, grouping="orbit", use_pe=False)
  film = _model(task, grouping="orbit", use_pe=False, intent_film=True)
  params = film.init(jax.random.key(0), u)
  p_plain = plain.init(jax.random.key(0), u)
  np.testing.assert_allclose(film.apply(params, u), plain.apply(p_plain, u), rtol=1e-6,
                             atol=1e-7)
  n_groups = graphs.neural_graph(task.spec, "orbit")
  extra = (n_groups.num_node_groups + n_groups.num_edge_groups) * task.feature_dim * SMALL["d"]
  assert film.num_params() - plain.num_params() == extra
  gained = jax.tree_util.tree_map_with_path(
      lambda path, x: jnp.full_like(x, 0.7) if "kernel_film" in jax.tree_util.keystr(path)
      else x, params)
  theta = film.apply(gained, u)
  assert float(jnp.abs(theta - film.apply(params, u)).max()) > 1e-3
  perm = neuroprog.random_automorphism(task.spec, 1)
  assert np.any(perm != np.arange(len(perm)))
  np.testing.assert_allclose(theta[:, perm], theta, rtol=1e-4, atol=1e-5)
  with pytest.raises(ValueError, match=r"intent_film='yes'; allowed: True or False"):
    _model(task, intent_film="yes")


def test_decoder_film_starts_as_the_plain_model_and_keeps_equivariance():
  """decoder_film = H adds an intent trunk of width H and a zero-initialised,
  role-tied gain on the decoders' hidden layer: the initial θ is the plain
  model's, a nonzero gain makes θ follow the intent more, and automorphisms
  still fix θ; a bad width is refused by name."""
  task = tasks.get("sumfirst")
  u = task.features(task.train_intents[:3])
  plain = _model(task, grouping="orbit", use_pe=False)
  film = _model(task, grouping="orbit", use_pe=False, decoder_film=16)
  params = film.init(jax.random.key(0), u)
  p_plain = plain.init(jax.random.key(0), u)
  np.testing.assert_array_equal(film.apply(params, u), plain.apply(p_plain, u))
  role = graphs.neural_graph(task.spec, "role")
  f, h, d = task.feature_dim, 16, SMALL["d"]
  trunk = (f * h + h) + (h * h + h)
  extra = 2 * trunk + (role.num_node_groups + role.num_edge_groups) * h * d
  assert film.num_params() - plain.num_params() == extra
  gained = jax.tree_util.tree_map_with_path(
      lambda path, x: jax.random.normal(jax.random.key(3), x.shape)
      if "film" in jax.tree_util.keystr(path) and "kernel" in jax.tree_util.keystr(path)
      and "trunk" not in jax.tree_util.keystr(path) else x, params)
  theta0, theta = film.apply(params, u), film.apply(gained, u)
  assert float(jnp.abs(theta - theta0).max()) > 1e-3
  # The gain is a function of the intent: it widens the gap between intents.
  spread = lambda th: float(jnp.abs(th[0] - th[1]).mean())
  assert spread(theta) > 1.5 * spread(theta0)
  for seed in range(2):
    perm = neuroprog.random_automorphism(task.spec, seed)
    assert np.any(perm != np.arange(len(perm)))
    np.testing.assert_allclose(theta[:, perm], theta, rtol=1e-4, atol=1e-5)
  for bad in (-1, 2.5, True):
    with pytest.raises(ValueError, match=rf"decoder_film={bad!r}; allowed: an int >= 0"):
      _model(task, decoder_film=bad)


def test_pre_norm_adds_the_rounds_to_raw_streams_and_keeps_equivariance():
  """norm="pre" has the same parameters as "post". With every round's output
  layer zeroed (no message, no update) both arrangements decode the encoder
  states and give the same θ; with the rounds active they differ, and the
  pre-norm θ is still a fixed point of every automorphism. A bad value is
  refused by name."""
  task = tasks.get("sumfirst")
  u = task.features(task.train_intents[:3])
  cfg = {"grouping": "orbit", "use_pe": False, "rounds": 2}
  post, pre = _model(task, norm="post", **cfg), _model(task, norm="pre", **cfg)
  assert pre.num_params() == post.num_params()
  params = pre.init(jax.random.key(0), u)
  assert jax.tree_util.tree_structure(params) == jax.tree_util.tree_structure(
      post.init(jax.random.key(0), u))
  silent = jax.tree_util.tree_map_with_path(
      lambda path, x: jnp.zeros_like(x)
      if any(k in jax.tree_util.keystr(path) for k in ("msg_0_out", "msg_1_out",
             "'upd_0']['GroupedDense_1", "'upd_1']['GroupedDense_1"))
      else x, params)
  np.testing.assert_allclose(pre.apply(silent, u), post.apply(silent, u), rtol=1e-5,
                             atol=1e-6)
  theta_pre, theta_post = pre.apply(params, u), post.apply(params, u)
  assert float(jnp.abs(theta_pre - theta_post).max()) > 1e-2
  for seed in range(2):
    perm = neuroprog.random_automorphism(task.spec, seed)
    assert np.any(perm != np.arange(len(perm)))
    np.testing.assert_allclose(theta_pre[:, perm], theta_pre, rtol=1e-4, atol=1e-5)
  with pytest.raises(ValueError, match=r"norm='mid'; allowed: \['post', 'pre'\]"):
    _model(task, norm="mid")


@pytest.mark.parametrize("name,cfg", [("meta_gnn", SMALL),
                                      ("meta_gmlp", {"d_slot": 2, "hidden": 4})])
def test_base_program_starts_at_the_plain_model_and_gets_the_summed_gradient(name, cfg):
  """base_program adds θ_base float32[T], zero at init: the initial θ is the
  plain model's, the count grows by exactly T, θ_base shifts every program by
  itself, and its gradient is the per-program θ gradient summed over the batch."""
  task = tasks.get("sumfirst")
  u = task.features(task.train_intents[:3])
  plain = meta.create(name, task.spec, task.feature_dim, cfg)
  based = meta.create(name, task.spec, task.feature_dim, {**cfg, "base_program": True})
  p_plain, params = plain.init(jax.random.key(0), u), based.init(jax.random.key(0), u)
  n_theta = neuroprog.num_params(task.spec)
  assert params["base"].shape == (n_theta,) and not np.any(np.asarray(params["base"]))
  np.testing.assert_array_equal(based.apply(params, u), plain.apply(p_plain, u))
  assert based.num_params() - plain.num_params() == n_theta
  shift = jnp.linspace(-1.0, 1.0, n_theta)
  moved = {**params, "base": shift}
  np.testing.assert_allclose(based.apply(moved, u), plain.apply(p_plain, u) + shift,
                             rtol=1e-6, atol=1e-6)
  w_BxT = jax.random.normal(jax.random.key(3), (u.shape[0], n_theta))
  g = jax.grad(lambda p: jnp.sum(w_BxT * based.apply(p, u)))(params)
  np.testing.assert_allclose(g["base"], w_BxT.sum(0), rtol=1e-5, atol=1e-6)
  with pytest.raises(ValueError, match=r"base_program='yes'; allowed: True or False"):
    meta.create(name, task.spec, task.feature_dim, {**cfg, "base_program": "yes"})


def _find(tree, name):
  """The one leaf called `name` in a nested params dict, with its path."""
  hits = [(path, leaf) for path, leaf in jax.tree_util.tree_leaves_with_path(tree)
          if jax.tree_util.keystr(path).endswith(f"['{name}']")]
  assert len(hits) == 1, [jax.tree_util.keystr(p) for p, _ in hits]
  return hits[0]


def test_learned_edge_features_start_at_the_fixed_draws_and_train():
  """pe_learned makes the pe_random edge features a parameter float32[E,
  pe_random] initialised to the fixed draws: the initial θ equals the fixed
  model's, the count grows by exactly E x pe_random, moving one edge's
  features moves only that edge's generated weight at rounds 0, and the
  features get a non-zero gradient."""
  task = tasks.get("sumfirst")
  u = task.features(task.train_intents[:3])
  fixed = _model(task, grouping="orbit", pe_random=4, rounds=0)
  learned = _model(task, grouping="orbit", pe_random=4, rounds=0, pe_learned=True)
  p_fixed, params = fixed.init(jax.random.key(0), u), learned.init(jax.random.key(0), u)
  n_edges = len(graphs.neural_graph(task.spec, "orbit").senders)
  assert learned.num_params() - fixed.num_params() == n_edges * 4
  path, feats = _find(params, "pe_learned")
  assert feats.shape == (n_edges, 4)
  theta = learned.apply(params, u)
  np.testing.assert_array_equal(theta, fixed.apply(p_fixed, u))
  # Without message passing an edge's weight depends on its own features only.
  moved_feats = feats.at[5].add(1.0)
  moved = jax.tree_util.tree_map_with_path(
      lambda p, x: moved_feats if p == path else x, params)
  changed = np.flatnonzero(np.any(np.asarray(learned.apply(moved, u) != theta), 0))
  assert len(changed) == 1, changed
  g = jax.grad(lambda p: jnp.sum(learned.apply(p, u) ** 2))(params)
  g_feats = np.asarray(_find(g, "pe_learned")[1])
  assert np.count_nonzero(np.abs(g_feats).sum(1)) == n_edges
  with pytest.raises(ValueError, match=r"pe_learned=True with pe_random=0, use_pe=True"):
    _model(task, pe_random=0, pe_learned=True)
  with pytest.raises(ValueError, match=r"pe_learned=True with pe_random=4, use_pe=False"):
    _model(task, pe_random=4, use_pe=False, pe_learned=True)
  with pytest.raises(ValueError, match=r"pe_learned='yes'; allowed: True or False"):
    _model(task, pe_learned="yes")
