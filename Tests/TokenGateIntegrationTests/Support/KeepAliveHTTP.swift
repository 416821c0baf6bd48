import Foundation

@testable import GateTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// One keep-alive HTTP/1.1 connection over a blocking loopback socket, for
/// the load of the fleet tests: tens of thousands of requests cannot each
/// open a connection (TIME_WAIT would run out of ports). Answers are read by
/// `Content-Length`, bounded at 64 KiB; after a failure the next request
/// opens a new connection.
final class KeepAliveHTTP {
    let port: Int
    private var socket: Int32 = -1
    private var buffer: [UInt8] = []
    /// The header fields of the last answer, as received.
    private(set) var lastHeaders: [(name: String, value: String)] = []

    /// The value of the last answer's field `name` (any case); nil without one.
    func lastHeader(_ name: String) -> String? {
        lastHeaders.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    init(port: Int) { self.port = port }
    deinit { if socket >= 0 { close(socket) } }

    /// The status and the `X-Token-Status` value of `GET target`.
    func get(_ target: String, headers: [(String, String)] = []) throws -> (status: Int, tokenStatus: String?) {
        var request = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        // Never sent twice: a request the gate saw would come back as a replay.
        do {
            return try exchange(Array(request.utf8))
        } catch {
            reset()
            throw error
        }
    }

    private func reset() {
        if socket >= 0 { close(socket) }
        socket = -1
        buffer.removeAll(keepingCapacity: true)
    }

    private func exchange(_ request: [UInt8]) throws -> (status: Int, tokenStatus: String?) {
        if socket < 0 {
            socket = try RawHTTP.connect(port: port)
            var timeout = timeval(tv_sec: 30, tv_usec: 0)
            setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var one: Int32 = 1
            setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        var sent = 0
        while sent < request.count {
            let written = request[sent...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { throw RawHTTP.Failure(description: "send failed: errno \(errno)") }
            sent += written
        }
        let separator = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while headEnd == nil {
            headEnd = buffer.firstRange(of: separator)?.upperBound
            if headEnd == nil { try receive() }
        }
        let head = String(decoding: buffer[..<headEnd!], as: UTF8.self)
        let lines = head.components(separatedBy: "\r\n")
        let parts = lines[0].split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { throw RawHTTP.Failure(description: "bad status line \(lines[0])") }
        var length = 0
        var tokenStatus: String?
        lastHeaders = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            lastHeaders.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if name == "content-length" { length = Int(value) ?? 0 }
            if name == "x-token-status" { tokenStatus = value }
        }
        guard length <= 64 * 1024 else { throw RawHTTP.Failure(description: "an answer of \(length) bytes") }
        while buffer.count < headEnd! + length { try receive() }
        buffer.removeFirst(headEnd! + length)
        return (status, tokenStatus)
    }

    /// How the server ended this connection, waiting at most `seconds` with
    /// nothing sent: "closed" (an orderly close), "reset", "data" (bytes
    /// nobody asked for), or nil (still open).
    func peerEnd(within seconds: Double) -> String? {
        guard socket >= 0 else { return "closed" }
        var timeout = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1_000_000))
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var byte: UInt8 = 0
        let count = recv(socket, &byte, 1, 0)
        if count == 0 { return "closed" }
        if count > 0 { return "data" }
        return errno == ECONNRESET ? "reset" : nil
    }

    private func receive() throws {
        guard buffer.count < 128 * 1024 else { throw RawHTTP.Failure(description: "an answer without an end") }
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { throw RawHTTP.Failure(description: "the connection closed (errno \(errno))") }
        buffer += chunk[..<count]
    }
}
