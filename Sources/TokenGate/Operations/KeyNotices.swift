import EntitlementTokens
import Logging

/// What key loading skipped in a key folder, said at start and after every
/// reload (docs/DEPLOY.md, "Keys"): one log line per file, naming it and why,
/// and `tokengate_key_files_skipped`, the count of files in the key folders
/// that are not trusted. A skipped file is no failure (a README or the private
/// half beside its public key is expected there); a file that looks like a key
/// and cannot be read is, and fails the load.
enum KeyNotices {
    /// Logs each notice of `ring` and records the gauge.
    static func report(_ ring: KeyRing, logger: Logger, metrics: GateMetrics) {
        var skipped = 0
        for notice in ring.notices {
            let metadata: Logger.Metadata = ["file": .string(notice.source), "why": .string(notice.message)]
            switch notice.code {
            case .privateKeySkipped:
                skipped += 1
                logger.warning("private key in the trust folder: skipped, move it out", metadata: metadata)
            case .holdsNoKey, .notARegularFile:
                skipped += 1
                logger.warning("key folder: file skipped", metadata: metadata)
            case .subdirectoryNotEntered:
                skipped += 1
                logger.notice("key folder: subdirectory not entered", metadata: metadata)
            case .certificateExpired, .certificateNotYetValid:
                logger.warning("key from a certificate outside its validity: still trusted", metadata: metadata)
            }
        }
        metrics.keyFilesSkipped.record(skipped)
    }
}
