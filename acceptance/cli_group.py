"""The `slakit accept` command group, shared by every acceptance area.

Each area module adds its subcommands with `get_accept_group(main).add_command(...)`;
the group is created once and attached to the main command the first time it is asked for.
"""

from __future__ import annotations

import click

accept = click.Group(
    "accept",
    help="Acceptance testing at handover: run the contract's checks, drills and burn-in on the cluster.",
)


def get_accept_group(main: click.Group) -> click.Group:
    """The `accept` group, added to `main` once."""
    existing = main.commands.get("accept")
    if isinstance(existing, click.Group):
        return existing
    main.add_command(accept)
    return accept
