"""Stage 2: block-causal next-scale transformer with AdaLN, and its KV-cached sampling path."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from neuroprog.pnag import generator as gen_lib

CFG = gen_lib.GenConfig(scales=(1, 2, 4), channels=6, codebook_size=16, width=16,
                        depth=2, heads=2, cond_dim=5)


@pytest.fixture(scope="module")
def setup():
  gen = gen_lib.GeneratorModules(CFG)
  x = jax.random.normal(jax.random.key(0), (3, CFG.seq_len, CFG.channels))
  params = gen.init(jax.random.key(1), x)["params"]
  # AdaLN-Zero starts as the identity on the residual path; give it some
  # weight so every branch matters in these tests.
  params = jax.tree_util.tree_map(
      lambda p: p + 0.05 * jax.random.normal(jax.random.key(p.size), p.shape), params)
  return gen, params, x


def test_mask_is_block_causal():
  m = gen_lib.block_causal_mask((1, 4))
  assert m.shape == (5, 5)
  assert m[0].tolist() == [True, False, False, False, False]
  assert m[1:].all()


def test_a_scale_does_not_see_later_scales(setup):
  gen, params, x = setup
  base = gen.apply({"params": params}, x)
  off = CFG.offsets
  x2 = x.at[:, off[2]:].add(1.0)               # change what scale 3 reads
  out = gen.apply({"params": params}, x2)
  np.testing.assert_allclose(out[:, :off[2]], base[:, :off[2]], atol=1e-5)
  assert float(jnp.abs(out[:, off[2]:] - base[:, off[2]:]).max()) > 1e-3
  x3 = x.at[:, off[1]:off[2]].add(1.0)         # scale 2 inputs reach scale 3
  out3 = gen.apply({"params": params}, x3)
  assert float(jnp.abs(out3[:, off[2]:] - base[:, off[2]:]).max()) > 1e-3
  np.testing.assert_allclose(out3[:, :off[1]], base[:, :off[1]], atol=1e-5)


def test_cached_sampling_path_equals_the_full_forward(setup):
  gen, params, x = setup
  cond = jax.random.normal(jax.random.key(2), (3, CFG.cond_dim))
  full = gen.apply({"params": params}, x, cond)
  v = {"params": params}
  cvec = gen.apply(v, cond, 3, method=gen_lib.GeneratorModules.condition)
  caches = gen_lib.empty_caches(CFG, 3)
  for t, n in enumerate(CFG.scales):
    lo = CFG.offsets[t]
    xt = None if t == 0 else x[:, lo:lo + n * n]
    logits, caches = gen.apply(v, t, xt, cvec, caches,
                               method=gen_lib.GeneratorModules.sample_scale)
    np.testing.assert_allclose(logits, full[:, lo:lo + n * n], atol=1e-4)


def test_null_condition_is_the_default_and_conditions_matter(setup):
  gen, params, x = setup
  none = gen.apply({"params": params}, x, None)
  null = jnp.broadcast_to(params["null_condition"], (3, CFG.cond_dim))
  np.testing.assert_allclose(none, gen.apply({"params": params}, x, null), atol=1e-6)
  other = gen.apply({"params": params}, x, null + 1.0)
  assert float(jnp.abs(other - none).max()) > 1e-3


def test_bad_configs():
  with pytest.raises(ValueError, match="width 30 is not divisible by heads 4"):
    gen_lib.GenConfig(scales=(1, 2), channels=4, codebook_size=8, width=30, heads=4)
  with pytest.raises(ValueError, match="depth must be a positive int"):
    gen_lib.GenConfig(scales=(1, 2), channels=4, codebook_size=8, depth=0)
  with pytest.raises(ValueError, match=r"tokens_per_step=\(9, 0\) must be positive ints"):
    gen_lib.GenConfig(scales=(3, 4), channels=4, codebook_size=8, tokens_per_step=(9, 0))


def test_new_entry_token_counts_set_the_sequence():
  cfg = gen_lib.GenConfig(scales=(3, 4, 6), channels=2, codebook_size=8, width=8, heads=1,
                          tokens_per_step=(9, 7, 20), input_dim=18)
  assert cfg.seq_len == 36 and cfg.offsets == (0, 9, 16) and cfg.in_dim == 18
  m = gen_lib.block_causal_mask(cfg.counts)
  assert m.shape == (36, 36) and m[8, :9].all() and not m[8, 9:].any() and m[16:, :16].all()
  gen = gen_lib.GeneratorModules(cfg)
  x = jax.random.normal(jax.random.key(0), (2, 36, 18))
  params = gen.init(jax.random.key(1), x)["params"]
  assert params["pos"].shape == (36, 8) and params["in_proj"]["kernel"].shape == (18, 8)
  assert gen.apply({"params": params}, x).shape == (2, 36, 8)


def test_dropped_rows_use_the_null_condition(setup):
  gen, params, x = setup
  cond = jax.random.normal(jax.random.key(5), (3, CFG.cond_dim))
  drop = jnp.array([True, False, True])
  mixed = gen.apply({"params": params}, x, cond, drop)
  full = gen.apply({"params": params}, x, cond)
  null = gen.apply({"params": params}, x, None)
  np.testing.assert_allclose(mixed[1], full[1], atol=1e-5)
  np.testing.assert_allclose(mixed[0], null[0], atol=1e-5)
  np.testing.assert_allclose(mixed[2], null[2], atol=1e-5)
  assert float(jnp.abs(full[0] - null[0]).max()) > 1e-4


def _reference_block(p, x, c, heads, mask=None):
  """The Block's maths in numpy, heads split from the last axis."""
  def dense(name, a):
    return a @ np.asarray(p[name]["kernel"]) + np.asarray(p[name]["bias"])

  def norm(a):
    a = a - a.mean(-1, keepdims=True)
    return a / np.sqrt((a * a).mean(-1, keepdims=True) + 1e-6)

  b, l, d = x.shape
  dh = d // heads
  mod = dense("ada", c / (1 + np.exp(-c)))[:, None]
  sh1, sc1, g1, sh2, sc2, g2 = np.split(mod, 6, -1)
  q, k, v = np.split(dense("qkv", norm(x) * (1 + sc1) + sh1), 3, -1)
  split = lambda a: a.reshape(b, l, heads, dh).transpose(0, 2, 1, 3)
  att = split(q) @ split(k).transpose(0, 1, 3, 2) / np.sqrt(dh)
  if mask is not None:
    att = np.where(mask, att, -1e9)
  att = np.exp(att - att.max(-1, keepdims=True))
  att /= att.sum(-1, keepdims=True)
  y = (att @ split(v)).transpose(0, 2, 1, 3).reshape(b, l, d)
  x = x + g1 * dense("proj", y)
  h = dense("mlp_in", norm(x) * (1 + sc2) + sh2)
  h = 0.5 * h * (1 + np.tanh(np.sqrt(2 / np.pi) * (h + 0.044715 * h ** 3)))
  return x + g2 * dense("mlp_out", h)


