internal import COpenSSL

/// Access to OpenSSL's per-thread error queue.
///
/// OpenSSL reports *why* through a thread-local queue rather than the return
/// value. Every failing call leaves entries behind, and stale entries would
/// later be blamed on an unrelated call on the same thread, so each failure
/// path here either drains the queue into a message or clears it.
enum OpenSSLErrorQueue {
    /// Removes every queued error and returns their reasons, most specific
    /// last, joined with "; " (e.g. "bad base64 decode"), or `fallback` when
    /// the queue was empty.
    static func drain(fallback: String = "unknown OpenSSL error") -> String {
        var reasons: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            if let reason = ERR_reason_error_string(code) {
                let text = String(cString: reason)
                if reasons.last != text { reasons.append(text) }
            } else {
                reasons.append("error 0x\(String(code, radix: 16))")
            }
        }
        return reasons.isEmpty ? fallback : reasons.joined(separator: "; ")
    }

    /// Drops every queued error. Cheap when the queue is empty.
    static func clear() {
        ERR_clear_error()
    }

    /// The reason code of the newest queued error, without removing it.
    static var lastReason: Int32 {
        ERR_GET_REASON(ERR_peek_last_error())
    }
}
