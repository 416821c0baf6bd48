import CDNTokens
import EntitlementTokens

/// CDN tokens read back from a paste, for `POST /v1/inspect` and the debugger
/// (docs/DESIGN.md#reading-cdn-tokens-back): the library's reader and report, the
/// ones `tokeninspect` uses, so an answer carries the very object `--format json` prints.
///
/// A paste is verified against the gate's own `--cdn-profile`s of its kind, as
/// `tokeninspect --profile` would: that is the question a support engineer has about a
/// token this gate's exchange issued ("why did the edge refuse it?"). Without a profile
/// of its kind it is decoded, not judged. A report names the profile, never a key.
struct CDNPasteInspection: Sendable {
    /// The gate's profiles (empty: decode only); a reload replaces them as a whole.
    let profiles: @Sendable () -> CDNProfileSet
    /// Clock skew tolerated on `exp` and `nbf`, in seconds: the gate's leeway.
    let leewaySeconds: Int64

    init(profiles: @escaping @Sendable () -> CDNProfileSet = { .empty }, leewaySeconds: Int64 = 30) {
        self.profiles = profiles
        self.leewaySeconds = leewaySeconds
    }

    /// What the request says about the edge's request: the URL asked for (else each
    /// paste's own URL), the time, the viewer's IP.
    struct Facts: Sendable {
        var url: CDNURL?
        var now: TokenTimestamp
        var clientIP: String?
        /// The URL asked for, when its path is one the one reading refuses
        /// (docs/DESIGN.md#one-reading-of-a-path): every paste is then `INVALID_URL`.
        var refusedURL: CDNRefusal? = nil
    }

    /// True when `text` is read as CDN tokens: a kind was asked for, or its first paste
    /// has a CDN token's form (``CDNPaste/hasCDNForm(_:)``, the CLI's rule). A body is
    /// CDN tokens only or none, as a `tokeninspect` INPUT is.
    static func readsAsCDN(_ text: String, kind: CDNTokenKind?) -> Bool {
        kind != nil || CDNPaste.hasCDNForm(text)
    }

    /// The pastes of `text`, cut as the CLI cuts a file (``CDNPaste/records(in:)``).
    static func pastes(_ text: String) -> [CDNPaste.Record] {
        CDNPaste.records(in: text)
    }

    /// One paste read and, with a profile of its kind, verified.
    func report(_ paste: CDNPaste.Record, input: Int, source: String, kind: CDNTokenKind?, facts: Facts) -> CDNReadingReport {
        let candidates = profiles().profiles.filter { kind == nil || $0.kind == kind }
        // The kinds' own reader first: it refuses a paste of two tokens rather than pick one.
        let reading: CDNReading
        do throws(CDNRefusal) {
            reading = try CDNReading(text: paste.text, kind: kind)
        } catch {
            // A profile's own token-name is no name that reader knows: read as that profile's edge does.
            let named = candidates.filter { $0.settings.tokenName != nil }
            guard let found = named.lazy.compactMap({ try? $0.read(paste.text) }).first else {
                return CDNReadingReport(
                    input: input,
                    source: source,
                    line: paste.line,
                    reading: nil,
                    refusal: error,
                    verifiedWith: nil,
                    url: facts.url
                )
            }
            reading = found
        }
        if let refused = facts.refusedURL {
            return CDNReadingReport(input: input, source: source, line: paste.line, reading: reading, refusal: refused, verifiedWith: nil, url: nil)
        }
        let url = facts.url ?? reading.url
        let sameKind = candidates.filter { $0.kind == reading.kind }
        guard !sameKind.isEmpty else {
            return CDNReadingReport(input: input, source: source, line: paste.line, reading: reading, refusal: nil, verifiedWith: nil, url: url)
        }
        let requestFacts = CDNRequestFacts(
            url: url,
            now: facts.now.millisecondsSince1970 / 1000,
            clientIP: facts.clientIP,
            leeway: leewaySeconds
        )
        // Each profile of the kind in turn, as a profile tries its keys: a wrong signature
        // moves on; any other refusal is the answer (that profile's key signed it); no
        // profile verifying, the first one's refusal is.
        var first: (label: String, refusal: CDNRefusal)? = nil
        for profile in sameKind {
            do throws(CDNRefusal) {
                try profile.verify(reading: reading, facts: requestFacts)
                return CDNReadingReport(
                    input: input,
                    source: source,
                    line: paste.line,
                    reading: reading,
                    refusal: nil,
                    verifiedWith: profile.verificationKeys.label,
                    url: url
                )
            } catch {
                if error.status != .invalidSignature {
                    return CDNReadingReport(
                        input: input,
                        source: source,
                        line: paste.line,
                        reading: reading,
                        refusal: error,
                        verifiedWith: profile.verificationKeys.label,
                        url: url
                    )
                }
                first = first ?? (profile.verificationKeys.label, error)
            }
        }
        return CDNReadingReport(
            input: input,
            source: source,
            line: paste.line,
            reading: reading,
            refusal: first?.refusal,
            verifiedWith: first?.label,
            url: url
        )
    }
}
