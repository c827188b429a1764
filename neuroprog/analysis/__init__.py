"""Analyses of synthesized programs: `clock` (the ADDMOD clock: clock score,
global trajectory, closed-form programs), `structure` (offsets versus
interaction in generated weight matrices) and `updates` (what one optimizer
update does to the generated programs, module by module). The report over a
trained workdir is `experiments/pipelines/clock_report.py`."""
