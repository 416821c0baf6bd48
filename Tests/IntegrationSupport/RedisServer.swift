import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Shared by the Redis store's tests and tokengate's fleet tests.
///
/// Integration tests run a real `redis-server`. Without one they are skipped
/// with the reason, unless `TOKENINSPECT_INTEGRATION=require`: then they run
/// and fail, so CI cannot pass by skipping them.
public enum Integration {
    public static let redisServerPath: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let directories = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/usr/bin"]
        return directories.map { $0 + "/redis-server" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    public static let required = ProcessInfo.processInfo.environment["TOKENINSPECT_INTEGRATION"] == "require"

    /// For `.enabled(if: Integration.redis, "redis-server not installed")`.
    public static var redis: Bool { redisServerPath != nil || required }
}

public struct RedisServerError: Error, CustomStringConvertible {
    public let description: String
    public init(description: String) { self.description = description }
}

/// A throw-away `redis-server` on a free loopback port: no persistence, its
/// own temporary directory, stopped by ``stop()`` (also from `deinit`).
public final class RedisServer: @unchecked Sendable {
    public private(set) var port: Int = 0
    public let directory: URL
    public private(set) var arguments: [String] = []
    private var process: Process?
    private var isPaused = false

    /// `extraArguments` are redis-server options (`--requirepass`, `--maxmemory`…);
    /// `portArgument` is `--port` or `--tls-port` (then plain TCP is off).
    public init(_ extraArguments: [String] = [], portArgument: String = "--port") throws {
        guard let binary = Integration.redisServerPath else {
            throw RedisServerError(description: "redis-server not installed, and TOKENINSPECT_INTEGRATION=require")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("redis-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var lastError: (any Error)?
        for _ in 0..<5 {
            let port = try Self.freePort()
            var arguments = [
                portArgument, String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--dir", directory.path, "--logfile", directory.appendingPathComponent("redis.log").path,
                "--daemonize", "no",
            ]
            if portArgument != "--port" { arguments += ["--port", "0"] }
            arguments += extraArguments
            do {
                self.port = port
                self.arguments = [binary] + arguments
                try launch()
                return
            } catch {
                lastError = error  // the port was taken meanwhile: try another
            }
        }
        throw lastError ?? RedisServerError(description: "redis-server did not start")
    }

    deinit { stop() }

    private func launch() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        let started = Date()
        while Date().timeIntervalSince(started) < 10 {
            if !process.isRunning {
                throw RedisServerError(description: "redis-server exited at start: \(log.suffix(600))")
            }
            if Self.accepts(port: port) { return }
            usleep(10_000)
        }
        stop()
        throw RedisServerError(description: "redis-server did not listen on \(port) within 10 s")
    }

    public var log: String {
        (try? String(contentsOf: directory.appendingPathComponent("redis.log"), encoding: .utf8)) ?? ""
    }

    /// SIGKILL and wait. Not SIGTERM: a child started from a test thread
    /// can inherit a signal mask that blocks it, and a throw-away server has
    /// nothing to save; the kernel closes its sockets either way.
    public func stop() {
        if let process, process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        isPaused = false
        process = nil
    }

    /// Stops and removes the temporary directory.
    public func remove() {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Starts again on the same port with the same options.
    public func restart() throws {
        stop()
        try launch()
    }

    /// SIGSTOP: the kernel still accepts connections and buffers bytes, nothing answers.
    public func pause() {
        guard let process else { return }
        kill(process.processIdentifier, SIGSTOP)
        isPaused = true
    }

    public func resume() {
        guard let process else { return }
        kill(process.processIdentifier, SIGCONT)
        isPaused = false
    }

    public var url: String { "redis://127.0.0.1:\(port)" }

    /// A port nothing listens on right now (the kernel's pick for port 0).
    public static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw RedisServerError(description: "socket() failed") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else { throw RedisServerError(description: "bind() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    public static func accepts(port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

/// Runs `body` with a fresh server, and removes the server however `body` ends.
public func withRedisServer<T>(
    _ extraArguments: [String] = [],
    portArgument: String = "--port",
    _ body: (RedisServer) async throws -> T
) async throws -> T {
    let server = try RedisServer(extraArguments, portArgument: portArgument)
    defer { server.remove() }
    return try await body(server)
}
