"""Simulated equipment: randomness sources by name, wheels with planted biases, shufflers,
deal and pickup, and the execution of shuffle procedures."""

#: the public modules (each imported on first use: ``from rngcert.simulate import deal``)
__all__ = ["deal", "fit", "games", "procedure", "protocol", "rotor", "shufflers", "sources", "watch", "wheel"]
