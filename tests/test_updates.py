"""What one optimizer update does to the generated programs, per module."""
import jax.numpy as jnp
import numpy as np
import pytest

from experiments import init_structure
from experiments.configs import test as test_config
from neuroprog.analysis import updates
from neuroprog.programs import layout as layout_lib
from neuroprog.train import loop


def test_update_effects_on_a_linear_generator_and_a_quadratic_loss():
  """θ = [a; b] (two modules), L = |θ - t|^2 / 2, Δ = -lr (θ - t): every
  figure has a closed form, module by module and for all."""
  spec = loop.target_spec(test_config.get_config())
  t_size = layout_lib.num_params(spec)
  rng = np.random.default_rng(0)
  theta0 = rng.standard_normal(t_size).astype(np.float32)
  target = rng.standard_normal(t_size).astype(np.float32)
  half, lr = t_size // 2, 0.1
  params = {"net": {"a": jnp.asarray(theta0[:half]), "b": jnp.asarray(theta0[half:])}}
  theta_fn = lambda p: jnp.concatenate([p["net"]["a"], p["net"]["b"]])[None]
  theta_loss = lambda th: 0.5 * jnp.sum((th[0] - target) ** 2)
  g = theta0 - target
  upd = {"net": {"a": jnp.asarray(-lr * g[:half]), "b": jnp.asarray(-lr * g[half:])}}
  out = updates.update_effects(spec, theta_fn, theta_loss, params, upd)
  assert list(out) == ["net/a", "net/b", "all"]
  for name, part in (("net/a", slice(0, half)), ("net/b", slice(half, None)),
                     ("all", slice(None))):
    e, gp = out[name], g[part]
    assert e.n_params == gp.size
    sq = float(np.sum(gp ** 2))
    assert e.first_order == pytest.approx(-lr * sq, rel=1e-4)
    assert e.realized == pytest.approx(0.5 * sq * ((1 - lr) ** 2 - 1), rel=1e-3)
    expected_cos = np.sqrt(sq / np.sum(g ** 2))   # Δθ covers only this module's part
    assert e.cosine == pytest.approx(expected_cos, rel=1e-4)
    assert e.theta_change == pytest.approx(lr * np.sqrt(sq) / np.linalg.norm(theta0),
                                           rel=1e-4)
  first = layout_lib.layout(spec)[0]
  sl = slice(first.offset, first.offset + first.size)
  assert out["all"].by_tensor[first.name] == pytest.approx(
      lr * np.linalg.norm(g[sl]) / np.linalg.norm(theta0[sl]), rel=1e-4)


# CI budget (about a minute of one worker on a slow hour): a diagnostic command's
# report; the analysis it prints is checked by value above. Runs in make test-slow.
@pytest.mark.slow
def test_update_report_at_init_finds_the_closed_bias_path():
  """At init Adam's first step is -lr sign(g) at the peak rate. The output
  head's gain of every bias tensor starts at 0, so the modules that only feed
  the bias (node) decoder move no θ entry: first order and |Δθ| exactly 0,
  while the edge encoders move every weight tensor."""
  config = test_config.get_config()
  out = init_structure.update_report(config, train_steps=0, examples=16)
  assert sorted(out) == ["meta_gnn", "meta_mlp"]
  assert out["meta_gnn"]["rate"] == loop.learning_rate(config, "meta_gnn") == 1e-3
  gnn = out["meta_gnn"]["effects"]
  for closed in ("net/dec_node_hidden", "net/dec_node_out", "net/upd_0"):
    assert gnn[closed].first_order == 0.0 and gnn[closed].theta_change == 0.0, closed
  enc = gnn["net/enc_edge_in"]
  assert enc.first_order < 0 and enc.realized < 0 and enc.cosine > 0
  assert enc.by_tensor["l0/w"] > 0 and enc.by_tensor["l1/w"] > 0
  assert gnn["all"].n_params == sum(e.n_params for k, e in gnn.items() if k != "all")
  # The first step after 3 training steps is the warm-up's rate at step 3.
  later = init_structure.update_report(config, train_steps=3, examples=16)
  warm = loop.warmup_steps(config, "meta_gnn")
  assert later["meta_gnn"]["rate"] == pytest.approx(1e-3 * 3 / warm, rel=1e-5)
