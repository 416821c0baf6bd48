/// The bounds of reading a manifest, in one value: a manifest past any of them
/// is unreadable, never truncated (docs/DESIGN.md#tokens-inside-manifests).
public struct ManifestLimits: Sendable, Hashable {
    /// The whole manifest (a profile's `manifest-max-bytes`, default 4 MiB).
    public var maximumBytes: Int
    /// One HLS line (64 KiB: longer than any tag a packager writes).
    public var maximumLineBytes: Int
    /// URIs in one manifest.
    public var maximumLinks: Int

    public static let defaultMaximumBytes = 4 << 20

    public init(maximumBytes: Int = Self.defaultMaximumBytes, maximumLineBytes: Int = 64 << 10, maximumLinks: Int = 1_000_000) {
        self.maximumBytes = maximumBytes
        self.maximumLineBytes = maximumLineBytes
        self.maximumLinks = maximumLinks
    }
}
