"""``make lab`` as a student on a headless machine meets it: JupyterLab starts on the labs without solutions, and stops.

As root (containers, CI) JupyterLab refuses to start unless given ``--allow-root``, which the Makefile adds.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.request

import pytest

from .conftest import ROOT, SCALE

pytestmark = [pytest.mark.book, pytest.mark.xdist_group("book")]

#: Installing JupyterLab (first use), building the labs if they are not built, and the server's start.
STARTUP_SECONDS = 900

#: The parts that have a lab, as the Makefile lists them.
LAB_PARTS = re.search(r"^LAB_PARTS\s*:=\s*(.+)$", (ROOT / "Makefile").read_text(), re.M).group(1).split()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_make_lab_serves_the_student_labs_headless_and_stops(tmp_path):
    port = _free_port()
    log = tmp_path / "lab.log"
    args = f"--no-browser --ip=127.0.0.1 --port={port} --ServerApp.port_retries=0"
    env = {**os.environ, **{f"JUPYTER_{d}_DIR": str(tmp_path / d.lower()) for d in ("CONFIG", "DATA", "RUNTIME")}}
    with log.open("w") as out:
        lab = subprocess.Popen(
            ["make", "--no-print-directory", f"SCALE={SCALE}", f"LAB_ARGS={args}", "lab"],
            cwd=ROOT, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True,
        )  # fmt: skip
        try:
            url = None
            deadline = time.monotonic() + STARTUP_SECONDS
            while url is None and time.monotonic() < deadline and lab.poll() is None:
                time.sleep(1)
                found = re.search(rf"http://127\.0\.0\.1:{port}/lab\?token=(\w+)", log.read_text())
                url = found and found.group(0)
            assert url, f"JupyterLab did not start (exit {lab.poll()}):\n{log.read_text()[-4000:]}"
            token = url.rpartition("token=")[2]
            if os.geteuid() == 0:
                assert "--allow-root" in log.read_text()
            with urllib.request.urlopen(url, timeout=30) as page:
                assert page.status == 200 and "JupyterLab" in page.read().decode()
            listing = f"http://127.0.0.1:{port}/api/contents?token={token}"
            with urllib.request.urlopen(listing, timeout=30) as response:
                names = {item["name"] for item in json.load(response)["content"]}
            assert names == {f"{part}.ipynb" for part in LAB_PARTS}, names
            lab_file = f"http://127.0.0.1:{port}/api/contents/primer.ipynb?token={token}"
            with urllib.request.urlopen(lab_file, timeout=30) as response:
                cells = json.load(response)["content"]["cells"]
            tags = {tag for cell in cells for tag in cell.get("metadata", {}).get("tags", [])}
            assert "starter" in tags and "solution" not in tags, tags
        finally:
            if lab.poll() is None:
                os.killpg(lab.pid, signal.SIGTERM)  # the server shuts down its kernels and exits
                try:
                    lab.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    os.killpg(lab.pid, signal.SIGKILL)
                    lab.wait()
    assert "Shutting down" in log.read_text() or lab.returncode == 0, log.read_text()[-2000:]
    with pytest.raises(OSError):  # the server is gone
        urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=5)
