"""A meta-learned accuracy surrogate: predict accuracy on a new task from a few
evaluated architectures, with no retraining.

A *task* (a dataset) is described by a support set of S (architecture,
accuracy) pairs. The model:

  h_a      = f_arch([one-hot ops; adjacency])                  per architecture
  z_s      = (acc_s - mean(acc_S)) / std(acc_S)                 support, per task
  context  = rho(mean_s psi([h_s, z_s]))                         a set encoder
  score(a) = g([h_a, context])                                   in z units

so the prediction for a query is its accuracy in the task's own units (its
z-score relative to the support set); `predict_accuracy` maps it back to
percent with the support's mean and spread. Meta-training draws episodes: a
training dataset, a random support set and a random query set; loss = MSE on
the query z-scores plus a pairwise logistic ranking loss (what NAS needs is
the order). Validation accuracies train and select; test accuracies only
report (`evaluate`).

Functions here are jittable (`Surrogate.apply_*` take arrays only).
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple, Optional, Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax

from neuroprog.run import loop as run_loop


@dataclasses.dataclass(frozen=True)
class SurrogateConfig:
  """Options (keyword-only in `create`).

  hidden: width of every MLP; context_dim: size of the task context vector;
  support_size: S architectures per support set; query_size: Q per episode;
  episodes: tasks per meta-training step; steps: meta-training steps;
  learning_rate; rank_weight: weight of the pairwise ranking loss.
  """
  hidden: int = 128
  context_dim: int = 16
  support_size: int = 20
  query_size: int = 256
  episodes: int = 8
  steps: int = 2000
  learning_rate: float = 1e-3
  rank_weight: float = 1.0
  seed: int = 0

  def __post_init__(self):
    for k in ("hidden", "context_dim", "support_size", "query_size", "episodes", "steps"):
      if int(getattr(self, k)) <= 0:
        raise ValueError(f"SurrogateConfig.{k}={getattr(self, k)!r} must be positive.")
    if self.support_size < 2:
      raise ValueError(f"support_size={self.support_size} must be >= 2 (a spread is "
                       "needed to normalise accuracies).")


class MLP(nn.Module):
  """Two GELU layers of `width`, then a linear map to `out`."""
  width: int
  out: int

  @nn.compact
  def __call__(self, x):
    x = nn.gelu(nn.Dense(self.width)(x))
    x = nn.gelu(nn.Dense(self.width)(x))
    return nn.Dense(self.out)(x)


class SurrogateNet(nn.Module):
  """The surrogate's modules; `__call__` runs both halves for one episode."""
  cfg: SurrogateConfig
  num_ops: int

  def setup(self):
    c = self.cfg
    self.arch = MLP(c.hidden, c.hidden)
    self.psi = MLP(c.hidden, c.hidden)
    self.rho = MLP(c.hidden, c.context_dim)
    self.head = MLP(c.hidden, 1)

  def embed(self, ops_BxN, adj_BxNxN):
    """[B, hidden] architecture features from op indices and adjacency."""
    onehot = jax.nn.one_hot(ops_BxN, self.num_ops)
    x = jnp.concatenate([onehot.reshape(onehot.shape[0], -1),
                         adj_BxNxN.reshape(adj_BxNxN.shape[0], -1)], -1)
    return self.arch(x)

  def __call__(self, ops_QxN, adj_QxNxN, ops_SxN, adj_SxNxN, z_S):
    """(query scores float32[Q] in z units, context float32[context_dim])."""
    c = self.context(ops_SxN, adj_SxNxN, z_S)
    return self.score(ops_QxN, adj_QxNxN, c), c

  def context(self, ops_SxN, adj_SxNxN, z_S):
    """float32[context_dim] from S support encodings and their z-scores."""
    h = self.embed(ops_SxN, adj_SxNxN)
    return self.rho(self.psi(jnp.concatenate([h, z_S[:, None]], -1)).mean(0))

  def score(self, ops_QxN, adj_QxNxN, context_C):
    """float32[Q] predicted z-scores given a context."""
    h = self.embed(ops_QxN, adj_QxNxN)
    c = jnp.broadcast_to(context_C, (h.shape[0], context_C.shape[-1]))
    return self.head(jnp.concatenate([h, c], -1))[:, 0]


def normalise(acc_S):
  """(z-scores, mean, std) of support accuracies (std floored at 1e-3)."""
  mu = jnp.mean(acc_S)
  sd = jnp.maximum(jnp.std(acc_S), 1e-3)
  return (acc_S - mu) / sd, mu, sd


