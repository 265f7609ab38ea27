"""Data bundled with rngcert (installed as the ``rngcert.data`` package).

``default-european-spins.csv`` is the log ``rngcert certify`` certifies when given no file: a fair
European wheel simulated by rngcert itself (regenerate with the command in data/README.md).
"""
