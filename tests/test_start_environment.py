"""What `slakit` sets before its imports (slakit/entry.py `settle_environment`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# a pydantic plugin installed as a distribution's entry point, as a user's environment has one:
# it prints when pydantic asks it about a model
PLUGIN = """
class Plugin:
    def new_schema_validator(self, *args, **kwargs):
        print("plugin called", flush=True)
        return None, None, None
plugin = Plugin()
"""
DIST = """Metadata-Version: 2.1
Name: slakit-test-plugin
Version: 1.0
"""


@pytest.mark.parametrize(("given", "called"), [(None, False), ("", True), ("1", False)])
def test_pydantic_plugins_are_not_looked_up_unless_asked_for(tmp_path, given, called):
    (tmp_path / "probe_plugin.py").write_text(PLUGIN)
    dist = tmp_path / "slakit_test_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(DIST)
    (dist / "entry_points.txt").write_text("[pydantic]\nprobe = probe_plugin:plugin\n")
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(ROOT)])
    if given is not None:
        env["PYDANTIC_DISABLE_PLUGINS"] = given
    code = ("import os, sys\n"
            "from slakit.entry import settle_environment\n"
            "settle_environment()\n"
            "print('value', repr(os.environ.get('PYDANTIC_DISABLE_PLUGINS')))\n"
            "from slaschema.loader import load_contract\n"
            f"load_contract({str(ROOT / 'examples' / 'gb200-contract.yaml')!r})\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert f"value {'__all__' if given is None else given!r}" in out.stdout
    assert ("plugin called" in out.stdout) is called
