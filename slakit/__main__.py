from slakit.cli import main

main()
