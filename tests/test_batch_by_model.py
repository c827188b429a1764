"""Per-model batches (`intents_per_step_by_model`, `examples_per_intent_by_model`):
the value a model entry reads, that the Trainer steps with it (losses equal
to a config-wide batch of that size, bit for bit), the refusals, and that a
select grid over the config-wide key is refused where a model's own entry
would shadow it."""
import numpy as np
import pytest

from experiments.configs import test as test_config
from experiments.pipelines import select
from neuroprog.train import loop


def test_a_model_entry_takes_its_own_batch():
  config = test_config.get_config()
  config.intents_per_step, config.examples_per_intent = 4, 16
  config.intents_per_step_by_model = {"meta_gnn": 2}
  config.examples_per_intent_by_model = {"meta_mlp": 32}
  assert loop.batch_size(config, "intents_per_step", "meta_gnn") == 2
  assert loop.batch_size(config, "intents_per_step", "meta_mlp") == 4
  assert loop.batch_size(config, "intents_per_step") == 4
  assert loop.batch_size(config, "examples_per_intent", "meta_mlp") == 32
  assert loop.batch_size(config, "examples_per_intent", "meta_gnn") == 16
  loop.validate_config(config)
  with pytest.raises(ValueError, match=(r"key='steps'; allowed: "
                                        r"\['intents_per_step', 'examples_per_intent'\]")):
    loop.batch_size(config, "steps", "meta_gnn")


@pytest.mark.parametrize("key,value", [("intents_per_step", 0),
                                       ("examples_per_intent", True),
                                       ("intents_per_step", 2.0)])
def test_a_bad_model_batch_is_refused_naming_the_entry(key, value):
  config = test_config.get_config()
  config[f"{key}_by_model"] = {"meta_gnn": value}
  with pytest.raises(ValueError, match=(rf"config.{key}_by_model\['meta_gnn'\]="
                                        rf"{value!r}; allowed: a positive int")):
    loop.validate_config(config)
  config[f"{key}_by_model"] = {"meta_gnm": 2}
  with pytest.raises(ValueError, match=rf"config.{key}_by_model: .*meta_gnm"):
    loop.validate_config(config)


def _losses(config, name, steps=3):
  config.seeds = 1
  task = loop.build_task(config)
  tr = loop.Trainer(config, task, name)
  _, metrics = tr.chunk(tr.init(), 0, steps)
  return np.asarray(metrics["loss"])


def test_the_trainer_steps_with_the_model_batch():
  config = test_config.get_config()
  config.intents_per_step, config.examples_per_intent = 4, 8
  wide = _losses(config.copy_and_resolve_references(), "meta_mlp")
  config.intents_per_step_by_model = {"meta_mlp": 2}
  config.examples_per_intent_by_model = {"meta_mlp": 4}
  own = _losses(config.copy_and_resolve_references(), "meta_mlp")
  config.intents_per_step, config.examples_per_intent = 2, 4
  config.intents_per_step_by_model, config.examples_per_intent_by_model = {}, {}
  small = _losses(config.copy_and_resolve_references(), "meta_mlp")
  np.testing.assert_array_equal(own, small)
  assert not np.allclose(own, wide)


def test_a_grid_over_a_batch_a_model_overrides_is_refused():
  config = test_config.get_config()
  config.intents_per_step_by_model = {"meta_gnn": 4}
  with pytest.raises(ValueError, match=(r"grid path 'intents_per_step' does not reach "
                                        r"meta_gnn: config.intents_per_step_by_model."
                                        r"meta_gnn=4 overrides it")):
    select.check_not_shadowed(config, [("intents_per_step", [2])], ["meta_gnn"])
  select.check_not_shadowed(config, [("intents_per_step", [2])], ["meta_mlp"])
  axes = select.all_axes(select.parse_grids("intents_per_step_by_model.meta_gnn=2,4"))
  configs = [cfg for _, cfg in select.candidates(config, axes)]
  assert [loop.batch_size(cfg, "intents_per_step", "meta_gnn") for cfg in configs] == [2, 4]
  assert [loop.batch_size(cfg, "intents_per_step", "meta_mlp") for cfg in configs] == \
      [config.intents_per_step] * 2
