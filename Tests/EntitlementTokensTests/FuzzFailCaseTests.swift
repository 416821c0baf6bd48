import EntitlementTokens
import Foundation
import Testing
import TokenTestSupport

/// Every input a fuzzer ever found a bug with (`Fuzz/FailCases/<Target>/`) and
/// every seed (`Fuzz/Seeds/<Target>/`), replayed through that target's own
/// oracle — the same code the libFuzzer binaries run, from the
/// `TokenTestSupport` product — so each finding stays a unit test after its
/// fix. An oracle traps on a bug (libFuzzer needs the trap), so each target's
/// inputs run in an exit test: a child process whose standard error — which
/// input, and the oracle's disagreement — goes to a log the test shows when
/// the child fails.
/// `Fuzz/run --regressions` replays the same files through the real fuzz
/// binaries, under AddressSanitizer.
@Suite("Fuzz fail cases")
struct FuzzFailCaseTests {
    @Test("Fuzz/FailCases and Fuzz/Seeds hold one folder per fuzz target, and nothing else")
    func inputsAreFiledByTarget() throws {
        for folder in ["FailCases", "Seeds"] {
            let directory = FailCaseReplay.fuzzDirectory + "/" + folder
            for entry in try FileManager.default.contentsOfDirectory(atPath: directory) where !entry.hasPrefix(".") && !entry.hasSuffix(".md") {
                #expect(FailCaseReplay.targets.contains(entry), "Fuzz/\(folder)/\(entry) is not a fuzz target")
            }
        }
        #expect(FailCaseReplay.inputs(of: "FuzzDecode").count > 10)
    }

    @Test("replays its seeds and findings through its oracle", arguments: FailCaseReplay.targets)
    func replay(_ target: String) async {
        await #expect(processExitsWith: .success) { [target] in FailCaseReplay.run(target) }
        FailCaseReplay.reportFailure(of: target)
    }

    @Test("an oracle that finds a bug fails its exit test (the replay can fail)")
    func aTrappingOracleFails() async {
        // An error located past the input's end is a bug the decode oracle
        // reports; its trap must fail the exit test, or no replay could fail.
        await #expect(processExitsWith: .failure) {
            let error = TokenError(.malformedXML, stage: .parsing, "synthetic", at: EntitlementTokens.SourceLocation(byteOffset: 99))
            DecodeOracle.checkError(error, inputCount: 10)
        }
    }
}

/// The replay, run inside each exit test's child process.
enum FailCaseReplay {
    static let targets = [
        "FuzzDecode", "FuzzVerify", "FuzzStream", "FuzzDates", "FuzzJSON", "FuzzRESP", "FuzzTopology", "FuzzJWS", "FuzzMetadata",
        "FuzzEdgeAuth", "FuzzCloudFront", "FuzzCAT", "FuzzSecureLink", "FuzzRequestPath", "FuzzHLS", "FuzzDASH", "FuzzHAR",
    ]
    static let fuzzDirectory: String = {
        var path = #filePath
        for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
        return path + "/Fuzz"
    }()

    /// The files under Fuzz/FailCases/TARGET and Fuzz/Seeds/TARGET, sorted.
    static func inputs(of target: String) -> [String] {
        ["FailCases", "Seeds"].flatMap { folder -> [String] in
            let directory = "\(fuzzDirectory)/\(folder)/\(target)"
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            return names.sorted().filter { !$0.hasPrefix(".") && !$0.hasSuffix(".md") }.map { "\(directory)/\($0)" }
        }
    }

    static func run(_ target: String) {
        let log = open(logPath(target, testProcess: getppid()), O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard log >= 0, dup2(log, STDERR_FILENO) >= 0 else { fatalError("cannot open the replay log") }
        let paths = inputs(of: target)
        guard !paths.isEmpty else { fatalError("no inputs for \(target)") }
        let check: ([UInt8]) -> Void
        switch target {
        case "FuzzDecode": check = DecodeOracle().check
        case "FuzzVerify": check = VerifyOracle(keyDirectory: fuzzDirectory + "/../Samples/keys/trusted").check
        case "FuzzStream": check = StreamOracle().check
        case "FuzzDates": check = DateOracle.check
        case "FuzzJSON": check = JSONOracle().check
        case "FuzzRESP": check = RESPOracle.check
        case "FuzzTopology": check = TopologyOracle.check
        case "FuzzJWS": check = JWSOracle(keyDirectory: fuzzDirectory + "/../Samples/keys/trusted").check
        case "FuzzMetadata": check = MetadataOracle(keyPath: fuzzDirectory + "/../Samples/keys/test-rsa2048.pem").check
        case "FuzzEdgeAuth": check = CDNAkamaiOracle().check
        case "FuzzCloudFront": check = CDNCloudFrontOracle(keyPath: fuzzDirectory + "/../Samples/keys/test-rsa2048.pem").check
        case "FuzzCAT": check = CDNCATOracle().check
        case "FuzzSecureLink": check = CDNSecureLinkOracle().check
        case "FuzzRequestPath": check = RequestPathOracle().check
        case "FuzzHLS": check = ManifestOracle().check
        case "FuzzDASH": check = DASHManifestOracle().check
        case "FuzzHAR": check = HAROracle().check
        default: fatalError("unknown target \(target)")
        }
        for path in paths {
            guard let data = FileManager.default.contents(atPath: path) else { fatalError("cannot read \(path)") }
            FileHandle.standardError.write(Data("replaying \(path)\n".utf8))
            check(Array(data))
        }
        FileHandle.standardError.write(Data("\(paths.count) inputs, all replayed\n".utf8))
    }

    /// Where the child for `target` writes its standard error: named by the
    /// test process's pid, which is the child's parent.
    static func logPath(_ target: String, testProcess: Int32) -> String {
        "\(NSTemporaryDirectory())/tokeninspect-failcases-\(testProcess)-\(target).log"
    }

    /// Shows the child's log when it never got to "all replayed".
    static func reportFailure(of target: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) {
        let path = logPath(target, testProcess: getpid())
        defer { try? FileManager.default.removeItem(atPath: path) }
        guard let data = FileManager.default.contents(atPath: path) else {
            Issue.record("the replay of \(target) left no log at \(path)", sourceLocation: sourceLocation)
            return
        }
        let text = String(decoding: data, as: UTF8.self)
        if !text.contains(", all replayed\n") {
            Issue.record("the oracle failed:\n\(text.suffix(4000))", sourceLocation: sourceLocation)
        }
    }
}
