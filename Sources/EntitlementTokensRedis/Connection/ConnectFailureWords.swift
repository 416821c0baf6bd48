internal import NIOCore
internal import NIOPosix
internal import NIOSSL

#if canImport(Glibc)
import Glibc
#endif

/// Why a connection could not be made, in the words an operator reads in a
/// log line or `/readyz` ("connection refused", "connect timed out"), never
/// SwiftNIO's types (`NIOConnectionError(host: …, connectionErrors:
/// [SingleConnectionFailure(target: [IPv4]…`): docs/DESIGN.md#operators.
enum ConnectFailureWords {
    static func describe(_ error: any Error) -> String {
        switch error {
        case let error as RedisClientError:
            return error.message
        case let error as NIOConnectionError:
            if let first = error.connectionErrors.first { return describe(first.error) }
            if error.dnsAError != nil || error.dnsAAAAError != nil { return "the name \(error.host) does not resolve" }
            return "no address to connect to"
        case let error as IOError:
            return String(cString: strerror(error.errnoCode)).lowercased()
        case ChannelError.connectTimeout:
            return "connect timed out"
        case ChannelError.ioOnClosedChannel, ChannelError.alreadyClosed, ChannelError.eof:
            return "the connection closed"
        case let error as NIOSSLError:
            return "TLS failed (\(error))"
        case let error as BoringSSLError:
            return "TLS failed (\(error))"
        default:
            return "\(type(of: error))"
        }
    }
}
