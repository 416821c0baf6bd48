import Foundation
import Testing

/// docs/DESIGN.md#exit-codes: usage errors and `--now`, through the binary.
@Suite struct UsageAndClockTests {
    static let token = "@Samples/tokens/valid.txt"

    @Test func anEmptyArgumentIsNothingToWorkOn() throws {
        let run = try CLI.run(["verify"] + CLI.sampleFlags + [""])
        #expect(run.status == 2)
        #expect(run.stderr.contains("argument 1 is empty"))
        #expect(try CLI.run(["inspect", "  \n"]).status == 2)
        // An empty argument among good ones still makes the run unusable as a whole.
        #expect(try CLI.run(["verify"] + CLI.sampleFlags + [Self.token, ""]).status == 2)
    }

    @Test func aBareAtSignIsAUsageError() throws {
        let run = try CLI.run(["verify"] + CLI.sampleFlags + ["@"])
        #expect(run.status == 64)
        #expect(run.stderr.contains("'@' names no file"))
        #expect(try CLI.run(["inspect", "@"]).status == 64)
    }

    @Test func aMistypedOptionGetsDidYouMeanBeforeTheMissingKey() throws {
        let run = try CLI.run(["verify", "--kye", "Samples/keys/trusted", Self.token])
        #expect(run.status == 64)
        #expect(run.stderr.contains("Unknown option '--kye'"))
        #expect(run.stderr.contains("Did you mean '--key'?"))
        // Without a typo the missing key is still a usage error, with verify's usage line.
        let missing = try CLI.run(["verify", Self.token])
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("verify needs at least one --key"))
        #expect(missing.stderr.contains("Usage: tokeninspect verify"))
        #expect(try CLI.run(["verify", "--key", "Samples/keys/trusted", "--insecure-skip-signature", Self.token]).status == 64)
    }

    @Test(arguments: [["--leeway", "-5"], ["--jobs", "-1"], ["--jobs", "0"]])
    func aNegativeNumberGetsTheRangeMessage(arguments: [String]) throws {
        let run = try CLI.run(["verify"] + CLI.sampleFlags + arguments + [Self.token])
        #expect(run.status == 64)
        #expect(run.stderr.contains("must be between"), "\(run.stderr)")
        #expect(!run.stderr.contains("Missing value"))
    }

    /// `--now $(date +%s)` is seconds; 13 digits are milliseconds; the run says which.
    @Test(arguments: [("1768478580", "epoch seconds"), ("1768478580000", "epoch milliseconds")])
    func nowIsReadByMagnitude(now: String, unit: String) throws {
        var flags = CLI.sampleFlags
        let index = try #require(flags.firstIndex(of: "--now"))
        flags[index + 1] = now
        let run = try CLI.run(["verify"] + flags + [Self.token])
        #expect(run.status == 0, "\(run.stdout)")
        #expect(run.stderr.contains("now: 2026-01-15T12:03:00Z (--now \(now) read as \(unit))"), "\(run.stderr)")
        #expect(run.stdout.contains("17 tokens: 17 VALID_TOKEN"))
    }

    @Test func nowBoundaries() throws {
        // 11 digits: still seconds (the year 5138); 12 digits: milliseconds (1973).
        let seconds = try CLI.run(["inspect", "--now", "99999999999", Self.token])
        #expect(seconds.stderr.contains("now: 5138-11-16T09:46:39Z (--now 99999999999 read as epoch seconds)"), "\(seconds.stderr)")
        let millis = try CLI.run(["inspect", "--now", "100000000000", Self.token])
        #expect(millis.stderr.contains("now: 1973-03-03T09:46:40Z (--now 100000000000 read as epoch milliseconds)"), "\(millis.stderr)")
        // An ISO time needs no note.
        let iso = try CLI.run(["inspect", "--now", "2026-01-15T12:03:00Z", Self.token])
        #expect(!iso.stderr.contains("read as"))
        #expect(try CLI.run(["inspect", "--now", "999999999999999999", Self.token]).status == 64)
    }
}
