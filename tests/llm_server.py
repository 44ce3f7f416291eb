"""A scripted OpenAI-compatible chat server for the tests: ``python tests/llm_server.py --port P --script F``.

The script is JSON: ``{"rules": [rule, ...]}``. Each request to ``/v1/chat/completions`` gets the
first rule whose ``match`` (a substring of the last user message; omitted = any) fits and whose
``times`` (omitted = unlimited) is not used up. A rule may set:

- ``status`` (HTTP status, default 200; errors get an OpenAI-style error body),
- ``sleep`` (seconds to wait before answering: slow servers, timeouts),
- ``content`` (the assistant message verbatim), or ``fields`` ({name: value}, written in DSPy's
  ``[[ ## name ## ]]`` chat format), or ``auto: true`` (every output field the request asks for,
  filled with a placeholder; used for optimizer calls nobody needs to script),
- ``usage`` ({prompt_tokens, completion_tokens}; default: a count of words; ``false`` = omit).

No rule fits: HTTP 400 "no scripted reply". Every request is appended to ``--log`` as a JSON line
(``{"path", "body", "rule"}``) for the tests to inspect. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

_OUTPUT_FIELDS = re.compile(r"\[\[ ## (\w+) ## \]\]")


def last_user_message(body: dict[str, Any]) -> str:
    users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
    content = users[-1].get("content") if users else ""
    if isinstance(content, list):  # content parts
        content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content or "")


def requested_fields(message: str) -> list[str]:
    """The output fields DSPy's ChatAdapter asks for at the end of its last user message."""
    tail = message.rsplit("Respond with the corresponding output fields", 1)
    names = _OUTPUT_FIELDS.findall(tail[1]) if len(tail) == 2 else []
    return [n for n in names if n != "completed"]


def chat_format(fields: dict[str, Any]) -> str:
    parts = [f"[[ ## {name} ## ]]\n{value}" for name, value in fields.items()]
    return "\n\n".join(parts + ["[[ ## completed ## ]]"])


class ScriptedServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int, script: dict[str, Any], log_path: Path | None) -> None:
        super().__init__(("127.0.0.1", port), Handler)
        self.rules: list[dict[str, Any]] = list(script.get("rules") or [])
        self.used = [0] * len(self.rules)
        self.log_path = log_path
        self.lock = threading.Lock()

    def pick(self, message: str) -> int | None:
        with self.lock:
            for i, rule in enumerate(self.rules):
                if rule.get("match") is not None and rule["match"] not in message:
                    continue
                if rule.get("times") is not None and self.used[i] >= int(rule["times"]):
                    continue
                self.used[i] += 1
                return i
        return None

    def record(self, entry: dict[str, Any]) -> None:
        if self.log_path is None:
            return
        with self.lock, self.log_path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")


class Handler(BaseHTTPRequestHandler):
    server: ScriptedServer

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path.rstrip("/").endswith("/models"):
            self.reply(200, {"object": "list", "data": [{"id": "scripted", "object": "model", "owned_by": "tests"}]})
        else:
            self.reply(404, error("not found"))

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        message = last_user_message(body)
        index = self.server.pick(message)
        self.server.record({"path": self.path, "body": body, "rule": index, "time": time.time()})
        if index is None:
            self.reply(400, error("no scripted reply matches this request"))
            return
        rule = self.server.rules[index]
        time.sleep(float(rule.get("sleep", 0)))
        status = int(rule.get("status", 200))
        if status != 200:
            self.reply(status, error(rule.get("error", f"scripted HTTP {status}")), retry_after=rule.get("retry_after"))
            return
        if "content" in rule:
            content = str(rule["content"])
        elif rule.get("auto"):
            content = chat_format({name: f"scripted {name}" for name in requested_fields(message)})
        else:
            content = chat_format(rule.get("fields") or {})
        reply: dict[str, Any] = {
            "id": f"chatcmpl-{index}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", ""),
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        }
        usage = rule.get("usage")
        if usage is None:
            prompt_words = sum(len(str(m.get("content", "")).split()) for m in body.get("messages") or [])
            usage = {"prompt_tokens": prompt_words, "completion_tokens": len(content.split())}
        if usage is not False:
            reply["usage"] = {**usage, "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"]}
        self.reply(200, reply)

    def reply(self, status: int, payload: dict[str, Any], retry_after: Any = None) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            if retry_after is not None:
                self.send_header("Retry-After", str(retry_after))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout test)

    def log_message(self, *args: Any) -> None:
        pass


def error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "scripted_error", "code": None}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--script", type=Path, required=True)
    parser.add_argument("--log", type=Path)
    args = parser.parse_args()
    server = ScriptedServer(args.port, json.loads(args.script.read_text(encoding="utf-8")), args.log)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