class Surrogate(NamedTuple):
  """A trained surrogate: config, params, number of op types."""
  cfg: SurrogateConfig
  params: dict
  num_ops: int

  def context(self, ops_SxN, adj_SxNxN, acc_S) -> jax.Array:
    """float32[context_dim] task context from S evaluated architectures."""
    z, _, _ = normalise(jnp.asarray(acc_S, jnp.float32))
    return _jit_context(self.cfg, self.num_ops)(self.params, jnp.asarray(ops_SxN),
                                                jnp.asarray(adj_SxNxN, jnp.float32), z)

  def score(self, ops_QxN, adj_QxNxN, context_C) -> np.ndarray:
    """float32[Q] predicted z-scores, batched 4,096 at a time."""
    f = _jit_score(self.cfg, self.num_ops)
    out = [f(self.params, jnp.asarray(ops_QxN[i:i + 4096]),
             jnp.asarray(adj_QxNxN[i:i + 4096], jnp.float32), context_C)
           for i in range(0, len(ops_QxN), 4096)]
    return np.concatenate([np.asarray(o) for o in out])

  def predict_accuracy(self, ops_QxN, adj_QxNxN, support) -> np.ndarray:
    """float32[Q] predicted accuracy (percent) given support = (ops, adj, acc)."""
    ops_s, adj_s, acc_s = support
    _, mu, sd = normalise(jnp.asarray(acc_s, jnp.float32))
    z = self.score(ops_QxN, adj_QxNxN, self.context(ops_s, adj_s, acc_s))
    return np.asarray(mu) + np.asarray(sd) * z


@functools.lru_cache(maxsize=None)
def network(cfg: SurrogateConfig, num_ops: int) -> SurrogateNet:
  """The (cached) module of a config; `init`/`apply` it for raw params."""
  return SurrogateNet(cfg, num_ops)


@functools.lru_cache(maxsize=None)
def _jit_context(cfg, num_ops):
  net = network(cfg, num_ops)
  return jax.jit(lambda p, o, a, z: net.apply({"params": p}, o, a, z,
                                              method=SurrogateNet.context))


@functools.lru_cache(maxsize=None)
def _jit_score(cfg, num_ops):
  net = network(cfg, num_ops)
  return jax.jit(lambda p, o, a, c: net.apply({"params": p}, o, a, c,
                                              method=SurrogateNet.score))


def episode_loss(net, params, ops_Q, adj_Q, acc_Q, ops_S, adj_S, acc_S, rank_weight):
  """MSE on query z-scores (support-normalised) + pairwise logistic ranking."""
  z_s, mu, sd = normalise(acc_S)
  z_q = (acc_Q - mu) / sd
  pred, _ = net.apply({"params": params}, ops_Q, adj_Q, ops_S, adj_S, z_s)
  mse = jnp.mean((pred - z_q) ** 2)
  diff_t = z_q[:, None] - z_q[None, :]
  diff_p = pred[:, None] - pred[None, :]
  sign = jnp.sign(diff_t)
  weight = jnp.abs(sign)
  rank = jnp.sum(weight * jax.nn.softplus(-sign * diff_p)) / jnp.maximum(weight.sum(), 1.0)
  return mse + rank_weight * rank, (mse, rank)


class Tasks(NamedTuple):
  """Episode source: every architecture's encoding and one accuracy row per
  training task. ops int32[M, N], adj float32[M, N, N], acc float32[D, M]."""
  ops: np.ndarray
  adj: np.ndarray
  acc: np.ndarray


