"""Every experiment config loads, validates, and its models are matched."""
import chex
import jax
import numpy as np
import optax
import pytest

from experiments.configs import addmod, addmod_cpu, addmod_deep, addmod_deep_cpu, arc1d
from experiments.configs import addmod_moduli_cpu, addmod_reach_val_cpu, addmod_table_cpu
from experiments.configs import arc1d_examples, arc1d_paper
from experiments.configs import sumfirst, sumfirst_deep, windowsum
from experiments.configs import test as test_config
from neuroprog import meta, tasks
from neuroprog.train import loop, refine

PAPER = {"sumfirst": sumfirst, "addmod": addmod, "arc1d": arc1d_paper}


@pytest.mark.parametrize("name", sorted(PAPER))
def test_paper_configs_are_valid_and_capacity_matched(name):
  config = PAPER[name].get_config()
  loop.validate_config(config)
  task = loop.build_task(config)
  assert config.seeds == 10
  assert set(task.ood_intents).isdisjoint(task.train_intents)
  assert set(task.val_intents).isdisjoint(task.train_intents)
  budget = tasks.PARAM_BUDGETS[name]
  for model in config.models:
    n = loop.create_model(config, task, model).num_params()
    assert abs(n - budget) <= 0.1 * budget, (model, n)


@pytest.mark.parametrize("module, seeds", [(sumfirst_deep, 5), (addmod_deep, 5), (windowsum, 3)],
                         ids=["sumfirst_deep", "addmod_deep", "windowsum"])
def test_beyond_paper_configs_are_valid_and_capacity_matched(module, seeds):
  """Targets other than the paper's: the models are re-matched for them."""
  config = module.get_config()
  loop.validate_config(config)
  task = loop.build_task(config)
  assert config.seeds == seeds
  if module is not windowsum:   # a deep config differs from its base in target and widths only
    base = {sumfirst_deep: sumfirst, addmod_deep: addmod}[module].get_config()
    assert (config.steps, config.val_intents, config.learning_rates) == (
        base.steps, base.val_intents, base.learning_rates)
  # The deep configs name their target; WINDOWSUM's default target is a CNN.
  assert task.spec != tasks.default_spec(config.task) or config.task == "windowsum"
  budget = tasks.PARAM_BUDGETS[config.task]
  for model in config.models:
    n = loop.create_model(config, task, model).num_params()
    assert abs(n - budget) <= 0.1 * budget, (model, n)


def test_addmod_depth_pair_on_the_cpu_differs_only_in_seeds_steps_and_target():
  """addmod_cpu.py / addmod_deep_cpu.py are addmod.py / addmod_deep.py at 5 seeds
  x 2,500 steps, and the two depths share every key but the target and widths."""
  depth1, depth2 = addmod_cpu.get_config(), addmod_deep_cpu.get_config()
  for cpu, full in ((depth1, addmod.get_config()), (depth2, addmod_deep.get_config())):
    loop.validate_config(cpu)
    changed = {k for k in full.keys() if cpu[k] != full[k]}
    assert changed - {"seeds", "models", "model_configs"} == {"steps", "checkpoint_every"}
    assert all(cpu.model_configs[m] == full.model_configs[m] for m in cpu.models)
    assert (cpu.seeds, cpu.steps) == (5, 2500)
  changed = {k for k in depth1.keys() if depth1[k] != depth2[k]}
  assert changed == {"spec", "model_configs", "models"}, changed
  # direct has no target, so its depth-1 run is its row at depth 2 too: on the
  # 2-layer task it is the same network, drawn the same from the same key.
  # (meta_gnn@library, the recipe's row, is trained at depth 1 only.)
  assert set(depth1.models) - set(depth2.models) == {"direct", "meta_gnn@library"}
  task1, task2 = loop.build_task(depth1), loop.build_task(depth2)
  key = jax.random.key(3)
  chex.assert_trees_all_equal(loop.create_model(depth1, task1, "direct").init(key),
                              loop.create_model(depth1, task2, "direct").init(key))
  assert task1.train_intents == task2.train_intents   # and the same data from a key
  chex.assert_trees_all_equal(task1.sample(key, task1.train_intents, 8),
                              task2.sample(key, task2.train_intents, 8))
  # So the two depths' results.md carry the same heuristic rows.
  assert loop.evaluate_heuristics(depth1, task1) == loop.evaluate_heuristics(depth2, task2)
  assert task2.spec.n_layers == 2
  assert task1.spec == tasks.default_spec("addmod")


