import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import neuroprog
from neuroprog import specs

from conftest import TASKS, inputs_for, random_theta


def _np_ln(x, g, b):
  mu = x.mean(-1, keepdims=True)
  var = ((x - mu) ** 2).mean(-1, keepdims=True)
  return (x - mu) / np.sqrt(var + 1e-5) * g + b


def _np_attention(p, pre, xq, xkv, mask):
  """Per-head loops, no einsum: an independent reference."""
  h_count = p[f"{pre}/wq"].shape[1]
  out = np.zeros_like(xq) + p[f"{pre}/bo"]
  for h in range(h_count):
    q = xq @ p[f"{pre}/wq"][:, h] + p[f"{pre}/bq"][h]
    k = xkv @ p[f"{pre}/wk"][:, h] + p[f"{pre}/bk"][h]
    v = xkv @ p[f"{pre}/wv"][:, h] + p[f"{pre}/bv"][h]
    s = q @ k.T / np.sqrt(q.shape[-1])
    s = np.where(mask, s, -np.inf)
    a = np.exp(s - s.max(-1, keepdims=True))
    a /= a.sum(-1, keepdims=True)
    out = out + (a @ v) @ p[f"{pre}/wo"][h]
  return out


def _np_transformer(spec, p, tokens):
  p = {k: np.asarray(v, np.float64) for k, v in p.items()}
  h = p["embed/tok"][tokens] + p["embed/pos"]
  mask = np.tril(np.ones((len(tokens),) * 2, bool))
  relu = lambda z: np.maximum(z, 0)
  for l in range(spec.n_layers):
    x = _np_ln(h, p[f"L{l}/ln1/g"], p[f"L{l}/ln1/b"])
    h = h + _np_attention(p, f"L{l}/attn", x, x, mask)
    x = _np_ln(h, p[f"L{l}/ln2/g"], p[f"L{l}/ln2/b"])
    h = h + relu(x @ p[f"L{l}/mlp/w1"] + p[f"L{l}/mlp/b1"]) @ p[f"L{l}/mlp/w2"] + p[f"L{l}/mlp/b2"]
  h = _np_ln(h, p["ln_f/g"], p["ln_f/b"])
  return h[-1] @ p["unembed/w"] + p["unembed/b"]


def test_mlp_matches_numpy():
  spec = neuroprog.default_spec("sumfirst")
  theta = random_theta(spec, jax.random.key(0))
  x = np.asarray(inputs_for(spec, jax.random.key(1)))
  p = {k: np.asarray(v) for k, v in neuroprog.unflatten(spec, theta).items()}
  want = np.maximum(x @ p["l0/w"] + p["l0/b"], 0) @ p["l1/w"] + p["l1/b"]
  np.testing.assert_allclose(neuroprog.execute(spec, theta, x), want, rtol=1e-5, atol=1e-5)


