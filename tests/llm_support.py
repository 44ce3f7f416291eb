"""Starting the tests' LLM servers (the scripted one, llama.cpp's) as processes on free loopback ports."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from citefinder.config import Settings
from conftest import free_port, stop_process, wait_for_port

SERVER_SCRIPT = Path(__file__).resolve().parent / "llm_server.py"


@dataclass
class ServedLLM:
    """A running OpenAI-compatible server: where it listens and what it was asked."""

    port: int
    alias: str
    log: Path | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def settings(self, **changes: Any) -> Settings:
        """Settings whose selector talks to this server (no retries, short timeout unless changed)."""
        base = {
            "llm_model": f"hosted_vllm/{self.alias}",
            "llm_api_base": self.base_url,
            "llm_timeout_s": 10.0,
            "llm_retries": 0,
            "llm_max_tokens": 256,
        }
        return Settings(**{**base, **changes})

    def requests(self) -> list[dict[str, Any]]:
        """Every request the scripted server received, in order."""
        if self.log is None or not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text(encoding="utf-8").splitlines() if line.strip()]


def fields(selected: str, *, reasoning: str = "Scripted reasoning.", confidence: str = "0.9") -> dict[str, Any]:
    """A scripted reply in DSPy's chat format for the picker."""
    return {"fields": {"reasoning": reasoning, "selected": selected, "confidence": confidence}}


@contextmanager
def scripted_server(folder: Path, rules: list[dict[str, Any]], alias: str = "scripted") -> Iterator[ServedLLM]:
    """Run tests/llm_server.py with ``rules`` on a free port; stopped by PID on exit."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / f"script-{time.monotonic_ns()}.json"
    script.write_text(json.dumps({"rules": rules}), encoding="utf-8")
    log = script.with_suffix(".log.jsonl")
    port = free_port()
    out = script.with_suffix(".out").open("wb")
    proc = subprocess.Popen(
        [sys.executable, str(SERVER_SCRIPT), "--port", str(port), "--script", str(script), "--log", str(log)],
        stdout=out,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_for_port(port, proc, timeout=30)
        yield ServedLLM(port, alias, log)
    finally:
        stop_process(proc)
        out.close()
