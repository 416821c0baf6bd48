/// Whether a listen address is reachable from this machine only.
///
/// The debugger verifies whatever is pasted and lets its caller choose the
/// requestor, MVPDs and "now": an oracle for anyone who can reach it. It is
/// meant for a support engineer's laptop, so it answers on loopback unless
/// the operator opens the labelled door.
enum LoopbackAddress {
    /// `localhost`, 127.0.0.0/8 written as four decimal numbers, `::1`.
    static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" || host == "::1" || host == "0:0:0:0:0:0:0:1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "127" else { return false }
        return parts.allSatisfy { part in
            !part.isEmpty && part.count <= 3 && part.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
                && Int(part)! <= 255
        }
    }
}
