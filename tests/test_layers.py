"""The layering contracts of pyproject.toml ([tool.importlinter]) hold: lint-imports passes.

slakit.cli > acceptance > calculators > slaschema > templates (a package imports only those
below it), and no two sibling packages or modules import each other.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def lint_imports(*args: str) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("lint-imports")
    if not exe.exists():
        pytest.fail("lint-imports is missing: install the test extra (pip install -e '.[test]')")
    return subprocess.run([str(exe), "--no-cache", *args], cwd=REPO, capture_output=True, text=True, timeout=300)


def test_the_layering_contracts_are_kept():
    got = lint_imports()
    assert got.returncode == 0, got.stdout[-4000:] + got.stderr[-2000:]
    assert "2 kept, 0 broken" in got.stdout


def test_a_broken_layer_is_caught(tmp_path):
    """The contracts can fail: the same check on a copy of the layers with one upward import."""
    for pkg in ("lower", "upper"):
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "__init__.py").write_text("")
    (tmp_path / "upper" / "a.py").write_text("")
    (tmp_path / "lower" / "b.py").write_text("import upper.a\n")
    (tmp_path / "setup.cfg").write_text(
        "[importlinter]\nroot_packages =\n    upper\n    lower\n\n"
        "[importlinter:contract:layers]\nname = upper > lower\ntype = layers\nlayers =\n    upper\n    lower\n")
    exe = Path(sys.executable).with_name("lint-imports")
    got = subprocess.run([str(exe), "--no-cache", "--config", str(tmp_path / "setup.cfg")], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120, env={"PYTHONPATH": str(tmp_path), "PATH": ""})
    assert got.returncode == 1 and "lower is not allowed to import upper" in got.stdout
