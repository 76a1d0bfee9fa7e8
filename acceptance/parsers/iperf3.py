"""iperf3 `-J` (JSON) output → `Iperf3Record`.

An iperf3 run that failed still prints JSON with an `"error"` key (e.g. "unable to connect to
server: Connection refused"): that gives a record with `error` set and no throughput, not an
exception. Text around the document is ignored.

Stable JSON of `Iperf3Record.to_json()`:
  tool "iperf3", version, protocol ("TCP" | "UDP"), streams, duration_s (asked), reverse,
  sender_bits_per_second, receiver_bits_per_second, sender_bytes, receiver_bytes,
  retransmits (TCP sender; None for UDP), seconds (measured, receiver side), jitter_ms,
  lost_packets, lost_percent (UDP), remote_host, remote_port, error, source (the launcher
  prefix, or None)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from acceptance.parsers._common import ParseError, Record, clean_text, iter_json_objects, to_float, to_int
from acceptance.parsers._prefix import Source, prepassed, strip_prefixes

TOOL = "iperf3"


@dataclass(frozen=True)
class Iperf3Record(Record):
    tool: str
    version: str | None
    protocol: str | None
    streams: int | None
    duration_s: float | None
    reverse: bool | None
    sender_bits_per_second: float | None
    receiver_bits_per_second: float | None
    sender_bytes: int | None
    receiver_bytes: int | None
    retransmits: int | None
    seconds: float | None
    jitter_ms: float | None
    lost_packets: int | None
    lost_percent: float | None
    remote_host: str | None
    remote_port: int | None
    error: str | None
    source: Source | None = None


def _is_iperf(doc: Any) -> bool:
    return isinstance(doc, dict) and ("start" in doc or "end" in doc) and (
        "intervals" in doc or "error" in doc or "end" in doc
    )


def split_samples(text: str) -> list[str]:
    """Each iperf3 JSON document in `text`."""
    import json

    text = strip_prefixes(clean_text(text))
    decoder = json.JSONDecoder()
    return [text[pos: decoder.raw_decode(text, pos)[1]] for pos, doc in iter_json_objects(text) if _is_iperf(doc)]


def _d(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


@prepassed()
def parse_iperf3(text: str) -> Iperf3Record:
    """Parse the first iperf3 JSON document in `text`."""
    text = clean_text(text)
    doc = next((d for _, d in iter_json_objects(text) if _is_iperf(d)), None)
    if doc is None:
        raise ParseError(TOOL, "no iperf3 JSON document (run iperf3 with -J)")
    start, end = _d(doc.get("start")), _d(doc.get("end"))
    test = _d(start.get("test_start"))
    connected = start.get("connected") if isinstance(start.get("connected"), list) else []
    first = _d(connected[0]) if connected else {}
    sent, received = _d(end.get("sum_sent")), _d(end.get("sum_received"))
    udp_sum = _d(end.get("sum"))
    protocol = test.get("protocol") if isinstance(test.get("protocol"), str) else None
    is_udp = protocol == "UDP"
    error = doc.get("error")
    if not sent and not received and udp_sum:
        sent = udp_sum
    if error is None and not sent and not received:
        error = "no end-of-test summary (the run did not finish)"
    reverse = test.get("reverse")
    lost_src = received or udp_sum
    return Iperf3Record(
        tool=TOOL,
        version=start.get("version") if isinstance(start.get("version"), str) else None,
        protocol=protocol,
        streams=to_int(test.get("num_streams")),
        duration_s=to_float(test.get("duration")),
        reverse=bool(reverse) if isinstance(reverse, (int, bool)) else None,
        sender_bits_per_second=to_float(sent.get("bits_per_second")),
        receiver_bits_per_second=to_float(received.get("bits_per_second")),
        sender_bytes=to_int(sent.get("bytes")),
        receiver_bytes=to_int(received.get("bytes")),
        retransmits=None if is_udp else to_int(sent.get("retransmits")),
        seconds=to_float(received.get("seconds")) or to_float(sent.get("seconds")),
        jitter_ms=to_float(lost_src.get("jitter_ms")) if is_udp else None,
        lost_packets=to_int(lost_src.get("lost_packets")) if is_udp else None,
        lost_percent=to_float(lost_src.get("lost_percent")) if is_udp else None,
        remote_host=first.get("remote_host") if isinstance(first.get("remote_host"), str) else None,
        remote_port=to_int(first.get("remote_port")),
        error=str(error) if error is not None else None,
    )
