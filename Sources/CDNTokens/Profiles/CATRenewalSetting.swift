/// A `cat` profile's `renewal`, `renewal-exp-add`, `renewal-deadline` and
/// `renewal-name` (docs/CDN.md#renewal-catr): the `catr` claim every token of
/// the profile carries, so that an edge implementing CTA-5007's renewal
/// renews it without asking the gate. Read with the profile's other
/// settings; ``renewal(lifetime:)`` makes the claim once the lifetime is known.
public struct CATRenewalSetting: Sendable, Hashable {
    public var type: CATRenewal.RenewalType
    /// Seconds; nil: the profile's lifetime.
    public var expAdd: Int64?
    /// Seconds before `exp`.
    public var deadline: Int64
    /// The cookie name (type cookie) or the header name (type header).
    public var name: String

    /// The setting names, in the order docs/CDN.md lists them.
    static let names = ["renewal", "renewal-exp-add", "renewal-deadline", "renewal-name"]

    /// The claim written for a profile whose tokens live `lifetime` seconds:
    /// the name goes under label 3 (cookie) or 4 (header), so an edge whose
    /// default differs (node-cat's cookie is `cta-common-access-token`) uses ours.
    public func renewal(lifetime: Int64) -> CATRenewal {
        CATRenewal(
            type: type,
            expAdd: expAdd ?? lifetime,
            deadline: deadline,
            cookieName: type == .cookie ? name : nil,
            headerName: type == .header ? name : nil
        )
    }

    /// The setting of one profile file, or nil when it sets no `renewal`;
    /// `value` gives a setting's text and the place to name in an error.
    static func read(
        kind: CDNTokenKind,
        source: String,
        value: (String) -> (text: String, place: String)?
    ) throws(CDNProfileError) -> CATRenewalSetting? {
        let given = names.compactMap { name in value(name).map { (name, $0) } }
        guard let firstGiven = given.first else { return nil }
        let (firstName, first) = firstGiven
        guard kind == .cat else { throw CDNProfileError("\(first.place): \(firstName) is for kind cat only (CTA-5007's catr)") }
        guard let written = value("renewal") else {
            throw CDNProfileError("\(first.place): \(firstName) without renewal (automatic, cookie, header or redirect)")
        }
        guard let type = CATRenewal.RenewalType.allCases.first(where: { $0.name == written.text }) else {
            throw CDNProfileError("\(written.place): renewal takes automatic, cookie, header or redirect")
        }
        func seconds(_ name: String, _ range: ClosedRange<Int64>) throws(CDNProfileError) -> Int64? {
            guard let setting = value(name) else { return nil }
            guard let number = Int64(setting.text), range.contains(number) else {
                throw CDNProfileError("\(setting.place): \(name) takes seconds, from \(range.lowerBound) to \(range.upperBound)")
            }
            return number
        }
        let expAdd = try seconds("renewal-exp-add", 1...CDNProfileSettings.maximumLifetime)
        let deadline = try seconds("renewal-deadline", 0...CDNProfileSettings.maximumLifetime) ?? CATRenewal.defaultDeadline
        if let expAdd, deadline >= expAdd {
            throw CDNProfileError(
                "\(value("renewal-deadline")?.place ?? source): renewal-deadline \(deadline) s is not less than renewal-exp-add \(expAdd) s: "
                    + "a renewed token would be due for renewal at once"
            )
        }
        var name: String
        switch type {
        case .cookie: name = "cat"
        case .header: name = CDNProfile.catHeader
        case .automatic, .redirect:
            if let named = value("renewal-name") {
                throw CDNProfileError("\(named.place): renewal-name names the cookie (renewal = cookie) or the header (renewal = header)")
            }
            name = ""
        }
        if let named = value("renewal-name") {
            // A cookie name that nginx's $cookie_ and every edge read; a header name without '_', which proxies drop.
            let allowed = named.text.utf8.allSatisfy {
                $0.isASCIILetterOrDigit || $0 == UInt8(ascii: "-") || (type == .cookie && $0 == UInt8(ascii: "_"))
            }
            guard allowed, named.text.utf8.count <= 64 else {
                throw CDNProfileError(
                    "\(named.place): renewal-name '\(CDNProfileSettings.printable(named.text))' is not letters, digits, '-'"
                        + (type == .cookie ? " and '_'" : "") + " (at most 64)"
                )
            }
            name = named.text
        }
        return CATRenewalSetting(type: type, expAdd: expAdd, deadline: deadline, name: name)
    }
}

extension CDNProfileSettings {
    /// Every name a profile may set: ``names``, and a `cat` profile's renewal
    /// settings (kept here so the renewal is one file's business).
    static var allNames: [String] { names + CATRenewalSetting.names }
}
