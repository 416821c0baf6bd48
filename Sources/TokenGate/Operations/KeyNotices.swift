import EntitlementTokens
import Logging

/// What key loading skipped in a key folder, said at start and after every
/// reload (docs/DEPLOY.md, "Keys"): one log line per file, naming it and why,
/// and `tokengate_key_files_skipped`, the count of files in the key folders
/// that are not trusted. A skipped file is no failure (a README or the private
/// half beside its public key is expected there); a file that looks like a key
/// and cannot be read is, and fails the load.
enum KeyNotices {
    /// How a notice is said: the log line's level and message, which
    /// `tokengate check` repeats word for word, and whether the file counts as skipped.
    struct Headline: Equatable {
        var level: Logger.Level
        var message: String
        var skipped: Bool
    }

    static func headline(_ code: KeyLoadNotice.Code) -> Headline {
        switch code {
        case .privateKeySkipped: Headline(level: .warning, message: "private key in the trust folder: skipped, move it out", skipped: true)
        case .holdsNoKey, .notARegularFile: Headline(level: .warning, message: "key folder: file skipped", skipped: true)
        case .subdirectoryNotEntered: Headline(level: .notice, message: "key folder: subdirectory not entered", skipped: true)
        case .certificateExpired, .certificateNotYetValid:
            Headline(level: .warning, message: "key from a certificate outside its validity: still trusted", skipped: false)
        }
    }

    /// Logs each notice of `ring` and records the gauge.
    static func report(_ ring: KeyRing, logger: Logger, metrics: GateMetrics) {
        var skipped = 0
        for notice in ring.notices {
            let headline = headline(notice.code)
            if headline.skipped { skipped += 1 }
            logger.log(level: headline.level, "\(headline.message)", metadata: ["file": .string(notice.source), "why": .string(notice.message)])
        }
        metrics.keyFilesSkipped.record(skipped)
    }
}
