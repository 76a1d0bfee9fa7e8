"""Goodput: the useful GPU-hours a fleet delivered, from Slurm's own accounting (sacct)."""
