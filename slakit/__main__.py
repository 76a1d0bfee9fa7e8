from slakit.entry import run

run()
