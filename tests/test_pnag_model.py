"""Tests of neuroprog.pnag.model's token draw (the sampler's inner step)."""
import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from neuroprog.pnag import model

N_DRAWS = 200_000


def _frequencies(logits, **kw):
  rows = jnp.broadcast_to(jnp.asarray(logits, jnp.float32), (N_DRAWS, len(logits)))
  idx = np.asarray(model.draw_tokens(jax.random.key(0), rows, **kw))
  assert idx.dtype == np.int32 and idx.shape == (N_DRAWS,)
  return np.bincount(idx, minlength=len(logits)) / N_DRAWS


def _softmax(x):
  e = np.exp(np.asarray(x, np.float64) - np.max(x))
  return e / e.sum()


# 4 standard deviations of a frequency near 0.5 over N_DRAWS draws: 0.0045.
@pytest.mark.parametrize("temperature", [1.0, 2.0, 0.5])
def test_frequencies_follow_the_softmax(temperature):
  logits = [2.0, 0.0, -1.0, 1.0, 0.5, -3.0]
  np.testing.assert_allclose(_frequencies(logits, temperature=temperature),
                             _softmax(np.array(logits) / temperature), atol=0.0045)


def test_top_k_keeps_the_k_largest_and_renormalises():
  logits = [2.0, 0.0, -1.0, 1.0, 0.5, -3.0]
  freq = _frequencies(logits, top_k=2)
  assert freq[[1, 2, 4, 5]].sum() == 0
  np.testing.assert_allclose(freq[[0, 3]], _softmax([2.0, 1.0]), atol=0.0045)


def test_logits_far_above_the_row_mean_are_not_clipped():
  # 300 and 299.3 lie about 180 above the row mean: the mean-shifted fast path
  # would clip both to the same exponent (a 50/50 draw); the exact path keeps
  # their ratio e^0.7 (0.668 / 0.332).
  freq = _frequencies([300.0, 299.3, 0.0, 0.0, 0.0])
  np.testing.assert_allclose(freq[:2], _softmax([300.0, 299.3]), atol=0.0045)
  assert freq[2:].sum() == 0


