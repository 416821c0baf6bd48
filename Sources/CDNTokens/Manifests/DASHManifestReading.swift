/// The DASH reader's entry point, as ``ParsedManifest/read(_:url:scope:limits:)``
/// calls it. A placeholder until the MPD reader lands: this file is replaced
/// by that reader's own, with the same signature.
enum DASHManifestReader {
    static func read(_ bytes: [UInt8], url: CDNURL, scope: ManifestScope, limits: ManifestLimits) throws(ManifestError) -> ParsedManifest {
        throw ManifestError("DASH is not read yet")
    }
}
