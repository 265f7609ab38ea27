"""Collectors: logs from hardware, simulated sources and shuffler implementations."""