def meta_train(tasks: Tasks, cfg: SurrogateConfig = SurrogateConfig(), *,
               num_ops: int, log_every: int = 500, checkpoint_every: Optional[int] = None,
               manager=None, writer=None, name: str = "surrogate") -> Surrogate:
  """Meta-trains on episodes drawn from `tasks` (uniform over tasks; support
  and query uniform over architectures, disjoint). Deterministic in cfg.seed.

  The loop is `run.loop.train_loop`: one jitted lax.scan per `log_every`
  steps; with an orbax `manager` it checkpoints every `checkpoint_every`
  steps (default: only at the end) and resumes from the newest checkpoint.
  """
  acc = np.asarray(tasks.acc, np.float32)
  if acc.ndim != 2 or acc.shape[1] != len(tasks.ops):
    raise ValueError(f"tasks.acc must be [D, {len(tasks.ops)}]; got {acc.shape}.")
  m = acc.shape[1]
  if cfg.support_size + cfg.query_size > m:
    raise ValueError(f"support_size + query_size = {cfg.support_size + cfg.query_size} "
                     f"exceeds the {m} architectures.")
  net = network(cfg, num_ops)
  ops, adj, acc = jnp.asarray(tasks.ops), jnp.asarray(tasks.adj, jnp.float32), jnp.asarray(acc)
  key = jax.random.key(cfg.seed)
  s, q = cfg.support_size, cfg.query_size
  params = net.init(jax.random.fold_in(key, 0), ops[:q], adj[:q], ops[:s], adj[:s],
                    jnp.zeros(s))["params"]
  sched = optax.warmup_cosine_decay_schedule(0.0, cfg.learning_rate, min(100, cfg.steps // 10 + 1),
                                             cfg.steps, 0.01 * cfg.learning_rate)
  opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(sched))
  state = (params, opt.init(params))
  checkpoint_every = checkpoint_every or cfg.steps

  def one_episode(params, k):
    kd, kp = jax.random.split(k)
    d = jax.random.randint(kd, (), 0, acc.shape[0])
    idx = jax.random.permutation(kp, m)[:s + q]
    si, qi = idx[:s], idx[s:]
    a = acc[d]
    return episode_loss(net, params, ops[qi], adj[qi], a[qi], ops[si], adj[si], a[si],
                        cfg.rank_weight)

  def step(state, i):
    params, opt_state = state
    keys = jax.random.split(jax.random.fold_in(key, i + 1), cfg.episodes)

    def loss_fn(p):
      total, (mse, rank) = jax.vmap(lambda k: one_episode(p, k))(keys)
      return total.mean(), (mse.mean(), rank.mean())
    (loss, (mse, rank)), g = jax.value_and_grad(loss_fn, has_aux=True)(params)
    up, opt_state = opt.update(g, opt_state, params)
    return (optax.apply_updates(params, up), opt_state), {"loss": loss, "mse": mse,
                                                          "rank": rank}

  result = run_loop.train_loop(name, state, run_loop.scan_chunks(step), total=cfg.steps,
                               log_every=log_every, checkpoint_every=checkpoint_every,
                               manager=manager, writer=writer)
  state = result.state
  return Surrogate(cfg, state[0], num_ops)


class RankMetrics(NamedTuple):
  """Spearman rho, Kendall tau, precision of the top 1% (share of the
  predicted top-1% that is in the true top-1%), over the scored set."""
  spearman: float
  kendall: float
  precision_top1: float


def rank_metrics(pred, true, top: float = 0.01) -> RankMetrics:
  from scipy import stats  # pylint: disable=g-import-not-at-top
  pred, true = np.asarray(pred, np.float64), np.asarray(true, np.float64)
  k = max(1, int(round(top * len(true))))
  top_p = set(np.argsort(-pred, kind="stable")[:k].tolist())
  top_t = set(np.argsort(-true, kind="stable")[:k].tolist())
  return RankMetrics(float(stats.spearmanr(pred, true)[0]),
                     float(stats.kendalltau(pred, true)[0]), len(top_p & top_t) / k)


def support_indices(rng: np.random.Generator, m: int, size: int) -> np.ndarray:
  """A support set: `size` distinct architecture indices drawn uniformly."""
  return np.sort(rng.choice(m, size, replace=False))


def evaluate(sur: Surrogate, ops, adj, acc_val, acc_test, support_idx) -> RankMetrics:
  """Ranks the whole space with the context of `support_idx` (validation
  accuracies: what a user would have measured) and scores against test."""
  c = sur.context(ops[support_idx], adj[support_idx], acc_val[support_idx])
  return rank_metrics(sur.score(ops, adj, c), acc_test)


def leave_one_out(table, target: str, cfg: SurrogateConfig, *,
                  datasets: Optional[Sequence[str]] = None, log_every: int = 500,
                  manager=None, writer=None) -> Surrogate:
  """A surrogate meta-trained on the validation accuracies of every dataset of
  `table` except `target` (the leave-one-dataset-out protocol); `manager`,
  `writer`: as in `meta_train`."""
  datasets = [d for d in (datasets or table.datasets) if d != target]
  if not datasets:
    raise ValueError(f"no training dataset left once {target!r} is held out.")
  ops, adj = table.encodings
  tasks = Tasks(ops, adj, np.stack([table.accuracy(d, "val") for d in datasets]))
  return meta_train(tasks, cfg, num_ops=table.space.num_ops, log_every=log_every,
                    manager=manager, writer=writer, name=f"surrogate[-{target}]")
