enum HLSManifestReader {
    static func read(_ bytes: [UInt8], url: CDNURL, scope: ManifestScope, limits: ManifestLimits) throws(ManifestError) -> ParsedManifest {
        throw ManifestError("HLS is not read yet")
    }
}
