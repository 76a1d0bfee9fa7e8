from slakit.cli import run

run()
