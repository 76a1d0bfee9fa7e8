"""The top-level commands are loaded lazily (slakit.cli.COMMAND_MODULES): the map names what
each module really registers, and a command imports only its own area's modules."""

from __future__ import annotations

import importlib
import subprocess
import sys

import click

from slakit.cli import COMMAND_MODULES


def test_map_names_what_each_module_registers():
    group = click.Group("probe")
    seen: dict[str, set[str]] = {}
    for name in COMMAND_MODULES:
        before = set(group.commands)
        importlib.import_module(name).register(group)
        seen[name] = set(group.commands) - before
    for name, names in COMMAND_MODULES.items():
        # a module adding to a group another module created (accept) adds no new name
        assert seen[name] <= set(names), (name, seen[name])
        assert set(names) <= set(group.commands), (name, names)
    assert set(group.commands) == {n for names in COMMAND_MODULES.values() for n in names}


def _modules_after(args: list[str]) -> set[str]:
    code = ("import sys; from slakit.cli import main\n"
            "try:\n    main.main(args=sys.argv[1:], prog_name='slakit', standalone_mode=False)\n"
            "except SystemExit:\n    pass\n"
            "print('MODULES', ' '.join(sorted(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True)
    line = [x for x in out.stdout.splitlines() if x.startswith("MODULES ")][-1]
    return set(line.split()[1:])


def test_a_command_imports_only_its_own_area():
    mods = _modules_after(["credits", "--help"])
    assert "calculators.cli" in mods
    # slaschema.cli also holds the one reporter of input errors every command is wrapped in
    others = {m for m in COMMAND_MODULES if m not in ("calculators.cli", "slaschema.cli")}
    assert not (mods & others), mods & others
    for heavy in ("reportlab", "acceptance.parsers.nvidia_smi"):
        assert heavy not in mods


def test_help_lists_every_command_and_every_command_is_guarded():
    from slakit.cli import main

    ctx = click.Context(main)
    names = main.list_commands(ctx)
    assert names == sorted({n for v in COMMAND_MODULES.values() for n in v})
    for n in names:
        cmd = main.get_command(ctx, n)
        assert cmd is not None and cmd.name == n
    got = subprocess.run([sys.executable, "-m", "slakit", "--help"], capture_output=True, text=True)
    assert got.returncode == 0
    for n in names:
        assert f"\n  {n} " in got.stdout, n


def test_unknown_command_is_a_usage_error():
    got = subprocess.run([sys.executable, "-m", "slakit", "credit"], capture_output=True, text=True)
    assert got.returncode == 2 and "No such command 'credit'" in got.stderr


def test_credits_leaves_numpy_ma_and_pandas_unimported(tmp_path):
    """A credits run in table and JSON form needs neither (numpy.ma is what a plain np.unique
    imports at its first call: 11 ms; the engine's distinct values come from
    `calculators.kernels.distinct`)."""
    from pathlib import Path

    examples = Path(__file__).resolve().parents[1] / "examples"
    for fmt in ("table", "json"):
        mods = _modules_after(["credits", str(examples / "gb200-contract.yaml"),
                               str(examples / "gb200-incidents-2027Q1.csv"), "--quarter", "2027-Q1",
                               "--format", fmt, "-o", str(tmp_path / f"out.{fmt}")])
        assert "calculators.engine" in mods
        assert "numpy.ma" not in mods and "pandas" not in mods, fmt
        # the table's lines between its tables are written by `PlainConsole`, not Rich's console
        assert "rich.console" not in mods and "rich.markup" not in mods, fmt

