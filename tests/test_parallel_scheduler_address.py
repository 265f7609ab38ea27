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


def test_failed_clients_are_gone_before_the_next_one(monkeypatch):
    """A Client whose constructor failed used to live on in the error's frames and be closed by the
    garbage collector inside the next Client's start: a deadlock of distributed's loop runner (a CI run
    hung in this file). Every failure now leaves no Client behind, and a port outside 1..65535 is refused
    before any Client is made."""
    import gc

    from distributed import Client

    def clients() -> set[int]:  # (other tests of this process may have left Clients of their own)
        gc.collect()
        return {id(o) for o in gc.get_objects() if isinstance(o, Client)}

    monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
    before = clients()
    for address in ["tcp://127.0.0.1", "inproc://x", "tcp://127.0.0.1:99999", "tcp://127.0.0.1:notaport"] * 3:
        with pytest.raises(InputError, match="scheduler address") as e:
            map_items(abs, [-1, -2], plan=Plan(scheduler=address))
        assert address in str(e.value)
        assert clients() <= before, "a Client made for a bad address is still alive"