@pytest.mark.parametrize("heads", [1, 2])
def test_block_matches_a_numpy_reference(heads):
  blk = gen_lib.Block(width=8, heads=heads, mlp_ratio=2)
  x = jax.random.normal(jax.random.key(0), (2, 5, 8))
  c = jax.random.normal(jax.random.key(1), (2, 8))
  mask = gen_lib.block_causal_mask((1, 4))
  p = blk.init(jax.random.key(2), x, c, mask)["params"]
  p = jax.tree_util.tree_map(   # non-zero AdaLN gates, so both branches count
      lambda a: a + 0.3 * jax.random.normal(jax.random.key(a.size), a.shape), p)
  out, _ = blk.apply({"params": p}, x, c, mask)
  ref = _reference_block(jax.tree_util.tree_map(np.asarray, p), np.asarray(x, np.float64),
                         np.asarray(c, np.float64), heads, mask)
  np.testing.assert_allclose(np.asarray(out), ref, atol=2e-5)


def test_scale_attention_sees_only_its_own_scale_and_matches_its_sampling_path(setup):
  gen, params, x = setup
  cfg = gen_lib.GenConfig(**{**CFG.__dict__, "attention": "scale"})
  local = gen_lib.GeneratorModules(cfg)
  base = local.apply({"params": params}, x)        # same parameters, another mask
  off = CFG.offsets
  x2 = x.at[:, off[1]:off[2]].add(1.0)             # scale 2's inputs no longer reach scale 3
  out = local.apply({"params": params}, x2)
  np.testing.assert_allclose(out[:, off[2]:], base[:, off[2]:], atol=1e-5)
  assert float(jnp.abs(out[:, off[1]:off[2]] - base[:, off[1]:off[2]]).max()) > 1e-3
  # ... while the block-causal generator's scale 3 does depend on them.
  causal = gen.apply({"params": params}, x)
  assert float(jnp.abs(causal[:, off[2]:] - base[:, off[2]:]).max()) > 1e-3
  v = {"params": params}
  cvec = local.apply(v, None, 3, method=gen_lib.GeneratorModules.condition)
  caches = gen_lib.empty_caches(cfg, 3)
  for t, n in enumerate(cfg.scales):
    lo = off[t]
    xt = None if t == 0 else x[:, lo:lo + n * n]
    logits, caches = local.apply(v, t, xt, cvec, caches,
                                 method=gen_lib.GeneratorModules.sample_scale)
    np.testing.assert_allclose(logits, base[:, lo:lo + n * n], atol=1e-4)
  with pytest.raises(ValueError, match="attention='global'; allowed"):
    gen_lib.GenConfig(scales=(1, 2), channels=4, codebook_size=8, attention="global")


