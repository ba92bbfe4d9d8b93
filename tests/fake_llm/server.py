#!/usr/bin/env python3
"""A scripted OpenAI-compatible chat server for ksearch's tests (issue 4).

Listens on 127.0.0.1 only, on a free port chosen by the OS, prints the port
on stdout (first line) and serves POST .../chat/completions from a JSON
script until it is killed. Standard library only; it never contacts any
address.

Script: {"kinds": {KIND: [ENTRY, ...]}, "defaults": {KIND: ENTRY}}.
KIND is read from the first user message, "(ksearch prompt: KIND)" (see
src/llm/prompts/*.txt). Each request takes the next unused entry of its kind
(an entry with "match" is taken only when that text is in the last user
message; "repeat": true entries are never used up); when none is left the
kind's default answers, else HTTP 400 "script exhausted".

ENTRY fields (all optional):
  content        the answer text
  code_file      a file (relative to --root) put in a ```c block before
                 content
  lang           the code_file block's language instead of c (cuda, opencl)
  json           a JSON value, dumped as the answer text
  status         HTTP status (default 200); body: the error body
  retry_after    Retry-After header value
  sleep          seconds to wait before answering (client timeouts)
  finish_reason  default "stop"; "length" marks a truncated answer
  refusal        message.refusal (content null)
  invalid_utf8   true: raw invalid UTF-8 bytes inside the JSON string
  big            answer of this many bytes (an oversized answer)
  raw            a raw body sent as is (not a chat completion)
  chunk, chunk_delay, cut_after   streaming: bytes per chunk, seconds
                 between chunks, end the stream after this many bytes of
                 answer without [DONE] (a cut stream)
Each request is logged as one JSON line to --log: time, kind, entry, model,
stream, auth ("ok", "missing", "wrong" against $FAKE_LLM_KEY; the key itself
is never written), number of messages and the last user message.
"""
import argparse
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

KIND_RE = re.compile(r"\(ksearch prompt: (\w+)\)")


class Script:
    def __init__(self, path, root):
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        self.root = root
        self.kinds = doc.get("kinds", {})
        self.defaults = doc.get("defaults", {})
        self.used = {k: [False] * len(v) for k, v in self.kinds.items()}
        self.lock = threading.Lock()

    def take(self, kind, last_user):
        with self.lock:
            entries = self.kinds.get(kind, [])
            for i, e in enumerate(entries):
                if self.used[kind][i]:
                    continue
                if "match" in e and e["match"] not in last_user:
                    continue
                if not e.get("repeat"):
                    self.used[kind][i] = True
                return "%s#%d" % (kind, i), e
            if kind in self.defaults:
                return kind + "#default", self.defaults[kind]
            return None, None

    def text(self, e):
        parts = []
        if "code_file" in e:
            with open(os.path.join(self.root, e["code_file"]), encoding="utf-8") as f:
                parts.append("```" + e.get("lang", "c") + "\n" + f.read() + "```\n")
        if "json" in e:
            parts.append(json.dumps(e["json"], indent=1))
        if "content" in e:
            parts.append(e["content"])
        if "big" in e:
            line = "// filler line of an oversized answer ....................\n"
            n = int(e["big"])
            parts.append((line * (n // len(line) + 1))[:n])
        return "\n".join(parts)


def make_handler(script, log_path, key):
    log_lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"

        def log_message(self, fmt, *args):  # quiet: the JSON log says it all
            pass

        def send_json(self, status, obj, extra=None):
            body = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            self.send_json(404, {"error": {"message": "POST /v1/chat/completions"}})

        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(n)
            if not self.path.endswith("/chat/completions"):
                return self.send_json(404, {"error": {"message": "no route " + self.path}})
            try:
                req = json.loads(raw)
            except ValueError as exc:
                return self.send_json(400, {"error": {"message": "bad JSON: %s" % exc}})
            msgs = req.get("messages", [])
            users = [m.get("content", "") for m in msgs if m.get("role") == "user"]
            m = KIND_RE.search(users[0]) if users else None
            kind = m.group(1) if m else "unknown"
            last_user = users[-1] if users else ""
            auth = self.headers.get("Authorization")
            auth_state = "missing" if not auth else ("ok" if key and auth == "Bearer " + key else "wrong")
            name, e = script.take(kind, last_user)
            stream = bool(req.get("stream"))
            with log_lock, open(log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps({"t": time.time(), "kind": kind, "entry": name,
                                    "model": req.get("model"), "stream": stream,
                                    "auth": auth_state if key else ("present" if auth else "missing"),
                                    "n_messages": len(msgs), "last_user": last_user[:20000]}) + "\n")
            if key and auth_state != "ok":
                # like real servers, echo part of what was sent: the client
                # must redact it from its logs
                shown = (auth or "")[7:] if auth else ""
                return self.send_json(401, {"error": {"message": "Incorrect API key provided: %s" % shown}})
            if e is None:
                return self.send_json(400, {"error": {"message": "fake server: script exhausted for kind %s" % kind}})
            if e.get("sleep"):
                time.sleep(float(e["sleep"]))
            status = int(e.get("status", 200))
            if status != 200:
                extra = {"Retry-After": str(e["retry_after"])} if "retry_after" in e else {}
                body = e.get("body", {"error": {"message": "scripted HTTP %d" % status}})
                return self.send_json(status, body, extra)
            if "raw" in e:
                body = e["raw"].encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            text = script.text(e)
            prompt_chars = sum(len(m.get("content") or "") for m in msgs)
            usage = {"prompt_tokens": prompt_chars // 4 + 1,
                     "completion_tokens": len(text) // 4 + 1}
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
            finish = e.get("finish_reason", "stop")
            if stream:
                return self.stream(req, e, text, finish, usage)
            msg = {"role": "assistant", "content": None if "refusal" in e else text}
            if "refusal" in e:
                msg["refusal"] = e["refusal"]
            body = {"id": "fake-1", "object": "chat.completion", "model": req.get("model"),
                    "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
                    "usage": usage}
            data = json.dumps(body).encode()
            if e.get("invalid_utf8"):
                # raw bytes that are not UTF-8, inside the content string
                data = data.replace(b"INVALID", b"\xff\xfe\xc3(", 1)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def stream(self, req, e, text, finish, usage):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            size = int(e.get("chunk", 64))
            delay = float(e.get("chunk_delay", 0))
            cut = e.get("cut_after")
            sent = 0
            try:
                for i in range(0, len(text), size):
                    piece = text[i:i + size]
                    if cut is not None and sent + len(piece) > int(cut):
                        piece = piece[: int(cut) - sent]
                        chunk = {"choices": [{"index": 0, "delta": {"content": piece}}]}
                        self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                        self.wfile.flush()
                        return  # connection closes: no finish_reason, no [DONE]
                    chunk = {"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
                    self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                    self.wfile.flush()
                    sent += len(piece)
                    if delay:
                        time.sleep(delay)
                last = {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]}
                self.wfile.write(b"data: " + json.dumps(last).encode() + b"\n\n")
                if (req.get("stream_options") or {}).get("include_usage"):
                    self.wfile.write(b"data: " + json.dumps({"choices": [], "usage": usage}).encode() + b"\n\n")
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (its timeout): nothing to do

    return Handler


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--script", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--root", default=".", help="folder code_file paths are relative to")
    args = ap.parse_args()
    script = Script(args.script, args.root)
    key = os.environ.get("FAKE_LLM_KEY") or None
    srv = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(script, args.log, key))
    srv.daemon_threads = True
    print(srv.server_address[1], flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
