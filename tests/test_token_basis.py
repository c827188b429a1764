"""The token basis: token-indexed tensors of θ as coefficients on a fixed
basis of the token index (neuroprog.meta.token_basis), and Meta-MLP's option."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from neuroprog import meta, specs
from neuroprog.meta import token_basis
from neuroprog.programs import layout as layout_lib
from neuroprog.tasks import addmod

SMALL = specs.TransformerSpec(vocab_size=12, seq_len=3, d_model=4, n_heads=1, d_mlp=8,
                              n_layers=1, n_classes=11)


def test_basis_is_the_orthogonal_dct():
  phi = token_basis.basis(8, 2)
  assert phi.shape == (8, 5)
  np.testing.assert_allclose(phi.T @ phi, 8 * np.eye(5), atol=1e-5)
  v = np.arange(8) + 0.5
  np.testing.assert_allclose(phi[:, 0], np.ones(8))
  # Column 3 is cos(3 pi (v + 1/2) / 8) at unit RMS (its RMS is 1/sqrt(2)).
  np.testing.assert_allclose(phi[:, 3], np.sqrt(2) * np.cos(3 * np.pi * v / 8), atol=1e-6)
  assert np.linalg.cond(token_basis.basis(97, 24)) < 1.001


def test_reduce_inverts_expand_and_project_keeps_the_basis_span():
  m = 2
  rng = np.random.default_rng(1)
  emitted = jnp.asarray(rng.normal(size=(3, token_basis.reduced_size(SMALL, m))), jnp.float32)
  theta = token_basis.expand(SMALL, m, emitted)
  np.testing.assert_allclose(token_basis.reduce(SMALL, m, theta), emitted, atol=1e-5)
  np.testing.assert_allclose(token_basis.project(SMALL, m, theta), theta, atol=1e-5)
  # Off the span: project changes the token tensors only, and is idempotent.
  raw = jnp.asarray(rng.normal(size=(3, layout_lib.num_params(SMALL))), jnp.float32)
  once = np.asarray(token_basis.project(SMALL, m, raw))
  np.testing.assert_allclose(token_basis.project(SMALL, m, once), once, atol=1e-5)
  by_name = {e.name: e for e in layout_lib.layout(SMALL)}
  tok, pos = by_name["embed/tok"], by_name["embed/pos"]
  changed = np.abs(once - np.asarray(raw)) > 1e-6
  assert changed[:, tok.offset:tok.offset + 11 * 4].any()
  # The "=" row (row 11 of embed/tok), the positions and the attention copied.
  assert not changed[:, tok.offset + 11 * 4:by_name["unembed/w"].offset].any()
  assert pos.offset == tok.offset + tok.size


def test_expand_by_value():
  m = 2
  plan = token_basis.plan(SMALL, m)
  k, n, d = 5, 11, 4
  entries = layout_lib.layout(SMALL)
  assert plan.size == layout_lib.num_params(SMALL)
  # The embedding emits k x d coefficients plus the "=" row; the unembedding
  # d x k and k.
  full = layout_lib.num_params(SMALL)
  assert plan.reduced_size == full - (n - k) * d - d * (n - k) - (n - k)
  rng = np.random.default_rng(0)
  emitted = rng.normal(size=(2, plan.reduced_size)).astype(np.float32)
  theta = np.asarray(token_basis.expand(SMALL, m, jnp.asarray(emitted)))
  assert theta.shape == (2, full)
  phi = token_basis.basis(n, m)
  by_name = {e.name: e for e in entries}
  tok = by_name["embed/tok"]
  coef = emitted[:, :k * d].reshape(2, k, d)
  got = theta[:, tok.offset:tok.offset + tok.size].reshape(2, 12, d)
  np.testing.assert_allclose(got[:, :n], np.einsum("nk,bkd->bnd", phi, coef), rtol=1e-5,
                             atol=1e-6)
  np.testing.assert_array_equal(got[:, n], emitted[:, k * d:k * d + d])
  # The next entry (positions) is copied as emitted.
  pos = by_name["embed/pos"]
  np.testing.assert_array_equal(theta[:, pos.offset:pos.offset + pos.size],
                                emitted[:, k * d + d:k * d + d + pos.size])
  w, b = by_name["unembed/w"], by_name["unembed/b"]
  coef_w = emitted[:, -(d * k + k):-k].reshape(2, d, k)
  np.testing.assert_allclose(theta[:, w.offset:w.offset + w.size].reshape(2, d, n),
                             np.einsum("bdk,nk->bdn", coef_w, phi), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(theta[:, b.offset:], emitted[:, -k:] @ phi.T, rtol=1e-5,
                             atol=1e-6)


def test_off_is_the_identity():
  x = jnp.arange(6.0).reshape(1, 6)
  assert token_basis.expand(SMALL, 0, x) is x
  assert token_basis.reduced_size(SMALL, 0) == layout_lib.num_params(SMALL)


@pytest.mark.parametrize("value, match", [(-1, "integer >= 0"), (True, "integer >= 0"),
                                          (2.0, "integer >= 0"), (5, r"allowed: 1..4")])
def test_bad_token_basis_is_refused(value, match):
  with pytest.raises(ValueError, match=match):
    meta.create("meta_mlp", SMALL, 2, {"token_basis": value})


def test_refused_without_a_token_embedding():
  with pytest.raises(ValueError, match="no token embedding.*TransformerSpec"):
    meta.create("meta_mlp", specs.MLPSpec(widths=(3, 8, 2)), 2, {"token_basis": 2})


def test_meta_mlp_rows_lie_on_the_basis_and_train():
  spec = addmod.default_spec()
  plain = meta.create("meta_mlp", spec, 2)
  model = meta.create("meta_mlp", spec, 2, {"token_basis": 8})
  assert model.num_params() < plain.num_params()
  u = jnp.asarray([[0.53, 2 / 53], [0.97, 2 / 97]], jnp.float32)
  params = model.init(jax.random.key(0), u)
  theta = model.apply(params, u)
  tok = {e.name: e for e in layout_lib.layout(spec)}["embed/tok"]
  rows = np.asarray(theta[:, tok.offset:tok.offset + tok.size]).reshape(2, 98, 16)
  # The embedding keeps its standard-init scale (calibrated head).
  assert abs(rows.std() - 1.0) < 0.2
  phi = token_basis.basis(97, 8)
  for r in rows:
    # Rows 0..96 are combinations of the 17 basis columns (the head's per-tensor
    # gain and center keep them so, the center through the constant column);
    # the "=" row 97 is not.
    coef, *_ = np.linalg.lstsq(phi, r[:97], rcond=None)
    np.testing.assert_allclose(phi @ coef, r[:97], atol=1e-4)
  # A loss of θ has a gradient for the coefficients' output layer.
  grads = jax.grad(lambda p: jnp.sum(model.apply(p, u)[:, tok.offset:tok.offset + 50] ** 2))(
      params)
  assert float(jnp.abs(grads["net"]["Dense_2"]["kernel"]).sum()) > 0


def test_meta_gnn_projects_its_token_rows_on_the_basis():
  """Meta-GNN emits one value per entry; with token_basis its raw output is
  the plain net's projected on the basis (same parameters), and θ's
  unembedding columns lie on the basis."""
  u = jnp.asarray([[0.2, 0.5], [0.7, 0.1]], jnp.float32)
  plain = meta.create("meta_gnn", SMALL, 2, {"d": 4, "rounds": 1})
  model = meta.create("meta_gnn", SMALL, 2, {"d": 4, "rounds": 1, "token_basis": 2})
  assert model.num_params() == plain.num_params()
  net_params = jax.jit(plain._init_net)(jax.random.key(3), u)

  @jax.jit
  def both(p):
    raw = plain.net.apply({"params": p}, u)
    return raw, model.net.apply({"params": p}, u), token_basis.project(SMALL, 2, raw)

  raw, projected, want = both(net_params)
  np.testing.assert_allclose(projected, want, atol=1e-6)
  assert np.abs(np.asarray(projected) - np.asarray(raw)).max() > 1e-3
  phi = token_basis.basis(11, 2)
  w = {e.name: e for e in layout_lib.layout(SMALL)}["unembed/w"]
  for c in np.asarray(projected)[:, w.offset:w.offset + w.size].reshape(2, 4, 11):
    coef, *_ = np.linalg.lstsq(phi, c.T, rcond=None)
    np.testing.assert_allclose(phi @ coef, c.T, atol=1e-5)
  with pytest.raises(ValueError, match="token_basis=6"):
    meta.create("meta_gnn", SMALL, 2, {"d": 4, "token_basis": 6})
