"""Meta-training: the pure step (`step`), multi-seed `train_and_evaluate` (`loop`)
and the results table and figure (`results`)."""
from neuroprog.train.step import TrainState, init_state, make_train_step
