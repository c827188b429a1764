"""Tests of neuroprog.pnag.budget (spend tables) and the generator's budget inputs."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from neuroprog.pnag import budget, cost, spaces
from neuroprog.pnag import generator as gen_lib


def _additive(seed=0, t=3000, counts=(1, 3, 1, 4), k=6):
  rng = np.random.default_rng(seed)
  l = sum(counts)
  toks = rng.integers(0, k, size=(t, l))
  true = rng.normal(size=(l, k))
  vals = true[np.arange(l)[None], toks]                       # [T, L]
  ends = np.cumsum(counts)
  targets = np.stack([vals[:, :e].sum(-1) for e in ends], -1)  # cost after each step
  return toks, targets, counts, k


def test_fit_recovers_an_additive_cost_at_every_step():
  toks, targets, counts, k = _additive()
  fit = budget.fit_spend_table(toks, targets, counts, k, ridge=1e-6)
  assert fit.table.shape == (sum(counts), k) and fit.table.dtype == np.float32
  np.testing.assert_allclose(fit.r2, 1.0, atol=1e-6)
  assert fit.max_abs_error < 1e-3
  np.testing.assert_allclose(budget.spend_of(fit.table, toks), targets[:, -1], atol=1e-3)
  # the running spend after each step is that step's target, not only the last
  ends = np.cumsum(counts)
  for g, e in enumerate(ends):
    part = np.asarray(fit.table, np.float64)[np.arange(e)[None], toks[:, :e]].sum(-1)
    np.testing.assert_allclose(part, targets[:, g], atol=1e-3)


def test_fit_of_a_non_additive_cost_reports_the_misfit():
  toks, targets, counts, k = _additive(seed=1)
  bent = targets.copy()
  bent[:, -1] += 0.5 * (toks[:, 0] == toks[:, -1])            # an interaction of two tokens
  fit = budget.fit_spend_table(toks, bent, counts, k)
  assert fit.r2[-1] < 0.9999 and fit.max_abs_error > 0.2
  np.testing.assert_allclose(fit.r2[:-1], 1.0, atol=1e-4)


def test_fit_rejects_bad_shapes_and_codes():
  toks, targets, counts, k = _additive(t=50)
  with pytest.raises(ValueError, match="disagree"):
    budget.fit_spend_table(toks, targets[:, :2], counts, k)
  with pytest.raises(ValueError, match="codes must lie in 0..3"):
    budget.fit_spend_table(toks, targets, counts, 4)


def test_sub_costs_of_mbv3():
  sp = spaces.get("mbv3")
  filler = ((3, 3), (3, 3))
  plain = tuple(filler for _ in range(5))        # every slot as the completion fills it
  deep = ((((7, 6),) * 4),) + plain[1:]           # stage 1 at depth 4, k7 e6
  ops, adj = sp.encode_batch([plain, deep])
  sizes = (3, 4, 5, 20)
  c = budget.sub_costs("mbv3", ops, adj, sizes)
  full = [cost.cost("mbv3", a).macs for a in (plain, deep)]
  # a network made of the filler costs the same at every size
  np.testing.assert_array_equal(c[0], full[0])
  np.testing.assert_array_equal(c[:, -1], full)
  # stage 1 of `deep` truncated to 3 and 4 layers: the prefix's own layers
  three = (((7, 6),) * 3,) + plain[1:]
  np.testing.assert_array_equal(c[1, :3], [cost.cost("mbv3", three).macs, full[1], full[1]])


def _budget_cfg():
  return gen_lib.GenConfig(scales=(2, 3), channels=4, codebook_size=5, width=8, depth=1,
                           heads=1, cond_dim=3, tokens_per_step=(2, 3, 4),
                           step_order="sequential", budget_inputs=True)


def test_budget_inputs_need_sequential_steps():
  with pytest.raises(ValueError, match="budget_inputs=True needs step_order='sequential'"):
    gen_lib.GenConfig(scales=(2,), channels=4, codebook_size=5, budget_inputs=True)
  with pytest.raises(ValueError, match="budget_inputs=.* must be a bool"):
    gen_lib.GenConfig(scales=(2,), channels=4, codebook_size=5, budget_inputs=1,
                      step_order="sequential")


def test_teacher_spend_counts_earlier_steps_only_and_moves_the_logits():
  cfg = _budget_cfg()
  params = gen_lib.init_params(cfg, jax.random.key(0))
  table = jax.random.normal(jax.random.key(1), params["spend_table"].shape)
  params = {**params, "spend_table": table}
  gen = gen_lib.GeneratorModules(cfg)
  toks = jax.random.randint(jax.random.key(2), (2, cfg.seq_len), 0, 5)
  spent = gen.apply({"params": params}, toks, method=gen_lib.GeneratorModules._spent)
  vals = np.asarray(table)[np.arange(cfg.seq_len)[None], np.asarray(toks)]
  # steps of 2, 3, 4 tokens: positions of step g read the sum over steps < g
  want = np.concatenate([np.zeros((2, 2)), np.repeat(vals[:, :2].sum(-1, keepdims=True), 3, 1),
                         np.repeat(vals[:, :5].sum(-1, keepdims=True), 4, 1)], 1)
  np.testing.assert_allclose(spent, want, atol=1e-5)
  step_sum = gen.apply({"params": params}, toks[:, 2:5], 2,
                       method=gen_lib.GeneratorModules.spend)
  np.testing.assert_allclose(step_sum, vals[:, 2:5].sum(-1), atol=1e-5)
  # the request (the condition's last entry) reaches the logits through the budget
  x = jnp.zeros((2, cfg.seq_len, cfg.in_dim))
  prev = jnp.zeros((2, cfg.seq_len, cfg.prev_dim))
  cond = jnp.zeros((2, 3))
  a = gen.apply({"params": params}, x, cond, None, prev, toks)
  b = gen.apply({"params": params}, x, cond.at[:, -1].set(1.0), None, prev, toks)
  assert float(jnp.abs(a - b).max()) > 1e-4
  # a dropped (null) row ignores the request
  drop = jnp.array([True, True])
  c = gen.apply({"params": params}, x, cond, drop, prev, toks)
  d = gen.apply({"params": params}, x, cond.at[:, -1].set(1.0), drop, prev, toks)
  np.testing.assert_allclose(c, d, atol=1e-6)
  with pytest.raises(ValueError, match="needs the teacher tokens"):
    gen.apply({"params": params}, x, cond, None, prev)
