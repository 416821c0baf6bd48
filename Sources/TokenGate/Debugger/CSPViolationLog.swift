import EntitlementTokens
import Synchronization

/// The Content-Security-Policy violations browsers reported to the debugger:
/// the last ``maximumReports``, each cut to ``maximumReportBytes``, and how
/// many came in all. A page that builds its DOM from text alone causes none;
/// the browser tests read this list to prove it.
final class CSPViolationLog: Sendable {
    static let maximumReports = 32
    static let maximumReportBytes = 8 * 1024

    private struct State {
        var reports: [String] = []
        var total = 0
    }
    private let state = Mutex(State())

    func record(_ report: String) {
        let kept =
            report.utf8.count <= Self.maximumReportBytes
            ? report
            : String(decoding: report.utf8.prefix(Self.maximumReportBytes), as: UTF8.self)
        state.withLock { state in
            state.total += 1
            if state.reports.count == Self.maximumReports { state.reports.removeFirst() }
            state.reports.append(kept)
        }
    }

    var total: Int { state.withLock { $0.total } }

    /// `{"total": N, "reports": ["…as received…", …]}`: each report as a JSON
    /// string (a browser's body is not trusted to be JSON).
    func json() -> [UInt8] {
        let (total, reports) = state.withLock { ($0.total, $0.reports) }
        var json = JSONWriter(capacity: 256 + reports.reduce(0) { $0 + $1.utf8.count }, controlEscapes: .unicode)
        json.beginObject()
        json.member("total")
        json.int(total)
        json.member("reports")
        json.beginArray()
        for report in reports {
            json.element()
            json.string(report)
        }
        json.endArray()
        json.endObject()
        json.raw("\n")
        return json.bytes
    }
}
