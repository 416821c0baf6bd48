"""An OTLP/HTTP trace receiver for SpanExportTests, built on the OpenTelemetry
project's own protobuf definitions (PyPI: opentelemetry-proto).

It decodes every POST of an ExportTraceServiceRequest and appends one JSON line
per span to OUT, so the test reads what a collector would have read. A body
that does not decode, a wrong content type or a wrong path is answered 400/415/
404 and recorded as an error line. With --status N it answers N to every export
(a collector that refuses). Each export's line names the client's port, so
a test sees which connection it came on. With --close it answers with
`Connection: close` and closes; with --idle-timeout S it closes a kept
connection that stays idle S seconds (as a collector's idle timeout does).

usage: otlp_receiver.py PORT_FILE OUT [--status N] [--close] [--idle-timeout S]
"""
import json
import os
import signal
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

port_file, out_path = sys.argv[1], sys.argv[2]
options = sys.argv[3:]
status = int(options[options.index("--status") + 1]) if "--status" in options else 200
close_each = "--close" in options
idle_timeout = float(options[options.index("--idle-timeout") + 1]) if "--idle-timeout" in options else None


def value(any_value):
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


def record(line):
    with open(out_path, "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


class Receiver(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = idle_timeout

    def answer(self, code, body=b""):
        self.send_response(code)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(body)))
        if close_each:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path != "/v1/traces":
            record({"error": "path " + self.path})
            return self.answer(404)
        if self.headers.get("Content-Type") != "application/x-protobuf":
            record({"error": "content type " + str(self.headers.get("Content-Type"))})
            return self.answer(415)
        request = trace_service_pb2.ExportTraceServiceRequest()
        try:
            request.ParseFromString(body)
        except DecodeError as error:
            record({"error": "decode: " + str(error)})
            return self.answer(400)
        record({"export": len(body), "status": status, "peer": self.client_address[1]})
        if status != 200:
            return self.answer(status)
        for resource_spans in request.resource_spans:
            resource = {kv.key: value(kv.value) for kv in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    record({
                        "resource": resource,
                        "scope": scope_spans.scope.name,
                        "trace_id": span.trace_id.hex(),
                        "span_id": span.span_id.hex(),
                        "parent_span_id": span.parent_span_id.hex(),
                        "trace_state": span.trace_state,
                        "name": span.name,
                        "kind": span.kind,
                        "start": span.start_time_unix_nano,
                        "end": span.end_time_unix_nano,
                        "attributes": {kv.key: value(kv.value) for kv in span.attributes},
                        "status_code": span.status.code,
                        "status_message": span.status.message,
                        "flags": span.flags,
                    })
        self.answer(200, trace_service_pb2.ExportTraceServiceResponse().SerializeToString())

    def log_message(self, *args):
        pass


# The test process spawns us from a thread that blocks SIGTERM, and a child
# inherits that mask: without this, the test's terminate() would never land.
signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM, signal.SIGINT])
server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
with open(port_file + ".tmp", "w") as out:
    out.write(str(server.server_address[1]))
os.rename(port_file + ".tmp", port_file)
server.serve_forever()
