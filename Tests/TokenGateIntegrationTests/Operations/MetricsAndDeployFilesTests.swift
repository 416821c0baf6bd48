import ArgumentParser
import EntitlementTokens
import Foundation
import HummingbirdTesting
import IntegrationSupport
import Testing

@testable import GateTestSupport
@testable import TokenGate

/// docs/DESIGN.md#operators: what a person running the gate watches and ships —
/// `/metrics` (HELP and TYPE for every series, build info, `process_*`),
/// versions, the sample-key warning, secrets under `$CREDENTIALS_DIRECTORY`,
/// and the files of `deploy/prometheus`, `deploy/grafana` and `deploy/systemd`.
@Suite struct MetricsAndDeployFilesTests {
    static let repository = GateFixtures.repository

    /// A peer tool found on PATH or in /usr/bin, /usr/sbin.
    static func tool(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        return (path.split(separator: ":").map { "\($0)/\(name)" } + ["/usr/bin/\(name)", "/usr/sbin/\(name)"])
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }
    static var required: Bool { ProcessInfo.processInfo.environment["TOKENINSPECT_INTEGRATION"] == "require" }
    static var promtool: String? { tool("promtool") }
    static var systemdAnalyze: String? { tool("systemd-analyze") }

    /// Runs a tool to its end: exit status and its standard output and error together.
    static func run(_ executable: String, _ arguments: [String], stdin: Data? = nil) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = repository
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let input = Pipe()
        process.standardInput = stdin == nil ? FileHandle.nullDevice : input
        try process.run()
        if let stdin {
            input.fileHandleForWriting.write(stdin)
            try input.fileHandleForWriting.close()
        }
        let text = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: text, as: UTF8.self))
    }

    /// What `GET /metrics` answers, after a few requests.
    static func scrape() async throws -> String {
        let runtime = try GateFixtures.runtime()
        return try await runtime.application().test(.router) { client in
            _ = try await client.authRequest("/a?token=\(GateFixtures.token())")
            _ = try await client.authRequest("/a")
            let metrics = try await client.execute(uri: "/metrics", method: .get)
            return String(buffer: metrics.body)
        }
    }

    /// The metric families of an exposition: name → (HELP seen, TYPE), and the family of each sample.
    static func families(_ text: String) -> (declared: [String: (help: Bool, type: String?)], sampled: Set<String>) {
        var declared: [String: (help: Bool, type: String?)] = [:]
        var sampled = Set<String>()
        for line in text.split(separator: "\n") {
            let words = line.split(separator: " ", maxSplits: 3)
            if line.hasPrefix("# HELP "), words.count >= 4 {
                declared[String(words[2]), default: (false, nil)].help = true
            } else if line.hasPrefix("# TYPE "), words.count >= 4 {
                declared[String(words[2]), default: (false, nil)].type = String(words[3])
            } else if !line.hasPrefix("#") {
                let name = String(line.prefix { $0 != "{" && $0 != " " })
                let family =
                    ["_bucket", "_sum", "_count"].first { name.hasSuffix($0) && declared[String(name.dropLast($0.count))]?.type == "histogram" }
                    .map { String(name.dropLast($0.count)) } ?? name
                sampled.insert(family)
            }
        }
        return (declared, sampled)
    }

    static let specSeries = [
        "tokengate_verdicts_total", "tokengate_request_duration_seconds", "tokengate_requests_in_flight",
        "tokengate_replay_store_operations_total", "tokengate_replay_store_duration_seconds", "tokengate_replay_fail_open_total",
        "tokengate_verdict_cache_total", "tokengate_sessions_total", "tokengate_keys_loaded", "tokengate_key_reloads_total",
        "tokengate_connections_open", "tokengate_connections_refused_total", "tokengate_request_timeouts_total",
        "tokengate_build_info", "process_cpu_seconds_total", "process_resident_memory_bytes", "process_virtual_memory_bytes",
        "process_open_fds", "process_max_fds", "process_start_time_seconds",
    ]

    @Test func everySeriesHasHelpAndTypeAndSpecListsThemAll() async throws {
        let text = try await Self.scrape()
        let (declared, sampled) = Self.families(text)
        for family in sampled {
            #expect(declared[family]?.help == true, "\(family) has no # HELP line")
            #expect(declared[family]?.type != nil, "\(family) has no # TYPE line")
        }
        for name in Self.specSeries {
            #expect(sampled.contains(name), "/metrics has no \(name)")
        }
        #expect(declared["process_cpu_seconds_total"]?.type == "counter")
        #expect(declared["tokengate_request_duration_seconds"]?.type == "histogram")
        #expect(text.contains("tokengate_build_info{version=\"\(ProductVersion.version)\",commit=\"\(ProductVersion.commit)\"} 1"))
        let start = try #require(text.split(separator: "\n").first { $0.hasPrefix("process_start_time_seconds ") })
        let seconds = try #require(Double(start.split(separator: " ")[1]))
        #expect(abs(seconds - Date().timeIntervalSince1970) < 86_400 * 30, "process_start_time_seconds \(seconds) is not a recent epoch time")
    }

    @Test(.enabled(if: promtool != nil || required, "promtool is not installed (apt-get install prometheus)"))
    func promtoolChecksTheMetrics() async throws {
        let promtool = try #require(Self.promtool, "promtool is required (TOKENINSPECT_INTEGRATION=require): apt-get install prometheus")
        let text = try await Self.scrape()
        let (status, output) = try Self.run(promtool, ["check", "metrics"], stdin: Data(text.utf8))
        #expect(status == 0, "promtool check metrics: \(output)")
        #expect(!output.contains("no help text"), "\(output)")
    }

    // MARK: deploy/prometheus and deploy/grafana

    /// Every `tokengate_*` and `process_*` name an expression reads, as a family name.
    static func seriesNames(in expression: String, families: Set<String>) -> [String] {
        let pattern = try! NSRegularExpression(pattern: "\\b(?:tokengate|process)_[a-z_]+")
        let range = NSRange(expression.startIndex..., in: expression)
        return pattern.matches(in: expression, range: range).map { match in
            let name = String(expression[Range(match.range, in: expression)!])
            return ["_bucket", "_sum", "_count"].first { name.hasSuffix($0) && families.contains(String(name.dropLast($0.count))) }
                .map { String(name.dropLast($0.count)) } ?? name
        }
    }

    @Test(.enabled(if: promtool != nil || required, "promtool is not installed (apt-get install prometheus)"))
    func alertRulesAndScrapeExampleAreValid() throws {
        let promtool = try #require(Self.promtool, "promtool is required (TOKENINSPECT_INTEGRATION=require): apt-get install prometheus")
        let rules = try Self.run(promtool, ["check", "rules", "deploy/prometheus/tokengate-rules.yml"])
        #expect(rules.status == 0, "\(rules.output)")
        #expect(rules.output.contains("SUCCESS: 8 rules found"), "\(rules.output)")
        let config = try Self.run(promtool, ["check", "config", "deploy/prometheus/prometheus.yml"])
        #expect(config.status == 0, "\(config.output)")
    }

    @Test func alertRulesCoverTheOperatorsListAndReadExportedSeries() async throws {
        let families = Self.families(try await Self.scrape()).sampled
        let rules = try String(contentsOf: Self.repository.appendingPathComponent("deploy/prometheus/tokengate-rules.yml"), encoding: .utf8)
        for alert in [
            "TokengateHighRefusalRate", "TokengateReplayStoreUnavailable", "TokengateReplayFailOpen", "TokengateKeyReloadFailed",
            "TokengateNotReady", "TokengateRequestTimeouts", "TokengateConnectionsRefused",
        ] {
            #expect(rules.contains("alert: \(alert)\n"), "no \(alert) rule")
        }
        let names = Self.seriesNames(in: rules, families: families)
        #expect(names.count >= 8)
        for name in names { #expect(families.contains(name), "a rule reads \(name), which the gate does not export") }
    }

    @Test func dashboardIsJSONAndEveryExpressionReadsExportedSeries() async throws {
        let families = Self.families(try await Self.scrape()).sampled
        let data = try Data(contentsOf: Self.repository.appendingPathComponent("deploy/grafana/tokengate-dashboard.json"))
        let dashboard = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let panels = try #require(dashboard["panels"] as? [[String: Any]])
        let expressions = panels.flatMap { ($0["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String } }
        #expect(expressions.count >= 13)
        var read = Set<String>()
        for expression in expressions {
            let names = Self.seriesNames(in: expression, families: families)
            #expect(!names.isEmpty, "\(expression) reads no series of the gate")
            for name in names { #expect(families.contains(name), "the dashboard reads \(name), which the gate does not export") }
            read.formUnion(names)
        }
        for name in Self.specSeries where !name.hasPrefix("process_virtual") && name != "process_start_time_seconds" {
            #expect(read.contains(name), "the dashboard shows no \(name)")
        }
    }

    // MARK: deploy/systemd

    /// `systemd-analyze security` levels, by the upper bound of their exposure (systemd's `security_levels`).
    static let okThreshold = 5.0

    @Test(.enabled(if: systemdAnalyze != nil || required, "systemd-analyze is not installed (apt-get install systemd)"))
    func unitScoresOKOrBetter() throws {
        let analyze = try #require(Self.systemdAnalyze, "systemd-analyze is required (TOKENINSPECT_INTEGRATION=require): apt-get install systemd")
        let (_, output) = try Self.run(analyze, ["security", "--offline=yes", "--no-pager", "deploy/systemd/tokengate.service"])
        let line = try #require(
            output.split(separator: "\n").first { $0.contains("Overall exposure level for tokengate.service:") },
            "\(output)"
        )
        let words = line.split(separator: ":").last!.split(separator: " ")
        let exposure = try #require(Double(words[0]), "\(line)")
        #expect(exposure < Self.okThreshold, "\(line)")
        #expect(["PERFECT", "SAFE", "OK"].contains(String(words[1])), "\(line)")
    }

    @Test func unitRunsAsThePackagesUserWithCredentials() throws {
        let unit = try String(contentsOf: Self.repository.appendingPathComponent("deploy/systemd/tokengate.service"), encoding: .utf8)
        let settings = unit.split(separator: "\n").filter { !$0.hasPrefix("#") }
        #expect(settings.contains("User=tokengate"))
        #expect(!settings.contains { $0.hasPrefix("DynamicUser=") })
        #expect(settings.contains("LoadCredential=session.key:/etc/tokengate/session.key"))
        let config = try String(contentsOf: Self.repository.appendingPathComponent("deploy/tokengate.conf"), encoding: .utf8)
        // The shipped config names the credential relatively: the gate reads it under $CREDENTIALS_DIRECTORY.
        #expect(config.contains("\nsession-secret = session.key\n"))
        #expect(!config.contains(":PASSWORD@"), "the shipped config shows the password-file form")
    }

    // MARK: secrets under $CREDENTIALS_DIRECTORY

    @Test func relativeSessionSecretsResolveUnderTheCredentialsDirectory() throws {
        let options = try GateFixtures.options(GateFixtures.baseArguments + ["--session-secret", "session.key", "--session-secret", "/etc/old.key"])
        let systemd = try GateConfiguration(options, credentialsDirectory: "/run/credentials/tokengate.service")
        #expect(systemd.sessionSecretPaths == ["/run/credentials/tokengate.service/session.key", "/etc/old.key"])
        let plain = try GateConfiguration(options, credentialsDirectory: nil)
        #expect(plain.sessionSecretPaths == ["session.key", "/etc/old.key"])
    }

    @Test func aGateUnderSystemdReadsItsSessionSecretFromTheCredentials() async throws {
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = GateFixtures.sessionSecret(in: directory, name: "session.key")
        let options = try GateFixtures.options(GateFixtures.baseArguments + ["--session-secret", "session.key"])
        let configuration = try GateConfiguration(options, credentialsDirectory: directory.path)
        _ = try GateRuntime(configuration: configuration, logger: LogCapture().logger, clock: { GateFixtures.at(60_000) })
    }

    // MARK: sample keys

    @Test func sampleKeyFingerprintsMatchTheSampleFiles() throws {
        let keys = Self.repository.appendingPathComponent("Samples/keys")
        let files = try FileManager.default.subpathsOfDirectory(atPath: keys.path).filter { $0.hasSuffix(".pem") }
        var seen = Set<String>()
        for file in files where file.contains(".pub.") || file.contains("-cert") {
            let ring = try KeyRing.load(
                paths: [keys.appendingPathComponent(file).path],
                options: KeyLoadingOptions(allowsInsecureKeySizes: true)
            )
            for key in ring.keys {
                #expect(SampleKeys.name(of: key) != nil, "\(file) (SHA-256 \(key.sha256Fingerprint)) is not in SampleKeys")
                seen.insert(key.sha256Fingerprint)
            }
        }
        // Each private sample key's public half: by openssl, where it is installed (scripts/test installs it).
        if let openssl = Self.tool("openssl") {
            let directory = GateFixtures.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            for file in files where !file.contains(".pub.") && !file.contains("-cert") {
                let out = directory.appendingPathComponent("public.der").path
                let result = try Self.run(openssl, ["pkey", "-in", "Samples/keys/\(file)", "-pubout", "-outform", "DER", "-out", out])
                #expect(result.status == 0, "\(result.output)")
                let der = try Data(contentsOf: URL(fileURLWithPath: out))
                let fingerprint = Digest.sha256(der).bytes.map { String(format: "%02x", $0) }.joined()
                #expect(SampleKeys.fingerprints[fingerprint] == String(file.dropLast(4)), "\(file): SHA-256 \(fingerprint)")
                seen.insert(fingerprint)
            }
            #expect(seen == Set(SampleKeys.fingerprints.keys), "a SampleKeys entry matches no file")
        }
        #expect(seen.count >= 5)
        // Every constant names a sample file.
        for name in SampleKeys.fingerprints.values {
            #expect(files.contains("\(name).pem"), "SampleKeys names \(name), which is not in Samples/keys")
        }
    }

    @Test func readinessSaysWhenASampleKeyIsTrustedAndStaysReady() async throws {
        let logs = LogCapture()
        let runtime = try GateFixtures.runtime(logs: logs)
        try await runtime.application().test(.router) { client in
            let ready = try await client.execute(uri: "/readyz", method: .get)
            #expect(ready.status == .ok)
            let body = String(buffer: ready.body)
            #expect(body.hasPrefix("{\"ready\":true,\"warning\":\"trusting a sample key of the tokeninspect repository: test-rsa2048 ("))
        }
        #expect(Readiness.sampleKeyWarning([]) == nil)
    }

    /// A CDN profile or a `--cat-key` holding a key of `Samples/cdn` is
    /// warned of as a trusted sample key is: its secret is published.
    @Test func readinessSaysWhenACDNOrCATKeyIsASampleKey() async throws {
        let directory = GateFixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let samples = GateFixtures.repository.appendingPathComponent("Samples/cdn")
        let profile = directory.appendingPathComponent("akamai.profile")
        try """
        name = edge
        kind = akamai
        key = \(samples.appendingPathComponent("test-only-akamai.hex").path)
        resource = TNT https://akamai.example.test/hls/tnt/master.m3u8
        """.write(to: profile, atomically: true, encoding: .utf8)
        let cat = samples.appendingPathComponent("test-only-cat-hmac.hex").path
        let runtime = try GateFixtures.runtime(["--cdn-profile", profile.path, "--cat-key", "\(cat) edge-1"])
        let warning = try #require(runtime.readiness.sampleKeyWarning)
        #expect(warning.contains("A CDN key is a sample key of the tokeninspect repository: "))
        #expect(warning.contains("test-only-akamai (\(samples.appendingPathComponent("test-only-akamai.hex").path))"))
        #expect(warning.contains("test-only-cat-hmac (\(cat))"))
        try await runtime.application().test(.router) { client in
            let ready = try await client.execute(uri: "/readyz", method: .get)
            #expect(ready.status == .ok)
            #expect(String(buffer: ready.body).contains("test-only-cat-hmac"))
        }
        // Keys of the tests' own fixtures are no sample keys: only the trusted sample key is named.
        let own = try GateFixtures.runtime(["--cat-key", "\(CATGateFixtures.hmacPath) edge-1"])
        #expect(own.readiness.sampleKeyWarning?.contains("CDN") == false)
    }

    // MARK: versions and the man page

    @Test func versionIsTheOneOfTheSource() throws {
        #expect(TokenGateCommand.configuration.version == ProductVersion.version)
        #expect(Serve.configuration.version == ProductVersion.version)
        #expect(ProductVersion.version.split(separator: ".").count == 3)
    }

    @Test(.enabled(if: ExecutableTests.binary != nil, "the tokengate executable is not built"))
    func startUpLineCarriesTheVersionAndWarnsOfSampleKeys() async throws {
        let gate = try GateProcess([])
        defer { gate.stop() }
        try await Task.sleep(for: .milliseconds(200))
        let log = gate.log
        #expect(log.contains("\"message\":\"serving\""))
        #expect(log.contains("\"version\":\"\(ProductVersion.version)\""))
        #expect(log.contains("\"level\":\"warning\",\"message\":\"trusting a sample key of the tokeninspect repository"))
    }

    /// `docs/man/tokengate.1` says what `--help` says for every command,
    /// option by option (value name, allowed values, default), and lists the
    /// exit-status table; `ManPageTests` (TokenInspectTests) checks that both
    /// pages are what `scripts/man-pages` writes (docs/man/README.md).
    @Test func manPageSaysWhatHelpSays() throws {
        let page = try String(contentsOf: Self.repository.appendingPathComponent("docs/man/tokengate.1"), encoding: .utf8)
        let comparison = ManPageComparison(binaryName: "tokengate", page: page) { arguments in
            var command: any ParsableCommand.Type = TokenGateCommand.self
            for name in arguments.dropLast() {
                command = try #require(command.configuration.subcommands.first { $0._commandName == name }, "no subcommand \(name)")
            }
            return TokenGateCommand.helpMessage(for: command, columns: 100)
        }
        let commands = try comparison.commands().map { $0.joined(separator: " ") }
        for expected in ["", "serve", "debugger"] { #expect(commands.contains(expected), "\(commands)") }
        for problem in try comparison.problems() {
            Issue.record("docs/man/tokengate.1: \(problem) (regenerate it: scripts/man-pages)")
        }
    }

    /// Every status the command exits with is in the table `--help` and the man page print.
    @Test func everyExitCodeTheGateUsesIsInTheTable() throws {
        let table = GateExitStatus.table.rows.map(\.code)
        #expect(TokenGateCommand.configuration.discussion.hasSuffix(GateExitStatus.table.helpText))
        let sources = Self.repository.appendingPathComponent("Sources/TokenGate/Command")
        var used: Set<Int32> = [0, 64]  // a clean return, and ArgumentParser's usage error
        for file in try FileManager.default.contentsOfDirectory(atPath: sources.path) where file.hasSuffix(".swift") {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for match in text.matches(of: /ExitCode\((\d+)\)/) { used.insert(Int32(match.1)!) }
        }
        #expect(used.contains(2))
        for code in used { #expect(table.contains(code), "tokengate exits \(code), which GateExitStatus does not name") }
    }
}
