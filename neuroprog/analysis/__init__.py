"""Analyses of synthesized programs: `clock` (the ADDMOD clock: clock score,
global trajectory, closed-form programs) and `structure` (offsets versus
interaction in generated weight matrices). The report over a trained workdir
is `experiments/pipelines/clock_report.py`."""
