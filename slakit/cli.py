"""The one `slakit` command. Each area registers its own subcommands.

Area modules only import click at import time; heavy libraries (pandas, reportlab)
are imported inside the commands so `slakit validate` starts fast.
Exit codes: 0 success, 1 input judged bad (invalid contract, failed check), 2 usage error.
"""

from __future__ import annotations

import importlib

import click

from slakit import __version__

# Modules that define `register(group: click.Group) -> None`.
COMMAND_MODULES = [
    "calculators.cli",
    "acceptance.security.cli",
    "slaschema.cli",
    "acceptance.slurm_cli",
    "acceptance.cli",
    "slaschema.lint.cli",
    "calculators.simulate.cli",
    "calculators.compare_cli",
    "acceptance.parsers.cli",
    "calculators.importers.cli",
    "calculators.reports.cli",
]


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "--version", "-V", prog_name="slakit")
def main() -> None:
    """Contract and SLA compliance toolkit for GPU clusters.

    Contracts as YAML, acceptance testing at handover, and SLA reviews from incident logs.
    """
    from calculators.memory import tune_memory

    tune_memory()        # big incident logs: reuse freed memory, no huge pages (calculators/memory.py)


for _name in COMMAND_MODULES:
    importlib.import_module(_name).register(main)


def _report_input_errors(group: click.Group) -> None:
    """Every subcommand prints the problems of an `InputError` and exits 1 (one place:
    `slaschema.cli.report_input_errors`)."""
    from slaschema.cli import report_input_errors

    for cmd in group.commands.values():
        if cmd.callback is not None and not getattr(cmd.callback, "reports_input_errors", False):
            cmd.callback = report_input_errors(cmd.callback)
        if isinstance(cmd, click.Group):
            _report_input_errors(cmd)


_report_input_errors(main)