@pytest.mark.parametrize("attention", [pytest.param("causal", marks=pytest.mark.slow), "scale"])
def test_sequential_steps_are_causal_within_a_step_and_match_token_sampling(attention):
  cfg = gen_lib.GenConfig(scales=(1, 2, 4), channels=6, codebook_size=16, width=16, depth=2,
                          heads=2, cond_dim=5, attention=attention, step_order="sequential")
  gen = gen_lib.GeneratorModules(cfg)
  x = jax.random.normal(jax.random.key(0), (3, cfg.seq_len, cfg.channels))
  codes = jax.random.normal(jax.random.key(3), (3, cfg.seq_len, cfg.channels))
  prev = gen_lib.previous_codes(codes, cfg.counts)
  off = cfg.offsets
  # prev is the step's previous code, zero at each step's first token
  np.testing.assert_array_equal(prev[:, off[2]], 0.0)
  np.testing.assert_array_equal(prev[:, off[2] + 3], codes[:, off[2] + 2])
  params = jax.tree_util.tree_map(
      lambda p: p + 0.05 * jax.random.normal(jax.random.key(p.size), p.shape),
      gen_lib.init_params(cfg, jax.random.key(1)))
  assert "prev_proj" in params
  v = {"params": params}
  base = gen.apply(v, x, None, None, prev)
  # changing the code of token off[2] + 5 changes positions > off[2] + 5 of its step only
  p = off[2] + 5
  codes2 = codes.at[:, p].add(1.0)
  out = gen.apply(v, x, None, None, gen_lib.previous_codes(codes2, cfg.counts))
  np.testing.assert_allclose(out[:, :p + 1], base[:, :p + 1], atol=1e-5)
  assert float(jnp.abs(out[:, p + 1] - base[:, p + 1]).max()) > 1e-3
  # the token-by-token path (caches) gives the teacher-forced logits
  cvec = gen.apply(v, None, 3, method=gen_lib.GeneratorModules.condition)
  caches = gen_lib.empty_caches(cfg, 3)
  token = jax.jit(lambda *a: gen.apply(v, *a, method=gen_lib.GeneratorModules.sample_token))
  embed = jax.jit(lambda t, x: gen.apply(v, t, x, 3, method=gen_lib.GeneratorModules.step_inputs),
                  static_argnums=0)
  for t, count in enumerate(cfg.counts):
    if attention == "scale":
      caches = gen_lib.empty_caches(cfg, 3)
    bufs = gen_lib.empty_buffers(cfg, 3, count)
    e = embed(t, None if t == 0 else x[:, off[t]:off[t] + count])
    for q in range(count):
      pos = off[t] + q
      logits, bufs = token(jnp.int32(q), e[:, q:q + 1], prev[:, pos:pos + 1], cvec, caches,
                           bufs)
      np.testing.assert_allclose(logits[:, 0], base[:, pos], atol=1e-4)
    caches = gen_lib.extend_caches(caches, bufs)
  with pytest.raises(ValueError, match="needs the previous codes"):
    gen.apply(v, x)
  with pytest.raises(ValueError, match="step_order='joint'; allowed"):
    gen_lib.GenConfig(scales=(1, 2), channels=4, codebook_size=8, step_order="joint")


