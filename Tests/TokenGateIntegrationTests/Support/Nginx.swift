import Foundation
import Testing

@testable import GateTestSupport

/// A real nginx for the integration tests: found on PATH or in /usr/sbin,
/// started with a generated configuration in a temporary prefix (its own
/// pid file, error log and temp paths), stopped at the end.
///
/// The project's convention: a missing binary skips the tests with the
/// reason, unless `TOKENINSPECT_INTEGRATION=require` (then they fail).
// Unchecked: one test owns it and uses it from its own task only.
final class Nginx: @unchecked Sendable {
    static let binary: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let candidates = path.split(separator: ":").map { "\($0)/nginx" } + ["/usr/sbin/nginx", "/usr/local/sbin/nginx"]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    static var required: Bool { ProcessInfo.processInfo.environment["TOKENINSPECT_INTEGRATION"] == "require" }
    /// Runs the tests when nginx is there, or when it is required (they then fail without it).
    static var available: Bool { binary != nil || required }

    let prefix: URL
    let process: Process

    /// Starts nginx with `configuration` (the `http { … }` block's content;
    /// `{{prefix}}` stands for the prefix) and waits until `port` answers.
    /// `files` go under `www/`; `configFiles` (files the configuration
    /// includes by a relative path, `{{prefix}}` substituted) under the
    /// prefix, which is nginx's configuration directory here.
    init(http configuration: String, port: Int, files: [String: String] = [:], configFiles: [String: String] = [:]) throws {
        guard let binary = Self.binary else {
            throw RawHTTP.Failure(description: "nginx is required (TOKENINSPECT_INTEGRATION=require) but not installed: apt-get install nginx-light")
        }
        prefix = GateFixtures.temporaryDirectory()
        let manager = FileManager.default
        for directory in ["logs", "tmp", "cache", "www"] {
            try manager.createDirectory(at: prefix.appendingPathComponent(directory), withIntermediateDirectories: true)
        }
        for (path, content) in files {
            let url = prefix.appendingPathComponent("www").appendingPathComponent(path)
            try manager.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(content.utf8).write(to: url)
        }
        let root = prefix.path
        for (path, content) in configFiles {
            let url = prefix.appendingPathComponent(path)
            try manager.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(content.replacingOccurrences(of: "{{prefix}}", with: root).utf8).write(to: url)
        }
        let user = geteuid() == 0 ? "user root;\n" : ""
        let text = """
            \(user)worker_processes 1;
            pid \(root)/logs/nginx.pid;
            error_log \(root)/logs/error.log info;
            events { worker_connections 256; }
            http {
                access_log off;
                client_body_temp_path \(root)/tmp/body;
                proxy_temp_path \(root)/tmp/proxy;
                fastcgi_temp_path \(root)/tmp/fastcgi;
                uwsgi_temp_path \(root)/tmp/uwsgi;
                scgi_temp_path \(root)/tmp/scgi;
            \(configuration.replacingOccurrences(of: "{{prefix}}", with: root))
            }
            """
        let configPath = prefix.appendingPathComponent("nginx.conf")
        try Data(text.utf8).write(to: configPath)
        process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["-p", root, "-c", configPath.path, "-g", "daemon off;", "-e", "\(root)/logs/error.log"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while true {
            if let socket = try? RawHTTP.connect(port: port) {
                close(socket)
                break
            }
            guard process.isRunning, Date() < deadline else {
                let log = (try? String(contentsOf: prefix.appendingPathComponent("logs/error.log"), encoding: .utf8)) ?? ""
                stop()
                throw RawHTTP.Failure(description: "nginx did not start:\n\(log)")
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    var errorLog: String { (try? String(contentsOf: prefix.appendingPathComponent("logs/error.log"), encoding: .utf8)) ?? "" }

    func stop() {
        if process.isRunning {
            process.terminate()  // SIGTERM: nginx's fast shutdown
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: prefix)
    }

    deinit { stop() }
}
