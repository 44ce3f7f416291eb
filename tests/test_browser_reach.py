"""Who can reach the app (issue 29, item 6): started the README's way it listens on loopback only — its port
is closed on the machine's other addresses — and sharing it with a lab through docs/sharing/nginx.conf asks for
a password before anything of the app is served (the recipe run as written, only its ports changed)."""

from __future__ import annotations

import base64
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from app_support import chromium, wait_progressing
from conftest import free_port, stop_process, wait_for_port

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parent.parent
PAGE_MS = 120_000


def other_addresses() -> list[str]:
    """This machine's IPv4 addresses that are not loopback."""
    found: set[str] = set()
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        found.update(subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=10).stdout.split())
    with contextlib.suppress(OSError):
        found.update(info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET))
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("192.0.2.1", 9))  # no packet is sent: the kernel only picks the outgoing address
        found.add(s.getsockname()[0])
    return sorted(a for a in found if ":" not in a and not a.startswith("127."))


def readme_command(port: int) -> list[str]:
    """`bash scripts/app.sh` when its setup is already done (it would otherwise install), else the very
    command it ends in (`streamlit run app.py`, the README's "later" way), in the repository root."""
    stamps = list((ROOT / ".venv").glob(".citefinder-installed-*")) if (ROOT / ".venv").exists() else []
    if stamps:
        return ["bash", "scripts/app.sh", "--server.port", str(port)]
    return [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port)]


@contextlib.contextmanager
def app(tmp_path: Path, command: list[str], port: int):
    env = {**os.environ, "CITEFINDER_LIBRARY": str(tmp_path / "library"),
           "CITEFINDER_USER_SETTINGS": str(tmp_path / "user-settings.json")}
    with (tmp_path / "server.log").open("wb") as log:
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_for_port(port, proc, timeout=120)
            yield proc
        finally:
            stop_process(proc)


def test_app_sh_passes_no_address_and_the_config_says_loopback() -> None:
    script = (ROOT / "scripts" / "app.sh").read_text()
    assert 'exec streamlit run app.py "$@"' in script and "server.address" not in script.split("exec", 1)[1]
    config = (ROOT / ".streamlit" / "config.toml").read_text()
    assert '\naddress = "127.0.0.1"' in config.split("[browser]")[0]


def test_started_the_readme_way_its_port_is_closed_on_other_addresses(tmp_path) -> None:
    addresses = other_addresses()
    if not addresses:
        pytest.skip("this machine has no address but loopback")
    port = free_port()
    with app(tmp_path, readme_command(port), port):
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass  # open on loopback
        for address in addresses:
            with pytest.raises(OSError), socket.create_connection((address, port), timeout=5):
                pass
        with chromium() as page:  # and the page says nothing about other machines
            page.goto(f"http://127.0.0.1:{port}/Settings")
            wait_progressing(page.get_by_role("heading", name="Settings").first)
            assert page.get_by_text("Reachable from other machines").count() == 0
    assert "Network URL" not in (tmp_path / "server.log").read_text(errors="replace")


def test_started_on_every_interface_the_page_says_so(tmp_path) -> None:
    port = free_port()
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
               "--server.address", "0.0.0.0"]
    with app(tmp_path, command, port), chromium() as page:
        page.goto(f"http://127.0.0.1:{port}/Settings")
        wait_progressing(page.get_by_text("Reachable from other machines").first)


def _get(url: str, auth: tuple[str, str] | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url)
    if auth:
        request.add_header("Authorization", "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode())
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.status, r.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        return e.code, ""


@pytest.mark.skipif(not (shutil.which("nginx") or Path("/usr/sbin/nginx").exists()) or not shutil.which("htpasswd"),
                    reason="the recipe needs nginx and htpasswd (Debian: nginx-light, apache2-utils)")
def test_the_lab_recipe_asks_for_a_password_and_then_serves_the_app(tmp_path) -> None:
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    port, lab = free_port(), free_port()
    prefix = tmp_path / "proxy"
    (prefix / "tmp").mkdir(parents=True)
    conf = (ROOT / "docs" / "sharing" / "nginx.conf").read_text()
    assert "listen 8443;" in conf and "proxy_pass http://127.0.0.1:8501;" in conf
    conf = conf.replace("listen 8443;", f"listen 127.0.0.1:{lab};").replace("127.0.0.1:8501", f"127.0.0.1:{port}")
    if os.geteuid() == 0:  # nginx started by root runs its workers as nobody, who cannot read pytest's tmp folders
        conf = "user root;\n" + conf
    (prefix / "nginx.conf").write_text(conf)
    subprocess.run(["htpasswd", "-bc", str(prefix / "htpasswd"), "alice", "s3cret-lab"], check=True,
                   capture_output=True)
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port)]
    with app(tmp_path, command, port):
        started = subprocess.run([nginx, "-p", str(prefix), "-c", str(prefix / "nginx.conf")],
                                 capture_output=True, text=True, timeout=30)
        assert started.returncode == 0, started.stderr
        try:
            url = f"http://127.0.0.1:{lab}/"
            assert _get(url)[0] == 401
            assert _get(url, ("alice", "wrong"))[0] == 401
            assert _get(url + "_stcore/health")[0] == 401
            status, body = _get(url, ("alice", "s3cret-lab"))
            assert status == 200 and "<html" in body.lower()
            # the whole app, its WebSocket included, through the proxy
            with chromium(http_credentials={"username": "alice", "password": "s3cret-lab"}) as page:
                page.goto(f"{url}Settings")
                page.get_by_role("heading", name="Settings").first.wait_for(timeout=PAGE_MS)
        finally:
            subprocess.run([nginx, "-p", str(prefix), "-c", str(prefix / "nginx.conf"), "-s", "stop"],
                           capture_output=True, timeout=30)
