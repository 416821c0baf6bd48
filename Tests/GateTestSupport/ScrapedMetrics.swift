import Foundation
import TokenGate

/// One `/metrics` exposition as the tests read it (Prometheus' text format:
/// a line `name{labels} value` per sample), whether rendered in process or
/// fetched from a running gate.
struct ScrapedMetrics {
    let text: String

    init(_ text: String) {
        self.text = text
    }

    /// What an in-process gate would answer to `GET /metrics` now.
    init(_ runtime: GateRuntime) {
        text = String(decoding: runtime.metrics.render(), as: UTF8.self)
    }

    /// What the gate listening on `port` answers; nil when it does not answer.
    init?(port: Int) {
        guard let body = try? RawHTTP.get(port: port, "/metrics").body else { return nil }
        text = body
    }

    /// The value of the sample `series`, its name with its labels exactly as
    /// written; nil when there is none.
    subscript(series: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }

    /// The sum of every sample whose line starts with `prefix` (every label
    /// set of a name, or those sharing the first labels); 0 when none.
    func sum(prefix: String) -> Double {
        text.split(separator: "\n").filter { $0.hasPrefix(prefix) }
            .compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }.reduce(0, +)
    }
}
