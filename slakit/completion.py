"""`slakit completion bash|zsh|fish`: the shell completion script (click's completion machinery)."""

from __future__ import annotations

import click

SHELLS = ("bash", "zsh", "fish")
COMPLETE_VAR = "_SLAKIT_COMPLETE"


@click.command("completion")
@click.argument("shell", type=click.Choice(SHELLS))
@click.pass_context
def completion(ctx: click.Context, shell: str) -> None:
    """Print the completion script for SHELL (commands, options, choices and file names).

    \b
    bash:  eval "$(slakit completion bash)"            (e.g. in ~/.bashrc; bash 4.4 or later)
    zsh:   eval "$(slakit completion zsh)"             (in ~/.zshrc)
    fish:  slakit completion fish > ~/.config/fish/completions/slakit.fish
    """
    from click.shell_completion import get_completion_class

    cls = get_completion_class(shell)
    if cls is None:          # click.Choice already limits SHELL; a click without the class is a usage error
        raise click.UsageError(f"this click has no {shell} completion [completion_shell]")
    root = ctx.find_root().command
    click.echo(cls(root, {}, "slakit", COMPLETE_VAR).source())


def register(group: click.Group) -> None:
    group.add_command(completion)
