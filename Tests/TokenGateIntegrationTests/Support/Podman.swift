import Foundation

@testable import GateTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// Debian's podman with a store of its own: images, containers and podman's
/// state live in a throw-away folder (`--root`, `--runroot`, `--tmpdir`),
/// never in the machine's store, and go with ``remove()``.
///
/// Set-up this machine's sandbox needs, and CI's machines are the same kind:
/// - `--runtime runc`: Debian's podman defaults to crun;
/// - `--storage-driver vfs`: no overlay mount inside the sandbox (vfs copies
///   the image's one layer per container, which is cheap at this size);
/// - explicit `--ulimit nofile=…,nproc=…`, modest ones: the sandbox refuses
///   runc's setrlimit for podman's defaults (nofile 1048576, over the hard
///   limit) and for an NPROC near the machine's hard limit;
/// - `--network host` where a container serves: the tests reach it on a free
///   loopback port, with no port forwarding to set up;
/// - the same ulimits as `default_ulimits` of a containers.conf of the
///   store's own (`CONTAINERS_CONF`), for what takes no `--ulimit`:
///   `podman kube play`, and the pod's infra container.
final class Podman: Sendable {
    static let binary = Browser.find(["podman"])
    static let buildah = Browser.find(["buildah"])
    static let runc = Browser.find(["runc"])
    static var required: Bool { ProcessInfo.processInfo.environment["TOKENINSPECT_INTEGRATION"] == "require" }
    /// The missing Debian packages, by name.
    static var missing: [String] {
        [("podman", binary), ("runc", runc)].filter { $0.1 == nil }.map(\.0)
            + (ReleasePackage.prebuiltImage == nil && buildah == nil ? ["buildah"] : [])
    }

    let folder: URL

    init() throws {
        guard let binary = Self.binary, Self.runc != nil else {
            throw RawHTTP.Failure(
                description: "podman and runc are required but not installed: apt-get install \(Self.missing.joined(separator: " "))"
            )
        }
        _ = binary
        // Short: conmon's sockets live under the run root, and a socket's path has 108 bytes at most.
        folder = URL(fileURLWithPath: "/tmp/tg-podman-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let (files, processes) = Self.ulimits
        try "[containers]\ndefault_ulimits = [\"nofile=\(files):\(files)\", \"nproc=\(processes):\(processes)\"]\n"
            .write(to: configuration, atomically: true, encoding: .utf8)
    }

    /// The store's containers.conf: read instead of the machine's.
    var configuration: URL { folder.appendingPathComponent("containers.conf") }
    var environment: [String: String] {
        ProcessInfo.processInfo.environment.merging(["CONTAINERS_CONF": configuration.path]) { $1 }
    }

    var globalOptions: [String] {
        [
            "--root", folder.appendingPathComponent("root").path, "--runroot", folder.appendingPathComponent("run").path,
            "--tmpdir", folder.appendingPathComponent("tmp").path, "--storage-driver", "vfs", "--runtime", "runc", "--cgroup-manager", "cgroupfs",
            "--events-backend", "file",
        ]
    }

    /// `podman OPTIONS… arguments`, to its end.
    func run(_ arguments: [String], timeout: TimeInterval = 120) throws -> Shell.Result {
        try Shell.run([Self.binary!] + globalOptions + arguments, environment: environment, timeout: timeout)
    }

    /// `podman OPTIONS… arguments` for a command that returns while the
    /// containers it started run on (`kube play`), to its end. Every
    /// descriptor but the standard three is closed first (bash, then exec):
    /// conmon would otherwise inherit the one through which Foundation learns
    /// that its child exited (see ``Attached``), and podman's exit would go
    /// unseen for as long as the pod runs.
    func runLeavingContainers(_ arguments: [String], timeout: TimeInterval = 180) throws -> Shell.Result {
        let closingDescriptors = #"for fd in /proc/$$/fd/*; do fd=${fd##*/}; if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi; done; exec "$@""#
        return try Shell.run(
            ["/bin/bash", "-c", closingDescriptors, "podman", Self.binary!] + globalOptions + arguments,
            environment: environment,
            timeout: timeout
        )
    }

    /// `podman run arguments` in the foreground, its output in a file, until
    /// the container exits (podman then exits with the container's status).
    /// Not `run --detach`: conmon, which stays with the container, inherits
    /// the descriptor through which Foundation learns that its child exited,
    /// so a detached run would look unfinished until the container ends.
    final class Attached: @unchecked Sendable {
        let process = Process()
        let output: URL

        init(_ podman: Podman, _ arguments: [String]) throws {
            output = podman.folder.appendingPathComponent("attached-\(UUID().uuidString.prefix(8)).log")
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)  // opened next, which throws if it is not there
            process.executableURL = URL(fileURLWithPath: Podman.binary!)
            process.arguments = podman.globalOptions + ["run"] + arguments
            process.environment = podman.environment
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = try FileHandle(forWritingTo: output)
            process.standardError = try FileHandle(forWritingTo: output)
            try process.run()
        }

        /// The exit status once podman has exited, waiting at most `seconds`; nil while it runs.
        func waitForExit(seconds: Double) -> Int32? {
            let deadline = Date().addingTimeInterval(seconds)
            while process.isRunning, Date() < deadline { usleep(20_000) }
            return process.isRunning ? nil : process.terminationStatus
        }
    }

    /// Open files and processes the sandbox lets runc set, never over the process's own hard limits.
    static var ulimits: (files: UInt, processes: UInt) {
        func hard(_ resource: Int32, cap: UInt) -> UInt {
            var limit = rlimit()
            guard getrlimit(__rlimit_resource_t(resource), &limit) == 0 else { return cap }
            return min(cap, UInt(limit.rlim_max))
        }
        return (hard(Int32(RLIMIT_NOFILE.rawValue), cap: 8192), hard(Int32(__RLIMIT_NPROC.rawValue), cap: 4096))
    }

    /// ``ulimits`` as `--ulimit` options.
    static var limits: [String] {
        let (files, processes) = ulimits
        return ["--ulimit", "nofile=\(files):\(files)", "--ulimit", "nproc=\(processes):\(processes)"]
    }

    /// Every pod and container stopped and removed, then the store.
    func remove() {
        _ = try? run(["pod", "rm", "--all", "--force"])
        _ = try? run(["rm", "--all", "--force", "--time", "0"])
        _ = try? run(["rmi", "--all", "--force"])
        try? FileManager.default.removeItem(at: folder)
    }
}
