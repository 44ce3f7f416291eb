"""The page's sentence on who can reach the app (citefinder/ui/reach.py)."""

from __future__ import annotations

import pytest

from citefinder.ui.reach import is_loopback, reach_notice


@pytest.mark.parametrize("address", ["127.0.0.1", "127.0.1.1", "localhost", "::1", "[::1]"])
def test_loopback_addresses_say_nothing(address: str) -> None:
    assert is_loopback(address)
    assert reach_notice(address, {}) is None


@pytest.mark.parametrize("address,where", [("", "every network interface"), ("0.0.0.0", "every network interface"),
                                           ("::", "every network interface"), ("192.0.2.7", "`192.0.2.7`"),
                                           ("lab-server", "`lab-server`")])
def test_any_other_address_is_reachable_from_other_machines(address: str, where: str) -> None:
    assert not is_loopback(address)
    notice = reach_notice(address, {})
    assert notice is not None and "Reachable from other machines" in notice and where in notice
    assert "Sharing with a lab" in notice


def test_in_a_container_the_published_port_decides() -> None:
    notice = reach_notice("0.0.0.0", {"CITEFINDER_IN_CONTAINER": "1"})
    assert notice is not None and "-p 127.0.0.1:8501:8501" in notice
