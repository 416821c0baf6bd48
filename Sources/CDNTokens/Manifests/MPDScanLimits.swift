/// The bounds of the MPD scanner, in one value with safe defaults: what an
/// origin's MPD may hold before the gate refuses it as unreadable rather than
/// spend time or memory on it (docs/DESIGN.md#the-mpd-reader).
///
/// A real MPD is far inside each: ffmpeg's dash muxer nests six deep and
/// writes a dozen attributes on its widest element.
struct MPDScanLimits: Sendable, Hashable {
    /// Elements open at once, the root counted as 1.
    var maximumDepth = 64
    /// Attributes on one element, namespace declarations counted.
    var maximumAttributes = 256
    /// Raw bytes of one attribute value, one run of text, one comment, one
    /// processing instruction or one CDATA section.
    var maximumValueBytes = 64 * 1024
    /// Bytes of one element or attribute name, prefix and `:` counted.
    var maximumNameBytes = 256

    static let standard = MPDScanLimits()
}
