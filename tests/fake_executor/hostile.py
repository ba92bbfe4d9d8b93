#!/usr/bin/env python3
"""A hostile executor for the judge's protocol tests (src/eval/exec_proto.h).

It reads the job and the commands like a real executor, answers pings and
the load honestly, and then breaks the protocol the way KS_HOSTILE says:
  extra      answers a call twice
  early      answers the next call's id before it was asked
  wrongid    answers with another id
  oversize   sends a line of 10 000 bytes
  garbage    sends a line that is not JSON
  unknown    sends an event the protocol does not have
  field      sends a "ret" with an extra "correct" field
  split      sends a valid answer one byte at a time (must be accepted)
  exit       exits without answering
  honest     follows the protocol (claims 1 ns for every call)
  slowstart  honest, but sleeps KS_SLOW_READY seconds (default 1) before
             "ready", as an executor that compiles at its start does
"""
import os
import sys
import time

mode = os.environ.get("KS_HOSTILE", "honest")
cmd = os.fdopen(4, "rb", buffering=0)
ev = os.fdopen(3, "wb", buffering=0)


def send(s):
    ev.write(s.encode() if isinstance(s, str) else s)


def line():
    buf = b""
    while True:
        c = cmd.read(1)
        if not c:
            sys.exit(0)
        if c == b"\n":
            return buf.decode()
        buf += c


import json

line()  # the job
if mode == "slowstart":
    time.sleep(float(os.environ.get("KS_SLOW_READY", "1")))
send('{"ev":"ready"}\n')
while True:
    c = json.loads(line())
    k, i = c["cmd"], c.get("id", 0)
    if k == "ping":
        send('{"ev":"pong","id":%d}\n' % i)
    elif k == "load":
        send('{"ev":"loaded"}\n')
    elif k == "prep":
        send('{"ev":"prepped","id":%d}\n' % i)
    elif k == "exit":
        sys.exit(0)
    elif k == "call":
        ok = '{"ev":"ret","id":%d,"ns":1}\n' % i
        if mode == "extra":
            send(ok + ok)
        elif mode == "early":
            send('{"ev":"ret","id":%d,"ns":1}\n' % (i + 1))
        elif mode == "wrongid":
            send('{"ev":"ret","id":%d,"ns":1}\n' % (i + 7))
        elif mode == "oversize":
            send('{"ev":"ret","id":%d,"ns":1,"pad":"%s"}\n' % (i, "x" * 10000))
        elif mode == "garbage":
            send("correct: yes\n")
        elif mode == "unknown":
            send('{"ev":"verdict","id":%d,"ok":true}\n' % i)
        elif mode == "field":
            send('{"ev":"ret","id":%d,"ns":1,"correct":true}\n' % i)
        elif mode == "split":
            for b in ok.encode():
                send(bytes([b]))
                time.sleep(0.001)
        elif mode == "exit":
            sys.exit(3)
        else:
            send(ok)
    else:
        sys.exit(2)
