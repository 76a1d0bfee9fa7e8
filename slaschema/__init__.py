"""Contract models, strict YAML loading, topology and lint for slakit contracts."""
