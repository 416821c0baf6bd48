import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The standard `process_*` series every Prometheus client exports (names,
/// types and help as the Go and Python clients write them), read from
/// `/proc/self` at each scrape: nothing runs between scrapes. On a system
/// without `/proc` (macOS) there are none.
struct ProcessMetrics {
    var cpuSeconds: Double
    var residentBytes: Double
    var virtualBytes: Double
    var openFileDescriptors: Double?
    var maximumFileDescriptors: Double?
    var startTimeSeconds: Double?

    static let help: [String: String] = [
        "process_cpu_seconds_total": "Total user and system CPU time spent in seconds.",
        "process_resident_memory_bytes": "Resident memory size in bytes.",
        "process_virtual_memory_bytes": "Virtual memory size in bytes.",
        "process_open_fds": "Number of open file descriptors.",
        "process_max_fds": "Maximum number of open file descriptors.",
        "process_start_time_seconds": "Start time of the process since unix epoch in seconds.",
    ]

    /// nil where `/proc/self/stat` cannot be read.
    static func read() -> ProcessMetrics? {
        #if os(Linux)
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let fields = statFields(stat)
        else { return nil }
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let pageSize = Double(sysconf(Int32(_SC_PAGESIZE)))
        // Counted from field 3 (state): utime 14, stime 15, starttime 22, vsize 23, rss 24 of proc(5).
        func field(_ number: Int) -> Double { Double(fields[number - 3]) ?? 0 }
        var metrics = ProcessMetrics(
            cpuSeconds: (field(14) + field(15)) / ticks,
            residentBytes: field(24) * pageSize,
            virtualBytes: field(23)
        )
        if let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") {
            metrics.openFileDescriptors = Double(entries.count)
        }
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 { metrics.maximumFileDescriptors = Double(limit.rlim_cur) }
        if let boot = bootTime() { metrics.startTimeSeconds = boot + field(22) / ticks }
        return metrics
        #else
        return nil
        #endif
    }

    /// The fields of `/proc/self/stat` after the command name, which is in
    /// parentheses and may itself hold spaces and parentheses.
    static func statFields(_ stat: String) -> [Substring]? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        return fields.count >= 22 ? fields : nil
    }

    /// The system's boot time (`btime` of `/proc/stat`), in seconds since the epoch.
    static func bootTime() -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8) else { return nil }
        return stat.split(separator: "\n").first { $0.hasPrefix("btime ") }.flatMap { Double($0.dropFirst(6)) }
    }

    func emit(into buffer: inout [UInt8]) {
        func series(_ name: String, _ type: String, _ value: Double?) {
            guard let value else { return }
            buffer.append(contentsOf: "# HELP \(name) \(Self.help[name]!)\n# TYPE \(name) \(type)\n\(name) \(value)\n".utf8)
        }
        series("process_cpu_seconds_total", "counter", cpuSeconds)
        series("process_resident_memory_bytes", "gauge", residentBytes)
        series("process_virtual_memory_bytes", "gauge", virtualBytes)
        series("process_open_fds", "gauge", openFileDescriptors)
        series("process_max_fds", "gauge", maximumFileDescriptors)
        series("process_start_time_seconds", "gauge", startTimeSeconds)
    }
}