def test_arc1d_cpu_protocol_keeps_the_paper_splits_at_its_own_budget():
  """arc1d.py differs from arc1d_paper.py only where its docstring says: the
  capacity budget, intents and examples per step, seeds and steps."""
  cpu, paper = arc1d.get_config(), arc1d_paper.get_config()
  loop.validate_config(cpu)
  task = loop.build_task(cpu)
  assert (cpu.ood_intents, cpu.val_intents) == (paper.ood_intents, paper.val_intents)
  assert len(task.val_intents) >= 2 and len(task.train_intents) == 20
  assert set(task.val_intents).isdisjoint(task.ood_intents)
  assert task.spec == tasks.default_spec("arc1d")
  assert cpu.learning_rates == paper.learning_rates and cpu.learning_rate is None
  assert cpu.intents_per_step * cpu.examples_per_intent == 128 and cpu.seeds == 5
  for model in cpu.models:
    n = loop.create_model(cpu, task, model).num_params()
    assert abs(n - arc1d.PARAM_BUDGET) <= 0.1 * arc1d.PARAM_BUDGET, (model, n)


def test_arc1d_examples_config_is_the_cpu_protocol_with_example_intents():
  config, label = arc1d_examples.get_config(), arc1d.get_config()
  loop.validate_config(config)
  assert (config.intent, config.shots, label.intent) == ("examples", 3, "label")
  assert (config.seeds, label.seeds) == (3, 5)   # the label run's seeds 0-2
  assert dict(config.intent_encoder) == {"pair_stats": 1}
  for key in ("ood_intents", "val_intents", "steps", "intents_per_step",
              "examples_per_intent", "learning_rates"):
    assert config[key] == label[key], key
  # The hypernetworks are their label-intent twins' (Meta-gMLP with θ_base, chosen
  # on arc1d.py's validation intents); only the in-context model is its own.
  for model in ("meta_mlp", "meta_gmlp", "meta_gnn"):
    assert config.model_configs[model] == label.model_configs[model], model
  assert label.model_configs.meta_gmlp.base_program is True
  # The support refinement chosen on the trained run (the config's comments).
  assert [loop.refinement_of(config, m) for m in ("meta_mlp", "meta_gmlp", "meta_gnn")] == [
      refine.Refinement(50, 1e-3, "intent", gate, 3)
      for gate in ("support_wrong", "always", "support_wrong")]
  # Meta-MLP and Meta-gMLP train on their label twins' init and batches (chosen on
  # ID + validation); Meta-GNN on its own draws.
  assert [loop.twin_draws(config, m) for m in ("meta_mlp", "meta_gmlp", "meta_gnn",
                                               "direct")] == [True, True, False, False]
  assert config.grad_clip_scope == "joint"
  task = loop.build_task(config)
  for model in config.models:
    n = loop.create_model(config, task, model).num_params()   # with the encoder
    assert abs(n - arc1d.PARAM_BUDGET) <= 0.1 * arc1d.PARAM_BUDGET, (model, n)


def test_test_config_is_tiny_and_valid():
  config = test_config.get_config()
  loop.validate_config(config)
  assert config.steps <= 50 and config.seeds <= 2


@pytest.mark.parametrize("space", ["nb201", "mbv3", "darts", "test"])
def test_pnag_configs_are_valid(space):
  import importlib  # pylint: disable=g-import-not-at-top
  from neuroprog.pnag import train as pnag_train  # pylint: disable=g-import-not-at-top
  config = importlib.import_module(f"experiments.configs.pnag_{space}").get_config()
  pnag_train.validate_config(config)
  sp, ae_cfg, gen_cfg = pnag_train.build(config)
  assert ae_cfg.scales[-1] == sp.num_nodes and gen_cfg.scales == ae_cfg.scales
  assert config.num_samples == (64 if space == "test" else 1000)


def test_model_variants_and_recipe_learning_rates():
  c = test_config.get_config()
  c.models = ("meta_gnn", "meta_gnn@library")
  c.model_configs = {"meta_gnn": {"d": 8, "rounds": 1, "grouping": "role"},
                     "meta_gnn@library": {"d": 8, "rounds": 1}}
  c.learning_rates = {"meta_gnn": 1e-3}
  loop.validate_config(c)
  task = loop.build_task(c)
  tuned, library = (loop.create_model(c, task, m) for m in c.models)
  assert tuned.name == library.name == "meta_gnn"
  assert tuned.config.grouping == "role" and library.config.grouping == "orbit"
  # Named rate for the tuned entry; the variant falls back to the recipe's.
  assert loop.learning_rate(c, "meta_gnn") == 1e-3
  assert loop.learning_rate(c, "meta_gnn@library") == meta.default_learning_rate("meta_gnn")
  c.learning_rate = 2e-3
  assert loop.learning_rate(c, "meta_gnn@library") == 2e-3
  for bad in ("meta_gnn@", "meta_gnn@Lib", "gnn@x", "meta_gnn@a-b"):
    c.models = ("meta_mlp", bad)
    with pytest.raises(ValueError, match=rf"config.models: Unknown model '{bad}'"):
      loop.validate_config(c)
  c.models = ("meta_mlp", "meta_mlp")
  with pytest.raises(ValueError, match="names a model twice"):
    loop.validate_config(c)
  c.models, c.learning_rates = ("meta_mlp",), {"meta_mlp": -1.0}
  with pytest.raises(ValueError, match=r"learning rate of 'meta_mlp': -1.0; allowed"):
    loop.learning_rate(c, "meta_mlp")


