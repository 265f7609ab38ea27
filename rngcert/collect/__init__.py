"""Collectors: logs from hardware, simulated sources and shuffler implementations."""

#: the public modules (each imported on first use: ``from rngcert.collect import bits``)
__all__ = ["bits", "csvsafe", "csvstream", "feed", "labels", "protocol", "record", "shoelog", "spinlog",
           "store"]