def test_step_sum_reads_the_codebook_running_sum_and_needs_sequential_steps():
  cfg = gen_lib.GenConfig(scales=(1, 2, 4), channels=3, codebook_size=8, width=8, heads=1,
                          step_order="sequential", step_sum=True)
  assert cfg.running_sum and cfg.prev_dim == 6
  assert not gen_lib.GenConfig(scales=(1, 2), channels=3, codebook_size=8,
                               step_order="sequential").running_sum
  with pytest.raises(ValueError, match="step_sum=True needs step_order='sequential', got "
                                       "'parallel'"):
    gen_lib.GenConfig(scales=(1, 2), channels=3, codebook_size=8, step_sum=True)
  with pytest.raises(ValueError, match="step_sum='yes' must be a bool"):
    gen_lib.GenConfig(scales=(1, 2), channels=3, codebook_size=8, step_order="sequential",
                      step_sum="yes")


# Slow (about 14 s): learned token inputs are an option no committed config uses.
@pytest.mark.slow
def test_running_sum_inputs_and_learned_token_table():
  counts = (1, 4, 16)
  codes = jax.random.normal(jax.random.key(3), (2, sum(counts), 3))
  prev = gen_lib.previous_codes(codes, counts, running_sum=True)
  assert prev.shape == (2, 21, 6)
  np.testing.assert_array_equal(prev[..., :3], gen_lib.previous_codes(codes, counts))
  # position 5 + 3 of the last step: the sum of its tokens 5, 6, 7; zero at its first token
  np.testing.assert_allclose(prev[:, 8, 3:], codes[:, 5:8].sum(1), atol=1e-6)
  np.testing.assert_array_equal(prev[:, 5, 3:], 0.0)
  np.testing.assert_allclose(prev[:, 4, 3:], codes[:, 1:4].sum(1), atol=1e-6)
  cfg = gen_lib.GenConfig(scales=(1, 2, 4), channels=3, codebook_size=8, width=8, heads=1,
                          step_order="sequential", token_inputs="learned")
  assert cfg.running_sum and cfg.prev_dim == 6
  params = gen_lib.init_params(cfg, jax.random.key(0))
  assert params["token_table"].shape == (8, 3)
  assert params["prev_proj"]["kernel"].shape == (6, 8)
  par = gen_lib.GenConfig(scales=(1, 2), channels=3, codebook_size=8, token_inputs="learned")
  assert not par.running_sum and par.prev_dim == 3
  assert "token_table" not in gen_lib.init_params(
      gen_lib.GenConfig(scales=(1, 2), channels=3, codebook_size=8), jax.random.key(0))
  with pytest.raises(ValueError, match="token_inputs='embedding'; allowed"):
    gen_lib.GenConfig(scales=(1, 2), channels=4, codebook_size=8, token_inputs="embedding")


@pytest.mark.parametrize("sequential", [True, False])
def test_step_buckets_attention_equals_one_attention_per_step_with_its_gradient(sequential):
  """Attention within steps of sizes 3, 6, 1, 6, 1, 8 (padded to 4, 8, 1, 8,
  1, 8 and batched by size) equals a plain masked attention over each step
  alone, and so does its gradient (the gathers' custom gradient)."""
  counts = (3, 6, 1, 6, 1, 8)
  steps = gen_lib.step_buckets(counts, sequential)
  assert steps.shapes == ((2, 1), (1, 4), (3, 8))
  np.testing.assert_array_equal(steps.source[steps.slot], np.arange(sum(counts)))
  b, h, dh = 2, 2, 3
  qkv = jax.random.normal(jax.random.key(0), (b, sum(counts), 3 * h * dh))

  def per_step(x):
    out, lo = [], 0
    for p in counts:
      blk = x[:, lo:lo + p].reshape(b, p, 3, h, dh).transpose(2, 0, 3, 1, 4)
      att = blk[0] @ jnp.swapaxes(blk[1], -1, -2) / np.sqrt(dh)
      if sequential:
        att = jnp.where(np.tril(np.ones((p, p), bool)), att, -1e9)
      out.append((jax.nn.softmax(att, -1) @ blk[2]).transpose(0, 2, 1, 3).reshape(b, p, h * dh))
      lo += p
    return jnp.concatenate(out, 1)

  # jitted: op-by-op, the gradients compile hundreds of small programs (27 s)
  batched = lambda x: gen_lib._attend_within_steps(x, h, steps)
  np.testing.assert_allclose(jax.jit(batched)(qkv), jax.jit(per_step)(qkv), rtol=1e-5,
                             atol=1e-6)
  w = jax.random.normal(jax.random.key(1), (b, sum(counts), h * dh))
  grad = lambda f: jax.jit(jax.grad(lambda x: jnp.sum(f(x) * w)))(qkv)
  np.testing.assert_allclose(grad(batched), grad(per_step), rtol=1e-4, atol=1e-5)
