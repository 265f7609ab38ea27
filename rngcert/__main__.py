"""``python -m rngcert`` runs the command line."""

from rngcert.cli.app import main

main()
