"""A small contract over the testbed's nodes gpu-[01-04]; DETECTION is filled in per test."""

CONTRACT = """\
slakit: 1
contract: {id: drill-test, provider: P, customer: C, timezone: UTC, currency: USD}
topology:
  architecture: hgx-8gpu
  gpu_model: H100
  gpus_per_node: 8
  sites:
    - id: s1
      clusters:
        - id: c1
          racks:
            - {id: r1, nodes: "gpu-[01-04]"}
pricing: {per_gpu_hour: 2.5}
service_levels:
  node:
    credits:
      - {below: 99.0%, credit: 10%}
support:
  detection: DETECTION
"""