def test_a_batch_mixing_clipped_and_plain_rows_is_exact_row_by_row():
  rows = np.zeros((N_DRAWS, 3), np.float32)
  rows[::2] = [500.0, 0.0, 499.0]        # even rows: 0.731 / 0 / 0.269
  rows[1::2] = [0.0, 1.0, 0.0]           # odd rows: 0.212 / 0.576 / 0.212
  idx = np.asarray(model.draw_tokens(jax.random.key(1), jnp.asarray(rows)))
  even = np.bincount(idx[::2], minlength=3) / (N_DRAWS // 2)
  odd = np.bincount(idx[1::2], minlength=3) / (N_DRAWS // 2)
  np.testing.assert_allclose(even, _softmax([500.0, -np.inf, 499.0]), atol=0.0064)
  np.testing.assert_allclose(odd, _softmax([0.0, 1.0, 0.0]), atol=0.0064)


def test_same_key_same_tokens_and_batch_shape_is_kept():
  logits = jax.random.normal(jax.random.key(3), (4, 5, 7))
  a = model.draw_tokens(jax.random.key(4), logits)
  b = model.draw_tokens(jax.random.key(4), logits)
  c = model.draw_tokens(jax.random.key(5), logits)
  assert a.shape == (4, 5) and bool(jnp.all(a == b)) and not bool(jnp.all(a == c))
  assert int(a.min()) >= 0 and int(a.max()) <= 6


def test_masked_logits_get_probability_zero():
  freq = _frequencies([1.0, -np.inf, 0.0, -np.inf])
  assert freq[1] == 0 and freq[3] == 0
  np.testing.assert_allclose(freq[[0, 2]], _softmax([1.0, 0.0]), atol=0.0045)


def test_token_chunks_cover_a_step_with_doubling_ends():
  assert model.token_chunks(42) == [(0, 8), (8, 16), (16, 32), (32, 42)]
  assert model.token_chunks(8) == [(0, 8)]
  assert model.token_chunks(3) == [(0, 3)]
  assert model.token_chunks(9, first=2) == [(0, 2), (2, 4), (4, 8), (8, 9)]
  with pytest.raises(ValueError, match="count, first >= 1, got 0, 8"):
    model.token_chunks(0)


# Every variant costs 30-90 s (the jitted sampler's compile), so all run in
# make test-slow; the generator paths they exercise (token sampling = teacher
# forcing, sequential steps, cached sampling) are checked cheaply in
# test_pnag_generator.py.
@pytest.mark.slow
@pytest.mark.parametrize("attention,step_order,token_inputs,step_sum,conditioned", [
    ("causal", "parallel", "codebook", False, False),
    ("scale", "parallel", "codebook", False, False),
    ("causal", "sequential", "codebook", False, False),
    ("scale", "sequential", "codebook", False, False),
    ("scale", "sequential", "codebook", True, False),
    ("scale", "sequential", "codebook", True, True),
    ("scale", "sequential", "codebook", True, "budget"),
    ("scale", "sequential", "learned", False, False)])
def test_greedy_sampler_equals_greedy_teacher_forcing_on_new_entry_tokens(
    attention, step_order, token_inputs, step_sum, conditioned):
  """The jitted sampler (running node context, caches) and teacher forcing
  (context rebuilt from the token sequence) draw the same greedy tokens: the
  graphs decoded from both agree. With learned token inputs the context,
  twins, previous token and running sum read the generator's table; the
  step_sum case also reads the codebook's running sum and the later_twins
  and between_types context; `conditioned` adds a condition (AdaLN) read by
  both, as generation to a requested cost uses it; "budget" also the budget
  inputs (the spend so far from a random spend table and the rest of the
  request), carried by the sampler and rebuilt from the tokens in teacher
  forcing."""
  from neuroprog.pnag import msq, train
  cfg = train.default_config(space="nb201", ae={"hidden": 8, "channels": 4, "codebook_size": 8,
                                                "rounds": 1},
                             gen={"width": 8, "heads": 1, "depth": 1, "attention": attention,
                                  "step_order": step_order, "token_inputs": token_inputs,
                                  "step_sum": step_sum, "later_twins": step_sum,
                                  "between_types": step_sum,
                                  **({"cond_dim": 3} if conditioned else {})})
  space, ae_cfg, gen_cfg = train.build(cfg)
  budget = conditioned == "budget"
  if budget:
    gen_cfg = dataclasses.replace(gen_cfg, budget_inputs=True)
  assert ae_cfg.scale_tokens == "new" and gen_cfg.seq_len == 64
  ae, gen = model.autoencoder_for(ae_cfg), model.generator_for(gen_cfg)
  st = ae.init(jax.random.key(0))
  codebook = ae.codebook_of(st)
  params = model.gen_lib.init_params(gen_cfg, jax.random.key(1))
  params = jax.tree_util.tree_map(   # open the AdaLN gates so every block matters
      lambda a: a + 0.5 * jax.random.normal(jax.random.key(a.size), a.shape), params)
  n = 4
  cond = (jax.random.normal(jax.random.key(7), (n, 3)) if conditioned else None)
  ops, adj = model.sampler(ae_cfg, gen_cfg, n, top_k=1)(st.params, codebook, params,
                                                            jax.random.key(2), cond)
  table = model.input_table(gen_cfg, params, codebook)
  if token_inputs == "learned":
    assert table.shape == codebook.shape and gen_cfg.prev_dim == 8
    assert not np.allclose(table, codebook)
    # training builds the inputs with the identity and maps them through the table
    toks = jax.random.randint(jax.random.key(5), (2, 64), 0, 8)
    eye = jnp.eye(8)
    for build in (lambda tb: model.teacher_inputs(model.split_tokens(toks, ae_cfg.token_shapes),
                                                  tb, gen_cfg.scales, 8, ae_cfg.node_sets, True),
                  lambda tb: model.teacher_previous(gen_cfg, toks, tb)):
      np.testing.assert_allclose(model.through_table(build(eye), table), build(table),
                                 atol=1e-5)
  else:
    assert table is codebook
    assert gen_cfg.running_sum == step_sum and gen_cfg.prev_dim == (8 if step_sum else 4)
    assert gen_cfg.in_dim == (12 if step_sum else 10) * 4

  @jax.jit
  def greedy(toks):   # every position's argmax under teacher forcing on toks
    inputs = model.teacher_inputs(model.split_tokens(toks, ae_cfg.token_shapes),
                                  table, gen_cfg.scales, 8, ae_cfg.node_sets, True,
                                  gen_cfg.later_twins, gen_cfg.between_types)
    prev = model.teacher_previous(gen_cfg, toks, table)
    return gen.apply({"params": params}, inputs, cond, None, prev,
                     toks if budget else None).argmax(-1).astype(jnp.int32)

  toks = jnp.zeros((n, 64), jnp.int32)
  for t, lo in enumerate(gen_cfg.offsets):   # scale t's tokens depend on scales < t only
    hi = lo + gen_cfg.counts[t]
    if gen_cfg.sequential:   # ... and on the step's earlier tokens
      for p in range(lo, hi):
        toks = toks.at[:, p].set(greedy(toks)[:, p])
    else:
      toks = toks.at[:, lo:hi].set(greedy(toks)[:, lo:hi])
  f = msq.reconstruct(model.split_tokens(toks, ae_cfg.token_shapes), codebook, 8,
                      ae_cfg.node_sets, True)
  want_ops, want_adj = model.ae_lib.plain_decode(*ae.decode_map(st.params, f))
  np.testing.assert_array_equal(ops, want_ops)
  np.testing.assert_array_equal(adj, want_adj)
