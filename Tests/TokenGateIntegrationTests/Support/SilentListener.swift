import Foundation

@testable import GateTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A loopback port that accepts connections (the kernel completes them from
/// the listen backlog) and never answers: a gate that hangs, for a proxy's
/// read timeout. Closed by `close()` or when released.
final class SilentListener: Sendable {
    let port: Int
    private let socket: Int32

    init() throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw RawHTTP.Failure(description: "socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Int32 in
                guard bind(socket, pointer, length) == 0, listen(socket, 64) == 0 else { return -1 }
                return getsockname(socket, pointer, &length)
            }
        }
        guard bound == 0 else {
            Glibc.close(socket)
            throw RawHTTP.Failure(description: "no silent listener: errno \(errno)")
        }
        self.socket = socket
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { Glibc.close(socket) }
}
