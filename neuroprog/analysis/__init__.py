"""Analyses of synthesized programs: `clock` (the ADDMOD clock), `report`
(a trained workdir's clock analysis) and `structure` (offsets versus
interaction in generated weight matrices)."""
