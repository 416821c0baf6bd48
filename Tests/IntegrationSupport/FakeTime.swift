import Foundation

extension Integration {
    /// libfaketime (Debian's `faketime`), preloaded into a server to skew its
    /// wall clock: the multi-threaded build, since the gate and Redis run threads.
    public static let fakeTimeLibrary: String? = {
        let candidates = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib"].map { $0 + "/faketime/libfaketimeMT.so.1" }
        return candidates.first { FileManager.default.fileExists(atPath: $0) }
    }()

    /// For `.enabled(if: Integration.fakeTime, "faketime not installed")`.
    public static var fakeTime: Bool { fakeTimeLibrary != nil || required }

    /// The environment that runs a process with its wall clock `seconds` off
    /// (negative: behind). Only the wall clock: the monotonic one, which
    /// timers and deadlines read, stays true, as it does on a machine whose
    /// NTP is wrong.
    public static func skewedClock(by seconds: Int) throws -> [String: String] {
        guard let library = fakeTimeLibrary else {
            throw RedisServerError(description: "faketime not installed (apt-get install faketime), and TOKENINSPECT_INTEGRATION=require")
        }
        var environment = ProcessInfo.processInfo.environment
        environment["LD_PRELOAD"] = library
        environment["FAKETIME"] = seconds >= 0 ? "+\(seconds)s" : "\(seconds)s"
        environment["FAKETIME_DONT_FAKE_MONOTONIC"] = "1"
        return environment
    }
}
