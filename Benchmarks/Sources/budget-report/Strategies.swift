import Foundation
import ImageBudget
import ImageCodec

/// The two usual ways of meeting an upload budget, as the reference for the allocator.
///
/// Every strategy encodes the way the allocator does (progressive, optimised Huffman, no ICC
/// profile, the standard tables unless a row says otherwise), so a row differs from another
/// only in how bytes are allocated.
enum Strategies {
    /// The allocator's JPEG settings at `quality`.
    static func encoding(_ quality: Int) -> JPEGEncodingOptions {
        JPEGEncodingOptions(quality: quality, progressive: true, preservesICCProfile: false)
    }

    struct Output {
        var data: [Data]
        var encodes: Int
    }

    /// Budget/N per image: q85, shrinking the longest side by 10% until it fits, from the
    /// full-size original (decoded once here, which is kinder than most client code).
    static func naiveSplit(_ files: [Data], budget: Int) throws -> Output {
        let share = budget / files.count
        var outputs: [Data] = []
        var encodes = 0
        for file in files {
            let original = try ImageDecoder().decode(file)
            var side = max(original.width, original.height)
            var encoded = try ImageEncoder.jpeg(original, options: encoding(85))
            encodes += 1
            while encoded.count > share && side > 16 {
                side = side * 9 / 10
                encoded = try ImageEncoder.jpeg(original.downsampled(maxPixelSize: side), options: encoding(85))
                encodes += 1
            }
            outputs.append(encoded)
        }
        return Output(data: outputs, encodes: encodes)
    }

    /// One quality for all images at 1280 px: the highest whose total fits (bisection).
    static func sharedQuality(_ files: [Data], budget: Int, maxPixelSize: Int = 1280) throws -> Output {
        let bitmaps = try files.map { try ImageDecoder(options: DecodingOptions(maxPixelSize: maxPixelSize)).decode($0) }
        var encodes = 0
        func encodeAll(_ quality: Int) throws -> [Data] {
            encodes += bitmaps.count
            return try bitmaps.map { try ImageEncoder.jpeg($0, options: encoding(quality)) }
        }
        var (low, high) = (1, 100)
        var best = try encodeAll(1)
        while low < high {
            let middle = (low + high + 1) / 2
            let attempt = try encodeAll(middle)
            if attempt.reduce(0, { $0 + $1.count }) <= budget {
                (low, best) = (middle, attempt)
            } else {
                high = middle - 1
            }
        }
        return Output(data: best, encodes: encodes)
    }
}

/// SSIM at display size: output and source (full decode) both resized with Lanczos so the
/// longest side is 1280 px, compared on luma.
enum DisplayScore {
    static func reference(_ file: Data) throws -> StructuralSimilarity.Reference {
        StructuralSimilarity.Reference(LumaPlane(try ImageDecoder().decode(file).downsampled(maxPixelSize: 1280)))
    }

    static func score(_ output: Data, against reference: StructuralSimilarity.Reference) throws -> Double {
        let decoded = try ImageDecoder().decode(output)
        let display = try decoded.resampled(width: reference.plane.width, height: reference.plane.height)
        return StructuralSimilarity.score(reference, LumaPlane(display))
    }
}
