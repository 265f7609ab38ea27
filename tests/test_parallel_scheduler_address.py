"""A --scheduler address that Dask cannot parse (no port, a port that is not a number, an unknown scheme) is an input
error naming the address (exit 3), not an internal error (exit 1)."""

from __future__ import annotations

import pytest

from rngcert.errors import InputError
from rngcert.pipeline.parallel import Plan, map_items


@pytest.mark.parametrize("address", ["tcp://127.0.0.1", "tcp://127.0.0.1:notaport", "udp://127.0.0.1:1", "inproc://x"])
def test_an_address_dask_cannot_parse_is_an_input_error(address, monkeypatch):
    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    with pytest.raises(InputError, match="scheduler address") as e:
        map_items(abs, [-1, -2], plan=Plan(scheduler=address))
    assert address in str(e.value)
