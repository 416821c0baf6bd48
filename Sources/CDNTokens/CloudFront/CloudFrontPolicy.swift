/// A CloudFront policy statement: which URLs, from when, until when, and from
/// which addresses. One value for both forms — a canned policy is the custom
/// form with only `Resource` and `DateLessThan`, which is what botocore builds
/// and signs for one (the URL carries `Expires` instead of the policy).
///
/// Two doors: ``init(json:)`` reads a policy as a token carries it
/// (CloudFrontPolicyReading.swift), ``json`` writes one as botocore's
/// `CloudFrontSigner.build_policy` does. Signing and verifying sit beside it
/// (``CloudFrontIssuer``, ``CloudFrontToken/verify(keys:facts:)``), and always
/// cover the policy's bytes as they were carried, never a re-encoding.
public struct CloudFrontPolicy: Sendable, Hashable {
    /// The URL pattern the policy grants: `*` any run of characters, `?` one.
    public var resource: String
    /// `DateLessThan`: the policy is valid while now < this (seconds since 1970).
    public var dateLessThan: Int64
    /// `DateGreaterThan`: when present, the policy is not valid before this.
    public var dateGreaterThan: Int64?
    /// `IpAddress`: when present, the viewer's address must lie in this range.
    public var ipAddress: CloudFrontIPRange?

    /// The largest policy read, in bytes: CloudFront refuses a URL over 8,192
    /// bytes, so no policy it accepts is longer.
    public static let maximumBytes = 8192
    /// The latest time read or written (9999-12-31T23:59:59Z): every arithmetic
    /// on a time stays far from overflow.
    public static let latestTime: Int64 = 253_402_300_799

    public init(resource: String, dateLessThan: Int64, dateGreaterThan: Int64? = nil, ipAddress: CloudFrontIPRange? = nil) {
        self.resource = resource
        self.dateLessThan = dateLessThan
        self.dateGreaterThan = dateGreaterThan
        self.ipAddress = ipAddress
    }

    /// The policy as botocore's `build_policy` writes it: `json.dumps` with
    /// `separators=(',', ':')` over `{"Statement":[{"Resource":…,"Condition":{…}}]}`,
    /// conditions in the order `DateLessThan`, `IpAddress`, `DateGreaterThan`;
    /// strings escaped as Python's `json` does by default (``PythonJSONString``).
    public var json: [UInt8] {
        var out = Array(#"{"Statement":[{"Resource":"#.utf8)
        PythonJSONString.append(resource, to: &out)
        out += Array(#","Condition":{"DateLessThan":{"AWS:EpochTime":"#.utf8)
        out += Array(String(dateLessThan).utf8)
        out.append(UInt8(ascii: "}"))
        if let ipAddress {
            out += Array(#","IpAddress":{"AWS:SourceIp":"#.utf8)
            PythonJSONString.append(ipAddress.text, to: &out)
            out.append(UInt8(ascii: "}"))
        }
        if let dateGreaterThan {
            out += Array(#","DateGreaterThan":{"AWS:EpochTime":"#.utf8)
            out += Array(String(dateGreaterThan).utf8)
            out.append(UInt8(ascii: "}"))
        }
        out += Array("}}]}".utf8)
        return out
    }
}