def test_deep_mlp_matches_numpy():
  spec = specs.MLPSpec((10, 16, 16, 7, 1), "tanh")
  theta = random_theta(spec, jax.random.key(0))
  x = np.asarray(inputs_for(spec, jax.random.key(1)), np.float64)
  p = {k: np.asarray(v, np.float64) for k, v in neuroprog.unflatten(spec, theta).items()}
  h = x
  for l in range(3):
    h = np.tanh(h @ p[f"l{l}/w"] + p[f"l{l}/b"])
  want = h @ p["l3/w"] + p["l3/b"]
  np.testing.assert_allclose(neuroprog.execute(spec, theta, x), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n_layers", [1, 2, 3])
def test_transformer_matches_per_head_numpy_reference(n_layers):
  spec = dataclasses.replace(neuroprog.default_spec("addmod"), n_layers=n_layers)
  theta = random_theta(spec, jax.random.key(2))
  x = inputs_for(spec, jax.random.key(3))
  p = neuroprog.unflatten(spec, theta)
  got = neuroprog.execute(spec, theta, x)
  want = np.stack([_np_transformer(spec, p, np.asarray(t)) for t in x])
  np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("ln", ["post", "none"])
def test_other_layer_norm_placements_run_and_differ(ln):
  base = dict(vocab_size=7, seq_len=3, d_model=8, n_heads=2, d_mlp=8, n_classes=5, n_layers=2)
  s_ln = specs.TransformerSpec(**base, ln=ln)
  theta = random_theta(s_ln, jax.random.key(4))
  x = jnp.array([[1, 2, 3], [0, 6, 5]])
  y = neuroprog.execute(s_ln, theta, x)
  assert y.shape == (2, 5) and bool(jnp.all(jnp.isfinite(y)))
  # The answer depends on every position (attention reads the context).
  y2 = neuroprog.execute(s_ln, theta, x.at[:, 0].set(4))
  assert float(jnp.abs(y - y2).max()) > 1e-4


def test_seq2seq_padding_is_ignored_and_output_is_per_cell():
  spec = neuroprog.default_spec("arc1d")
  theta = random_theta(spec, jax.random.key(5))
  x = jnp.array([[0, 2, 2, 2, 0, 0, 5]])
  padded = jnp.concatenate([x, jnp.full((1, 4), spec.pad_id)], axis=1)
  y = neuroprog.execute(spec, theta, x)
  y_pad = neuroprog.execute(spec, theta, padded)
  assert y.shape == (1, 7, 11) and y_pad.shape == (1, 11, 11)
  np.testing.assert_allclose(y_pad[:, :7], y, rtol=1e-5, atol=1e-5)
  # Changing one input cell changes the outputs of other cells (cross-attention).
  y3 = neuroprog.execute(spec, theta, x.at[0, 1].set(7))
  assert float(jnp.abs(y3[0, 5] - y[0, 5]).max()) > 1e-5


@pytest.mark.parametrize("task", [pytest.param(t, marks=pytest.mark.slow) if t == "arc1d"
                                  else t for t in TASKS])  # arc1d: CI time budget
def test_vmap_over_programs_and_jit(task):
  spec = neuroprog.default_spec(task)
  thetas = jax.vmap(lambda k: random_theta(spec, k))(jax.random.split(jax.random.key(6), 3))
  x = inputs_for(spec, jax.random.key(7))
  batched = jax.jit(jax.vmap(neuroprog.execute, (None, 0, None)), static_argnums=0)(spec, thetas, x)
  for i in range(3):
    np.testing.assert_allclose(batched[i], neuroprog.execute(spec, thetas[i], x), rtol=1e-5, atol=1e-5)
  assert not np.allclose(batched[0], batched[1])


def test_shape_errors_name_the_problem():
  spec = neuroprog.default_spec("addmod")
  theta = jnp.zeros(neuroprog.num_params(spec))
  with pytest.raises(ValueError, match=r"int\[\.\.\., 3\]"):
    neuroprog.execute(spec, theta, jnp.zeros((2, 4), jnp.int32))
  with pytest.raises(ValueError, match="integer tokens"):
    neuroprog.execute(spec, theta, jnp.zeros((2, 3)))
  with pytest.raises(ValueError, match=r"\(6048,\).*6049"):
    neuroprog.execute(spec, theta[:-1], jnp.zeros((2, 3), jnp.int32))
  with pytest.raises(ValueError, match="jax.vmap"):
    neuroprog.execute(spec, theta[None], jnp.zeros((2, 3), jnp.int32))
  arc = neuroprog.default_spec("arc1d")
  with pytest.raises(ValueError, match="max_len = 33"):
    neuroprog.execute(arc, jnp.zeros(neuroprog.num_params(arc)), jnp.zeros((1, 40), jnp.int32))
  mlp = neuroprog.default_spec("sumfirst")
  with pytest.raises(ValueError, match=r"float\[\.\.\., 10\]"):
    neuroprog.execute(mlp, jnp.zeros(193), jnp.zeros((3, 9)))
