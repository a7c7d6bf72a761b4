import Foundation

/// A finished thumbnail: the encoded bytes and the headers that describe them. What the result
/// caches hold and what coalesced requests share.
struct RenderedImage: Sendable, Hashable {
    /// The encoded image, as every response made from this result sends it (shared, not copied;
    /// charged to the memory budget while anything holds it).
    var body: Data
    var contentType: String
    /// The strong validator sent as `ETag` (quoted).
    var etag: String
    /// The source's `Last-Modified`, when it had one.
    var lastModified: String?
    /// Whether the source had alpha: a request without a format gets PNG for such a source,
    /// JPEG otherwise, and a cached result says which it is.
    var sourceHasAlpha: Bool
    /// Phase durations of the render that made it, in milliseconds, for `Server-Timing`.
    var timing: PhaseTiming
}

/// How long each phase of a request took, in milliseconds (nil: the phase did not run).
struct PhaseTiming: Sendable, Hashable {
    var queue: Double?
    var download: Double?
    var decode: Double?
    var encode: Double?

    /// `Server-Timing` (W3C): one metric per phase that ran.
    var headerValue: String? {
        let phases = [("queue", queue), ("download", download), ("decode", decode), ("encode", encode)]
            .compactMap { name, value in value.map { "\(name);dur=\(String(format: "%.1f", $0))" } }
        return phases.isEmpty ? nil : phases.joined(separator: ", ")
    }
}
