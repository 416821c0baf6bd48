import Foundation
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// `tokengate debugger` and `serve --debugger` as a support engineer runs them.
@Suite(.serialized) struct DebuggerExecutableTests {
    @Test func helpSaysHowToStartItAndWhatItKeepsSafe() {
        let help = Debugger.helpMessage(columns: 200)
        for text in [
            "--key", "--listen", "127.0.0.1:8090", "--insecure-listen-anywhere", "open the address it prints",
            "never records a media token as used", "stores nothing", "docs/DEBUGGER.md",
        ] {
            #expect(help.contains(text), "debugger --help lacks \(text)")
        }
        #expect(Serve.helpMessage(columns: 200).contains("--debugger"))
        #expect(TokenGateCommand.helpMessage(columns: 200).contains("tokengate debugger --key PATH"))
    }

    /// Runs the executable with `arguments`, its stdout to a file; the caller stops it.
    func start(_ arguments: [String]) throws -> (Process, URL) {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("tokengate-debugger-\(UUID().uuidString).out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)  // opened next, which throws if it is not there
        let process = Process()
        process.executableURL = ExecutableTests.binary
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = FileHandle.nullDevice
        try process.run()
        return (process, output)
    }

    @Test(.enabled(if: ExecutableTests.binary != nil, "the tokengate executable is not built"))
    func printsTheAddressToOpenAndServesThePage() async throws {
        let (process, output) = try start(["debugger", "--key", GateFixtures.publicKey, "--listen", "127.0.0.1:0"])
        defer {
            if process.isRunning { process.terminate() }
            try? FileManager.default.removeItem(at: output)
        }
        var address: String?
        for _ in 0..<400 where address == nil {
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            address = text.firstMatch(of: /tokengate debugger: open (http:\/\/127\.0\.0\.1:[0-9]+\/debugger)  \(1 key loaded\)/).map { String($0.1) }
            if address == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        let url = try #require(address, "no address printed")
        let port = try #require(Int(url.split(separator: ":")[2].prefix { $0.isNumber }))
        let page = try await RawHTTP.fetch(port: port, "/debugger")
        #expect(page.status == 200)
        #expect(page["Content-Security-Policy"]?.hasPrefix(DebuggerFixtures.strictCSP) == true)
        #expect(page.body.contains("tokengate debugger"))
        process.terminate()
        try await offloaded { process.waitUntilExit() }
        #expect(process.terminationReason == .exit)
    }

    @Test(
        .enabled(if: ExecutableTests.binary != nil, "the tokengate executable is not built"),
        arguments: [
            ["debugger", "--key", GateFixtures.publicKey, "--listen", "0.0.0.0:0"],
            [
                "serve", "--key", GateFixtures.publicKey, "--requestor", "TNT", "--resource", "TNT", "--debugger",
                "--listen", "0.0.0.0:0",
            ],
        ]
    )
    func refusesANonLoopbackAddress(arguments: [String]) async throws {
        let (status, text) = try await ExecutableTests.run(arguments)
        #expect(status == 64)
        #expect(text.contains("loopback"), "\(text)")
    }
}
