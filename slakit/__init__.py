"""slakit: contract and SLA compliance toolkit for GPU clusters."""

__version__ = "0.1.0"
