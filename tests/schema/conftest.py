import pytest

BASE = """\
slakit: 1
contract:
  id: t-1
  provider: P Inc.
  customer: C Ltd.
  effective: {from: 2027-01-01, to: 2027-12-31}
  timezone: UTC
  currency: USD
topology:
  architecture: hgx-8gpu
  sites:
    - id: s1
      clusters:
        - id: c1
          racks:
            - id: r1
              nodes: n[1-4]
            - id: r2
              nodes: n[5-8]
pricing:
  per_gpu_hour: 2.00
downtime:
  min_outage: 5m
  rack:
    down_when_nodes_down: 2
exclusions:
  maintenance: {notice: 72h, max_per_month: 4h}
service_levels:
  node:
    target: 99.5%
    credits:
      - {below: 99.5%, credit: 10%}
      - {below: 99%, credit: 25%}
credits:
  cap: 50%
acceptance:
  criteria:
    - id: inv
      check: gpu.inventory
      expect: {gpus_per_node: 8}
"""


@pytest.fixture
def base_text() -> str:
    return BASE
