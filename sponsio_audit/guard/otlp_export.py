"""Export guard checks as ``sponsio.*`` spans over OTLP/HTTP, off the tool call's path.

``OtlpHttpExporter.export(turn)`` only puts the check on a bounded queue
(never blocks: when the queue is full the check is dropped and counted in
``dropped``). A daemon thread owned by the exporter builds the span trees
(``spans.build``), batches them and POSTs ``<endpoint>/v1/traces``:
``application/x-protobuf`` by default, ``application/json`` (OTLP/JSON) with
``protocol="json"``. 429, 5xx and connection errors are retried with
exponential backoff (``max_retries`` times, honouring ``Retry-After`` up to
``max_backoff``); a batch that still fails is counted in ``failed``.
``flush()`` waits for the queue to drain; each exporter registers its own
``atexit`` flush-and-stop, removed again by ``shutdown()``.

Configuration from the environment (``from_env``): ``OTEL_EXPORTER_OTLP_ENDPOINT``
(base URL; ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` is used as the full URL),
``OTEL_EXPORTER_OTLP_HEADERS`` (``k=v,k2=v2``, URL-encoded values),
``OTEL_SERVICE_NAME``, ``OTEL_EXPORTER_OTLP_PROTOCOL`` (``http/protobuf`` or
``http/json``). Only the standard library does HTTP (urllib).
"""

from __future__ import annotations

import atexit
import os
import queue
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from sponsio_audit.guard import spans as sp

RETRYABLE = frozenset({408, 429, 500, 502, 503, 504})


def parse_headers(text: str | None) -> dict[str, str]:
    """``k=v,k2=v2`` (values URL-decoded) as a dict; malformed items are ignored."""
    out: dict[str, str] = {}
    for item in (text or "").split(","):
        k, sep, v = item.partition("=")
        if sep and k.strip():
            out[urllib.parse.unquote(k.strip())] = urllib.parse.unquote(v.strip())
    return out


def traces_url(endpoint: str) -> str:
    """``endpoint`` with ``/v1/traces`` appended unless it already ends with it."""
    e = endpoint.rstrip("/")
    return e if e.endswith("/v1/traces") else e + "/v1/traces"


class OtlpHttpExporter:
    """Batched, non-blocking OTLP/HTTP export of guard checks (module doc)."""

    def __init__(
        self,
        endpoint: str,
        *,
        headers: Mapping[str, str] | None = None,
        service_name: str | None = None,
        protocol: str = "protobuf",
        redact_args: bool = True,
        truncate: bool = True,
        max_queue: int = 2048,
        max_batch: int = 256,
        timeout: float = 5.0,
        max_retries: int = 4,
        backoff: float = 0.2,
        max_backoff: float = 5.0,
        url_is_full: bool = False,
    ) -> None:
        if protocol not in ("protobuf", "json"):
            raise ValueError("protocol must be 'protobuf' or 'json'")
        self.url = endpoint if url_is_full else traces_url(endpoint)
        self.headers = dict(headers or {})
        self.service_name = service_name or "sponsio"
        self.protocol = protocol
        self.redact_args = redact_args
        self.truncate = truncate
        self.max_batch = max_batch
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self._q: queue.Queue[sp.Turn] = queue.Queue(maxsize=max_queue)
        self._cond = threading.Condition()
        self._pending = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self.sent = 0  # spans accepted by the endpoint
        self.dropped = 0  # checks dropped because the queue was full
        self.failed = 0  # checks in batches that failed after every retry
        self.retries = 0
        atexit.register(self._atexit)

    @classmethod
    def from_env(cls, **kw: Any) -> OtlpHttpExporter | None:
        """An exporter configured by the OTEL_* variables, or None when no endpoint is set."""
        full = os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        base = os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        if not (full or base):
            return None
        proto = os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf").strip().lower()
        kw.setdefault("protocol", "json" if proto.endswith("json") else "protobuf")
        kw.setdefault("service_name", os.environ.get("OTEL_SERVICE_NAME"))
        kw.setdefault("headers", parse_headers(os.environ.get("OTEL_EXPORTER_OTLP_HEADERS")))
        return cls(full or base or "", url_is_full=bool(full), **kw)

    # ------------------------------------------------------------ producer side

    def export(self, turn: sp.Turn) -> bool:
        """Queue one check; False (and ``dropped`` += 1) when the queue is full or stopped."""
        if self._stop.is_set():
            self.dropped += 1
            return False
        self._ensure_thread()
        with self._cond:
            try:
                self._q.put_nowait(turn)
            except queue.Full:
                self.dropped += 1
                return False
            self._pending += 1
        return True

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every queued check was sent or given up; False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._pending:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def shutdown(self, timeout: float = 5.0) -> None:
        """Flush (bounded by ``timeout``), stop the thread, unregister the atexit hook."""
        self.flush(timeout)
        self._stop.set()
        t = self._thread
        if t is not None:
            t.join(timeout=max(0.1, min(timeout, 2.0)))
        atexit.unregister(self._atexit)

    def _atexit(self) -> None:
        self.shutdown(timeout=2.0)

    # ------------------------------------------------------------ worker side

    def _ensure_thread(self) -> None:
        if self._thread is not None:
            return
        with self._start_lock:
            if self._thread is None:
                t = threading.Thread(target=self._run, name="sponsio-otlp-export", daemon=True)
                t.start()
                self._thread = t

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                first = self._q.get(timeout=0.1)
            except queue.Empty:
                continue
            batch = [first]
            while len(batch) < self.max_batch:
                try:
                    batch.append(self._q.get_nowait())
                except queue.Empty:
                    break
            try:
                self._send_batch(batch)
            except Exception:  # never let the worker die; count the loss
                self.failed += len(batch)
            finally:
                with self._cond:
                    self._pending -= len(batch)
                    self._cond.notify_all()
        # stopped: whatever is left is not sent
        with self._cond:
            while True:
                try:
                    self._q.get_nowait()
                except queue.Empty:
                    break
                self.failed += 1
                self._pending -= 1
            self._cond.notify_all()

    def encode(self, batch: list[sp.Turn]) -> tuple[bytes, str, int]:
        """(body, content type, span count) of one batch."""
        spans: list[sp.Span] = []
        for turn in batch:
            spans += sp.build(turn, redact_args=self.redact_args, truncate_args=self.truncate)
        if self.protocol == "json":
            return sp.to_json(spans, self.service_name), "application/json", len(spans)
        return sp.to_protobuf(spans, self.service_name), "application/x-protobuf", len(spans)

    def _send_batch(self, batch: list[sp.Turn]) -> None:
        body, ctype, n = self.encode(batch)
        for attempt in range(self.max_retries + 1):
            delay = min(self.max_backoff, self.backoff * (2**attempt))
            try:
                req = urllib.request.Request(self.url, data=body, method="POST")
                req.add_header("Content-Type", ctype)
                for k, v in self.headers.items():
                    req.add_header(k, v)
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    resp.read()
                self.sent += n
                return
            except urllib.error.HTTPError as e:
                if e.code not in RETRYABLE and not 500 <= e.code < 600:
                    break
                after = e.headers.get("Retry-After") if e.headers else None
                if after and after.strip().isdigit():
                    delay = min(self.max_backoff, float(after))
            except (urllib.error.URLError, OSError, TimeoutError):
                pass
            if attempt == self.max_retries or self._stop.wait(delay):
                break
            self.retries += 1
        self.failed += len(batch)
