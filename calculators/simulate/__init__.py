"""Monte Carlo simulation of what an SLA pays: failure models, log generation, statistics.

`slakit simulate CONTRACT` generates incident logs for the contract's topology from a
failure model (`calculators.simulate.models`), computes every run with the real engine
(`calculators.engine`) and reports availability per scope, credits, termination triggers
and the share of lost GPU-hours the credits return.
"""
