"""The command table of docs/cli.md, built from the registered commands
(`python -m slakit.clitable` prints it; tests/test_cli_conventions.py checks the doc holds it)."""

from __future__ import annotations

import click


def walk(group: click.Group, prefix: str = ""):
    """(`accept run`, command) for every command under `group`, sorted (a lazily loaded
    group, `slakit.cli.GuardedGroup`, loads all its commands first)."""
    if hasattr(group, "load_all"):
        group.load_all()
    for name, cmd in sorted(group.commands.items()):
        path = f"{prefix}{name}"
        if isinstance(cmd, click.Group):
            yield from walk(cmd, path + " ")
        else:
            yield path, cmd


def command_table(group: click.Group) -> str:
    """A Markdown table: command, positional arguments, options (deprecated aliases last)."""
    rows = ["| command | arguments | options |", "|---|---|---|"]
    for path, cmd in walk(group):
        ctx = click.Context(cmd)
        args = " ".join(p.make_metavar(ctx) for p in cmd.params if isinstance(p, click.Argument))
        opts = [", ".join(o.opts + o.secondary_opts) for o in cmd.params
                if isinstance(o, click.Option) and not o.hidden and o.name != "help"]
        old = [", ".join(o.opts) for o in cmd.params if isinstance(o, click.Option) and o.hidden]
        cells = " ".join(f"`{o}`" for o in opts) + "".join(f" (deprecated: `{o}`)" for o in old)
        args = args.replace("|", "\\|")
        rows.append(f"| `slakit {path}` | {args or '-'} | {cells or '-'} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    from slakit.cli import main

    print(command_table(main), end="")
