"""Who can reach this app: loopback only (the default), or other machines too (README "Sharing with a lab").

A draft is unpublished work and the app can import, remove and point its LLM anywhere: the page says so
whenever the server listens beyond this machine. Pure functions: the page passes Streamlit's
``server.address`` and the environment in.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping

ALL_INTERFACES = ("", "0.0.0.0", "::")
LOOPBACK_NAMES = ("localhost", "ip6-localhost")


def is_loopback(address: str | None) -> bool:
    """Whether a server bound to ``address`` is reachable from this machine only."""
    a = (address or "").strip().strip("[]").lower()
    if a in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(a).is_loopback
    except ValueError:
        return False  # empty (Streamlit's default: every interface) or a host name: assume reachable


def reach_notice(address: str | None, env: Mapping[str, str]) -> str | None:
    """None when only this machine can reach the app; else a sentence for the page (markdown)."""
    if is_loopback(address):
        return None
    if env.get("CITEFINDER_IN_CONTAINER") == "1":
        return ("Running in a container: who can reach this app depends on how its port was published "
                "(`docker run -p 127.0.0.1:8501:8501`, as the README says, keeps it to this machine; `-p 8501:8501` "
                "opens it to the network).")
    where = "every network interface" if (address or "").strip() in ALL_INTERFACES else f"`{address}`"
    return (f"**Reachable from other machines**: the app listens on {where}. Anyone who can reach it can read your "
            "drafts and library, import or remove papers and change the LLM setting — put a password in front "
            "(README, *Sharing with a lab*) or start it on 127.0.0.1.")
