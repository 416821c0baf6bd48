/// The `catr` claim (CTA-5007, claim 323): how and when a CAT asks to be
/// renewed. A map `{0: type, 1: expadd, 2: deadline, 3: cookie-name,
/// 4: header-name, 5: cookie-params, 6: header-params, 7: code}`, read as
/// node-cat reads it (`src/catr.ts`, `src/cat.ts`): the labels and the type
/// numbers are CTA-5007's, `type` and `expadd` are required, and `expadd`
/// and `deadline` are seconds (Akamai's EdgeWorkers example multiplies the
/// deadline by 60; docs/CDN.md#renewal-catr says which reading this is).
///
/// A CAT is in its renewal window from `exp − deadline` up to, not
/// including, `exp` (``window(expires:)``); a renewed CAT expires `expadd`
/// seconds after the renewal. Reading is strict: a label outside 0…7, a
/// value of the wrong type, a name that is not an HTTP token make the
/// token unreadable, never a renewal that does something else.
public struct CATRenewal: Sendable, Hashable {
    /// Where the renewed token goes (CTA-5007's numbers).
    public enum RenewalType: Int64, Sendable, Hashable, CaseIterable {
        /// The carrier the token arrived in.
        case automatic = 0
        case cookie = 1
        case header = 2
        /// A redirect to the URL with the renewed token in its query.
        case redirect = 3

        public var name: String { String(describing: self) }
    }

    /// The labels of the claim's map.
    public enum Label: Int64, Sendable, Hashable, CaseIterable {
        case type = 0
        case expadd = 1
        case deadline = 2
        case cookieName = 3
        case headerName = 4
        case cookieParams = 5
        case headerParams = 6
        case code = 7

        /// CTA-5007's name (`cookie-name`).
        public var name: String {
            switch self {
            case .type: "type"
            case .expadd: "expadd"
            case .deadline: "deadline"
            case .cookieName: "cookie-name"
            case .headerName: "header-name"
            case .cookieParams: "cookie-params"
            case .headerParams: "header-params"
            case .code: "code"
            }
        }
    }

    /// The deadline when the claim gives none: a minute, as node-cat's.
    public static let defaultDeadline: Int64 = 60

    public let type: RenewalType
    /// Seconds a renewed token lives from its renewal.
    public let expAdd: Int64
    /// Seconds before `exp` the renewal window opens (``defaultDeadline`` when not written).
    public let deadline: Int64
    /// The cookie the renewed token is set in (type cookie; nil: the reader's default).
    public let cookieName: String?
    /// The header the renewed token is sent in (type header; nil: the reader's default).
    public let headerName: String?
    /// Cookie attributes the issuer asks for (read and shown; see docs/CDN.md#renewal-catr).
    public let cookieParams: [String]?
    /// Header parameters the issuer asks for (read and shown).
    public let headerParams: [String]?
    /// The redirect's status code (type redirect).
    public let code: Int64?

    /// A renewal to write (the issuer's).
    public init(type: RenewalType, expAdd: Int64, deadline: Int64 = defaultDeadline, cookieName: String? = nil, headerName: String? = nil) {
        self.type = type
        self.expAdd = expAdd
        self.deadline = deadline
        self.cookieName = cookieName
        self.headerName = headerName
        cookieParams = nil
        headerParams = nil
        code = nil
    }

    /// Reads the claim's value (tag 259 already removed around maps).
    init(claim value: CBORValue) throws(CDNRefusal) {
        guard let entries = value.mapEntries else { throw .format("catr is \(value.diagnostic()), not a map") }
        var type: RenewalType?
        var expAdd: Int64?
        var deadline: Int64?
        var cookieName: String?
        var headerName: String?
        var cookieParams: [String]?
        var headerParams: [String]?
        var code: Int64?
        for entry in entries {
            guard let label = entry.key.int64.flatMap(Label.init(rawValue:)) else {
                throw .format("catr holds the label \(entry.key.diagnostic()); CTA-5007's are 0 (type) to 7 (code)")
            }
            let found = entry.value
            func integer(_ range: ClosedRange<Int64>, _ what: String) throws(CDNRefusal) -> Int64 {
                guard let number = found.int64, range.contains(number) else {
                    throw .format("catr \(label.name) is \(found.diagnostic()), not \(what)")
                }
                return number
            }
            func name() throws(CDNRefusal) -> String {
                guard let text = found.textValue, Self.isToken(text) else {
                    throw .format("catr \(label.name) is \(found.diagnostic()), not an HTTP token (letters, digits, !#$%&'*+-.^_`|~)")
                }
                return text
            }
            func parameters() throws(CDNRefusal) -> [String] {
                let items = found.arrayItems ?? [found]
                let texts = items.compactMap(\.textValue)
                guard !items.isEmpty, texts.count == items.count,
                    texts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F } })
                else {
                    throw .format("catr \(label.name) is \(found.diagnostic()), not text or an array of printable ASCII text")
                }
                return texts
            }
            switch label {
            case .type: type = RenewalType(rawValue: try integer(0...3, "0 (automatic), 1 (cookie), 2 (header) or 3 (redirect)"))
            case .expadd: expAdd = try integer(1...Int64.max, "a positive number of seconds")
            case .deadline: deadline = try integer(0...Int64.max, "a number of seconds (0 or more)")
            case .cookieName: cookieName = try name()
            case .headerName: headerName = try name()
            case .cookieParams: cookieParams = try parameters()
            case .headerParams: headerParams = try parameters()
            case .code: code = try integer(300...399, "a redirect status (300 to 399)")
            }
        }
        guard let type else { throw .format("catr has no type (label 0): CTA-5007 requires it") }
        guard let expAdd else { throw .format("catr has no expadd (label 1): CTA-5007 requires it") }
        self.type = type
        self.expAdd = expAdd
        self.deadline = deadline ?? Self.defaultDeadline
        self.cookieName = cookieName
        self.headerName = headerName
        self.cookieParams = cookieParams
        self.headerParams = headerParams
        self.code = code
    }

    /// The claim as the issuer writes it: `{0: type, 1: expadd, 2: deadline[, 3: cookie-name][, 4: header-name]}`.
    public var claimValue: CBORValue {
        var entries = [
            CBORMapEntry(.integer(Label.type.rawValue), .integer(type.rawValue)),
            CBORMapEntry(.integer(Label.expadd.rawValue), .integer(expAdd)),
            CBORMapEntry(.integer(Label.deadline.rawValue), .integer(deadline)),
        ]
        if let cookieName { entries.append(CBORMapEntry(.integer(Label.cookieName.rawValue), .text(cookieName))) }
        if let headerName { entries.append(CBORMapEntry(.integer(Label.headerName.rawValue), .text(headerName))) }
        return .map(entries)
    }

    /// The seconds in which a token expiring at `expires` is renewed: `exp − deadline ≤ now < exp`.
    public func window(expires: Int64) -> Range<Int64> {
        let (opens, overflow) = expires.subtractingReportingOverflow(deadline)
        return (overflow ? Int64.min : min(opens, expires))..<expires
    }

    /// RFC 9110 §5.6.2 `token`: what a header or cookie name may be; at most 128 bytes.
    public static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 128
            && text.utf8.allSatisfy { $0.isASCIILetterOrDigit || "!#$%&'*+-.^_`|~".utf8.contains($0) }
    }

    /// Diagnostic-notation comments for the claim's labels.
    static let diagnosticLabels = CBORDiagnosticLabels(names: Dictionary(uniqueKeysWithValues: Label.allCases.map { ($0.rawValue, $0.name) }))
}
