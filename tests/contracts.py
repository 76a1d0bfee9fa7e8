"""Small contracts for tests: one site, one cluster, HGX nodes, a node SLA, and whatever
sections a test adds."""


def small_contract(contract_id: str, racks: dict[str, str], extra: str = "") -> str:
    """YAML text of a valid contract with the given racks ({rack id: hostlist}) and `extra`
    top-level sections appended verbatim."""
    rack_lines = "".join(f'            - {{id: {r}, nodes: "{nodes}"}}\n' for r, nodes in racks.items())
    return (
        "slakit: 1\n"
        f"contract: {{id: {contract_id}, provider: P, customer: C, timezone: UTC, currency: USD}}\n"
        "topology:\n"
        "  architecture: hgx-8gpu\n"
        "  gpu_model: H100\n"
        "  gpus_per_node: 8\n"
        "  sites:\n"
        "    - id: s1\n"
        "      clusters:\n"
        "        - id: c1\n"
        "          racks:\n"
        f"{rack_lines}"
        "pricing: {per_gpu_hour: 2.5}\n"
        "service_levels:\n"
        "  node:\n"
        "    credits:\n"
        "      - {below: 99.0%, credit: 10%}\n"
        f"{extra}"
    )


def plain(value):
    """Strict-YAML data with Decimals turned into strings, ready for yaml.safe_dump."""
    from decimal import Decimal

    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dict):
        return {k: plain(x) for k, x in value.items()}
    if isinstance(value, list):
        return [plain(x) for x in value]
    return value
