import Foundation
import IntegrationSupport
import Synchronization

@testable import GateTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// A private network the test builds and tears down (docs/DESIGN.md#high-availability):
/// a hub network namespace holding a bridge at 10.77.0.1/24, where the gates
/// run, and one namespace per host, each with a veth to the bridge at
/// 10.77.0.(10 + index). Nothing touches the machine's own namespace or
/// interfaces; a partition is `iptables` rules inside one host's namespace.
final class NetworkNamespaces: @unchecked Sendable {
    static let ip = firstExecutable(["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"])
    static let iptables = firstExecutable(["/usr/sbin/iptables", "/sbin/iptables", "/usr/bin/iptables"])

    /// `ip` (iproute2) and `iptables` are there and we are root.
    static var usable: Bool { ip != nil && iptables != nil && getuid() == 0 }

    static func firstExecutable(_ paths: [String]) -> String? {
        paths.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    let hub: String
    private let prefix: String
    private(set) var hosts: [String] = []
    static let hubAddress = "10.77.0.1"

    /// Names carry the test's pid, so two runs never share a namespace.
    init() throws {
        guard Self.usable else {
            throw RedisServerError(
                description:
                    "network namespaces need root, ip (Debian: iproute2) and iptables (Debian: iptables), and TOKENINSPECT_INTEGRATION=require"
            )
        }
        prefix = "tgcut\(getpid())-\(UInt16.random(in: 0...UInt16.max))"
        hub = prefix + "-hub"
        try Self.ip(["netns", "add", hub])
        do {
            try Self.ip(["-n", hub, "link", "set", "lo", "up"])
            try Self.ip(["-n", hub, "link", "add", "br0", "type", "bridge"])
            try Self.ip(["-n", hub, "addr", "add", Self.hubAddress + "/24", "dev", "br0"])
            try Self.ip(["-n", hub, "link", "set", "br0", "up"])
        } catch {
            remove()
            throw error
        }
    }

    /// A new host on the bridge; returns its namespace and address.
    func addHost() throws -> (namespace: String, address: String) {
        let index = hosts.count
        let namespace = "\(prefix)-h\(index)"
        let address = "10.77.0.\(10 + index)"
        try Self.ip(["netns", "add", namespace])
        hosts.append(namespace)
        try Self.ip(["-n", hub, "link", "add", "v\(index)", "type", "veth", "peer", "name", "eth0", "netns", namespace])
        try Self.ip(["-n", hub, "link", "set", "v\(index)", "master", "br0", "up"])
        try Self.ip(["-n", namespace, "addr", "add", address + "/24", "dev", "eth0"])
        try Self.ip(["-n", namespace, "link", "set", "eth0", "up"])
        try Self.ip(["-n", namespace, "link", "set", "lo", "up"])
        return (namespace, address)
    }

    /// Drops every packet between `namespace` and each of `addresses`, both
    /// ways; everyone else (the gates) still reaches it. Dropped, not
    /// refused: the peers see silence, as across a failed switch.
    func cut(_ namespace: String, from addresses: [String]) throws {
        for address in addresses {
            try run(namespace, Self.iptables ?? "iptables", ["-w", "-A", "INPUT", "-s", address, "-j", "DROP"])
            try run(namespace, Self.iptables ?? "iptables", ["-w", "-A", "OUTPUT", "-d", address, "-j", "DROP"])
        }
    }

    /// Removes every rule ``cut(_:from:)`` added in `namespace`.
    func heal(_ namespace: String) throws {
        try run(namespace, Self.iptables ?? "iptables", ["-w", "-F", "INPUT"])
        try run(namespace, Self.iptables ?? "iptables", ["-w", "-F", "OUTPUT"])
    }

    /// Runs `executable` inside `namespace` to its end; its output, or a throw naming it.
    @discardableResult
    func run(_ namespace: String, _ executable: String, _ arguments: [String]) throws -> String {
        try Self.ip(["netns", "exec", namespace, executable] + arguments)
    }

    /// `ip netns exec namespace executable arguments…` started, not waited
    /// for: `ip` execs the program, so the process's pid is the program's.
    func launch(_ namespace: String, _ executable: String, _ arguments: [String]) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.ip ?? "/usr/sbin/ip")
        process.arguments = ["netns", "exec", namespace, executable] + arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Runs `body` inside the hub, where the gates listen on its loopback, and
    /// returns from a thread outside it. A thread inherits the namespace of the
    /// thread that starts it: had the hub thread itself resumed the caller, the
    /// Swift and Dispatch pools could start a worker in the hub, and every test
    /// after it that ran there would dial the hub's loopback, not the machine's.
    /// So `body` runs on a thread of its own, started from a thread of its own,
    /// and only the outer one touches the caller's continuation.
    func inHub<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await offloaded {
            let outcome = Mutex<Result<T, any Error>?>(nil)
            let finished = DispatchSemaphore(value: 0)
            Thread {
                outcome.withLock {
                    $0 = Result {
                        try self.enterHub()
                        return try body()
                    }
                }
                finished.signal()
            }.start()
            finished.wait()
            return try outcome.withLock { $0! }.get()
        }
    }

    /// Moves the calling thread (only it, and the threads and processes it
    /// starts from now on) into the hub. Only through ``inHub(_:)``.
    private func enterHub() throws {
        typealias SetNS = @convention(c) (Int32, Int32) -> Int32
        // setns(2) is not in Swift's Glibc module.
        guard let symbol = dlsym(nil, "setns") else { throw RedisServerError(description: "setns not found in the C library") }
        let descriptor = open("/var/run/netns/\(hub)", O_RDONLY)
        guard descriptor >= 0 else { throw RedisServerError(description: "cannot open the namespace \(hub): errno \(errno)") }
        defer { close(descriptor) }
        let cloneNewNet: Int32 = 0x4000_0000
        guard unsafeBitCast(symbol, to: SetNS.self)(descriptor, cloneNewNet) == 0 else {
            throw RedisServerError(description: "setns into \(hub) failed: errno \(errno)")
        }
    }

    /// Deletes every namespace (their veths go with them). Processes started
    /// inside must have been killed by their pid first.
    func remove() {
        for namespace in hosts.reversed() + [hub] { _ = try? Self.ip(["netns", "del", namespace]) }
        hosts = []
    }

    @discardableResult
    static func ip(_ arguments: [String]) throws -> String {
        guard let ip else { throw RedisServerError(description: "ip (Debian: iproute2) not installed") }
        let finished = try Subprocess.run(ip, arguments)
        guard finished.status == 0 else {
            throw RedisServerError(description: "ip \(arguments.joined(separator: " ")) exited \(finished.status): \(finished.text.suffix(400))")
        }
        return finished.text
    }
}
