"""Simulated equipment: randomness sources by name, wheels with planted biases, shufflers,
deal and pickup, and the execution of shuffle procedures."""
