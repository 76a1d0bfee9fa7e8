"""The acceptance checks, one module each, registered by name (`slaschema.checks.KNOWN_CHECKS`).

`get_check(name)` gives an instance; `REGISTRY` maps names to classes.
"""

from acceptance.checks import (  # noqa: F401  (each module registers its check)
    custom_command,
    gpu_burn,
    gpu_dcgm,
    gpu_gemm,
    gpu_inventory,
    gpu_xid,
    health_detection,
    network_ib,
    network_iperf3,
    network_nccl,
    software_versions,
    storage_fio,
    storage_s3,
)
from acceptance.checks.base import REGISTRY, Check, get_check, judge_output  # noqa: F401