def test_paper_configs_use_one_meta_gnn_recipe():
  """Every paper config's Meta-GNN uses the library's recipe: only its width
  is set, and no learning rate, warm-up or optimizer of its own; a task that needs more lists the
  keys in TASK_SPECIFIC_META_GNN and also trains "meta_gnn@library"."""
  recipe = meta.default_config("meta_gnn", None)

  def changed(options):   # the options set away from the recipe, width aside
    return {k for k, v in options.items() if k != "d" and recipe[k] != v}
  for name, module in PAPER.items():
    config = module.get_config()
    extra = set(getattr(module, "TASK_SPECIFIC_META_GNN", ()))
    assert changed(config.model_configs["meta_gnn"]) == \
        extra - {"learning_rates", "warmup_steps_by_model", "optimizer_by_model",
                 "intents_per_step_by_model"}, name
    if extra:
      assert "meta_gnn@library" in config.models
      assert changed(config.model_configs["meta_gnn@library"]) == set()
    assert "meta_gnn@library" not in config.learning_rates
    assert ("meta_gnn" in config.learning_rates) == ("learning_rates" in extra), name
    assert "meta_gnn@library" not in config.warmup_steps_by_model
    assert ("meta_gnn" in config.warmup_steps_by_model) == \
        ("warmup_steps_by_model" in extra), name
    # The optimizer too: config-wide it is every model's ("adam"), so a task
    # may set Meta-GNN's only through the per-model entry, and names it.
    assert config.optimizer == "adam", name
    assert "meta_gnn@library" not in config.optimizer_by_model
    assert ("meta_gnn" in config.optimizer_by_model) == \
        ("optimizer_by_model" in extra), name
    # A batch of its own (intents per step) likewise.
    assert "meta_gnn@library" not in config.intents_per_step_by_model
    assert ("meta_gnn" in config.intents_per_step_by_model) == \
        ("intents_per_step_by_model" in extra), name


def test_default_config_records_every_model_option():
  c = loop.default_config(task="addmod", models=("meta_mlp", "meta_gnn@library"),
                          model_configs={"meta_gnn@library": {"d": 8}})
  assert dict(c.model_configs["meta_mlp"]) == meta.default_config(
      "meta_mlp", tasks.default_spec("addmod"))
  gnn = dict(c.model_configs["meta_gnn@library"])
  assert gnn == {**meta.default_config("meta_gnn", None), "d": 8}
  with pytest.raises(ValueError, match="Unknown task 'addmood'"):
    loop.default_config(task="addmood")


def test_addmod_table_on_the_cpu_is_the_cpu_protocol_at_the_papers_seeds():
  """addmod_table_cpu.py (issue 22's 10-seed table) is addmod_cpu.py with the
  paper's 10 seeds: every other key, rate and width is the same."""
  from experiments.configs import addmod_table_cpu  # pylint: disable=g-import-not-at-top
  table, cpu, full = addmod_table_cpu.get_config(), addmod_cpu.get_config(), addmod.get_config()
  loop.validate_config(table)
  assert {k for k in cpu.keys() if table[k] != cpu[k]} == {"seeds"}
  assert (table.seeds, table.steps) == (full.seeds, 2500)
  assert table.models == full.models


