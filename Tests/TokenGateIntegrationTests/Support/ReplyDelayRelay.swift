import Foundation
import Synchronization

@testable import GateTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Latency between a gate and Redis where the kernel has no `sch_netem`
/// (GateRedisFaultTests): a TCP relay on the loopback of the namespace it is
/// made in, which passes the gate's bytes to Redis at once and holds each
/// chunk of Redis's replies ``delayMilliseconds`` (read when the chunk
/// arrives) before passing it on, in order. Set to 0 it only copies.
///
/// Made on a thread inside the network namespace it serves (``NetworkNamespaces/inHub(_:)``):
/// its threads, started from there, inherit it, so the connections it
/// opens to Redis leave from the same namespace. Stopped by ``stop()``.
final class ReplyDelayRelay: Sendable {
    let port: Int
    let delayMilliseconds = Atomic<Int>(0)
    private let listener: Int32
    private let upstream: (address: String, port: Int)
    private let stopping = Atomic<Bool>(false)
    /// Both sockets of every open pair, shut down by ``stop()``.
    private let open = Mutex<Set<Int32>>([])

    init(upstreamAddress: String, upstreamPort: Int) throws {
        upstream = (upstreamAddress, upstreamPort)
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw RawHTTP.Failure(description: "relay: socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Int32 in
                guard bind(socket, pointer, length) == 0, listen(socket, 128) == 0 else { return -1 }
                return getsockname(socket, pointer, &length)
            }
        }
        guard bound == 0 else {
            Glibc.close(socket)
            throw RawHTTP.Failure(description: "relay: no listening socket: errno \(errno)")
        }
        listener = socket
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread { [self] in acceptLoop() }.start()
    }

    /// Closes the listener and every connection; the threads end by themselves.
    func stop() {
        stopping.store(true, ordering: .relaxed)
        shutdown(listener, Int32(SHUT_RDWR))
        for socket in open.withLock({ $0 }) { shutdown(socket, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop() {
        defer { Glibc.close(listener) }
        while !stopping.load(ordering: .relaxed) {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR { continue }
                return
            }
            guard let server = connectUpstream() else {
                Glibc.close(client)
                continue
            }
            for socket in [client, server] {
                var one: Int32 = 1
                setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            }
            open.withLock { $0.formUnion([client, server]) }
            serve(client: client, server: server)
        }
    }

    /// nil when Redis cannot be reached now (the gate then sees its connection closed).
    private func connectUpstream() -> Int32? {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(upstream.port).bigEndian)
        address.sin_addr.s_addr = inet_addr(upstream.address)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            Glibc.close(socket)
            return nil
        }
        return socket
    }

    /// Three threads a pair: the gate's bytes to Redis; Redis's replies into
    /// a queue, each chunk with the moment it is due; the queue to the gate
    /// when due. The first to see an end shuts both sockets down; the last
    /// to leave closes them.
    private func serve(client: Int32, server: Int32) {
        let queue = ReplyQueue()
        let remaining = Atomic<Int>(3)
        let leave: @Sendable () -> Void = { [self] in
            shutdown(client, Int32(SHUT_RDWR))
            shutdown(server, Int32(SHUT_RDWR))
            queue.finish()
            if remaining.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 {
                open.withLock { $0.subtract([client, server]) }
                Glibc.close(client)
                Glibc.close(server)
            }
        }
        Thread {
            defer { leave() }
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            while let count = Self.receive(client, &buffer), Self.send(server, buffer[..<count]) {}
        }.start()
        Thread { [self] in
            defer { leave() }
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            while let count = Self.receive(server, &buffer) {
                let due = ContinuousClock.now + .milliseconds(delayMilliseconds.load(ordering: .relaxed))
                queue.push(Array(buffer[..<count]), due: due)
            }
        }.start()
        Thread {
            defer { leave() }
            while let (bytes, due) = queue.pop() {
                let wait = due - ContinuousClock.now
                if wait > .zero { usleep(useconds_t(wait / .microseconds(1))) }
                guard Self.send(client, bytes[...]) else { return }
            }
        }.start()
    }

    /// nil at the end of the stream or on an error.
    private static func receive(_ socket: Int32, _ buffer: inout [UInt8]) -> Int? {
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count > 0 { return count }
            if count < 0, errno == EINTR { continue }
            return nil
        }
    }

    private static func send(_ socket: Int32, _ bytes: ArraySlice<UInt8>) -> Bool {
        var sent = bytes.startIndex
        while sent < bytes.endIndex {
            let written = bytes[sent...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return false }
            sent += written
        }
        return true
    }

    /// Redis's replies waiting for their moment, oldest first.
    private final class ReplyQueue: @unchecked Sendable {
        private let condition = NSCondition()
        private var chunks: [([UInt8], ContinuousClock.Instant)] = []
        private var finished = false

        func push(_ bytes: [UInt8], due: ContinuousClock.Instant) {
            condition.lock()
            chunks.append((bytes, due))
            condition.signal()
            condition.unlock()
        }

        func finish() {
            condition.lock()
            finished = true
            condition.broadcast()
            condition.unlock()
        }

        /// The oldest chunk; nil once finished (what is left is dropped, as a closed connection drops it).
        func pop() -> ([UInt8], ContinuousClock.Instant)? {
            condition.lock()
            defer { condition.unlock() }
            while chunks.isEmpty, !finished { condition.wait() }
            return finished ? nil : chunks.removeFirst()
        }
    }
}
