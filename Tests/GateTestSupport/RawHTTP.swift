import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A minimal HTTP/1.1 client over a blocking loopback socket, for the
/// integration tests: it shows the answer's header block byte for byte
/// (what a header injection would change), sends exactly the headers given,
/// and keeps no cookies. Unsafe code stays here, in test support.
enum RawHTTP {
    struct Answer {
        var status: Int
        var headers: [(name: String, value: String)]
        var body: String
        var rawHead: [UInt8]

        subscript(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }
        var tokenStatus: String? { self["X-Token-Status"] }
        func all(_ name: String) -> [String] { headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value) }
    }

    struct Failure: Error, CustomStringConvertible { var description: String }

    static func get(port: Int, _ target: String, headers: [(String, String)] = [], method: String = "GET") throws -> Answer {
        try request(port: port, method: method, target, headers: headers)
    }

    /// One request with `body` (sent with its Content-Length when not nil), the answer read to the connection's end.
    static func request(port: Int, method: String, _ target: String, headers: [(String, String)] = [], body: String? = nil) throws -> Answer {
        var request = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        if let body { request += "Content-Length: \(body.utf8.count)\r\n" }
        request += "\r\n" + (body ?? "")
        let raw = try exchange(port: port, Array(request.utf8))
        guard let end = raw.firstRange(of: Array("\r\n\r\n".utf8)) else { throw Failure(description: "no header block in \(raw.count) bytes") }
        let head = Array(raw[..<end.lowerBound])
        let lines = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw Failure(description: "bad status line \(lines[0])") }
        var fields: [(String, String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        return Answer(status: status, headers: fields, body: String(decoding: raw[end.upperBound...], as: UTF8.self), rawHead: head)
    }

    /// Sends `bytes` and reads until the server closes (bounded: `limit` bytes, 1 MiB by default; 30 s without a byte),
    /// or, with `untilContentLength`, until the header block and the body its Content-Length announces are in
    /// (a server that keeps the connection open despite `Connection: close`, as chromedriver does).
    static func exchange(port: Int, _ bytes: [UInt8], limit: Int = 1 << 20, untilContentLength: Bool = false) throws -> [UInt8] {
        let socket = try connect(port: port)
        defer { close(socket) }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var sent = 0
        while sent < bytes.count {
            let written = bytes[sent...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { throw Failure(description: "send failed: errno \(errno)") }
            sent += written
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while response.count < limit {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count == 0 { break }
            guard count > 0 else {
                if response.isEmpty { throw Failure(description: "recv failed: errno \(errno)") }
                break
            }
            response += buffer[..<count]
            if untilContentLength, let expected = completeLength(response), response.count >= expected { break }
        }
        return response
    }

    /// The length of the whole answer once its header block is in and names a Content-Length.
    private static func completeLength(_ response: [UInt8]) -> Int? {
        guard let end = response.firstRange(of: Array("\r\n\r\n".utf8)) else { return nil }
        for line in String(decoding: response[..<end.lowerBound], as: UTF8.self).split(separator: "\r\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "content-length", let length = Int(parts[1].trimmingCharacters(in: .whitespaces)) {
                return end.upperBound + length
            }
        }
        return nil
    }

    /// A connection to 127.0.0.1:`port`, from `source` (any address of
    /// 127.0.0.0/8) when given: tests of per-peer limits are several peers.
    static func connect(port: Int, from source: String? = nil) throws -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Failure(description: "socket failed") }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                close(socket)
                throw Failure(description: "bind to \(source) failed: errno \(errno)")
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            close(socket)
            throw Failure(description: "connect to 127.0.0.1:\(port) failed: errno \(errno)")
        }
        return socket
    }

    /// A loopback port free now (bound to 0, read back, released).
    static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Int32 in
                guard bind(socket, pointer, length) == 0 else { return -1 }
                return getsockname(socket, pointer, &length)
            }
        }
        guard bound == 0 else { throw Failure(description: "no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// Runs blocking work (sockets, processes) on a thread of its own: the test
/// and the in-process gate share Swift's cooperative pool (one thread per
/// core, 2 here), and a test blocked in `recv` on it could starve the very
/// server it waits for.
func offloaded<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.start()
    }
}

extension RawHTTP {
    static func fetch(port: Int, _ target: String, headers: [(String, String)] = []) async throws -> Answer {
        try await offloaded { try get(port: port, target, headers: headers) }
    }
}
