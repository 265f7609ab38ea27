"""``python -m rngcert.cli`` runs the command line."""

from rngcert.cli.app import main

main()
