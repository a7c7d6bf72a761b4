import Foundation
import ImageCodec

/// Why an output could not be made under its byte cap (`mb:`).
enum ByteCapFailure: Error {
    /// The codec failed (the decode's or an encode's error).
    case codec(ImageCodecError)
    /// Even the smallest step is larger than the cap: its size in bytes.
    case unreachable(smallest: Int)
}

/// `mb:` (imgproxy's `max_bytes`): the highest quality whose encode fits the cap, found the way
/// imgproxy finds it — from the first encode's size against the cap, a few encodes, never a
/// search over every quality — with a look at the request's cancellation before each.
///
/// The first step is imgproxy's: an encode at `quality` that is more than 3× the cap tries a
/// quarter of the quality, more than 1.5× half, else three quarters. Once one encode fits and
/// another does not, the next quality is interpolated between them on the logarithm of the
/// size (bytes grow about exponentially with quality), then the bracket closes by bisection.
/// The answer is the best encode that fit; when none did, quality 1 is tried last, and if that
/// does not fit either the cap is out of reach (422). The upload budget's full search (sizes
/// as well as qualities, scored with SSIMULACRA2) stays the upload path's: a URL would buy
/// seconds of CPU with it.
///
/// Memory: the bitmap, the encoder's own state (planned as any encode's) and two outputs at a
/// time, the best that fit and the one being made; every output is charged to the request's
/// ledger as it is made (`Data.charged`).
struct ByteCapSearch {
    let format: ProcessingOptions.OutputFormat
    let cap: Int
    /// Encodes `bitmap` at a quality (1...100): the render's own encoder and metadata.
    let encode: (Int) throws(ImageCodecError) -> Data

    /// Encodes the search may make after the first: AVIF's take seconds a megapixel at the
    /// service's speed (see ``ThumbnailService/avifSpeed(pixels:)``), so three at most.
    static func maximumEncodes(_ format: ProcessingOptions.OutputFormat) -> Int { format == .avif ? 3 : 6 }

    /// The output under the cap for a render whose encode at `quality` made `first` (larger
    /// than the cap).
    func fitted(quality: Int, first: Data) throws(ByteCapFailure) -> Data {
        guard format != .png, quality > 1 else { throw .unreachable(smallest: first.count) }
        var tooLarge = (quality: quality, bytes: first.count)
        var fits: (quality: Int, data: Data)?
        var checkpoint = CancellationCheckpoint()
        for step in 0..<Self.maximumEncodes(format) {
            let last = step == Self.maximumEncodes(format) - 1
            guard let next = nextQuality(tooLarge: tooLarge, fits: fits.map { ($0.quality, $0.data.count) }, last: last) else { break }
            // Each encode is a step's worth of work: a cancelled request stops here.
            do throws(ImageCodecError) {
                try checkpoint.advance(by: ImageCodecError.workBetweenCancellationChecks)
                let data = try encode(next)
                if data.count <= cap { fits = (next, data) } else { tooLarge = (next, data.count) }
            } catch {
                throw .codec(error)
            }
        }
        guard let fits else { throw .unreachable(smallest: tooLarge.bytes) }
        return fits.data
    }

    /// The quality to try next, or nil when the bracket is closed (`last`: the final encode,
    /// which tries quality 1 when nothing has fit yet, so a 422 is sure).
    func nextQuality(tooLarge: (quality: Int, bytes: Int), fits: (quality: Int, bytes: Int)?, last: Bool) -> Int? {
        guard let fits else {
            guard tooLarge.quality > 1 else { return nil }
            if last { return 1 }
            let ratio = Double(tooLarge.bytes) / Double(cap)
            let factor = ratio > 3 ? 0.25 : ratio > 1.5 ? 0.5 : 0.75
            return max(1, min(tooLarge.quality - 1, Int(Double(tooLarge.quality) * factor)))
        }
        guard tooLarge.quality - fits.quality > 1 else { return nil }
        // Where the cap falls between the two sizes, on a log scale.
        let low = log(Double(max(1, fits.bytes))), high = log(Double(max(2, tooLarge.bytes)))
        let position = high > low ? (log(Double(cap)) - low) / (high - low) : 0.5
        let guess = Double(fits.quality) + position * Double(tooLarge.quality - fits.quality)
        // Never the ends themselves; halfway when the estimate would barely move the bracket.
        let interpolated = min(tooLarge.quality - 1, max(fits.quality + 1, Int(guess.rounded(.down))))
        return tooLarge.quality - fits.quality <= 3 ? (fits.quality + tooLarge.quality) / 2 : interpolated
    }
}
