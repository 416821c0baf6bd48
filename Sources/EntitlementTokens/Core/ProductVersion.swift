/// The release this source tree builds: what `tokeninspect --version`,
/// `tokengate --version`, the gate's start-up log line and its
/// `tokengate_build_info{version,commit}` series say. One place, so that they
/// cannot disagree.
///
/// `package`, not `public`: the two executables of this package read it; a
/// server that uses the library has a version of its own.
package enum ProductVersion {
    package static let version = "0.1.0"

    /// The commit the binaries were built from. SwiftPM cannot pass a value
    /// into the source (`-D` defines a flag, not a string), so a development
    /// build says "unknown"; a release build rewrites this one line in the
    /// tree it builds from (`sed -i "s/^    package static let commit = .*/    package static let commit = \"$(git rev-parse --short=12 HEAD)\"/"`).
    package static let commit = "unknown"

    /// `0.1.0 (commit 1a2b3c4d5e6f)`, or `0.1.0` when the commit is unknown.
    package static var description: String { commit == "unknown" ? version : "\(version) (commit \(commit))" }
}
