"""Analyses of synthesized programs (`neuroprog.analysis.clock`: the ADDMOD clock)."""
