import Foundation

@testable import GateTestSupport

/// A real headless Chromium for the debugger's tests, driven through the W3C
/// WebDriver protocol (JSON over HTTP) by a `chromedriver` this object starts
/// on a free loopback port, with a throw-away profile; ``stop()`` ends the
/// session (chromedriver then quits the browser), chromedriver, and removes
/// the profile.
///
/// The project's convention: missing binaries skip the tests with the
/// reason, unless `TOKENINSPECT_INTEGRATION=require` (then they fail).
// Unchecked: one test owns it and uses it from its own task only.
final class Browser: @unchecked Sendable {
    static func find(_ names: [String]) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let directories = path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/sbin"]
        for name in names {
            for directory in directories where FileManager.default.isExecutableFile(atPath: "\(directory)/\(name)") {
                return "\(directory)/\(name)"
            }
        }
        return nil
    }

    static let chromium = find(["chromium", "chromium-browser"])
    static let chromedriver = find(["chromedriver"])
    static var required: Bool { ProcessInfo.processInfo.environment["TOKENINSPECT_INTEGRATION"] == "require" }
    /// Runs the tests when both are there, or when they are required (they then fail without them).
    static var available: Bool { (chromium != nil && chromedriver != nil) || required }

    struct Failure: Error, CustomStringConvertible { var description: String }

    let driverPort: Int
    let driver: Process
    let profile: URL
    private(set) var session: String?

    /// `arguments` are added to Chromium's command line (for instance
    /// `--host-resolver-rules=MAP media.test 127.0.0.1`).
    init(arguments extra: [String] = []) throws {
        guard let chromium = Self.chromium, let chromedriver = Self.chromedriver else {
            throw Failure(
                description: "chromium and chromedriver are required (TOKENINSPECT_INTEGRATION=require) but not installed: "
                    + "apt-get install chromium chromium-driver"
            )
        }
        driverPort = try RawHTTP.freePort()
        profile = GateFixtures.temporaryDirectory()
        driver = Process()
        driver.executableURL = URL(fileURLWithPath: chromedriver)
        driver.arguments = ["--port=\(driverPort)"]
        driver.standardOutput = FileHandle.nullDevice
        driver.standardError = FileHandle.nullDevice
        try driver.run()
        var ready = false
        for _ in 0..<200 where !ready {
            if let status = try? command("GET", "/status") as? [String: Any], status["ready"] as? Bool == true {
                ready = true
            } else {
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        guard ready else {
            stop()
            throw Failure(description: "chromedriver did not answer on port \(driverPort)")
        }
        var arguments = [
            "--headless=new", "--disable-gpu", "--window-size=1280,1800", "--user-data-dir=\(profile.path)",
            "--no-first-run", "--disable-extensions", "--disable-background-networking", "--disable-sync",
        ]
        if geteuid() == 0 { arguments.append("--no-sandbox") }
        arguments += extra
        let capabilities: [String: Any] = [
            "capabilities": [
                "alwaysMatch": [
                    "browserName": "chrome",
                    "goog:chromeOptions": ["binary": chromium, "args": arguments],
                    "goog:loggingPrefs": ["browser": "ALL", "performance": "ALL"],
                ]
            ]
        ]
        do {
            let created = try command("POST", "/session", capabilities) as? [String: Any]
            guard let id = created?["sessionId"] as? String else { throw Failure(description: "no session: \(String(describing: created))") }
            session = id
        } catch {
            stop()
            throw error
        }
    }

    /// Ends the session and chromedriver (and with them the browser), removes the profile.
    func stop() {
        if let session { _ = try? command("DELETE", "/session/\(session)") }
        session = nil
        // chromedriver's own way out; SIGKILL if it has not gone within 5 s
        // (it does not always act on SIGTERM, and `waitUntilExit` spins off the main thread).
        if driver.isRunning { _ = try? command("GET", "/shutdown") }
        for _ in 0..<100 where driver.isRunning { Thread.sleep(forTimeInterval: 0.05) }
        if driver.isRunning {
            kill(driver.processIdentifier, SIGKILL)
            for _ in 0..<100 where driver.isRunning { Thread.sleep(forTimeInterval: 0.05) }
        }
        try? FileManager.default.removeItem(at: profile)
    }

    deinit { stop() }

    /// One WebDriver command; its `value`, or the error WebDriver answered.
    @discardableResult
    func command(_ method: String, _ path: String, _ body: [String: Any]? = nil) throws -> Any? {
        let payload = try body.map { try JSONSerialization.data(withJSONObject: $0) } ?? Data()
        var request = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(driverPort)\r\nConnection: close\r\n"
        if body != nil { request += "Content-Type: application/json\r\nContent-Length: \(payload.count)\r\n" }
        request += "\r\n"
        let raw = try RawHTTP.exchange(port: driverPort, Array(request.utf8) + payload, limit: 32 << 20, untilContentLength: true)
        guard let end = raw.firstRange(of: Array("\r\n\r\n".utf8)) else { throw Failure(description: "no answer to \(method) \(path)") }
        let object = try JSONSerialization.jsonObject(with: Data(raw[end.upperBound...]), options: [.fragmentsAllowed]) as? [String: Any]
        let value = object?["value"]
        if let error = value as? [String: Any], let code = error["error"] as? String {
            throw Failure(description: "\(method) \(path): \(code): \(error["message"] ?? "")")
        }
        return value
    }

    private var sessionPath: String { "/session/\(session ?? "none")" }

    func open(_ url: String) throws {
        try command("POST", "\(sessionPath)/url", ["url": url])
    }

    /// Runs `script` (a function body; `arguments` holds `args`) in the page; a
    /// promise it returns is awaited. Its answer must not be an object with an
    /// `error` string: that is how WebDriver answers its own errors (``command(_:_:_:)`` throws).
    @discardableResult
    func execute(_ script: String, _ args: [Any] = []) throws -> Any? {
        try command("POST", "\(sessionPath)/execute/sync", ["script": script, "args": args])
    }

    /// Polls `condition` (a script returning a boolean) until it holds; false after `attempts` tries.
    func wait(for condition: String, _ args: [Any] = [], attempts: Int = 600) throws -> Bool {
        for _ in 0..<attempts {
            if try execute(condition, args) as? Bool == true { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return false
    }

    func screenshot() throws -> Data {
        guard let base64 = try command("GET", "\(sessionPath)/screenshot") as? String, let png = Data(base64Encoded: base64) else {
            throw Failure(description: "no screenshot")
        }
        return png
    }

    /// One Chrome DevTools Protocol command through chromedriver (`Network.getAllCookies`
    /// sees HttpOnly cookies, which neither the page nor WebDriver's cookie list of the page's URL shows).
    func devTools(_ method: String, _ parameters: [String: Any] = [:]) throws -> [String: Any] {
        try command("POST", "\(sessionPath)/goog/cdp/execute", ["cmd": method, "params": parameters]) as? [String: Any] ?? [:]
    }

    /// The entries of a `goog:loggingPrefs` log (`browser`: console and network errors; `performance`: DevTools events).
    func log(_ type: String) throws -> [[String: Any]] {
        try command("POST", "\(sessionPath)/se/log", ["type": type]) as? [[String: Any]] ?? []
    }
}

/// What a page script answered (JSON values are not `Sendable`; this one is
/// made on the blocking thread and read once by the test afterwards).
struct PageAnswer: @unchecked Sendable {
    let object: [String: Any]
}

/// ``offloaded(_:)`` for browser work that answers a JSON object.
func offloadedPage(_ body: @escaping @Sendable () throws -> [String: Any]) async throws -> [String: Any] {
    try await offloaded { PageAnswer(object: try body()) }.object
}
