"""Stage 1: jraph/dense encoder agreement, loss terms, EMA codebook, NB201 reconstruction."""
import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from neuroprog.pnag import autoencoder as ae_lib
from neuroprog.pnag import msq, spaces

NB201 = spaces.get("nb201")
CFG = ae_lib.AEConfig(num_nodes=8, num_ops=7, scales=(1, 2, 4, 8), hidden=16,
                      channels=8, codebook_size=32, rounds=1)


@pytest.fixture(scope="module")
def batch():
  return NB201.encode_batch(NB201.sample(0, 32))


@pytest.mark.slow  # CI time budget; runs in make test-slow
def test_dense_encoder_equals_jraph_graph_network(batch):
  ops, adj = batch
  dense = ae_lib.Autoencoder(CFG)
  graph = ae_lib.Autoencoder(dataclasses.replace(CFG, backend="jraph"))
  st = dense.init(jax.random.key(0))
  e1 = dense.encode(st.params, ops[:8], adj[:8])
  e2 = graph.encode(st.params, ops[:8], adj[:8])
  assert e1.shape == (8, 8, 8, 8)
  np.testing.assert_allclose(e1, e2, atol=1e-4)


def test_complete_graph_layout():
  ops = jnp.zeros((2, 3), jnp.int32)
  adj = jnp.zeros((2, 3, 3)).at[1, 0, 2].set(1.0)
  g = ae_lib.complete_graph(ops, adj, 4)
  assert g.senders.shape == (18,) and int(g.n_edge.sum()) == 18
  # edge (b=1, i=0, j=2) sits at 9 + 0 * 3 + 2 and connects nodes 3 -> 5
  e = 9 + 2
  assert (int(g.senders[e]), int(g.receivers[e])) == (3, 5)
  np.testing.assert_array_equal(g.edges["feat"][e], [1.0, 0.0, 0.0])
  np.testing.assert_array_equal(g.edges["feat"][9 + 2 * 3 + 0], [0.0, 1.0, 0.0])


def test_scc_term_covers_the_chosen_scales(batch):
  ops, adj = batch
  ae = ae_lib.Autoencoder(CFG)
  # Jitted: op-by-op dispatch of init/encode/quantize took 26 s of this test.
  st = jax.jit(ae.init)(jax.random.key(1))
  e = jax.jit(ae.encode)(st.params, ops, adj)
  q = jax.jit(msq.quantize, static_argnums=2)(e, st.codebook, CFG.scales)
  per_scale = [float(jnp.mean((e - f) ** 2)) for f in q.accumulated]
  for k in (0, 1, 4):
    aek = ae_lib.Autoencoder(dataclasses.replace(CFG, scc_num_scales=k))
    _, aux = jax.jit(aek.loss)(st.params, st.codebook, ops, adj)
    np.testing.assert_allclose(float(aux["scc"]), sum(per_scale[:k]), rtol=1e-4, atol=1e-7)


@pytest.mark.slow   # CI budget (about 25 s); runs in make test-slow
def test_ema_moves_codes_to_their_residuals_and_restarts_dead_ones(batch):
  ops, adj = batch
  cfg = dataclasses.replace(CFG, ema_decay=0.0)
  ae = ae_lib.Autoencoder(cfg)
  st = ae.init(jax.random.key(2))
  st = st._replace(codebook=st.codebook.at[0].set(100.0))     # nobody picks code 0
  _, aux = ae.loss(st.params, st.codebook, ops, adj)
  new = ae.ema_update(st, aux, jax.random.key(3))
  flat_r = jnp.concatenate([r.reshape(-1, CFG.channels) for r in aux["residuals"]])
  flat_i = jnp.concatenate([i.reshape(-1) for i in aux["indices"]])
  used = np.unique(np.asarray(flat_i))
  for k in used[:5]:
    np.testing.assert_allclose(new.codebook[k], flat_r[flat_i == k].mean(0), rtol=1e-3, atol=1e-4)
  assert 0 not in used
  # the dead code now sits on one of the batch's residuals
  assert np.min(np.abs(np.asarray(flat_r) - np.asarray(new.codebook[0])).sum(1)) < 1e-5