def test_addmod_direct_transformer_takes_muon_on_every_weight_matrix():
  """addmod.py trains the direct Transformer with Muon (chosen on the
  validation primes; the config names the command): the first step of every
  kernel (Dense [in, out], attention [in, H, Dh] and [H, Dh, out]), seen as
  its [reduction, output] matrix, is orthogonalized (singular values within
  2x though the gradient's spread 100x), while embeddings, the positional
  table, biases and layer-norm gains take Muon's Nesterov-Adam step."""
  config = addmod.get_config()
  assert loop.optimizer_name(config, "direct") == "muon"
  config.models, config.seeds = ("direct",), 1
  config.model_configs.direct.d_model = 16
  tr = loop.Trainer(config, loop.build_task(config), "direct")
  params = jax.tree.map(lambda a: np.asarray(a[0]), tr.init().params)
  rng = np.random.default_rng(0)

  def matrix_view(name, shape):   # [reduction, output]; attention's out is [H x Dh, out]
    if "['out']" in name:
      return int(np.prod(shape[:-1])), shape[-1]
    return shape[0], int(np.prod(shape[1:]))

  def grad(path, a):   # a kernel's matrix view has singular values 1 ... 0.01
    name = jax.tree_util.keystr(path)
    if not name.endswith("['kernel']"):
      return rng.normal(size=a.shape).astype(np.float32)
    r, c = matrix_view(name, a.shape)
    k = min(r, c)
    u, _ = np.linalg.qr(rng.normal(size=(r, k)))
    v, _ = np.linalg.qr(rng.normal(size=(c, k)))
    return (u * np.geomspace(1.0, 0.01, k) @ v.T).reshape(a.shape).astype(np.float32)
  grads = jax.tree_util.tree_map_with_path(grad, params)
  opt = loop.create_optimizer({**config.to_dict(), "grad_clip": 0.0, "schedule": "constant"},
                              "direct")
  updates, _ = opt.update(grads, opt.init(params), params)
  # Muon's vector branch is Nesterov Adam at the same rate.
  nadam = optax.adam(loop.learning_rate(config, "direct"), nesterov=True)
  g_of = {jax.tree_util.keystr(p): g for p, g in jax.tree_util.tree_leaves_with_path(grads)}
  kernels = 0
  for path, u in jax.tree_util.tree_leaves_with_path(updates):
    name, u = jax.tree_util.keystr(path), np.asarray(u)
    if name.endswith("['kernel']"):
      kernels += 1
      sv = np.linalg.svd(u.reshape(matrix_view(name, u.shape)), compute_uv=False)
      assert sv.max() / sv.min() < 2.0, (name, sv)
    else:
      adam_step, _ = nadam.update(g_of[name], nadam.init(g_of[name]))
      np.testing.assert_allclose(u, adam_step, rtol=1e-4, atol=1e-7, err_msg=name)
  assert kernels == 14   # 6 Dense + 2 layers x (query, key, value, out)


def test_composite_moduli_diagnostic_keeps_the_held_out_primes_and_the_gap():
  table = addmod_table_cpu.get_config()
  for variant, n in (("dense", 89), ("gap", 64)):
    config = addmod_moduli_cpu.get_config(variant)
    loop.validate_config(config)
    task = loop.build_task(config)
    assert len(task.train_intents) == n
    assert task.ood_intents == (23, 47, 61, 83, 89) and task.val_intents == (53, 71)
    # Everything but the task's options and training intents is the table's.
    rest = {k: v for k, v in config.to_dict().items() if k not in ("task_options", "train_intents")}
    assert rest == {k: v for k, v in table.to_dict().items()
                    if k not in ("task_options", "train_intents")}
  gap = addmod_moduli_cpu.train_moduli("gap")
  assert not set(gap) & set(range(80, 97)) and 79 in gap and 97 in gap
  assert not set(gap) & {22, 23, 24, 46, 48, 52, 54, 60, 62, 70, 72, 82, 84, 88, 90}
  assert {82, 84, 88, 90} <= set(addmod_moduli_cpu.train_moduli("dense"))
  with pytest.raises(ValueError, match=r"variant 'sparse'; allowed: \['dense', 'gap'\]"):
    addmod_moduli_cpu.get_config("sparse")


def test_reach_validation_split_holds_out_79_so_97_alone_shows_74_to_78():
  config = addmod_reach_val_cpu.get_config()
  loop.validate_config(config)
  task = loop.build_task(config)
  assert task.val_intents == (53, 71, 79) and 79 not in task.train_intents
  assert [p for p in task.train_intents if p > 73] == [97]
  rest = {k: v for k, v in config.to_dict().items() if k != "val_intents"}
  assert rest == {k: v for k, v in addmod_cpu.get_config().to_dict().items()
                  if k != "val_intents"}


def test_vocabulary_operands_config_changes_only_the_training_draws():
  from experiments.configs import addmod_operands_cpu
  from neuroprog.run import workdir as workdir_lib
  config, table = addmod_operands_cpu.get_config(), addmod_table_cpu.get_config()
  assert dict(config.task_options) == {"vocabulary_operands": 0.125}
  config.task_options = {}
  assert workdir_lib.config_json(config) == workdir_lib.config_json(table)
  task = loop.build_task(addmod_operands_cpu.get_config())
  assert task.vocabulary_operands == 0.125
  assert task.train_intents == loop.build_task(table).train_intents