@pytest.mark.slow  # CI time budget; runs in make test-slow
def test_loss_mode_trains_the_codebook_as_a_parameter(batch):
  ops, adj = batch
  ae = ae_lib.Autoencoder(dataclasses.replace(CFG, codebook="loss"))
  st = ae.init(jax.random.key(4))
  assert "codebook" in st.params
  g = jax.grad(lambda p: ae.loss(p, None, ops, adj)[0])(st.params)
  assert float(jnp.abs(g["codebook"]).sum()) > 0


def test_bad_configs():
  with pytest.raises(ValueError, match="codebook='kmeans'"):
    dataclasses.replace(CFG, codebook="kmeans")
  with pytest.raises(ValueError, match="scc_num_scales=5"):
    dataclasses.replace(CFG, scc_num_scales=5)
  with pytest.raises(ValueError, match="ending at N=8"):
    dataclasses.replace(CFG, scales=(1, 2, 4))


@pytest.mark.slow
def test_nb201_held_out_reconstruction_is_exact_after_training(tmp_path):
  """Stage 1 exactly as `experiments/configs/pnag_nb201.py` trains it (800 steps)."""
  from experiments.configs import pnag_nb201  # pylint: disable=g-import-not-at-top
  from neuroprog.pnag import train  # pylint: disable=g-import-not-at-top
  from neuroprog.run.metrics import MetricWriter  # pylint: disable=g-import-not-at-top
  config = pnag_nb201.get_config()
  space, ae_cfg, _ = train.build(config)
  tr, held = train.split(config, space)
  ops_t, adj_t = space.encode_batch(tr)
  ops_h, adj_h = space.encode_batch(held)
  writer = MetricWriter(str(tmp_path))
  st, _ = train.train_stage1(config, ae_cfg, ops_t, adj_t, str(tmp_path), writer)
  writer.close()
  ae = ae_lib.Autoencoder(ae_cfg)
  rec = train.heldout_reconstruction(ae, space, st.params, ae.codebook_of(st), ops_h, adj_h)
  assert len(held) == 2000 and not set(held) & set(tr)
  assert rec["argmax"] >= 0.99, rec
  # Every sub-architecture scale (3, 4, ..., 8 nodes) decodes exactly, too.
  per_scale = train.heldout_scale_reconstruction(ae, space, st.params, ae.codebook_of(st),
                                                 ops_h, adj_h)
  assert len(per_scale) == 6 and min(per_scale) >= 0.99, per_scale


@pytest.mark.slow  # CI time budget; runs in make test-slow
def test_token_noise_trains_only_the_decoder(batch):
  ops, adj = batch
  ae = ae_lib.Autoencoder(dataclasses.replace(CFG, token_noise=0.3))
  st = ae.init(jax.random.key(6))
  with pytest.raises(ValueError, match="needs a PRNG key"):
    ae.loss(st.params, st.codebook, ops, adj)
  _, aux = ae.loss(st.params, st.codebook, ops, adj, jax.random.key(0))
  assert float(aux["robust"]) > 0
  # the robust term alone moves the decoder, never the encoder
  plain = ae_lib.Autoencoder(CFG)
  g_noisy = jax.grad(lambda p: ae.loss(p, st.codebook, ops, adj, jax.random.key(0))[0])(st.params)
  g_plain = jax.grad(lambda p: plain.loss(p, st.codebook, ops, adj)[0])(st.params)
  enc = lambda g: jax.tree_util.tree_leaves(g["encoder"])
  for a, b in zip(enc(g_noisy), enc(g_plain)):
    np.testing.assert_allclose(a, b, atol=1e-5)
  dec = lambda g: jax.tree_util.tree_leaves(g["decoder"])
  assert max(float(jnp.abs(a - b).max()) for a, b in zip(dec(g_noisy), dec(g_plain))) > 1e-4
